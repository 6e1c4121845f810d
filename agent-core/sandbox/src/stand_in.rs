//! Stand-ins for protected paths that do not exist yet. A mount can only cover a path that
//! exists, so before a sandboxed command starts, each absent protected path (more exactly, its
//! first missing component) gets an empty directory that the sandbox then mounts read-only: the
//! command can neither create the path nor remove the stand-in. Empty directories are invisible
//! to git, so `git status` and `git add -A` do not see them.
//!
//! A stand-in is removed when the last command that relies on it has ended. Every user, in this
//! process or another (two editors on one project) and the sandbox helper itself, holds a shared
//! `flock` on the directory; whoever can then take the lock exclusively is the last one out. A
//! stand-in is recognised by its marker modification time, so one left behind by a killed
//! process is taken over and removed by the next command, and a directory the user made is
//! never removed.

use std::fs::File;
use std::os::fd::AsRawFd;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

/// The modification time that marks a stand-in: one second after the epoch, which nothing else
/// sets on a directory it creates.
const MARKER: Duration = Duration::from_secs(1);

/// The first component of `path` below `root` that does not exist, if any.
pub fn first_missing(root: &Path, path: &Path) -> Option<PathBuf> {
    let relative = path.strip_prefix(root).ok()?;
    let mut current = root.to_path_buf();
    for component in relative.components() {
        current.push(component);
        if current.symlink_metadata().is_err() {
            return Some(current);
        }
    }
    None
}

/// Whether `path` is a stand-in: an empty directory with the marker time.
pub fn is_stand_in(path: &Path) -> bool {
    let Ok(meta) = path.symlink_metadata() else { return false };
    meta.is_dir() && meta.modified().ok() == Some(SystemTime::UNIX_EPOCH + MARKER) && is_empty_dir(path)
}

fn is_empty_dir(path: &Path) -> bool {
    std::fs::read_dir(path).map(|mut entries| entries.next().is_none()).unwrap_or(false)
}

/// Stand-ins held for one command: released (and removed when no one else holds them) on drop.
#[derive(Debug, Default)]
pub struct StandIns {
    held: Vec<Held>,
}

#[derive(Debug)]
struct Held {
    path: PathBuf,
    dir: File,
}

impl StandIns {
    /// Creates (or takes over) a stand-in at each path and holds it. A path that meanwhile
    /// became a real directory is left out: it exists, so the sandbox covers it as it is.
    pub fn hold(paths: &[PathBuf]) -> std::io::Result<Self> {
        let mut held = StandIns::default();
        for path in paths {
            if let Some(dir) = create_and_lock(path)? {
                held.held.push(Held { path: path.clone(), dir });
            }
        }
        Ok(held)
    }

    pub fn paths(&self) -> impl Iterator<Item = &Path> {
        self.held.iter().map(|held| held.path.as_path())
    }
}

/// Takes a shared lock on an existing stand-in, for the sandbox helper to hold while its command
/// runs; the lock goes with the returned file.
pub fn lock_shared(path: &Path) -> std::io::Result<File> {
    let dir = File::open(path)?;
    flock(&dir, libc::LOCK_SH)?;
    Ok(dir)
}

/// What a stand-in is called while it is being made, before it is renamed into place.
const MAKING_PREFIX: &str = ".larik-stand-in-";

/// Makes the stand-in whole before it appears: a directory with the marker time under a
/// temporary name, renamed to `path` unless something is there already. A process killed in
/// between leaves only the temporary directory, which [`sweep_unfinished`] removes.
fn create_whole(path: &Path) -> std::io::Result<()> {
    let (Some(parent), Some(name)) = (path.parent(), path.file_name()) else {
        return Err(std::io::Error::other("a stand-in needs a parent directory"));
    };
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let making = parent.join(format!(
        "{MAKING_PREFIX}{}-{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
        name.to_string_lossy()
    ));
    std::fs::create_dir(&making)?;
    let renamed = File::open(&making)
        .and_then(|dir| dir.set_modified(SystemTime::UNIX_EPOCH + MARKER))
        .and_then(|()| larik_host::platform::rename_no_replace(&making, path));
    if renamed.is_err() {
        let _ = std::fs::remove_dir(&making);
    }
    renamed
}

/// Removes stand-ins left half made in `dir` by a process killed while making them.
pub fn sweep_unfinished(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.filter_map(Result::ok) {
        let name = entry.file_name();
        let Some(rest) = name.to_str().and_then(|name| name.strip_prefix(MAKING_PREFIX)) else { continue };
        // Only another process's, and only when that process is gone.
        let maker = rest.split('-').next().and_then(|pid| pid.parse::<u32>().ok());
        if maker.is_some_and(|pid| pid != std::process::id() && !larik_host::platform::process_exists(pid))
            && is_empty_dir(&entry.path())
        {
            let _ = std::fs::remove_dir(entry.path());
        }
    }
}

fn create_and_lock(path: &Path) -> std::io::Result<Option<File>> {
    // A stand-in removed between our open and our lock is made again.
    for _ in 0..10 {
        match create_whole(path) {
            Ok(()) => {}
            Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists => {
                if !is_stand_in(path) {
                    // The user (or a program) made it: not ours to remove.
                    return Ok(None);
                }
            }
            Err(error) => return Err(error),
        }
        let dir = lock_shared(path)?;
        if same_inode(&dir, path) {
            return Ok(Some(dir));
        }
    }
    Err(std::io::Error::other(format!("{} kept changing while the sandbox was being set up", path.display())))
}

fn same_inode(dir: &File, path: &Path) -> bool {
    match (dir.metadata(), path.symlink_metadata()) {
        (Ok(held), Ok(now)) => held.ino() == now.ino() && held.dev() == now.dev(),
        _ => false,
    }
}

fn flock(file: &File, operation: libc::c_int) -> std::io::Result<()> {
    loop {
        // SAFETY: flock on a file descriptor this `File` owns; it changes only the lock state.
        if unsafe { libc::flock(file.as_raw_fd(), operation) } == 0 {
            return Ok(());
        }
        let error = std::io::Error::last_os_error();
        if error.kind() != std::io::ErrorKind::Interrupted {
            return Err(error);
        }
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        let Ok(inode) = self.dir.metadata().map(|meta| meta.ino()) else { return };
        // Our shared lock goes first; an exclusive lock then means no one else holds it.
        let _ = flock(&self.dir, libc::LOCK_UN);
        let Ok(again) = File::open(&self.path) else { return };
        if flock(&again, libc::LOCK_EX | libc::LOCK_NB).is_err() {
            return;
        }
        if again.metadata().map(|meta| meta.ino()).ok() == Some(inode)
            && is_stand_in(&self.path)
            && let Err(error) = std::fs::remove_dir(&self.path)
        {
            tracing::warn!(path = %self.path.display(), %error, "could not remove a sandbox stand-in");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // Stand-ins are made only for the Linux backend, with a call only Linux has.
    #[cfg(all(target_os = "linux", feature = "linux"))]
    #[test]
    fn a_stand_in_lives_while_anyone_holds_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(".vscode");
        let first = StandIns::hold(std::slice::from_ref(&path)).unwrap();
        assert!(is_stand_in(&path));
        let second = StandIns::hold(std::slice::from_ref(&path)).unwrap();
        drop(first);
        assert!(path.exists(), "still held by the second command");
        let helper = lock_shared(&path).unwrap();
        drop(second);
        assert!(path.exists(), "still held by a helper");
        drop(helper);
        StandIns::hold(std::slice::from_ref(&path)).map(drop).unwrap();
        assert!(!path.exists(), "the last one out removes it");
    }

    // Stand-ins are made only for the Linux backend, with a call only Linux has.
    #[cfg(all(target_os = "linux", feature = "linux"))]
    #[test]
    fn a_directory_the_user_made_is_never_taken() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(".claude");
        std::fs::create_dir(&path).unwrap();
        assert!(!is_stand_in(&path));
        let held = StandIns::hold(std::slice::from_ref(&path)).unwrap();
        assert_eq!(held.paths().count(), 0);
        drop(held);
        assert!(path.exists());
        // A stand-in left by a killed process is taken over and removed.
        let left = dir.path().join(".idea");
        std::fs::create_dir(&left).unwrap();
        File::open(&left).unwrap().set_modified(SystemTime::UNIX_EPOCH + MARKER).unwrap();
        StandIns::hold(std::slice::from_ref(&left)).map(drop).unwrap();
        assert!(!left.exists());
    }

    #[test]
    fn the_first_missing_component_stands_in() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join(".git")).unwrap();
        assert_eq!(
            first_missing(dir.path(), &dir.path().join(".git/info/attributes")),
            Some(dir.path().join(".git/info"))
        );
        assert_eq!(first_missing(dir.path(), &dir.path().join(".git")), None);
    }
}
