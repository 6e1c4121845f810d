//! How Larik starts the programs it runs (commands, hooks, language and MCP servers, the
//! browser): each is killed by the kernel when the agent dies without stopping it
//! (`PR_SET_PDEATHSIG`), so a killed agent leaves nothing behind. A sandboxed command's
//! helper dying takes the command's whole PID namespace with it; an unconfined command's own
//! children outlive it only if they left its process group.

/// Makes `command`'s process receive SIGKILL when the agent's thread that started it ends (the
/// runtime's threads live as long as the agent).
pub fn dies_with_agent(command: &mut tokio::process::Command) -> &mut tokio::process::Command {
    let agent = libc::pid_t::try_from(std::process::id()).unwrap_or(0);
    // SAFETY: only prctl and getppid run between fork and exec, both async-signal-safe.
    unsafe {
        command.pre_exec(move || {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) == -1 {
                return Err(std::io::Error::last_os_error());
            }
            // An agent killed between the fork and the prctl sent no signal: the child, already
            // handed to another parent, must not go on to run the program.
            if libc::getppid() != agent {
                return Err(std::io::Error::from_raw_os_error(libc::ESRCH));
            }
            Ok(())
        });
    }
    command
}
