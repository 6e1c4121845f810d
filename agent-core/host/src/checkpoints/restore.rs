//! Putting the project back as a checkpoint had it, with a three-way check: a path is restored
//! only where it still is as the agent left it; one the user changed by hand since is kept and
//! named. Writes are atomic and never go through a symbolic link: a directory replaced by a link
//! (to somewhere outside the project) is not followed, the path is kept instead.

use std::path::{Path, PathBuf};

use git2::Repository;

use super::UndoError;
use super::snapshot::{Files, MODE_EXECUTABLE, MODE_SYMLINK};

/// What a restore did, by project-relative path.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Restored {
    /// Written back as they were (changed or deleted since).
    pub restored: Vec<PathBuf>,
    /// Removed: they did not exist at the checkpoint.
    pub removed: Vec<PathBuf>,
    /// Left as they are: changed since by someone else than the agent, or unsafe to write.
    pub kept: Vec<PathBuf>,
}

/// Makes `root` hold `target`'s files where `current` (what is there now) still equals
/// `agent_left` (what the agent's last turn left).
pub fn restore(
    store: &Repository,
    root: &Path,
    target: &Files,
    current: &Files,
    agent_left: &Files,
) -> Result<Restored, UndoError> {
    let mut done = Restored::default();
    let paths: std::collections::BTreeSet<&PathBuf> = target.keys().chain(current.keys()).collect();
    for path in paths {
        let (want, now) = (target.get(path), current.get(path));
        if want == now {
            continue;
        }
        let absolute = root.join(path);
        // Changed by hand since the agent's turn, left out of the snapshot (too large), or
        // reachable only through a link: not ours to overwrite.
        let untracked_on_disk = now.is_none() && absolute.symlink_metadata().is_ok();
        if now != agent_left.get(path) || untracked_on_disk || !inside_without_links(root, path) {
            done.kept.push(path.clone());
            continue;
        }
        match want {
            Some(entry) => {
                let blob = store.find_blob(entry.oid).map_err(UndoError::store)?;
                write(&absolute, blob.content(), entry.mode).map_err(|error| written(path, &error))?;
                done.restored.push(path.clone());
            }
            None => {
                std::fs::remove_file(&absolute).map_err(|error| written(path, &error))?;
                remove_empty_parents(root, &absolute);
                done.removed.push(path.clone());
            }
        }
    }
    Ok(done)
}

/// A file that could not be put back, named in the error.
fn written(path: &Path, error: &std::io::Error) -> UndoError {
    UndoError::Store(format!("{}: {error}", path.display()))
}

/// Whether every directory on the way from `root` to `relative` is a real directory (or does
/// not exist yet), never a symbolic link.
fn inside_without_links(root: &Path, relative: &Path) -> bool {
    let mut at = root.to_path_buf();
    let Some(parent) = relative.parent() else { return true };
    for component in parent.components() {
        let std::path::Component::Normal(name) = component else { return false };
        at.push(name);
        match at.symlink_metadata() {
            Ok(metadata) if metadata.file_type().is_symlink() || !metadata.is_dir() => return false,
            Ok(_) => {}
            Err(_) => return true,
        }
    }
    true
}

fn write(path: &Path, content: &[u8], mode: i32) -> std::io::Result<()> {
    if let Ok(metadata) = path.symlink_metadata()
        && (metadata.file_type().is_symlink() || mode == MODE_SYMLINK)
    {
        std::fs::remove_file(path)?;
    }
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)?;
    }
    if mode == MODE_SYMLINK {
        use std::os::unix::ffi::OsStrExt;
        return std::os::unix::fs::symlink(std::ffi::OsStr::from_bytes(content), path);
    }
    crate::workspace::write_file_atomic(path, content)?;
    use std::os::unix::fs::PermissionsExt;
    let bits = if mode == MODE_EXECUTABLE { 0o755 } else { 0o644 };
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(bits))
}

/// Directories left empty by a removal go too, up to the project's root.
fn remove_empty_parents(root: &Path, removed: &Path) {
    let mut dir = removed.parent();
    while let Some(current) = dir {
        if current == root || !current.starts_with(root) || std::fs::remove_dir(current).is_err() {
            return;
        }
        dir = current.parent();
    }
}
