//! What sandboxed commands may reach over the network, by domain. With the network neither
//! fully open nor off, a command gets no network but a proxy ([`proxy`]): on Linux the helper
//! listens on the loopback of the command's own network namespace and hands each connection over
//! a Unix socket to the proxy in the agent (where a backend gives the command no namespace, the
//! proxy listens on the host's loopback itself and the backend lets the command reach only that
//! port), which reads the name the command asked for, decides with
//! [`DomainPolicy`] and, for a name on no list, asks the user through a [`NetworkAuthority`].
//!
//! The rules, in order: an IP address, or a name that resolves to a refused range (loopback,
//! private, link-local with the cloud metadata address, ...), is refused unless an allowed entry
//! names it exactly; a denied domain is refused; an allowed one goes through; anything else asks
//! (or, where no one can answer, is refused). [`address`] owns the ranges and the resolving.

pub mod address;
pub mod proxy;

mod http;
mod socks;

use std::future::Future;
use std::pin::Pin;

/// Where the HTTP proxy (plain and CONNECT) listens inside the command's network namespace.
pub const HTTP_PORT: u16 = 3128;
/// Where the SOCKS5 proxy listens inside the command's network namespace.
pub const SOCKS_PORT: u16 = 1080;

/// What points a command's tools at the proxy: curl, git, pip, npm, cargo and Python read
/// these, some only in lower case, some only in upper. Loopback addresses are left out, so a
/// server the command starts there (`allowLocalBinding`) is reached directly; names are not,
/// since the proxy alone resolves them.
pub fn proxy_environment(http_port: u16, socks_port: u16) -> Vec<(String, String)> {
    let http = format!("http://127.0.0.1:{http_port}");
    let socks = format!("socks5h://127.0.0.1:{socks_port}");
    let mut pairs = Vec::new();
    for (name, value) in [("HTTP_PROXY", &http), ("HTTPS_PROXY", &http), ("ALL_PROXY", &socks)] {
        pairs.push((name.to_owned(), value.clone()));
        pairs.push((name.to_ascii_lowercase(), value.clone()));
    }
    pairs.push(("NO_PROXY".into(), "127.0.0.1,::1".into()));
    pairs.push(("no_proxy".into(), "127.0.0.1,::1".into()));
    pairs
}

/// How sandboxed commands reach the network.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NetworkAccess {
    /// Directly, as any process (`sandbox.network: true`).
    Full,
    /// Only through the proxy, by domain.
    Proxied(DomainPolicy),
}

/// A domain entry as settings write it: `example.com`, `*.example.com` (subdomains only), an
/// IP address, each with an optional `:port`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DomainPattern {
    name: String,
    subdomains: bool,
    port: Option<u16>,
}

impl DomainPattern {
    pub fn parse(text: &str) -> Option<DomainPattern> {
        let text = text.trim().trim_end_matches('.').to_ascii_lowercase();
        let (host, port) = match text.rsplit_once(':') {
            // An IPv6 address has colons of its own: a port follows only a bracketed one.
            Some((host, port)) if !host.contains(':') || host.ends_with(']') => {
                (host.to_owned(), Some(port.parse().ok()?))
            }
            _ => (text.clone(), None),
        };
        let host = host.trim_start_matches('[').trim_end_matches(']').to_owned();
        let (name, subdomains) = match host.strip_prefix("*.") {
            Some(rest) => (rest.to_owned(), true),
            None => (host, false),
        };
        (!name.is_empty() && !name.contains('*') && !name.contains('/')).then_some(DomainPattern {
            name,
            subdomains,
            port,
        })
    }

    pub fn matches(&self, host: &str, port: u16) -> bool {
        self.matches_name(host) && self.port.is_none_or(|wanted| wanted == port)
    }

    /// Whether the entry covers `host` on some port.
    pub fn matches_name(&self, host: &str) -> bool {
        if self.subdomains {
            host.strip_suffix(&self.name).is_some_and(|rest| rest.ends_with('.') && rest.len() > 1)
        } else {
            host == self.name
        }
    }

    /// Whether the entry names exactly this host (no wildcard): only such an entry lets a
    /// command reach an address in a refused range.
    pub fn names(&self, host: &str, port: u16) -> bool {
        !self.subdomains && self.matches(host, port)
    }
}

impl std::fmt::Display for DomainPattern {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let wildcard = if self.subdomains { "*." } else { "" };
        match self.port {
            Some(port) => write!(formatter, "{wildcard}{}:{port}", self.name),
            None => write!(formatter, "{wildcard}{}", self.name),
        }
    }
}

/// Entries as settings would write them, comma-separated; `(none)` for an empty list.
pub fn listing(patterns: &[DomainPattern]) -> String {
    if patterns.is_empty() {
        return "(none)".into();
    }
    patterns.iter().map(ToString::to_string).collect::<Vec<_>>().join(", ")
}

/// The lists settings give, and what else sandboxed commands may do on the network.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DomainPolicy {
    pub allowed: Vec<DomainPattern>,
    pub denied: Vec<DomainPattern>,
    /// The project's `allowedDomains`: they count once the user approved the project.
    pub project_allowed: Vec<DomainPattern>,
    /// Only `allowed` counts, and nothing asks (the managed policy's `allowManagedDomainsOnly`).
    pub managed_only: bool,
    /// Commands may listen on their own namespace's loopback.
    pub local_binding: bool,
    /// Commands may open Unix sockets.
    pub unix_sockets: bool,
}

impl DomainPolicy {
    /// Parses the settings' entries; the ones that are no domain are returned apart, to report.
    pub fn patterns(entries: &[String]) -> (Vec<DomainPattern>, Vec<String>) {
        let mut patterns = Vec::new();
        let mut bad = Vec::new();
        for entry in entries {
            match DomainPattern::parse(entry) {
                Some(pattern) => patterns.push(pattern),
                None => bad.push(entry.clone()),
            }
        }
        (patterns, bad)
    }

    /// The lists' word on `host:port`, with the permission rules'.
    pub fn listed(&self, host: &str, port: u16, rules: RuleWord) -> Listed {
        if let Some(pattern) = self.denied.iter().find(|pattern| pattern.matches(host, port)) {
            return Listed::Denied(format!("`{pattern}` is in sandbox.network.deniedDomains"));
        }
        if rules.denied {
            return Listed::Denied("a deny rule names it".into());
        }
        let project = self.project_allowed.iter().filter(|_| rules.project_approved && !self.managed_only);
        let mut allowing = self.allowed.iter().chain(project);
        if allowing.clone().any(|pattern| pattern.names(host, port)) {
            return Listed::Named;
        }
        if allowing.any(|pattern| pattern.matches(host, port)) || (rules.allowed && !self.managed_only) {
            return Listed::Allowed;
        }
        Listed::Unlisted
    }
}

/// Where a name stands before anyone is asked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Listed {
    Allowed,
    /// Allowed by an entry that names it exactly.
    Named,
    Denied(String),
    Unlisted,
}

/// The user's say on what the lists leave open, and their saved answers.
pub trait NetworkAuthority: Send + Sync {
    /// What the permission rules say of `host` (`WebFetch(domain:...)` allow and deny rules,
    /// saved answers), and whether the project is approved (its `allowedDomains` count then).
    fn rules(&self, host: &str) -> RuleWord;

    /// Asks the user whether the command may reach `host`; waits for the answer.
    fn ask<'a>(&'a self, host: &'a str, port: u16) -> Pin<Box<dyn Future<Output = Answer> + Send + 'a>>;
}

/// What the permission rules say; by default, nothing.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RuleWord {
    pub allowed: bool,
    pub denied: bool,
    pub project_approved: bool,
}

/// The user's answer to "may this command reach that domain".
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answer {
    /// For this command.
    Once,
    /// Saved as a rule.
    Always,
    Deny,
}

/// An authority that asks no one: what the lists leave open is refused.
pub struct NoOneToAsk;

impl NetworkAuthority for NoOneToAsk {
    fn rules(&self, _host: &str) -> RuleWord {
        RuleWord::default()
    }

    fn ask<'a>(&'a self, _host: &'a str, _port: u16) -> Pin<Box<dyn Future<Output = Answer> + Send + 'a>> {
        Box::pin(async { Answer::Deny })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn no_rules() -> RuleWord {
        RuleWord::default()
    }

    #[test]
    fn patterns_match_names_subdomains_and_ports() {
        let exact = DomainPattern::parse("Registry.example.org.").unwrap();
        assert!(exact.matches("registry.example.org", 443) && exact.names("registry.example.org", 80));
        assert!(!exact.matches("evil-registry.example.org", 443));
        let wild = DomainPattern::parse("*.example.com").unwrap();
        assert!(wild.matches("a.example.com", 443) && wild.matches("a.b.example.com", 1));
        assert!(!wild.matches("example.com", 443) && !wild.matches("badexample.com", 443));
        assert!(!wild.names("a.example.com", 443));
        let port = DomainPattern::parse("git.localhost:8443").unwrap();
        assert!(port.matches("git.localhost", 8443) && !port.matches("git.localhost", 443));
        assert!(DomainPattern::parse("[::1]:80").unwrap().matches("::1", 80));
        assert!(DomainPattern::parse("::1").unwrap().matches("::1", 80));
        for bad in ["", "*", "a.*.com", "http://x", "x:port"] {
            assert!(DomainPattern::parse(bad).is_none(), "{bad}");
        }
    }

    #[test]
    fn deny_wins_and_project_domains_wait_for_approval() {
        let (allowed, _) = DomainPolicy::patterns(&["*.example.com".into(), "api.example.com".into()]);
        let (denied, _) = DomainPolicy::patterns(&["bad.example.com".into()]);
        let (project_allowed, _) = DomainPolicy::patterns(&["repo.test".into()]);
        let policy = DomainPolicy { allowed, denied, project_allowed, ..DomainPolicy::default() };
        assert_eq!(policy.listed("a.example.com", 443, no_rules()), Listed::Allowed);
        assert_eq!(policy.listed("api.example.com", 443, no_rules()), Listed::Named);
        assert!(matches!(policy.listed("bad.example.com", 443, no_rules()), Listed::Denied(_)));
        assert_eq!(policy.listed("repo.test", 443, no_rules()), Listed::Unlisted);
        let approved = RuleWord { project_approved: true, ..no_rules() };
        assert_eq!(policy.listed("repo.test", 443, approved), Listed::Named);
        let denied_by_rule = RuleWord { denied: true, allowed: true, project_approved: true };
        assert!(matches!(policy.listed("a.example.com", 443, denied_by_rule), Listed::Denied(_)));
        let managed = DomainPolicy { managed_only: true, ..policy };
        assert_eq!(managed.listed("repo.test", 443, approved), Listed::Unlisted);
        assert_eq!(managed.listed("other.test", 443, RuleWord { allowed: true, ..no_rules() }), Listed::Unlisted);
    }
}
