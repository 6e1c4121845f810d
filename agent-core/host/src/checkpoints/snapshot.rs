//! A snapshot of the project's files into the private object store: a git tree of every file
//! (tracked, untracked, and ignored ones in small directories), content-addressed so unchanged
//! files cost nothing, with the flat list of paths kept for comparing snapshots.
//!
//! The user's repository is only asked which paths it ignores; nothing of it is written. Large
//! ignored trees (`target/`, `node_modules/`) and very large files are left out and named, and
//! a file whose size, time and inode did not change since the last snapshot is not read again.

use std::collections::{BTreeMap, HashMap};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use git2::{Oid, Repository};

/// A file larger than this is left out of checkpoints (and named).
const MAX_FILE_BYTES: u64 = 16 * 1024 * 1024;
/// An ignored directory with more files than this is left out (and named).
const MAX_IGNORED_DIR_FILES: usize = 2_000;
/// Directories taken for ignored in a project that is no git repository.
const USUALLY_IGNORED: &[&str] = &["node_modules", "target", ".venv", "venv", "__pycache__", ".gradle", ".tox"];

pub const MODE_FILE: i32 = 0o100_644;
pub const MODE_EXECUTABLE: i32 = 0o100_755;
pub const MODE_SYMLINK: i32 = 0o120_000;
const MODE_TREE: i32 = 0o040_000;

/// One file as a snapshot holds it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Entry {
    pub oid: Oid,
    pub mode: i32,
}

/// Project-relative paths and what each held.
pub type Files = BTreeMap<PathBuf, Entry>;

#[derive(Debug, Clone)]
pub struct Snapshot {
    pub tree: Oid,
    pub files: Files,
    /// What was left out: large ignored directories (`target/`) and large files.
    pub skipped: Vec<String>,
}

/// What identifies a file's content without reading it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Stamp {
    modified_ns: i128,
    size: u64,
    inode: u64,
    mode: i32,
}

/// Remembers each file's blob by its stamp, so a later snapshot reads only what changed.
#[derive(Default)]
pub struct StatCache {
    known: HashMap<PathBuf, (Stamp, Oid)>,
}

struct Walk<'a> {
    store: &'a Repository,
    ignores: &'a Ignores,
    cache: &'a mut StatCache,
    files: Files,
    skipped: Vec<String>,
}

/// The user's repository at `root` (its work tree exactly there), asked only what it ignores.
fn project_at(root: &Path) -> Option<Repository> {
    Repository::open(root).ok().filter(|repo| repo.workdir().is_some_and(|dir| same_dir(dir, root)))
}

/// Answers whether the project ignores a path (`.gitignore`; in a project that is no git
/// repository, the usual build and package directories), so build output can be told apart
/// from the files the user keeps.
pub struct Ignores {
    project: Option<Repository>,
}

impl Ignores {
    pub fn of(root: &Path) -> Self {
        Self { project: project_at(root) }
    }

    /// `relative`: a file inside the project.
    pub fn ignores(&self, relative: &Path) -> bool {
        match &self.project {
            Some(project) => project.is_path_ignored(relative).unwrap_or(false),
            None => relative.iter().any(|part| part.to_str().is_some_and(|name| USUALLY_IGNORED.contains(&name))),
        }
    }

    /// `relative`: a directory inside the project (git's directory patterns need the slash).
    fn ignores_dir(&self, relative: &Path) -> bool {
        match &self.project {
            Some(project) => project.is_path_ignored(format!("{}/", relative.display())).unwrap_or(false),
            None => {
                relative.file_name().and_then(|name| name.to_str()).is_some_and(|name| USUALLY_IGNORED.contains(&name))
            }
        }
    }
}

/// Takes a snapshot of `root` into `store`; `ignores` is `root`'s.
pub fn take(
    store: &Repository,
    root: &Path,
    ignores: &Ignores,
    cache: &mut StatCache,
) -> Result<Snapshot, git2::Error> {
    let mut walk = Walk { store, ignores, cache, files: Files::new(), skipped: Vec::new() };
    let tree = walk.directory(root, Path::new(""))?;
    Ok(Snapshot { tree, files: walk.files, skipped: walk.skipped })
}

fn same_dir(one: &Path, other: &Path) -> bool {
    match (one.canonicalize(), other.canonicalize()) {
        (Ok(one), Ok(other)) => one == other,
        _ => false,
    }
}

impl Walk<'_> {
    fn directory(&mut self, dir: &Path, relative: &Path) -> Result<Oid, git2::Error> {
        let mut builder = self.store.treebuilder(None)?;
        let Ok(entries) = std::fs::read_dir(dir) else { return builder.write() };
        for entry in entries.filter_map(Result::ok) {
            let name = entry.file_name();
            // A repository's own store is not the project's files (a nested one's neither).
            if name == ".git" {
                continue;
            }
            let (Ok(kind), Some(name_text)) = (entry.file_type(), name.to_str()) else { continue };
            let path = entry.path();
            let relative_path = relative.join(&name);
            if kind.is_symlink() {
                let Ok(target) = std::fs::read_link(&path) else { continue };
                let oid = self.store.blob(target.as_os_str().as_encoded_bytes())?;
                builder.insert(name_text, oid, MODE_SYMLINK)?;
                self.files.insert(relative_path, Entry { oid, mode: MODE_SYMLINK });
            } else if kind.is_dir() {
                if self.too_large_to_keep(&path, &relative_path) {
                    self.skipped.push(format!("{}/", relative_path.display()));
                    continue;
                }
                let subtree = self.directory(&path, &relative_path)?;
                // Git holds no empty directories.
                if self.store.find_tree(subtree).is_ok_and(|tree| !tree.is_empty()) {
                    builder.insert(name_text, subtree, MODE_TREE)?;
                }
            } else if kind.is_file() {
                let Ok(metadata) = entry.metadata() else { continue };
                if metadata.len() > MAX_FILE_BYTES {
                    self.skipped.push(relative_path.display().to_string());
                    continue;
                }
                let mode = if metadata.permissions().mode() & 0o111 != 0 { MODE_EXECUTABLE } else { MODE_FILE };
                let stamp = Stamp {
                    modified_ns: i128::from(metadata.mtime()) * 1_000_000_000 + i128::from(metadata.mtime_nsec()),
                    size: metadata.len(),
                    inode: metadata.ino(),
                    mode,
                };
                let oid = match self.cache.known.get(&relative_path) {
                    Some((known, oid)) if *known == stamp => *oid,
                    _ => {
                        let Ok(content) = std::fs::read(&path) else { continue };
                        let oid = self.store.blob(&content)?;
                        self.cache.known.insert(relative_path.clone(), (stamp, oid));
                        oid
                    }
                };
                builder.insert(name_text, oid, mode)?;
                self.files.insert(relative_path, Entry { oid, mode });
            }
        }
        builder.write()
    }

    /// An ignored directory with many files (a build's output, installed packages).
    fn too_large_to_keep(&self, path: &Path, relative: &Path) -> bool {
        self.ignores.ignores_dir(relative) && more_files_than(path, MAX_IGNORED_DIR_FILES)
    }
}

/// Whether `dir` holds more than `limit` files, counting no further than that.
fn more_files_than(dir: &Path, limit: usize) -> bool {
    let mut count = 0;
    let mut pending = vec![dir.to_path_buf()];
    while let Some(dir) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        for entry in entries.filter_map(Result::ok) {
            match entry.file_type() {
                Ok(kind) if kind.is_dir() => pending.push(entry.path()),
                Ok(_) => count += 1,
                Err(_) => {}
            }
            if count > limit {
                return true;
            }
        }
    }
    false
}

/// The files of a stored tree, as a snapshot lists them.
pub fn files_of(store: &Repository, tree: Oid) -> Result<Files, git2::Error> {
    let mut files = Files::new();
    let tree = store.find_tree(tree)?;
    tree.walk(git2::TreeWalkMode::PreOrder, |parent, entry| {
        if entry.kind() == Some(git2::ObjectType::Blob) {
            files.insert(
                Path::new(parent).join(entry.name().unwrap_or_default()),
                Entry { oid: entry.id(), mode: entry.filemode() },
            );
        }
        git2::TreeWalkResult::Ok
    })?;
    Ok(files)
}
