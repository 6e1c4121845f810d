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
    let files = config::SettingsFiles::default();
    let settings = config::load_settings_from(&files, &cwd, env)?;
    let permissions = config::load_permissions_from(&files, &cwd, env)?;
    let sandbox_settings = settings.sandbox.clone().unwrap_or_default();
    let helper = std::env::current_exe()?;
    let support = sandbox::probe::support(&helper);
    let mut out = String::new();
    let landlock = match support.landlock_abi {
        Some(abi) => format!("ABI {abi}"),
        None => "not available".into(),
    };
    out.push_str(&format!(
        "Project:     {}\nBackend:     {}\nLandlock:    {landlock}\n",
        cwd.display(),
        sandbox::backend_name()
    ));
    let enforced = sandbox_settings.enabled != Some(false) && support.enforced();
    match (&support.problem, sandbox_settings.enabled) {
        (_, Some(false)) => {
            out.push_str("Sandbox:     off (sandbox.enabled is false in settings); every command asks first\n")
        }
        (Some(problem), _) => out.push_str(&format!("Sandbox:     off ({problem}); every command asks first\n")),
        (None, _) => out.push_str(&format!("Sandbox:     on ({}), checked on this machine\n", sandbox::backend_name())),
    }
    let writable = sandbox_settings.writable_paths.iter().map(std::path::PathBuf::from).collect();
    let (domains, problems) = larik_core::session::domain_policy(&settings);
    let policy = Sandbox::new(helper, cwd, writable, &permissions.protected_paths, sandbox_settings.network.full)
        .with_domains(domains);
    out.push_str("Writable:\n");
    for path in policy.writable() {
        out.push_str(&format!("  {}\n", path.display()));
    }
    out.push_str("Read-only inside the project (created or not):\n");
    for protected in policy.protected() {
        let state = if protected.path.symlink_metadata().is_ok() { "exists" } else { "absent, kept absent" };
        out.push_str(&format!("  {} ({state}): {}\n", protected.path.display(), protected.why));
    }
    out.push_str(&network_report(&policy, &problems));
    let mut stdout = std::io::stdout().lock();
    stdout.write_all(out.as_bytes())?;
    stdout.flush()?;
    Ok(if enforced { 0 } else { 1 })
}

/// The network part of the report: open, or the proxy with its lists.
fn network_report(policy: &Sandbox, problems: &[String]) -> String {
    let Some(domains) = policy.domains() else {
        return "Network:     open (sandbox.network is true): sandboxed commands reach anything\n".into();
    };
    let mut out = format!(
        "Network:     through Larik's proxy only (HTTP and HTTPS on 127.0.0.1:{}, SOCKS5 on 127.0.0.1:{} inside the sandbox); names are resolved by the proxy\n",
        sandbox::network::HTTP_PORT,
        sandbox::network::SOCKS_PORT
    );
    let list = sandbox::network::listing;
    out.push_str(&format!("  Allowed:   {}\n", list(&domains.allowed)));
    if !domains.project_allowed.is_empty() {
        out.push_str(&format!("  Allowed once the project is approved: {}\n", list(&domains.project_allowed)));
    }
    out.push_str(&format!("  Denied:    {}\n", list(&domains.denied)));
    let unlisted = if domains.managed_only {
        "refused (the managed policy allows only its own domains)"
    } else {
        "asks you through the editor, once per command (headless: refused)"
    };
    out.push_str(&format!("  Other domains: {unlisted}\n"));
    out.push_str("  Always refused unless an allowed entry names them exactly: IP addresses, and names resolving to loopback, private or link-local addresses (cloud metadata included)\n");
    let unix = if domains.unix_sockets { "open (allowAllUnixSockets)" } else { "closed" };
    let binding = if domains.local_binding { "allowed (allowLocalBinding)" } else { "refused" };
    out.push_str(&format!(
        "  Unix sockets: {unix}; listening on the sandbox's own loopback: {binding}; UDP and raw sockets: closed\n"
    ));
    for problem in problems {
        out.push_str(&format!("  Note: {problem}\n"));
    }
    out
}
