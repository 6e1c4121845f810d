//! The platform's way of confining a command, behind one trait: Linux's namespaces, Landlock
//! and seccomp (`linux`, with the `linux` feature), macOS's Seatbelt (`seatbelt`), or none
//! ([`Unsupported`]). Only the choice (`current_backend` in the crate root) is behind `cfg`:
//! the Seatbelt profile is plain code, built and tested on every system. Without a backend the probe says so, and every command that would have run
//! sandboxed asks first (fail closed).

use std::path::{Path, PathBuf};

use crate::plan::Plan;

/// One way of confining commands.
pub(crate) trait Backend: Sync {
    /// What `larik sandbox check` and the doctor call it.
    fn name(&self) -> &'static str;
    /// Whether an absent protected path needs a stand-in to be covered (rules that name paths
    /// cover absent ones as they are).
    fn needs_stand_ins(&self) -> bool;
    /// Whether the command reaches the proxy on the host's loopback, having no network
    /// namespace of its own.
    fn proxy_over_tcp(&self) -> bool;
    /// The program and arguments that run `plan.command` confined; `helper` is the `larik`
    /// binary.
    fn command(&self, helper: &Path, plan: &Plan) -> std::io::Result<(PathBuf, Vec<String>)>;
    /// The helper process's work (`larik __sandbox ARGS`): the probe with `--probe`, else what
    /// the backend runs there. Returns the exit code.
    fn run_helper(&self, args: &[String]) -> i32;
}

/// No way to confine a command here: the probe fails with the reason, so nothing counts as
/// sandboxed and bash asks before each command.
#[cfg_attr(any(all(target_os = "linux", feature = "linux"), target_os = "macos"), allow(dead_code))]
pub(crate) struct Unsupported;

#[cfg_attr(any(all(target_os = "linux", feature = "linux"), target_os = "macos"), allow(dead_code))]
impl Unsupported {
    fn reason() -> String {
        if cfg!(target_os = "linux") {
            "this build of Larik has no sandbox (built without the `linux` feature): every command asks before it runs"
                .into()
        } else {
            format!("Larik has no sandbox for {} yet: every command asks before it runs", std::env::consts::OS)
        }
    }
}

impl Backend for Unsupported {
    fn name(&self) -> &'static str {
        "none"
    }

    fn needs_stand_ins(&self) -> bool {
        false
    }

    fn proxy_over_tcp(&self) -> bool {
        false
    }

    fn command(&self, _helper: &Path, _plan: &Plan) -> std::io::Result<(PathBuf, Vec<String>)> {
        Err(std::io::Error::new(std::io::ErrorKind::Unsupported, Self::reason()))
    }

    fn run_helper(&self, _args: &[String]) -> i32 {
        crate::probe::fail(&Self::reason())
    }
}
