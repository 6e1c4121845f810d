//! The macOS backend: each command runs under `/usr/bin/sandbox-exec` with a Seatbelt profile
//! made from its [`Plan`]. The profile denies by default and allows: running and signalling
//! programs of the same sandbox, the system lookups a shell and compilers need, reading
//! everywhere but the hidden paths (the readable ones inside them excepted), writing inside the
//! writable roots and a few devices but never the protected paths nor the pinned directories
//! themselves (so none can be renamed away), and the network as the plan says: all of it, only
//! the agent's proxy on the host's loopback, or nothing.
//!
//! Paths never enter the profile's text: each is a parameter (`-D NAME=PATH`) the profile names,
//! so no path can change the profile. Seatbelt matches real paths, so each is resolved first
//! (`/tmp` is `/private/tmp` there); a path that does not exist yet is resolved through its
//! nearest existing ancestor, and the rules cover it by name, which is why this backend needs
//! no stand-ins.
//!
//! This module is plain code, built and unit-tested on every system; only choosing it as the
//! backend is macOS-only. What cannot be checked off a Mac (the profile's effect) is checked on
//! one by the probe, which `larik sandbox check` runs: see ARCHITECTURE.md.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use crate::backend::Backend;
use crate::network::proxy_environment;
use crate::plan::{Plan, SERVICE_SOCKETS, WRITABLE_DEVICES};

/// The system's own `sandbox-exec`, by absolute path: a command's PATH must not choose it.
pub const SANDBOX_EXEC: &str = "/usr/bin/sandbox-exec";

/// The Mach services a shell, git, compilers and package managers look up: user and group
/// names, logging, notifications, certificate trust, the system's configuration.
const MACH_SERVICES: &[&str] = &[
    "com.apple.system.opendirectoryd.libinfo",
    "com.apple.system.opendirectoryd.membership",
    "com.apple.system.logger",
    "com.apple.system.notification_center",
    "com.apple.logd",
    "com.apple.bsd.dirhelper",
    "com.apple.trustd.agent",
    "com.apple.SecurityServer",
    "com.apple.coreservices.launchservicesd",
    "com.apple.lsd.mapdb",
    "com.apple.FontObjectsServer",
    "com.apple.fonts",
];

/// The services name resolution needs; only with the network fully open (the proxy resolves
/// names otherwise).
const RESOLVER_SERVICES: &[&str] = &[
    "com.apple.SystemConfiguration.DNSConfiguration",
    "com.apple.SystemConfiguration.configd",
    "com.apple.networkd",
    "com.apple.dnssd.service",
];

/// What runs before any rule: the base every command needs.
const BASE: &str = r#"(version 1)
(deny default)
(allow process-exec)
(allow process-fork)
(allow signal (target same-sandbox))
(allow process-info* (target same-sandbox))
(allow sysctl-read)
(allow user-preference-read)
(allow ipc-posix-shm)
(allow ipc-posix-sem)
(allow pseudo-tty)
(allow file-ioctl (literal "/dev/tty") (regex #"^/dev/ttys[0-9]+$"))
"#;

/// A profile and the parameters it names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Profile {
    pub text: String,
    pub parameters: Vec<(String, PathBuf)>,
}

/// The profile for `plan`.
pub fn profile(plan: &Plan) -> Profile {
    let mut builder = ProfileBuilder::default();
    builder.text.push_str(BASE);
    builder.mach_lookups(MACH_SERVICES);
    builder.reads(plan);
    builder.writes(plan);
    builder.network(plan);
    Profile { text: builder.text, parameters: builder.parameters }
}

#[derive(Default)]
struct ProfileBuilder {
    text: String,
    parameters: Vec<(String, PathBuf)>,
}

impl ProfileBuilder {
    /// Names each path as a parameter `KIND_N` (each kind is named by one call) and returns
    /// `(FILTER (param "KIND_N"))` for each: `subpath` for the path and everything under it,
    /// `literal` for that entry only.
    fn named(&mut self, filter: &str, kind: &str, paths: &[PathBuf]) -> Vec<String> {
        paths
            .iter()
            .enumerate()
            .map(|(index, path)| {
                let name = format!("{kind}_{index}");
                let rule = format!("({filter} (param \"{name}\"))");
                self.parameters.push((name, real(path)));
                rule
            })
            .collect()
    }

    fn subpaths(&mut self, kind: &str, paths: &[PathBuf]) -> Vec<String> {
        self.named("subpath", kind, paths)
    }

    fn literals(&mut self, kind: &str, paths: &[PathBuf]) -> Vec<String> {
        self.named("literal", kind, paths)
    }

    fn mach_lookups(&mut self, services: &[&str]) {
        let names: Vec<String> = services.iter().map(|name| format!("(global-name \"{name}\")")).collect();
        let _ = writeln!(self.text, "(allow mach-lookup {})", names.join(" "));
    }

    /// Everything but the hidden paths; the readable ones inside them all the same.
    fn reads(&mut self, plan: &Plan) {
        let hidden = self.subpaths("HIDDEN", &plan.hidden);
        if hidden.is_empty() {
            self.text.push_str("(allow file-read*)\n");
            return;
        }
        let _ = writeln!(self.text, "(allow file-read* (require-not (require-any {})))", hidden.join(" "));
        let readable = self.subpaths("READABLE", &plan.readable);
        if !readable.is_empty() {
            let _ = writeln!(self.text, "(allow file-read* {})", readable.join(" "));
        }
    }

    /// The writable roots and devices, minus the protected paths (and everything under them)
    /// and the pinned directories' own entries.
    fn writes(&mut self, plan: &Plan) {
        let devices: Vec<PathBuf> = WRITABLE_DEVICES.iter().map(PathBuf::from).collect();
        let mut allowed = self.subpaths("WRITABLE", &plan.writable);
        allowed.extend(self.subpaths("DEVICE", &devices));
        let protected: Vec<PathBuf> = plan.read_only.iter().chain(&plan.stand_ins).cloned().collect();
        let mut refused = self.subpaths("PROTECTED", &protected);
        refused.extend(self.literals("PINNED", &plan.pinned));
        refused.extend(self.subpaths("HIDDEN_WRITE", &plan.hidden));
        let _ = if refused.is_empty() {
            writeln!(self.text, "(allow file-write* (require-any {}))", allowed.join(" "))
        } else {
            writeln!(
                self.text,
                "(allow file-write* (require-all (require-any {}) (require-not (require-any {}))))",
                allowed.join(" "),
                refused.join(" ")
            )
        };
    }

    fn network(&mut self, plan: &Plan) {
        if plan.network {
            self.text.push_str("(allow network*)\n(allow system-socket)\n");
            self.mach_lookups(RESOLVER_SERVICES);
            return;
        }
        if let Some(port) = plan.proxy_port {
            let _ = writeln!(self.text, "(allow network-outbound (remote ip \"localhost:{port}\"))");
        }
        if plan.local_binding {
            self.text.push_str(
                "(allow network-bind (local ip \"localhost:*\"))\n(allow network-inbound (local ip \"localhost:*\"))\n(allow network-outbound (remote ip \"localhost:*\"))\n",
            );
        }
        if plan.unix_sockets {
            let services: Vec<PathBuf> = SERVICE_SOCKETS.iter().map(PathBuf::from).collect();
            let refused = self.literals("SERVICE", &services);
            let _ = writeln!(
                self.text,
                "(allow network-outbound (require-all (remote unix-socket) (require-not (require-any {}))))\n(allow network-bind (local unix-socket))",
                refused.join(" ")
            );
        }
    }
}

/// `path` as Seatbelt sees it: symlinks resolved through its nearest existing ancestor.
fn real(path: &Path) -> PathBuf {
    let mut missing = Vec::new();
    let mut existing = path;
    loop {
        if let Ok(resolved) = std::fs::canonicalize(existing) {
            return missing.iter().rev().fold(resolved, |resolved, name| resolved.join(name));
        }
        match (existing.parent(), existing.file_name()) {
            (Some(parent), Some(name)) => {
                missing.push(name.to_owned());
                existing = parent;
            }
            _ => return path.to_path_buf(),
        }
    }
}

/// `sandbox-exec`'s arguments for `plan`: the profile, its parameters, then the command, with
/// the proxy's environment in front of it when the network goes through the proxy.
pub fn arguments(plan: &Plan) -> Vec<String> {
    let profile = profile(plan);
    let mut args = vec!["-p".to_owned(), profile.text];
    for (name, path) in profile.parameters {
        args.push("-D".into());
        args.push(format!("{name}={}", path.display()));
    }
    if let Some(port) = plan.proxy_port.filter(|_| !plan.network) {
        args.push("/usr/bin/env".into());
        args.extend(proxy_environment(port, port).into_iter().map(|(name, value)| format!("{name}={value}")));
    }
    args.extend(plan.command.iter().cloned());
    args
}

/// The macOS backend.
#[cfg_attr(not(target_os = "macos"), allow(dead_code))]
pub(crate) struct Seatbelt;

impl Backend for Seatbelt {
    fn name(&self) -> &'static str {
        "macOS Seatbelt (sandbox-exec)"
    }

    fn needs_stand_ins(&self) -> bool {
        false
    }

    fn proxy_over_tcp(&self) -> bool {
        true
    }

    fn command(&self, _helper: &Path, plan: &Plan) -> std::io::Result<(PathBuf, Vec<String>)> {
        Ok((PathBuf::from(SANDBOX_EXEC), arguments(plan)))
    }

    fn run_helper(&self, args: &[String]) -> i32 {
        match args {
            [probe] if probe == "--probe" => probe_from_outside(),
            [inside, root] if inside == "--probe-inside" => {
                let root = PathBuf::from(root);
                crate::probe::check_from_inside(&root, &root.join("kept"), &root.join("absent"))
            }
            _ => crate::probe::fail("the Seatbelt backend runs commands under sandbox-exec, not through the helper"),
        }
    }
}

/// The probe: runs this binary's own checks under a profile made as for a command around a
/// scratch directory (`kept` read-only, `absent` protected though it does not exist).
#[cfg_attr(not(target_os = "macos"), allow(dead_code))]
fn probe_from_outside() -> i32 {
    let Ok(scratch) = tempfile::tempdir() else { return crate::probe::fail("no temporary directory for the check") };
    let root = real(scratch.path());
    if std::fs::write(root.join("kept"), "kept").is_err() {
        return crate::probe::fail("could not prepare the check");
    }
    let Ok(larik) = std::env::current_exe() else { return crate::probe::fail("cannot find the larik binary") };
    let plan = Plan {
        writable: vec![root.clone()],
        pinned: vec![root.clone()],
        read_only: vec![root.join("kept"), root.join("absent")],
        command: vec![
            larik.display().to_string(),
            crate::plan::HELPER_COMMAND.into(),
            "--probe-inside".into(),
            root.display().to_string(),
        ],
        ..Plan::default()
    };
    match std::process::Command::new(SANDBOX_EXEC).args(arguments(&plan)).current_dir(&root).status() {
        Ok(status) if status.success() => 0,
        Ok(status) => status.code().unwrap_or(crate::plan::SETUP_FAILED),
        Err(error) => crate::probe::fail(&format!("{SANDBOX_EXEC} could not start: {error}")),
    }
}

#[cfg(test)]
mod tests;
