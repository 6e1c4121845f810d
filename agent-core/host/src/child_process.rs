//! How Larik starts the programs it runs (commands, hooks, language and MCP servers, the
//! browser): each is killed by the kernel when the agent dies without stopping it
//! (`PR_SET_PDEATHSIG` on Linux; see `platform`), so a killed agent leaves nothing behind. A sandboxed command's
//! helper dying takes the command's whole PID namespace with it; an unconfined command's own
//! children outlive it only if they left its process group.

/// Makes `command`'s process receive SIGKILL when the agent's thread that started it ends (the
/// runtime's threads live as long as the agent).
pub fn dies_with_agent(command: &mut tokio::process::Command) -> &mut tokio::process::Command {
    let agent = libc::pid_t::try_from(std::process::id()).unwrap_or(0);
    // SAFETY: the platform's call runs only async-signal-safe calls between fork and exec.
    unsafe {
        command.pre_exec(move || crate::platform::die_with_parent(agent));
    }
    command
}

/// The first executable file named `program` in the directories of `path` (a PATH value).
pub fn on_path(program: &str, path: &str) -> Option<std::path::PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    std::env::split_paths(path).map(|dir| dir.join(program)).find(|candidate| {
        std::fs::metadata(candidate).is_ok_and(|meta| meta.is_file() && meta.permissions().mode() & 0o111 != 0)
    })
}
