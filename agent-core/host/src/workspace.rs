//! The one layer every file access by a tool goes through. It keeps these invariants: paths
//! resolve inside the project root or a directory the user opened too (no `..` or symlink
//! escape), protected paths are never written, a write to an existing file needs a fresh read
//! (same mtime as when the session read it), and every write is atomic (temp file in the same directory, then rename) and keeps permissions.
//! When the editor offers its buffers ([`EditorFiles`]), text reads and writes go through it, so
//! the agent sees unsaved changes and its edits land in the editor's undo history; the checks
//! above stay here either way.

use std::collections::HashMap;
use std::io::Write;
use std::path::{Component, Path, PathBuf};
use std::sync::Mutex;
use std::time::SystemTime;

use crate::editor::EditorError;

/// Why a path cannot be used; the message is written for the model to act on.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum WorkspaceError {
    #[error("{path} is outside the project ({root}); only files inside it can be changed")]
    OutsideProject { path: PathBuf, root: PathBuf },
    #[error("{path} is protected ({why}) and cannot be changed by the agent")]
    Protected { path: PathBuf, why: &'static str },
    #[error("{path} has not been read in this session; read it first so you see its current content")]
    NotRead { path: PathBuf },
    #[error("{path} changed on disk since it was last read; read it again before changing it")]
    Stale { path: PathBuf },
    #[error("{path}: {message}")]
    Io { path: PathBuf, message: String },
}

/// The editor's view of files: its open buffers, unsaved changes included.
#[async_trait::async_trait]
pub trait EditorFiles: Send + Sync {
    async fn read_text(&self, path: &Path) -> Result<String, EditorError>;
    /// Writes through the editor, which saves the file so tools that read the disk agree.
    async fn write_text(&self, path: &Path, content: &str) -> Result<(), EditorError>;
}

pub struct Workspace {
    root: PathBuf,
    read_stamps: Mutex<HashMap<PathBuf, Option<SystemTime>>>,
    editor: Option<std::sync::Arc<dyn EditorFiles>>,
    /// Project-relative paths protected by settings, beyond the built-in names.
    protected: Vec<PathBuf>,
    /// Directories outside the project the user opened to the agent too
    /// (`permissions.additionalDirectories`, the editor's `additionalDirectories`): files there
    /// are written as the project's are, with the same checks.
    extra_roots: Vec<PathBuf>,
}

impl Workspace {
    /// `root` should be absolute; it is canonicalized so symlinked roots compare correctly.
    pub fn new(root: &Path) -> Self {
        let root = std::fs::canonicalize(root).unwrap_or_else(|_| root.to_path_buf());
        Self {
            root,
            read_stamps: Mutex::new(HashMap::new()),
            editor: None,
            protected: Vec::new(),
            extra_roots: Vec::new(),
        }
    }

    /// Opens more directories to the agent's writes (each canonicalized; the project itself and
    /// those inside it add nothing).
    pub fn with_extra_roots(mut self, dirs: &[PathBuf]) -> Self {
        for dir in dirs {
            let dir = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.clone());
            if !dir.starts_with(&self.root) && !self.extra_roots.contains(&dir) {
                self.extra_roots.push(dir);
            }
        }
        self
    }

    /// The directories outside the project the agent may write too.
    pub fn extra_roots(&self) -> &[PathBuf] {
        &self.extra_roots
    }

    /// Protects more project-relative paths (and everything under them).
    pub fn with_protected(mut self, paths: &[String]) -> Self {
        self.protected.extend(paths.iter().map(|path| normalize(Path::new(path.trim_start_matches("./")))));
        self
    }

    /// The project-relative paths protected by settings, as given to [`Self::with_protected`].
    pub fn protected_paths(&self) -> Vec<String> {
        self.protected.iter().map(|path| path.display().to_string()).collect()
    }

    /// Routes text reads and writes through the editor.
    pub fn with_editor(mut self, editor: std::sync::Arc<dyn EditorFiles>) -> Self {
        self.editor = Some(editor);
        self
    }

    /// The text of a file as the user sees it: the editor's buffer when there is one.
    pub async fn read_text(&self, path: &Path) -> Result<String, WorkspaceError> {
        let io = |message: String| WorkspaceError::Io { path: path.to_path_buf(), message };
        match &self.editor {
            Some(editor) => editor.read_text(path).await.map_err(|error| io(error.to_string())),
            None => tokio::fs::read_to_string(path).await.map_err(|error| io(error.to_string())),
        }
    }

    /// Writes a file the caller already checked with [`Self::writable`] and [`Self::check_fresh`].
    pub async fn write_text(&self, path: &Path, content: &str) -> Result<(), WorkspaceError> {
        match &self.editor {
            Some(editor) => {
                editor
                    .write_text(path, content)
                    .await
                    .map_err(|error| WorkspaceError::Io { path: path.to_path_buf(), message: error.to_string() })?;
                self.record_read(path);
                Ok(())
            }
            None => self.write_atomic(path, content.as_bytes()),
        }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Makes `path` absolute against the root and removes `.` and `..` lexically.
    pub fn absolute(&self, path: &str) -> PathBuf {
        let joined = if Path::new(path).is_absolute() { PathBuf::from(path) } else { self.root.join(path) };
        normalize(&joined)
    }

    /// Resolves a path a tool wants to change, refusing escapes and protected names.
    pub fn writable(&self, path: &str) -> Result<PathBuf, WorkspaceError> {
        let absolute = self.absolute(path);
        let outside = || WorkspaceError::OutsideProject { path: absolute.clone(), root: self.root.clone() };
        let (root, relative) = std::iter::once(&self.root)
            .chain(&self.extra_roots)
            .find_map(|root| absolute.strip_prefix(root).ok().map(|relative| (root, relative)))
            .ok_or_else(outside)?;
        if relative.as_os_str().is_empty() {
            return Err(outside());
        }
        // Symlinks anywhere on the way (or the file itself) must still land inside that root.
        let real = real_path_of_nearest_existing(&absolute);
        if !real.starts_with(root) {
            return Err(outside());
        }
        // The protected names are refused wherever they appear under the root: a nested project
        // (a workspace member, a vendored repository) has its own.
        for component in relative.components() {
            if let Some(protected) = crate::protected_names::protected(&component.as_os_str().to_string_lossy()) {
                return Err(WorkspaceError::Protected { path: absolute.clone(), why: protected.why });
            }
        }
        if self.protected.iter().any(|protected| relative.starts_with(protected)) {
            return Err(WorkspaceError::Protected {
                path: absolute.clone(),
                why: "listed in permissions.protectedPaths",
            });
        }
        Ok(absolute)
    }

    /// Remembers that the session saw this file as it is now.
    pub fn record_read(&self, path: &Path) {
        let stamp = modified(path);
        if let Ok(mut stamps) = self.read_stamps.lock() {
            stamps.insert(path.to_path_buf(), stamp);
        }
    }

    /// A write to an existing file needs a read whose mtime still matches.
    pub fn check_fresh(&self, path: &Path) -> Result<(), WorkspaceError> {
        if !path.exists() {
            return Ok(());
        }
        let recorded = self.read_stamps.lock().ok().and_then(|stamps| stamps.get(path).copied());
        match recorded {
            None => Err(WorkspaceError::NotRead { path: path.to_path_buf() }),
            Some(stamp) if stamp != modified(path) => Err(WorkspaceError::Stale { path: path.to_path_buf() }),
            Some(_) => Ok(()),
        }
    }

    /// Replaces the file atomically and records the new content as read (the session has seen
    /// what it wrote).
    pub fn write_atomic(&self, path: &Path, content: &[u8]) -> Result<(), WorkspaceError> {
        write_file_atomic(path, content)
            .map_err(|error| WorkspaceError::Io { path: path.to_path_buf(), message: error.to_string() })?;
        self.record_read(path);
        Ok(())
    }
}

/// Replaces a file atomically (temp file in the same directory, then rename), creating parent
/// directories and keeping the old file's permission bits. The content is written and synced
/// into a file without a name, which gets one only just before the rename: a process killed
/// while writing leaves nothing behind.
pub fn write_file_atomic(path: &Path, content: &[u8]) -> std::io::Result<()> {
    let parent = path.parent().ok_or_else(|| std::io::Error::other("no parent directory"))?;
    std::fs::create_dir_all(parent)?;
    let permissions = std::fs::metadata(path).ok().map(|meta| meta.permissions());
    if let Ok(mut unnamed) = tempfile::tempfile_in(parent) {
        unnamed.write_all(content)?;
        if let Some(permissions) = &permissions {
            unnamed.set_permissions(permissions.clone())?;
        }
        unnamed.sync_all()?;
        let named = parent.join(format!(
            ".larik-write-{}-{}",
            std::process::id(),
            WRITES.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
        ));
        // Where the directory cannot hold a file without a name, the named temp file below.
        if crate::platform::link_unnamed(&unnamed, &named).is_ok() {
            return std::fs::rename(&named, path).inspect_err(|_| {
                let _ = std::fs::remove_file(&named);
            });
        }
    }
    let mut temp = tempfile::Builder::new().prefix(".larik-write-").tempfile_in(parent)?;
    temp.write_all(content)?;
    temp.as_file().sync_all()?;
    if let Some(permissions) = permissions {
        std::fs::set_permissions(temp.path(), permissions)?;
    }
    temp.persist(path).map_err(|error| error.error)?;
    Ok(())
}

static WRITES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// Replaces a file only the user may read (mode 0600, in a 0700 directory), atomically: for
/// approvals and login tokens.
pub fn write_private_file(path: &Path, content: &[u8]) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
        let _ = std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700));
    }
    // The temp file is created 0600 and keeps that mode when renamed into place.
    write_file_atomic(path, content)?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))
}

fn modified(path: &Path) -> Option<SystemTime> {
    std::fs::metadata(path).and_then(|meta| meta.modified()).ok()
}

/// Canonicalizes the longest existing prefix of `path` and appends the rest.
fn real_path_of_nearest_existing(path: &Path) -> PathBuf {
    let mut existing = path.to_path_buf();
    let mut rest = Vec::new();
    loop {
        if let Ok(real) = std::fs::canonicalize(&existing) {
            return rest.iter().rev().fold(real, |acc: PathBuf, part: &std::ffi::OsString| acc.join(part));
        }
        match (existing.file_name().map(|name| name.to_os_string()), existing.parent()) {
            (Some(name), Some(parent)) => {
                rest.push(name);
                existing = parent.to_path_buf();
            }
            _ => return path.to_path_buf(),
        }
    }
}

pub fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other.as_os_str()),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_escapes_and_protected_paths() {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let workspace = Workspace::new(dir.path());
        assert!(workspace.writable("src/new.rs").is_ok());
        assert!(matches!(workspace.writable("../x"), Err(WorkspaceError::OutsideProject { .. })));
        assert!(matches!(workspace.writable("/etc/passwd"), Err(WorkspaceError::OutsideProject { .. })));
        assert!(matches!(workspace.writable(".git/config"), Err(WorkspaceError::Protected { .. })));
        assert!(matches!(workspace.writable(".GIT/config"), Err(WorkspaceError::Protected { .. })));
        assert!(matches!(workspace.writable("sub/.npmrc"), Err(WorkspaceError::Protected { .. })));
        std::os::unix::fs::symlink(outside.path(), dir.path().join("link")).unwrap();
        assert!(matches!(workspace.writable("link/file"), Err(WorkspaceError::OutsideProject { .. })));
    }

    #[test]
    fn writes_need_a_fresh_read_and_keep_permissions() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let workspace = Workspace::new(dir.path());
        let path = workspace.writable("run.sh").unwrap();
        std::fs::write(&path, "echo 1\n").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        assert!(matches!(workspace.check_fresh(&path), Err(WorkspaceError::NotRead { .. })));
        workspace.record_read(&path);
        assert!(workspace.check_fresh(&path).is_ok());
        workspace.write_atomic(&path, b"echo 2\n").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "echo 2\n");
        assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o755);
        assert!(workspace.check_fresh(&path).is_ok(), "the session has seen what it wrote");
        let later = SystemTime::now() + std::time::Duration::from_secs(5);
        std::fs::File::options().write(true).open(&path).unwrap().set_modified(later).unwrap();
        assert!(matches!(workspace.check_fresh(&path), Err(WorkspaceError::Stale { .. })));
    }
}
