//! The socket half of the sandbox unless the network is fully open: a seccomp filter on
//! `socket(2)`. A refused socket fails with `EACCES`, an ordinary "Permission denied".
//!
//! - TCP (stream sockets of IPv4 and IPv6) only where the command has something to reach in its
//!   own network namespace: the proxy's ports, or its own servers with `allowLocalBinding`. UDP,
//!   raw and every other family (netlink, packet, ...) stay closed.
//! - Unix sockets only with `allowAllUnixSockets`: a Unix socket leads out of the namespace, to
//!   whatever listens on the machine (another proxy, an agent forwarding connections), so by
//!   default a command opens none. `socketpair(2)`, which reaches no one, stays allowed.
//! - io_uring, which can open sockets without `socket(2)`, is refused.
//!
//! The network namespace the helper enters already has no route anywhere; the filter makes the
//! failure immediate and clear, and holds even if a namespace cannot be made for some family.

use std::collections::BTreeMap;

use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter, SeccompRule, TargetArch,
};

/// Which sockets a command may open.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sockets {
    pub tcp: bool,
    pub unix: bool,
}

/// Installs the filter on the calling thread (inherited by everything it executes).
pub fn restrict_sockets(allowed: Sockets) -> Result<(), super::SetupError> {
    let fail = |error: &dyn std::fmt::Display| super::SetupError::Seccomp(error.to_string());
    let arch = TargetArch::try_from(std::env::consts::ARCH).map_err(|error| fail(&error))?;
    let family = |op: SeccompCmpOp, value: i32| {
        SeccompCondition::new(0, SeccompCmpArgLen::Dword, op, value as u64).map_err(|error| fail(&error))
    };
    let mut open_families = vec![];
    if allowed.unix {
        open_families.push(libc::AF_UNIX);
    }
    if allowed.tcp {
        open_families.extend([libc::AF_INET, libc::AF_INET6]);
    }
    // A rule is a conjunction: any family but the open ones.
    let others = open_families.iter().map(|open| family(SeccompCmpOp::Ne, *open)).collect::<Result<Vec<_>, _>>()?;
    let mut refused = Vec::new();
    if others.is_empty() {
        refused.push(SeccompRule::new(vec![family(SeccompCmpOp::Ge, 0)?]).map_err(|error| fail(&error))?);
    } else {
        refused.push(SeccompRule::new(others).map_err(|error| fail(&error))?);
    }
    if allowed.tcp {
        // Of IPv4 and IPv6, streams only: any type (the low bits) but SOCK_STREAM is refused.
        const TYPE_BITS: u64 = 0xf;
        for inet in [libc::AF_INET, libc::AF_INET6] {
            for kind in (0..=TYPE_BITS).filter(|kind| *kind != libc::SOCK_STREAM as u64) {
                let of_kind =
                    SeccompCondition::new(1, SeccompCmpArgLen::Dword, SeccompCmpOp::MaskedEq(TYPE_BITS), kind)
                        .map_err(|error| fail(&error))?;
                refused.push(
                    SeccompRule::new(vec![family(SeccompCmpOp::Eq, inet)?, of_kind]).map_err(|error| fail(&error))?,
                );
            }
        }
    }
    let rules: BTreeMap<i64, Vec<SeccompRule>> = [
        (libc::SYS_socket, refused),
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
