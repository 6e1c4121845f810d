//! Systems without Linux's calls (macOS), and Linux builds with the `linux` feature off.

use std::path::Path;

/// No parent-death signal exists here: a child outlives an agent that is killed outright (an
/// agent that stops in order still ends each one). Refuses, as on Linux, when the agent
/// `parent` is already gone. Only async-signal-safe calls.
pub fn die_with_parent(parent: libc::pid_t) -> std::io::Result<()> {
    // SAFETY: getppid is async-signal-safe and takes no arguments.
    if unsafe { libc::getppid() } != parent {
        return Err(std::io::Error::from_raw_os_error(libc::ESRCH));
    }
    Ok(())
}

/// No way to name a file that has none: the caller writes a named temp file instead.
pub fn link_unnamed(_file: &std::fs::File, _to: &Path) -> std::io::Result<()> {
    Err(std::io::Error::new(std::io::ErrorKind::Unsupported, "no unnamed files here"))
}

/// Whether a process with this id exists: signal 0 checks without sending anything.
pub fn process_exists(pid: u32) -> bool {
    let Ok(pid) = libc::pid_t::try_from(pid) else { return false };
    // SAFETY: kill with signal 0 only checks that the process exists and may be signalled.
    let answer = unsafe { libc::kill(pid, 0) };
    answer == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

/// Renames `from` to `to` unless `to` exists (then `AlreadyExists`), in one step where the
/// system has the call (macOS's `renamex_np`); elsewhere `Unsupported`.
pub fn rename_no_replace(from: &Path, to: &Path) -> std::io::Result<()> {
    #[cfg(target_os = "macos")]
    {
        use std::os::unix::ffi::OsStrExt;
        let (from, to) =
            (std::ffi::CString::new(from.as_os_str().as_bytes())?, std::ffi::CString::new(to.as_os_str().as_bytes())?);
        // SAFETY: two NUL-terminated paths that live across the call.
        if unsafe { libc::renamex_np(from.as_ptr(), to.as_ptr(), libc::RENAME_EXCL) } == 0 {
            return Ok(());
        }
        Err(std::io::Error::last_os_error())
    }
    #[cfg(not(target_os = "macos"))]
    {
        let _ = (from, to);
        Err(std::io::Error::new(std::io::ErrorKind::Unsupported, "no rename that keeps an existing target here"))
    }
}
