//! The OS sandbox for shell commands, on Linux with Landlock: commands may read everywhere but
//! write only inside the project roots, the temp directory and a few device files, and open no
//! TCP connections unless the settings allow the network. A denied write or connection fails
//! inside the command with an ordinary error the model can read.
//!
//! Landlock restricts the calling thread and what it executes, and setting it up allocates, so
//! it is never done in a `pre_exec` hook of this multithreaded process. Instead the `larik`
//! binary re-executes itself as a small helper (`larik __sandbox ... -- bash -c ...`) that
//! restricts itself while still single-threaded and then executes the command.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use landlock::{ABI, Access, AccessFs, AccessNet, Ruleset, RulesetAttr, RulesetCreatedAttr, RulesetStatus, path_beneath_rules};

/// The helper's subcommand name; hidden from users.
pub const HELPER_COMMAND: &str = "__sandbox";
/// The Landlock version whose rights we ask for; newer kernels enforce all of them.
const TARGET_ABI: ABI = ABI::V5;
/// Device files commands commonly write to.
const WRITABLE_DEVICES: &[&str] = &["/dev/null", "/dev/zero", "/dev/tty", "/dev/random", "/dev/urandom", "/dev/full", "/dev/pts", "/dev/ptmx", "/dev/shm"];

/// How commands are confined.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sandbox {
    helper: PathBuf,
    writable: Vec<PathBuf>,
    network: bool,
}

impl Sandbox {
    /// `helper` is the `larik` binary; `writable` the project roots and any extra paths.
    pub fn new(helper: PathBuf, mut writable: Vec<PathBuf>, network: bool) -> Self {
        writable.push(std::env::temp_dir());
        writable.push(PathBuf::from("/tmp"));
        writable.sort();
        writable.dedup();
        Self { helper, writable, network }
    }

    /// The program and arguments that run `bash -c command` inside the sandbox.
    pub fn wrap(&self, command: &str) -> (PathBuf, Vec<String>) {
        let mut args = vec![HELPER_COMMAND.to_owned()];
        for path in &self.writable {
            args.push("--write".into());
            args.push(path.display().to_string());
        }
        if self.network {
            args.push("--network".into());
        }
        args.extend(["--".into(), "bash".into(), "-c".into(), command.to_owned()]);
        (self.helper.clone(), args)
    }
}

/// Whether this kernel enforces Landlock, and its ABI version; checked once per process.
pub fn kernel_support() -> Result<i32, String> {
    static SUPPORT: OnceLock<Result<i32, String>> = OnceLock::new();
    SUPPORT
        .get_or_init(|| {
            // SAFETY: with a null attribute pointer, size 0 and the VERSION flag the call only
            // reports the supported ABI version; it creates nothing and changes no state.
            let version = unsafe { libc::syscall(libc::SYS_landlock_create_ruleset, std::ptr::null::<libc::c_void>(), 0usize, 1u32) };
            if version >= 1 {
                Ok(i32::try_from(version).unwrap_or(1))
            } else {
                Err(format!("this kernel does not enforce Landlock ({})", std::io::Error::last_os_error()))
            }
        })
        .clone()
}

/// Restricts the calling process (the helper, before it executes the command).
pub fn enter(writable: &[PathBuf], network: bool) -> Result<(), String> {
    let fail = |error: &dyn std::fmt::Display| format!("sandbox setup failed: {error}");
    let mut ruleset = Ruleset::default().handle_access(AccessFs::from_all(TARGET_ABI)).map_err(|error| fail(&error))?;
    if !network {
        ruleset = ruleset.handle_access(AccessNet::BindTcp | AccessNet::ConnectTcp).map_err(|error| fail(&error))?;
    }
    let mut writable_paths: Vec<&Path> = writable.iter().map(PathBuf::as_path).collect();
    writable_paths.extend(WRITABLE_DEVICES.iter().map(Path::new).filter(|path| path.exists()));
    let status = ruleset
        .create()
        .map_err(|error| fail(&error))?
        .add_rules(path_beneath_rules(["/"], AccessFs::from_read(TARGET_ABI)))
        .map_err(|error| fail(&error))?
        .add_rules(path_beneath_rules(writable_paths, AccessFs::from_all(TARGET_ABI)))
        .map_err(|error| fail(&error))?
        .restrict_self()
        .map_err(|error| fail(&error))?;
    match status.ruleset {
        RulesetStatus::NotEnforced => Err("sandbox setup failed: the kernel did not enforce the rules".into()),
        RulesetStatus::FullyEnforced | RulesetStatus::PartiallyEnforced => Ok(()),
    }
}

/// Parses the helper's arguments: `--write PATH`... `[--network]` `--` program args...
pub fn parse_helper_args(args: &[String]) -> Result<(Vec<PathBuf>, bool, Vec<String>), String> {
    let mut writable = Vec::new();
    let mut network = false;
    let mut rest = args.iter();
    while let Some(arg) = rest.next() {
        match arg.as_str() {
            "--write" => writable.push(PathBuf::from(rest.next().ok_or("--write needs a path")?)),
            "--network" => network = true,
            "--" => {
                let command: Vec<String> = rest.cloned().collect();
                if command.is_empty() {
                    return Err("no command after --".into());
                }
                return Ok((writable, network, command));
            }
            other => return Err(format!("unknown sandbox argument `{other}`")),
        }
    }
    Err("no command after --".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wraps_and_parses_round_trip() {
        let sandbox = Sandbox::new(PathBuf::from("/bin/larik"), vec![PathBuf::from("/p")], false);
        let (program, args) = sandbox.wrap("echo 'a b'");
        assert_eq!(program, PathBuf::from("/bin/larik"));
        assert_eq!(args[0], HELPER_COMMAND);
        let (writable, network, command) = parse_helper_args(&args[1..]).unwrap();
        assert!(writable.contains(&PathBuf::from("/p")) && writable.contains(&PathBuf::from("/tmp")));
        assert!(!network);
        assert_eq!(command, ["bash", "-c", "echo 'a b'"]);
        assert!(parse_helper_args(&["--bogus".into()]).is_err());
    }
}
