//! `sandbox.network`: what sandboxed commands may reach. `true` opens the network as it is;
//! `false`, or no key, gives them Larik's proxy with no domain allowed beforehand (each new
//! domain asks); Claude Code's object (`allowedDomains`, `deniedDomains`, `allowUnixSockets`,
//! `allowAllUnixSockets`, `allowLocalBinding`) gives them the proxy with those lists.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Deserializer};
use serde_json::Value;

/// `sandbox.network` as read.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NetworkSettings {
    /// `true`: sandboxed commands reach the network directly, with no proxy and no lists.
    pub full: bool,
    /// Reached without asking: exact names and `*.example.com` (subdomains only).
    pub allowed_domains: Vec<String>,
    /// Never reached, whatever else allows them.
    pub denied_domains: Vec<String>,
    /// Unix sockets stay open (by default sandboxed commands may open none).
    pub allow_all_unix_sockets: bool,
    /// Claude Code's list of Unix socket paths: Linux cannot filter sockets by path, so the list
    /// opens nothing, and says so.
    pub allow_unix_sockets: Vec<String>,
    /// Commands may listen on the loopback of their own network namespace.
    pub allow_local_binding: bool,
    /// The managed policy's `allowManagedDomainsOnly`: only its own `allowedDomains` count, and
    /// nothing else asks.
    pub managed_domains_only: bool,
}

/// The object form, as written.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", default)]
pub struct NetworkLists {
    pub allowed_domains: Vec<String>,
    pub denied_domains: Vec<String>,
    pub allow_unix_sockets: Vec<String>,
    pub allow_all_unix_sockets: bool,
    pub allow_local_binding: bool,
    #[serde(flatten)]
    #[schemars(skip)]
    pub rest: BTreeMap<String, Value>,
}

/// What the key may hold: a flag or the lists.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum NetworkShape {
    Flag(bool),
    Lists(NetworkLists),
}

impl From<NetworkShape> for NetworkSettings {
    fn from(shape: NetworkShape) -> Self {
        match shape {
            NetworkShape::Flag(full) => NetworkSettings { full, ..NetworkSettings::default() },
            NetworkShape::Lists(lists) => NetworkSettings {
                full: false,
                allowed_domains: lists.allowed_domains,
                denied_domains: lists.denied_domains,
                allow_all_unix_sockets: lists.allow_all_unix_sockets,
                allow_unix_sockets: lists.allow_unix_sockets,
                allow_local_binding: lists.allow_local_binding,
                managed_domains_only: false,
            },
        }
    }
}

impl NetworkShape {
    /// The lists' keys that are no setting, dotted below `sandbox.network`.
    pub fn unknown_keys(&self) -> Vec<String> {
        match self {
            NetworkShape::Flag(_) => Vec::new(),
            NetworkShape::Lists(lists) => lists.rest.keys().map(|key| format!("sandbox.network.{key}")).collect(),
        }
    }
}

pub(crate) fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<NetworkSettings, D::Error> {
    NetworkShape::deserialize(deserializer).map(NetworkSettings::from)
}
