//! The helper's side of the probe on Linux: the same setup as for a command around a scratch
//! directory, then the checks from inside (`probe::check_from_inside`).

use super::helper;
use crate::plan::Plan;
use crate::probe::{check_from_inside, fail};

/// The helper's side of the probe: returns 0 when every promise held. The check runs in a
/// child, so the scratch directory is removed from outside the namespaces.
pub(crate) fn run_probe() -> i32 {
    let Ok(scratch) = tempfile::tempdir() else { return fail("no temporary directory for the check") };
    let root = scratch.path().to_path_buf();
    let (kept, stand_in) = (root.join("kept"), root.join("absent"));
    if std::fs::write(&kept, "kept").is_err() || std::fs::create_dir(&stand_in).is_err() {
        return fail("could not prepare the check");
    }
    let plan = Plan {
        writable: vec![root.clone()],
        pinned: vec![root.clone()],
        read_only: vec![kept.clone(), stand_in.clone()],
        stand_ins: Vec::new(),
        hidden: Vec::new(),
        readable: Vec::new(),
        network: false,
        proxy: None,
        proxy_port: None,
        local_binding: false,
        unix_sockets: false,
        command: vec!["probe".into()],
    };
    // SAFETY: the helper is single-threaded; the child runs ordinary code and exits.
    let child = unsafe { libc::fork() };
    if child == 0 {
        // Commands start in the project, so the check does too: relative paths must meet the
        // protections as absolute ones do.
        if std::env::set_current_dir(&root).is_err() {
            std::process::exit(fail("could not enter the scratch directory"));
        }
        let code = match helper::confine(&plan) {
            Ok(_locks) => helper::run_confined(&plan, |_| check_from_inside(&root, &kept, &stand_in)),
            Err(error) => fail(&error),
        };
        std::process::exit(code);
    }
    let code = if child < 0 { fail("fork failed") } else { helper::wait_for(child) };
    drop(scratch);
    code
}
