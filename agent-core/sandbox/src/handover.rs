//! Handing a connection from the sandbox's namespace to the agent: the carrier accepts the
//! command's connection on the namespace's loopback and sends its descriptor over the proxy's
//! Unix socket (`SCM_RIGHTS`); the agent then reads and writes the command's socket itself, so a
//! download crosses one relay, as through any proxy, and the carrier copies nothing.

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

/// Room for one descriptor's control message.
const CONTROL_SPACE: usize = 64;

/// A proxy gone away is an error, not a SIGPIPE (elsewhere the binary ignores SIGPIPE, as every
/// Rust program does, so the plain call answers the same).
#[cfg(all(target_os = "linux", feature = "linux"))]
const SEND_FLAGS: libc::c_int = libc::MSG_NOSIGNAL;
#[cfg(not(all(target_os = "linux", feature = "linux")))]
#[allow(dead_code)]
const SEND_FLAGS: libc::c_int = 0;

/// Sends `connection` over `channel` (the Linux helper's carrier does).
#[cfg_attr(not(all(target_os = "linux", feature = "linux")), allow(dead_code))]
pub(crate) fn send(channel: &impl AsRawFd, connection: &impl AsRawFd) -> std::io::Result<()> {
    let mut byte = [1u8];
    let mut control = [0u8; CONTROL_SPACE];
    let fd: RawFd = connection.as_raw_fd();
    // SAFETY: the message points at live buffers for the call; the control buffer is large
    // enough for one descriptor (CMSG_SPACE of an int), and CMSG_FIRSTHDR is non-null for it.
    let sent = unsafe {
        let mut iov = libc::iovec { iov_base: byte.as_mut_ptr().cast(), iov_len: 1 };
        let mut message: libc::msghdr = std::mem::zeroed();
        message.msg_iov = &mut iov;
        message.msg_iovlen = 1;
        message.msg_control = control.as_mut_ptr().cast();
        message.msg_controllen = libc::CMSG_SPACE(std::mem::size_of::<RawFd>() as u32) as _;
        let header = libc::CMSG_FIRSTHDR(&message);
        (*header).cmsg_level = libc::SOL_SOCKET;
        (*header).cmsg_type = libc::SCM_RIGHTS;
        (*header).cmsg_len = libc::CMSG_LEN(std::mem::size_of::<RawFd>() as u32) as _;
        std::ptr::write_unaligned(libc::CMSG_DATA(header).cast::<RawFd>(), fd);
        libc::sendmsg(channel.as_raw_fd(), &message, SEND_FLAGS)
    };
    if sent == 1 { Ok(()) } else { Err(std::io::Error::last_os_error()) }
}

/// The connection sent over `channel`; `WouldBlock` when none has arrived yet.
pub(crate) fn receive(channel: &impl AsRawFd) -> std::io::Result<OwnedFd> {
    let mut byte = [0u8];
    let mut control = [0u8; CONTROL_SPACE];
    // SAFETY: as in `send`; the kernel fills at most `msg_controllen` bytes, and a descriptor
    // found in an SCM_RIGHTS message is new and ours.
    unsafe {
        let mut iov = libc::iovec { iov_base: byte.as_mut_ptr().cast(), iov_len: 1 };
        let mut message: libc::msghdr = std::mem::zeroed();
        message.msg_iov = &mut iov;
        message.msg_iovlen = 1;
        message.msg_control = control.as_mut_ptr().cast();
        message.msg_controllen = CONTROL_SPACE as _;
        let received = libc::recvmsg(channel.as_raw_fd(), &mut message, RECEIVE_FLAGS);
        if received < 0 {
            return Err(std::io::Error::last_os_error());
        }
        let header = libc::CMSG_FIRSTHDR(&message);
        if !header.is_null() && (*header).cmsg_level == libc::SOL_SOCKET && (*header).cmsg_type == libc::SCM_RIGHTS {
            let fd = std::ptr::read_unaligned(libc::CMSG_DATA(header).cast::<RawFd>());
            let fd = OwnedFd::from_raw_fd(fd);
            close_on_exec(&fd)?;
            return Ok(fd);
        }
    }
    Err(std::io::Error::new(std::io::ErrorKind::InvalidData, "no connection was handed over"))
}

/// Received descriptors close on exec: atomically where the system can (Linux), just after
/// elsewhere (a program another thread starts in that instant may inherit one).
#[cfg(all(target_os = "linux", feature = "linux"))]
const RECEIVE_FLAGS: libc::c_int = libc::MSG_CMSG_CLOEXEC;
#[cfg(not(all(target_os = "linux", feature = "linux")))]
const RECEIVE_FLAGS: libc::c_int = 0;

#[cfg(all(target_os = "linux", feature = "linux"))]
fn close_on_exec(_fd: &OwnedFd) -> std::io::Result<()> {
    Ok(())
}

#[cfg(not(all(target_os = "linux", feature = "linux")))]
fn close_on_exec(fd: &OwnedFd) -> std::io::Result<()> {
    // SAFETY: sets a flag on a descriptor we own.
    if unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_SETFD, libc::FD_CLOEXEC) } == -1 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}
