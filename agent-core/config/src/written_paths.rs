//! Paths as settings write them, made real: `~/` from the home, `//` or `/` absolute (Claude
//! Code writes `//` for the file system's root), anything else from the project.

use std::collections::HashMap;
use std::path::{Component, Path, PathBuf};

use larik_settings::{PermissionSettings, SandboxSettings};

/// `written` as a path: through links where it exists, with `.` and `..` taken out otherwise.
fn resolve(written: &str, project: &Path, env: &HashMap<String, String>) -> PathBuf {
    let home = env.get("HOME").filter(|home| !home.is_empty()).map(PathBuf::from);
    let path = match (written.strip_prefix("~/"), home) {
        (Some(rest), Some(home)) => home.join(rest),
        _ if written.starts_with('/') => PathBuf::from(format!("/{}", written.trim_start_matches('/'))),
        _ => project.join(written),
    };
    std::fs::canonicalize(&path).unwrap_or_else(|_| {
        let mut out = PathBuf::new();
        for part in path.components() {
            match part {
                Component::ParentDir => {
                    out.pop();
                }
                Component::CurDir => {}
                other => out.push(other),
            }
        }
        out
    })
}

/// `permissions.additionalDirectories` as directories; one that is not a directory is said and
/// left out.
pub fn additional_directories(
    permissions: &PermissionSettings,
    project: &Path,
    env: &HashMap<String, String>,
) -> (Vec<PathBuf>, Vec<String>) {
    let mut dirs = Vec::new();
    let mut problems = Vec::new();
    for written in &permissions.additional_directories {
        let dir = resolve(written, project, env);
        if !dir.is_dir() {
            problems.push(format!("permissions.additionalDirectories: `{written}` is not a directory; it is left out"));
        } else if !dirs.contains(&dir) {
            dirs.push(dir);
        }
    }
    (dirs, problems)
}

/// `sandbox.filesystem` as the sandbox and the workspace use it.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct FilesystemPaths {
    /// `allowWrite`: writable by sandboxed commands too.
    pub writable: Vec<PathBuf>,
    /// `denyWrite` inside the project, relative to it: protected paths, for the agent's own
    /// writes and the sandbox's alike.
    pub protected: Vec<String>,
    /// `denyWrite` outside the project: kept read-only in the sandbox.
    pub read_only: Vec<PathBuf>,
    /// `denyRead`: hidden from sandboxed commands.
    pub hidden: Vec<PathBuf>,
    /// `allowRead`: readable inside what is hidden.
    pub readable: Vec<PathBuf>,
}

pub fn filesystem_paths(sandbox: &SandboxSettings, project: &Path, env: &HashMap<String, String>) -> FilesystemPaths {
    let root = std::fs::canonicalize(project).unwrap_or_else(|_| project.to_path_buf());
    let all = |written: &[String]| -> Vec<PathBuf> { written.iter().map(|path| resolve(path, &root, env)).collect() };
    let mut paths = FilesystemPaths {
        writable: all(&sandbox.filesystem.allow_write),
        hidden: all(&sandbox.filesystem.deny_read),
        readable: all(&sandbox.filesystem.allow_read),
        ..FilesystemPaths::default()
    };
    for path in all(&sandbox.filesystem.deny_write) {
        match path.strip_prefix(&root) {
            Ok(relative) if !relative.as_os_str().is_empty() => paths.protected.push(relative.display().to_string()),
            _ => paths.read_only.push(path),
        }
    }
    paths
}
