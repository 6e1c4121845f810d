//! Copying a connection both ways, for the proxy's two ends (the carrier in the sandbox's
//! namespace and the proxy in the agent): through a pipe with `splice(2)`, so the bytes never
//! enter the process, or by reading and writing where the kernel refuses that. Each direction
//! runs on a thread of its own and passes the end of its data on as a half close.

use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::{AsRawFd, OwnedFd};

/// What one read and write move where the kernel cannot splice.
const BUFFER: usize = 64 * 1024;
/// What one splice moves: the pipe is made this large where the system lets it.
const SPLICE_CHUNK: usize = 1 << 20;

/// Copies between two connected sockets until both directions ended; blocks.
pub(crate) fn both_ways(one: OwnedFd, other: OwnedFd) {
    let (Ok(one_back), Ok(other_back)) = (one.try_clone(), other.try_clone()) else { return };
    let forth = std::thread::spawn(move || one_way(&one, &other));
    one_way(&other_back, &one_back);
    let _ = forth.join();
}

/// Copies `from` into `to`, then half-closes `to`.
fn one_way(from: &OwnedFd, to: &OwnedFd) {
    if let Err(Spliced::Unsupported) = spliced(from, to)
        && let (Ok(from), Ok(to)) = (from.try_clone(), to.try_clone())
    {
        copied(File::from(from), File::from(to));
    }
    // SAFETY: a plain call on our own socket; an error (not a socket, not connected) is harmless.
    unsafe { libc::shutdown(to.as_raw_fd(), libc::SHUT_WR) };
}

enum Spliced {
    /// Nothing was moved; the kernel cannot splice these.
    Unsupported,
    /// A side failed or closed midway.
    Ended,
}

fn spliced(from: &impl AsRawFd, to: &impl AsRawFd) -> Result<(), Spliced> {
    let mut ends = [0; 2];
    // SAFETY: `ends` is a valid two-int out-array; both ends close on exec and below.
    if unsafe { libc::pipe2(ends.as_mut_ptr(), libc::O_CLOEXEC) } == -1 {
        return Err(Spliced::Unsupported);
    }
    let [pipe_read, pipe_write] = ends;
    // SAFETY: resizes our own pipe; a refusal leaves the default size, which works too.
    unsafe { libc::fcntl(pipe_write, libc::F_SETPIPE_SZ, SPLICE_CHUNK as libc::c_int) };
    let result = splice_through(from.as_raw_fd(), to.as_raw_fd(), pipe_read, pipe_write);
    // SAFETY: the pipe's two ends, ours.
    unsafe {
        libc::close(pipe_read);
        libc::close(pipe_write);
    }
    result
}

fn splice_through(from: i32, to: i32, pipe_read: i32, pipe_write: i32) -> Result<(), Spliced> {
    let null = std::ptr::null_mut();
    let mut moved_any = false;
    loop {
        // SAFETY: plain descriptors valid for the call; null offsets (sockets and pipes).
        let read = unsafe { libc::splice(from, null, pipe_write, null, SPLICE_CHUNK, libc::SPLICE_F_MOVE) };
        if read == 0 {
            return Ok(());
        }
        if read < 0 {
            return Err(if moved_any { Spliced::Ended } else { Spliced::Unsupported });
        }
        moved_any = true;
        let mut left = read;
        while left > 0 {
            // SAFETY: as above; `left` is positive.
            let written = unsafe { libc::splice(pipe_read, null, to, null, left.unsigned_abs(), libc::SPLICE_F_MOVE) };
            if written <= 0 {
                return Err(Spliced::Ended);
            }
            left -= written;
        }
    }
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
