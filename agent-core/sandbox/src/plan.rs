//! What confining one command means, as plain data: the paths it may write and may not, what
//! it may not read, and its network. Every backend works from a [`Plan`]; the Linux helper
//! receives it as arguments (`larik __sandbox ... -- bash -c LINE`), the macOS backend turns it
//! into a Seatbelt profile.

use std::path::PathBuf;

/// The helper's subcommand name; hidden from users.
pub const HELPER_COMMAND: &str = "__sandbox";
/// Exit code of a helper that could not set the sandbox up (the command did not run).
pub const SETUP_FAILED: i32 = 126;

/// Device files commands commonly write to.
pub const WRITABLE_DEVICES: &[&str] = &[
    "/dev/null",
    "/dev/zero",
    "/dev/tty",
    "/dev/random",
    "/dev/urandom",
    "/dev/full",
    "/dev/pts",
    "/dev/ptmx",
    "/dev/shm",
];
/// Sockets of services that start programs on request (a session bus can ask systemd to run
/// anything, a container engine runs containers as root): a command must not reach them.
pub const SERVICE_SOCKETS: &[&str] = &[
    "/run/dbus/system_bus_socket",
    "/var/run/docker.sock",
    "/run/docker.sock",
    "/run/containerd/containerd.sock",
    "/run/podman/podman.sock",
];
/// The same, under the user's runtime directory (`$XDG_RUNTIME_DIR`).
pub const USER_SERVICE_SOCKETS: &[&str] = &["bus", "systemd/private", "docker.sock", "podman/podman.sock"];

/// What confining one command means, whatever the backend.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Plan {
    pub writable: Vec<PathBuf>,
    /// Directories that must not be renamed or removed, so no protected path's parent can be
    /// swapped (Linux mounts each onto itself).
    pub pinned: Vec<PathBuf>,
    /// Protected paths, kept read-only; with a backend that rules by name, absent ones too.
    pub read_only: Vec<PathBuf>,
    /// Stand-ins for absent protected paths: read-only too, and locked while the command runs
    /// (only for a backend that can protect only what exists).
    pub stand_ins: Vec<PathBuf>,
    /// Paths the command may not read (`sandbox.filesystem.denyRead`; Linux mounts an empty
    /// read-only directory, or `/dev/null`, over each).
    pub hidden: Vec<PathBuf>,
    /// Paths inside hidden ones the command may read all the same (`allowRead`).
    pub readable: Vec<PathBuf>,
    /// The network as it is (`sandbox.network: true`): no namespace, no filter.
    pub network: bool,
    /// The agent's proxy: the Unix socket the helper hands the command's connections over.
    pub proxy: Option<PathBuf>,
    /// The agent's proxy on the host's loopback, for a backend that gives the command no
    /// network namespace of its own (not part of the helper's arguments).
    pub proxy_port: Option<u16>,
    /// The command may listen on its namespace's loopback.
    pub local_binding: bool,
    /// The command may open Unix sockets.
    pub unix_sockets: bool,
    pub command: Vec<String>,
}

impl Plan {
    pub fn to_args(&self) -> Vec<String> {
        let mut args = vec![HELPER_COMMAND.to_owned()];
        let mut flag = |name: &str, paths: &[PathBuf]| {
            for path in paths {
                args.push(name.to_owned());
                args.push(path.display().to_string());
            }
        };
        flag("--write", &self.writable);
        flag("--pin", &self.pinned);
        flag("--read-only", &self.read_only);
        flag("--stand-in", &self.stand_ins);
        flag("--hide", &self.hidden);
        flag("--readable", &self.readable);
        flag("--proxy", self.proxy.as_slice());
        for (set, name) in [
            (self.network, "--network"),
            (self.local_binding, "--local-binding"),
            (self.unix_sockets, "--unix-sockets"),
        ] {
            if set {
                args.push(name.into());
            }
        }
        args.push("--".into());
        args.extend(self.command.iter().cloned());
        args
    }

    /// Parses the arguments after the subcommand name.
    pub fn parse(args: &[String]) -> Result<Plan, PlanError> {
        let mut plan = Plan::default();
        let mut rest = args.iter();
        while let Some(arg) = rest.next() {
            let list = match arg.as_str() {
                "--write" => &mut plan.writable,
                "--pin" => &mut plan.pinned,
                "--read-only" => &mut plan.read_only,
                "--stand-in" => &mut plan.stand_ins,
                "--hide" => &mut plan.hidden,
                "--readable" => &mut plan.readable,
                "--proxy" => {
                    plan.proxy = Some(PathBuf::from(rest.next().ok_or_else(|| PlanError::NoPath(arg.clone()))?));
                    continue;
                }
                "--network" | "--local-binding" | "--unix-sockets" => {
                    *match arg.as_str() {
                        "--network" => &mut plan.network,
                        "--local-binding" => &mut plan.local_binding,
                        _ => &mut plan.unix_sockets,
                    } = true;
                    continue;
                }
                "--" => {
                    plan.command = rest.cloned().collect();
                    if plan.command.is_empty() {
                        return Err(PlanError::NoCommand);
                    }
                    return Ok(plan);
                }
                other => return Err(PlanError::Unknown(other.to_owned())),
            };
            list.push(PathBuf::from(rest.next().ok_or_else(|| PlanError::NoPath(arg.clone()))?));
        }
        Err(PlanError::NoCommand)
    }
}

/// Arguments the helper cannot run with; it runs nothing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PlanError {
    NoCommand,
    Unknown(String),
    /// The option that needs a path, given without one.
    NoPath(String),
}

impl std::fmt::Display for PlanError {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::NoCommand => write!(formatter, "no command after --"),
            Self::Unknown(argument) => write!(formatter, "unknown sandbox argument `{argument}`"),
            Self::NoPath(option) => write!(formatter, "{option} needs a path"),
        }
    }
}

impl std::error::Error for PlanError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plans_round_trip_through_arguments() {
        let plan = Plan {
            proxy_port: None,
            writable: vec![PathBuf::from("/p"), PathBuf::from("/tmp")],
            pinned: vec![PathBuf::from("/p"), PathBuf::from("/p/.git")],
            read_only: vec![PathBuf::from("/p/.git/hooks")],
            stand_ins: vec![PathBuf::from("/p/.mcp.json")],
            hidden: vec![PathBuf::from("/home/u/.aws")],
            readable: vec![PathBuf::from("/home/u/.aws/config")],
            network: false,
            proxy: Some(PathBuf::from("/tmp/larik-proxy-x/proxy.sock")),
            local_binding: true,
            unix_sockets: false,
            command: vec!["bash".into(), "-c".into(), "echo 'a b'".into()],
        };
        let args = plan.to_args();
        assert_eq!(args[0], HELPER_COMMAND);
        assert_eq!(Plan::parse(&args[1..]).unwrap(), plan);
        assert!(Plan::parse(&["--bogus".into()]).is_err());
        assert!(Plan::parse(&["--write".into()]).is_err());
        assert!(Plan::parse(&["--network".into(), "--".into()]).is_err());
    }
}
