//! The network half of the sandbox when the network is off: a seccomp filter that refuses
//! every socket except a Unix one (`socket(2)` with any other family fails with `EACCES`, an
//! ordinary "Permission denied"), and refuses io_uring, which can open sockets without
//! `socket(2)`. The network namespace the helper enters already has no route anywhere; the
//! filter makes the failure immediate and clear, and holds even if a namespace cannot be made
//! for some family.
//!
//! Unix sockets stay allowed: local tools talk over them (build servers, gpg-agent, language
//! servers). The service sockets that could start programs outside the sandbox are hidden by
//! the helper instead.

use std::collections::BTreeMap;

use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter, SeccompRule, TargetArch,
};

/// Installs the filter on the calling thread (inherited by everything it executes).
pub fn refuse_network_sockets() -> Result<(), super::SetupError> {
    let fail = |error: &dyn std::fmt::Display| super::SetupError::Seccomp(error.to_string());
    let arch = TargetArch::try_from(std::env::consts::ARCH).map_err(|error| fail(&error))?;
    let not_unix = SeccompCondition::new(0, SeccompCmpArgLen::Dword, SeccompCmpOp::Ne, libc::AF_UNIX as u64)
        .map_err(|error| fail(&error))?;
    let rules: BTreeMap<i64, Vec<SeccompRule>> = [
        (libc::SYS_socket, vec![SeccompRule::new(vec![not_unix]).map_err(|error| fail(&error))?]),
        // An empty rule list matches every call.
        (libc::SYS_io_uring_setup, Vec::new()),
    ]
    .into_iter()
    .collect();
    let filter = SeccompFilter::new(rules, SeccompAction::Allow, SeccompAction::Errno(libc::EACCES as u32), arch)
        .map_err(|error| fail(&error))?;
    let program: BpfProgram = filter.try_into().map_err(|error: seccompiler::BackendError| fail(&error))?;
    seccompiler::apply_filter(&program).map_err(|error| fail(&error))
}
