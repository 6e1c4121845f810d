//! Hiding what sandboxed commands may not read (`sandbox.filesystem.denyRead`): an empty
//! read-only directory mounted over a directory, `/dev/null` over anything else; inside a hidden
//! directory, the paths `allowRead` names are mounted back as they are, each where it was.
//! Runs in the helper, in the command's mount namespace, before Landlock.

use std::ffi::CString;
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use super::mount;

/// Hides `path`, but for the `readable` paths below it.
pub(crate) fn hide(path: &Path, readable: &[PathBuf]) -> Result<(), String> {
    let fail = |error: std::io::Error| format!("cannot hide {}: {error}", path.display());
    if !path.is_dir() {
        return mount(Some(Path::new("/dev/null")), path, libc::MS_BIND).map_err(fail);
    }
    // What stays readable is opened before the directory is covered, to be found again by
    // descriptor once it is.
    let kept: Vec<(PathBuf, OwnedFd, bool)> = readable
        .iter()
        .filter(|inside| inside.starts_with(path) && inside.as_path() != path)
        .filter_map(|inside| {
            let file = std::fs::OpenOptions::new().read(true).custom_flags(libc::O_PATH).open(inside).ok()?;
            Some((inside.clone(), OwnedFd::from(file), inside.is_dir()))
        })
        .collect();
    tmpfs(path, if kept.is_empty() { libc::MS_RDONLY } else { 0 }).map_err(fail)?;
    if kept.is_empty() {
        return Ok(());
    }
    for (inside, fd, is_dir) in &kept {
        let made = match is_dir {
            true => std::fs::create_dir_all(inside),
            false => inside
                .parent()
                .map_or(Ok(()), std::fs::create_dir_all)
                .and_then(|()| std::fs::File::create(inside).map(drop)),
        };
        made.map_err(fail)?;
        let source = PathBuf::from(format!("/proc/self/fd/{}", fd.as_raw_fd()));
        mount(Some(&source), inside, libc::MS_BIND | libc::MS_REC).map_err(fail)?;
    }
    // The cover itself read-only now; what was mounted back keeps its own flags.
    remount_read_only(path).map_err(fail)
}

fn tmpfs(path: &Path, read_only: libc::c_ulong) -> std::io::Result<()> {
    let target = CString::new(path.as_os_str().as_bytes())?;
    // SAFETY: constant C strings and a valid target; the options are a C string too.
    let result = unsafe {
        libc::mount(
            c"tmpfs".as_ptr(),
            target.as_ptr(),
            c"tmpfs".as_ptr(),
            read_only | libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC,
            c"size=64k,mode=0555".as_ptr().cast(),
        )
    };
    if result == 0 { Ok(()) } else { Err(std::io::Error::last_os_error()) }
}

fn remount_read_only(path: &Path) -> std::io::Result<()> {
    let target = CString::new(path.as_os_str().as_bytes())?;
    // SAFETY: a valid target, no source, type or data.
    let result = unsafe {
        libc::mount(
            std::ptr::null(),
            target.as_ptr(),
            std::ptr::null(),
            libc::MS_REMOUNT | libc::MS_RDONLY | libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC,
            std::ptr::null(),
        )
    };
    if result == 0 { Ok(()) } else { Err(std::io::Error::last_os_error()) }
}
