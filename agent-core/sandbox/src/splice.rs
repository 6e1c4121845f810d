//! Moving a connection's bytes from one socket to another through a pipe (`splice(2)`), so
//! they never enter the process.

use std::os::fd::AsRawFd;

/// What one splice moves: the pipe is made this large where the system lets it.
const SPLICE_CHUNK: usize = 1 << 20;

pub(crate) enum Spliced {
    /// Nothing was moved; the kernel cannot splice these.
    Unsupported,
    /// A side failed or closed midway.
    Ended,
}

pub(crate) fn spliced(from: &impl AsRawFd, to: &impl AsRawFd) -> Result<(), Spliced> {
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
