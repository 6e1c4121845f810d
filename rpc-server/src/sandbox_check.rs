//! `larik sandbox check`: what the shell sandbox enforces on this machine for the project in
//! the current directory, in words a user can paste into a bug report. Runs the same probe the
//! agent trusts before it lets a command run without asking.

use std::collections::HashMap;
use std::io::Write;

use larik_core::config;
use larik_core::sandbox::{self, Sandbox};

/// Prints the report; the exit code is 0 when commands are sandboxed, 1 when they would ask.
pub fn run(env: &HashMap<String, String>) -> anyhow::Result<i32> {
    let cwd = std::env::current_dir()?;
    let settings = config::load_settings(&cwd, env)?;
    let permissions = config::load_permissions(&cwd, env)?;
    let sandbox_settings = settings.sandbox.unwrap_or_default();
    let helper = std::env::current_exe()?;
    let support = sandbox::probe::support(&helper);
    let mut out = String::new();
    let landlock = match support.landlock_abi {
        Some(abi) => format!("ABI {abi}"),
        None => "not available".into(),
    };
    out.push_str(&format!("Project:     {}\nLandlock:    {landlock}\n", cwd.display()));
    let enforced = sandbox_settings.enabled != Some(false) && support.enforced();
    match (&support.problem, sandbox_settings.enabled) {
        (_, Some(false)) => {
            out.push_str("Sandbox:     off (sandbox.enabled is false in settings); every command asks first\n")
        }
        (Some(problem), _) => out.push_str(&format!("Sandbox:     off ({problem}); every command asks first\n")),
        (None, _) => {
            out.push_str("Sandbox:     on: user, mount, PID and network namespaces, Landlock, seccomp socket filter\n")
        }
    }
    let writable = sandbox_settings.writable_paths.iter().map(std::path::PathBuf::from).collect();
    let policy = Sandbox::new(helper, cwd, writable, &permissions.protected_paths, sandbox_settings.network);
    out.push_str("Writable:\n");
    for path in policy.writable() {
        out.push_str(&format!("  {}\n", path.display()));
    }
    out.push_str("Read-only inside the project (created or not):\n");
    for protected in policy.protected() {
        let state = if protected.path.symlink_metadata().is_ok() { "exists" } else { "absent, kept absent" };
        out.push_str(&format!("  {} ({state}): {}\n", protected.path.display(), protected.why));
    }
    let network = if policy.network() {
        "on (sandbox.network is true)"
    } else {
        "off: no socket but a Unix one; service sockets (session bus, docker) hidden"
    };
    out.push_str(&format!("Network:     {network}\n"));
    let mut stdout = std::io::stdout().lock();
    stdout.write_all(out.as_bytes())?;
    stdout.flush()?;
    Ok(if enforced { 0 } else { 1 })
}
