//! The permission rules as the sandbox's proxy reads them: `web_fetch(domain:...)` allow rules
//! (Claude Code's `WebFetch(domain:...)`) let sandboxed commands reach that domain too, deny
//! rules refuse it, and the user's "always" answer is saved as such a rule. A bare `web_fetch`
//! allow rule opens no domain to commands: only a rule that names one does. The other way
//! round, `sandbox.network.deniedDomains` refuses `web_fetch` and the browser too.

use super::Permissions;
use super::rules::Subject;
use crate::sandbox::network::{DomainPattern, RuleWord};
use crate::tools::network_prompt::{DomainRules, NotRemembered, domain_rule};
use crate::tools::{ToolNames, WebFetch};

impl DomainRules for Permissions {
    fn word(&self, host: &str) -> RuleWord {
        let project_approved = self.project_trusted.load(std::sync::atomic::Ordering::Relaxed);
        let Ok(rules) = self.rules.lock() else {
            return RuleWord { allowed: false, denied: true, project_approved };
        };
        let names = ToolNames::of::<WebFetch>();
        let subject = Subject::Domain(host);
        let denied = rules.deny.iter().any(|rule| rule.matches(names, subject));
        let project = rules.project_allow.iter().filter(|_| project_approved);
        let allowed =
            rules.allow.iter().chain(project).any(|rule| rule.pattern.is_some() && rule.matches(names, subject));
        RuleWord { allowed, denied, project_approved }
    }

    fn remember(&self, host: &str) -> Result<(), NotRemembered> {
        self.allow_always(&domain_rule(host)).map_err(|error| NotRemembered { reason: error.to_string() })
    }
}

impl Permissions {
    /// The same permissions refusing these domains to every tool that fetches.
    pub fn denying_domains(mut self, denied: Vec<DomainPattern>) -> Self {
        self.denied_domains = denied;
        self
    }

    /// The `sandbox.network.deniedDomains` entry that covers `host`, if one does.
    pub(super) fn denied_domain(&self, host: &str) -> Option<&DomainPattern> {
        self.denied_domains.iter().find(|pattern| pattern.matches_name(host))
    }
}
