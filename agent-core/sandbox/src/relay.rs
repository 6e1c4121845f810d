//! Copying a connection both ways, for the proxy in the agent: on Linux through a pipe with
//! `splice(2)` (`splice`), so the bytes never enter the process, or by reading and
//! writing where the kernel refuses that or has no such call. Each direction
//! runs on a thread of its own and passes the end of its data on as a half close.

use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::{AsRawFd, OwnedFd};

/// What one read and write move where the kernel cannot splice.
const BUFFER: usize = 64 * 1024;

/// Copies between two connected sockets until both directions ended; blocks.
pub(crate) fn both_ways(one: OwnedFd, other: OwnedFd) {
    let (Ok(one_back), Ok(other_back)) = (one.try_clone(), other.try_clone()) else { return };
    let forth = std::thread::spawn(move || one_way(&one, &other));
    one_way(&other_back, &one_back);
    let _ = forth.join();
}

/// Copies `from` into `to`, then half-closes `to`.
fn one_way(from: &OwnedFd, to: &OwnedFd) {
    if !spliced(from, to)
        && let (Ok(from), Ok(to)) = (from.try_clone(), to.try_clone())
    {
        copied(File::from(from), File::from(to));
    }
    // SAFETY: a plain call on our own socket; an error (not a socket, not connected) is harmless.
    unsafe { libc::shutdown(to.as_raw_fd(), libc::SHUT_WR) };
}

/// Whether the kernel moved the connection (to its end, or until a side failed midway).
#[cfg(all(target_os = "linux", feature = "linux"))]
fn spliced(from: &OwnedFd, to: &OwnedFd) -> bool {
    !matches!(crate::splice::spliced(from, to), Err(crate::splice::Spliced::Unsupported))
}

/// No `splice(2)` here: every byte is read and written.
#[cfg(not(all(target_os = "linux", feature = "linux")))]
fn spliced(_from: &OwnedFd, _to: &OwnedFd) -> bool {
    false
}

fn copied(mut from: impl Read, mut to: impl Write) {
    let mut buffer = vec![0; BUFFER];
    loop {
        match from.read(&mut buffer) {
            Ok(0) | Err(_) => return,
            Ok(read) => {
                if to.write_all(&buffer[..read]).is_err() {
                    return;
                }
            }
        }
    }
}
