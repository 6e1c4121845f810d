//! `/sandbox`: what the shell sandbox enforces in this session, and every domain the session's
//! sandboxed commands asked for, reached or refused.

use std::fmt;

use crate::sandbox::network::listing as list;
use crate::sandbox::network::proxy::NetworkLog;
use crate::sandbox::{DomainPolicy, Unconfined};

#[derive(Debug, Clone)]
pub struct SandboxReport {
    /// `Ok(true)` with the network fully open, `Ok(false)` through the proxy, or why commands
    /// run unconfined (and ask).
    pub state: Result<bool, Unconfined>,
    /// The proxy's lists, unless the network is open.
    pub domains: Option<DomainPolicy>,
    pub reached: NetworkLog,
}

impl fmt::Display for SandboxReport {
    fn fmt(&self, out: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.state {
            Err(why) => writeln!(out, "The shell sandbox is off ({why}): every command asks first.")?,
            Ok(true) => writeln!(
                out,
                "The shell sandbox is on; sandboxed commands reach the network as it is (sandbox.network is true)."
            )?,
            Ok(false) => writeln!(
                out,
                "The shell sandbox is on; sandboxed commands reach the network only through Larik's proxy, by domain."
            )?,
        }
        if let Some(domains) = &self.domains {
            writeln!(out, "Allowed: {}", list(&domains.allowed))?;
            if !domains.project_allowed.is_empty() {
                writeln!(out, "Allowed once the project is approved: {}", list(&domains.project_allowed))?;
            }
            writeln!(out, "Denied: {}", list(&domains.denied))?;
            let others = if domains.managed_only { "refused (managed policy)" } else { "ask" };
            writeln!(out, "Other domains: {others}; IP addresses and private names: refused unless named")?;
        }
        if self.reached.domains.is_empty() {
            return out.write_str("No sandboxed command of this session has asked for the network.");
        }
        out.write_str("Domains this session's sandboxed commands asked for:")?;
        for (domain, requests) in &self.reached.domains {
            write!(out, "\n- {domain}: {} reached", requests.passed)?;
            if requests.refused > 0 {
                write!(out, ", {} refused", requests.refused)?;
            }
            if requests.unreachable > 0 {
                write!(out, ", {} unreachable", requests.unreachable)?;
            }
            if let Some(reason) = requests.reason.as_ref().filter(|_| requests.refused + requests.unreachable > 0) {
                write!(out, " ({reason})")?;
            }
        }
        Ok(())
    }
}
