//! The helper's end of the proxy. Inside the command's network namespace only the loopback
//! exists; the helper brings it up and listens there on [`HTTP_PORT`] and [`SOCKS_PORT`], and
//! hands each connection over the Unix socket to the agent's proxy (`handover`), which reads the
//! protocol, decides, and carries it. The command's environment points its tools there
//! (`network::proxy_environment`); it has no resolver, since the proxy resolves names.
//!
//! The carrier is a process of its own, forked by the helper before it enters the command's PID
//! namespace (a process in a new PID namespace can start no thread): outside the command's
//! seccomp filter, Landlock domain and PID namespace, the command can neither see it nor reach
//! the Unix socket but through these two ports. It dies with the helper.

use std::net::{Shutdown, TcpListener, TcpStream};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};

use crate::network::{HTTP_PORT, SOCKS_PORT};

/// Brings the namespace's loopback up, listens on it and forks the carrier.
pub(crate) fn start(socket: &Path) -> Result<(), String> {
    let listeners = listen()?;
    // SAFETY: plain getter.
    let helper = unsafe { libc::getpid() };
    // SAFETY: the helper is single-threaded here; the child only starts threads of its own.
    match unsafe { libc::fork() } {
        -1 => Err(format!("fork: {}", std::io::Error::last_os_error())),
        0 => {
            // SAFETY: sets the signal this process gets when the helper dies; then checks the
            // helper did not die before that.
            unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) };
            if unsafe { libc::getppid() } != helper {
                std::process::exit(0);
            }
            // The command's output pipe is not the carrier's to hold open.
            if let Ok(null) = std::fs::OpenOptions::new().read(true).write(true).open("/dev/null") {
                use std::os::fd::AsRawFd;
                for fd in 0..3 {
                    // SAFETY: replaces the standard descriptors with /dev/null; both are valid.
                    unsafe { libc::dup2(null.as_raw_fd(), fd) };
                }
            }
            hand_over_each(listeners, socket.to_path_buf());
            std::process::exit(0)
        }
        _ => Ok(()),
    }
}

fn listen() -> Result<Vec<TcpListener>, String> {
    loopback_up().map_err(|error| format!("cannot bring up the sandbox's loopback: {error}"))?;
    [HTTP_PORT, SOCKS_PORT]
        .iter()
        .map(|port| {
            TcpListener::bind(("127.0.0.1", *port))
                .map_err(|error| format!("cannot listen for the proxy on port {port}: {error}"))
        })
        .collect()
}

/// Hands connections over until the helper ends, one thread per listener.
fn hand_over_each(listeners: Vec<TcpListener>, socket: PathBuf) {
    let acceptors: Vec<_> = listeners
        .into_iter()
        .map(|listener| {
            let socket = socket.clone();
            std::thread::spawn(move || {
                for client in listener.incoming().flatten() {
                    hand_over(client, &socket);
                }
            })
        })
        .collect();
    for acceptor in acceptors {
        let _ = acceptor.join();
    }
}

fn hand_over(client: TcpStream, socket: &Path) {
    let handed = UnixStream::connect(socket).and_then(|proxy| crate::handover::send(&proxy, &client));
    if handed.is_err() {
        let _ = client.shutdown(Shutdown::Both);
    }
}

fn loopback_up() -> std::io::Result<()> {
    // SAFETY: a plain datagram socket for the interface ioctls; closed below.
    let socket = unsafe { libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0) };
    if socket < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: `ifreq` is plain data; the name fits and is NUL-terminated; the ioctls read and
    // write only the struct.
    let result = unsafe {
        let mut request: libc::ifreq = std::mem::zeroed();
        for (slot, byte) in request.ifr_name.iter_mut().zip(b"lo\0") {
            *slot = *byte as libc::c_char;
        }
        let mut result = libc::ioctl(socket, libc::SIOCGIFFLAGS, &mut request);
        if result == 0 {
            request.ifr_ifru.ifru_flags |= libc::IFF_UP as libc::c_short;
            result = libc::ioctl(socket, libc::SIOCSIFFLAGS, &request);
        }
        result
    };
    let error = std::io::Error::last_os_error();
    // SAFETY: our own descriptor.
    unsafe { libc::close(socket) };
    if result == 0 { Ok(()) } else { Err(error) }
}
