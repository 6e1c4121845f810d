//! Linux: the parent-death signal, linking a file that has no name, and `/proc`.

use std::path::Path;

/// Between fork and exec: asks for SIGKILL when the thread that forked (a runtime thread, which
/// lives as long as the agent) ends, and refuses to go on when the agent `parent` is already
/// gone. Only async-signal-safe calls.
pub fn die_with_parent(parent: libc::pid_t) -> std::io::Result<()> {
    // SAFETY: prctl and getppid are async-signal-safe and take no pointers.
    unsafe {
        if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) == -1 {
            return Err(std::io::Error::last_os_error());
        }
        // An agent killed between the fork and the prctl sent no signal: the child, already
        // handed to another parent, must not go on to run the program.
        if libc::getppid() != parent {
            return Err(std::io::Error::from_raw_os_error(libc::ESRCH));
        }
    }
    Ok(())
}

/// Gives an open file without a name (`O_TMPFILE`) the name `to`.
pub fn link_unnamed(file: &std::fs::File, to: &Path) -> std::io::Result<()> {
    use std::os::fd::AsRawFd;
    use std::os::unix::ffi::OsStrExt;
    let from = std::ffi::CString::new(format!("/proc/self/fd/{}", file.as_raw_fd()))?;
    let to = std::ffi::CString::new(to.as_os_str().as_bytes())?;
    // SAFETY: two NUL-terminated paths that live across the call.
    if unsafe { libc::linkat(libc::AT_FDCWD, from.as_ptr(), libc::AT_FDCWD, to.as_ptr(), libc::AT_SYMLINK_FOLLOW) } == 0
    {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// Whether a process with this id exists (zombies included, as the kernel still lists them).
pub fn process_exists(pid: u32) -> bool {
    Path::new(&format!("/proc/{pid}")).exists()
}

/// Renames `from` to `to` unless `to` exists (then `AlreadyExists`), in one step.
pub fn rename_no_replace(from: &Path, to: &Path) -> std::io::Result<()> {
    use std::os::unix::ffi::OsStrExt;
    let (from, to) =
        (std::ffi::CString::new(from.as_os_str().as_bytes())?, std::ffi::CString::new(to.as_os_str().as_bytes())?);
    // SAFETY: two NUL-terminated paths that live across the call.
    if unsafe { libc::renameat2(libc::AT_FDCWD, from.as_ptr(), libc::AT_FDCWD, to.as_ptr(), libc::RENAME_NOREPLACE) }
        == 0
    {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}
