//! The Chromium processes a test's agent started, found under the test's private home, and a
//! fault those processes can be put through: their DevTools connection dropped from the
//! browser's side while the process stays, as a browser that is shutting down does.

use std::collections::HashMap;
use std::path::Path;
use std::time::Duration;

/// Chromium processes started for the profile under `home` (zombies left out), with their
/// command lines.
pub fn browsers_of(home: &Path) -> Vec<(u32, String)> {
    let needle = home.display().to_string();
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter_map(|pid| {
            let cmdline =
                String::from_utf8_lossy(&std::fs::read(format!("/proc/{pid}/cmdline")).ok()?).replace('\0', " ");
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            (cmdline.contains(&needle) && cmdline.contains("--user-data-dir") && !stat.contains(") Z "))
                .then_some((pid, cmdline))
        })
        .collect()
}

/// The browser's own process (not its renderers and helpers).
pub fn main_browser(home: &Path) -> Option<u32> {
    browsers_of(home).into_iter().find(|(_, cmdline)| !cmdline.contains("--type=")).map(|(pid, _)| pid)
}

/// Whether every browser process under `home` is gone within `seconds`.
pub async fn gone_within(home: &Path, seconds: u64) -> bool {
    let deadline = std::time::Instant::now() + Duration::from_secs(seconds);
    while !browsers_of(home).is_empty() {
        if std::time::Instant::now() > deadline {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    true
}

/// Shuts down, inside browser process `pid`, every connection accepted on its DevTools port:
/// the agent sees its connection end while the process goes on. The socket is taken from the
/// process with `pidfd_getfd(2)` (the test runs as the browser's user) and shut down, which
/// acts on the connection itself, not on a copy. Returns how many were shut down.
pub fn drop_devtools_connections(pid: u32) -> usize {
    let descriptors = socket_descriptors(pid);
    let table: Vec<TcpEntry> = ["tcp", "tcp6"]
        .iter()
        .flat_map(|family| {
            let text = std::fs::read_to_string(format!("/proc/{pid}/net/{family}")).unwrap_or_default();
            text.lines().skip(1).filter_map(TcpEntry::parse).collect::<Vec<_>>()
        })
        .filter(|entry| descriptors.contains_key(&entry.inode))
        .collect();
    let listening: Vec<u16> = table.iter().filter(|entry| entry.state == LISTEN).map(|entry| entry.port).collect();
    assert!(!listening.is_empty(), "browser {pid} listens on no port");
    let accepted: Vec<i32> = table
        .iter()
        .filter(|entry| entry.state == ESTABLISHED && listening.contains(&entry.port))
        .map(|entry| descriptors[&entry.inode])
        .collect();
    // SAFETY: plain system calls on a pid and descriptors this function owns; each result is checked.
    unsafe {
        let process = libc::syscall(libc::SYS_pidfd_open, pid, 0);
        assert!(process >= 0, "pidfd_open({pid}): {}", std::io::Error::last_os_error());
        for descriptor in &accepted {
            let ours = libc::syscall(libc::SYS_pidfd_getfd, process, *descriptor, 0);
            assert!(ours >= 0, "pidfd_getfd: {}", std::io::Error::last_os_error());
            let ours = i32::try_from(ours).unwrap();
            assert_eq!(libc::shutdown(ours, libc::SHUT_RDWR), 0, "shutdown: {}", std::io::Error::last_os_error());
            libc::close(ours);
        }
        libc::close(i32::try_from(process).unwrap());
    }
    accepted.len()
}

const ESTABLISHED: u8 = 0x01;
const LISTEN: u8 = 0x0A;

/// One row of `/proc/PID/net/tcp{,6}`: the local port, the state and the socket's inode.
struct TcpEntry {
    port: u16,
    state: u8,
    inode: u64,
}

impl TcpEntry {
    fn parse(line: &str) -> Option<Self> {
        let fields: Vec<&str> = line.split_whitespace().collect();
        let port = u16::from_str_radix(fields.get(1)?.rsplit(':').next()?, 16).ok()?;
        let state = u8::from_str_radix(fields.get(3)?, 16).ok()?;
        let inode = fields.get(9)?.parse().ok()?;
        Some(Self { port, state, inode })
    }
}

/// The process's socket descriptors by socket inode.
fn socket_descriptors(pid: u32) -> HashMap<u64, i32> {
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .unwrap()
        .filter_map(|entry| {
            let entry = entry.ok()?;
            let target = std::fs::read_link(entry.path()).ok()?;
            let inode = target.to_str()?.strip_prefix("socket:[")?.strip_suffix(']')?.parse().ok()?;
            Some((inode, entry.file_name().to_str()?.parse().ok()?))
        })
        .collect()
}
