//! The Linux backend: the `larik` binary re-executes itself as a small helper
//! (`larik __sandbox ... -- bash -c LINE`, [`helper`]) that enters user, mount, PID and network
//! namespaces, mounts the protected paths read-only, applies Landlock and a seccomp socket
//! filter ([`seccomp`]), and executes the command, handing its connections to the proxy. Built
//! with the `linux` feature (the default), on Linux only.

pub mod helper;
mod probe;
mod seccomp;

use std::path::{Path, PathBuf};

use crate::SetupError;
use crate::backend::Backend;
use crate::plan::Plan;

/// Set to `no-landlock` or `no-namespaces`, the helper acts as on a kernel without them: the
/// same code runs, the step fails. For tests of the fallback.
pub const SIMULATE_ENV: &str = "LARIK_SANDBOX_SIMULATE";

pub(crate) struct Namespaces;

impl Backend for Namespaces {
    fn name(&self) -> &'static str {
        "Linux namespaces, Landlock and seccomp"
    }

    fn needs_stand_ins(&self) -> bool {
        // A mount covers only what exists.
        true
    }

    fn proxy_over_tcp(&self) -> bool {
        false
    }

    fn command(&self, helper: &Path, plan: &Plan) -> std::io::Result<(PathBuf, Vec<String>)> {
        Ok((helper.to_path_buf(), plan.to_args()))
    }

    fn run_helper(&self, args: &[String]) -> i32 {
        if args.first().map(String::as_str) == Some("--probe") {
            return probe::run_probe();
        }
        helper::run(args)
    }
}

/// Whether this kernel enforces Landlock, and its ABI version.
pub(crate) fn kernel_support() -> Result<i32, SetupError> {
    if std::env::var(SIMULATE_ENV).is_ok_and(|value| value.split(',').any(|step| step == "no-landlock")) {
        return Err(SetupError::NoLandlock("simulated".into()));
    }
    // SAFETY: with a null attribute pointer, size 0 and the VERSION flag the call only reports
    // the supported ABI version; it creates nothing and changes no state.
    let version =
        unsafe { libc::syscall(libc::SYS_landlock_create_ruleset, std::ptr::null::<libc::c_void>(), 0usize, 1u32) };
    if version >= 1 {
        Ok(i32::try_from(version).unwrap_or(1))
    } else {
        Err(SetupError::NoLandlock(std::io::Error::last_os_error().to_string()))
    }
}
