//! What `/proc` says of a running process: its memory and the CPU time it used.

use std::time::Duration;

/// Resident and peak memory of a process, in KiB, from /proc.
pub(crate) fn memory_kib(pid: u32) -> (u64, u64) {
    status_kib(pid, "VmRSS:", "VmHWM:")
}

/// Resident memory of a process split into anonymous (heap, stacks, relocated data) and
/// file-backed (the program's code and read-only data), in KiB.
pub(crate) fn resident_split_kib(pid: u32) -> (u64, u64) {
    status_kib(pid, "RssAnon:", "RssFile:")
}

/// Two fields of `/proc/<pid>/status`, in KiB (0 where missing).
fn status_kib(pid: u32, first: &str, second: &str) -> (u64, u64) {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find(|line| line.starts_with(name))
            .and_then(|line| line.split_whitespace().nth(1))
            .and_then(|kib| kib.parse().ok())
            .unwrap_or(0)
    };
    (field(first), field(second))
}

/// CPU time the process itself used (user + system).
pub(crate) fn cpu_time(pid: u32) -> Duration {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // Fields after the command name, which is in parentheses and may contain spaces.
    let fields: Vec<&str> =
        stat.rsplit_once(')').map(|(_, rest)| rest.split_whitespace().collect()).unwrap_or_default();
    let ticks: u64 = fields.get(11).and_then(|utime| utime.parse::<u64>().ok()).unwrap_or(0)
        + fields.get(12).and_then(|stime| stime.parse::<u64>().ok()).unwrap_or(0);
    // SAFETY: sysconf only reads a system constant.
    let per_second = u64::try_from(unsafe { libc::sysconf(libc::_SC_CLK_TCK) }).unwrap_or(100).max(1);
    Duration::from_millis(ticks * 1000 / per_second)
}

/// User and system CPU of this process (`RUSAGE_SELF`, every thread), of the calling thread
/// (`RUSAGE_THREAD`) or of the children waited for (`RUSAGE_CHILDREN`, with theirs).
pub(crate) fn cpu_used(who: libc::c_int) -> Duration {
    // SAFETY: `usage` is a valid out-pointer for the call; zeroed is a valid rusage.
    let usage = unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        libc::getrusage(who, &mut usage);
        usage
    };
    let micros = |time: libc::timeval| {
        Duration::from_secs(u64::try_from(time.tv_sec).unwrap_or(0))
            + Duration::from_micros(u64::try_from(time.tv_usec).unwrap_or(0))
    };
    micros(usage.ru_utime) + micros(usage.ru_stime)
}
