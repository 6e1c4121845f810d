//! The organisation's managed policy: Claude Code's `/etc/claude-code/managed-settings.json`, its
//! drop-ins `/etc/claude-code/managed-settings.d/*.json` in name order, then Larik's own
//! `/etc/larik/managed-settings.json`, all in Claude Code's settings shape. It outranks every
//! other file, the editor and flags: its rules always apply, what it restricts nothing else can
//! loosen, and a restriction Larik cannot enforce fails closed (every call asks, in every mode)
//! and is said in a notice. In a debug build (the tests') `LARIK_MANAGED_ROOT` stands for
//! `/etc`; a release build reads `/etc` whatever the environment says, so a user cannot move the
//! policy out of the way.

use std::collections::HashMap;
use std::path::PathBuf;

use serde::Deserialize;
use serde_json::{Map, Value};

use super::claude_code;
use super::{ConfigError, SettingsFiles};

/// What the managed policy decides, merged from its files.
#[derive(Debug, Clone, Default)]
pub struct ManagedPolicy {
    /// The files read, in order.
    pub files: Vec<PathBuf>,
    pub allow: Vec<String>,
    pub ask: Vec<String>,
    pub deny: Vec<String>,
    pub default_mode: Option<String>,
    /// `apiKeyHelper`: the organisation's command that prints the key.
    pub api_key_helper: Option<String>,
    /// `permissions.additionalDirectories`: directories the organisation opens to the agent.
    pub additional_directories: Vec<String>,
    /// `permissions.disableBypassPermissionsMode: "disable"`: no session runs in yolo.
    pub bypass_disabled: bool,
    /// `allowManagedPermissionRulesOnly`: only these rules apply, and "always allow" saves none.
    pub rules_only: bool,
    /// `allowManagedHooksOnly`: only the policy's own hooks run.
    pub hooks_only: bool,
    /// `disableAllHooks`: no hook runs, the policy's own included.
    pub all_hooks_disabled: bool,
    pub mcp: McpPolicy,
    /// `sandbox.enabled`, what narrows the sandbox's reach, and the excluded commands.
    pub sandbox: larik_settings::SandboxSettings,
    /// Restrictions Larik cannot enforce, dotted: while any is here, every call asks.
    pub unenforced: Vec<String>,
}

/// Which MCP servers may run, from whichever file defined them (the editor's included). Only
/// the managed policy's lists count, so `allowManagedMcpServersOnly` holds as it is.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct McpPolicy {
    /// `allowedMcpServers`: when present, the only servers that may run.
    pub allowed: Option<Vec<ServerRule>>,
    /// `deniedMcpServers`: servers that never run, whatever else allows them.
    pub denied: Vec<ServerRule>,
    /// The organisation's `managed-mcp.json` exists: its servers are the only ones that run.
    pub exclusive: bool,
}

impl McpPolicy {
    /// Why the policy keeps the server `name` (running `command`, or at `url`) from running.
    pub fn refuses(&self, name: &str, command: Option<&[String]>, url: Option<&str>) -> Option<String> {
        if self.denied.iter().any(|rule| rule.matches(name, command, url)) {
            return Some(format!("the MCP server `{name}` is denied by your organisation's managed settings"));
        }
        let allowed =
            self.allowed.as_ref().is_none_or(|allowed| allowed.iter().any(|rule| rule.matches(name, command, url)));
        (!allowed)
            .then(|| format!("the MCP server `{name}` is not among those your organisation's managed settings allow"))
    }
}

/// One entry of `allowedMcpServers` or `deniedMcpServers`: a server by name, by the command
/// line it runs, or by URL (`*` matches any run of characters).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum ServerRule {
    ServerName(String),
    ServerCommand(Vec<String>),
    ServerUrl(String),
}

impl ServerRule {
    /// Whether the rule names this server: `name`, and the command line or URL it reaches.
    pub fn matches(&self, name: &str, command: Option<&[String]>, url: Option<&str>) -> bool {
        match self {
            ServerRule::ServerName(wanted) => wanted == name,
            ServerRule::ServerCommand(wanted) => command.is_some_and(|command| command == wanted.as_slice()),
            ServerRule::ServerUrl(pattern) => url.is_some_and(|url| wildcard_matches(pattern, url)),
        }
    }
}

/// `*` matches any run of characters; everything else itself.
fn wildcard_matches(pattern: &str, text: &str) -> bool {
    let mut parts = pattern.split('*');
    let first = parts.next().unwrap_or_default();
    let Some(mut rest) = text.strip_prefix(first) else { return false };
    let parts: Vec<&str> = parts.collect();
    for (index, part) in parts.iter().enumerate() {
        if index == parts.len() - 1 {
            return rest.ends_with(part);
        }
        match rest.find(part) {
            Some(at) => rest = &rest[at + part.len()..],
            None => return false,
        }
    }
    rest.is_empty()
}

/// The keys of a managed file Larik enforces, dotted (beyond what a user's file honours).
pub(crate) const ENFORCED: &[&str] = &[
    "allowManagedPermissionRulesOnly",
    "allowManagedHooksOnly",
    "allowManagedMcpServersOnly",
    "allowedMcpServers",
    "deniedMcpServers",
    "sandbox.network.allowManagedDomainsOnly",
];

/// Keys of a managed file that restrict nothing, so Larik passes over them without failing
/// closed: what the organisation tells its users, and housekeeping.
const INFORMATIONAL: &[&str] = &["companyAnnouncements"];

/// Where the managed files are: `/etc`. The policy binds the user too, so only a test build lets
/// the environment move it.
fn root(env: &HashMap<String, String>) -> PathBuf {
    let moved = env.get("LARIK_MANAGED_ROOT").filter(|_| cfg!(debug_assertions));
    PathBuf::from(moved.map_or("/etc", String::as_str))
}

/// Claude Code's `managed-mcp.json`: when it exists, the only MCP servers that run.
pub fn mcp_file(env: &HashMap<String, String>) -> PathBuf {
    root(env).join("claude-code").join("managed-mcp.json")
}

/// The managed files, in the order they apply (a later one's scalars win; lists add up).
pub fn files(snapshot: &SettingsFiles, env: &HashMap<String, String>) -> Vec<PathBuf> {
    let root = root(env);
    let claude = root.join("claude-code");
    let mut files = vec![claude.join("managed-settings.json")];
    let drop_ins = snapshot.entries(&claude.join("managed-settings.d"));
    files.extend(drop_ins.into_iter().filter(|path| path.extension().is_some_and(|extension| extension == "json")));
    files.push(root.join("larik").join("managed-settings.json"));
    files
}

impl ManagedPolicy {
    /// Reads every managed file that exists. One that cannot be read or parsed is an error: a
    /// policy must never be dropped because it was malformed.
    pub fn load(snapshot: &SettingsFiles, env: &HashMap<String, String>) -> Result<ManagedPolicy, ConfigError> {
        let mut policy = ManagedPolicy::default();
        for path in files(snapshot, env) {
            let text = match snapshot.read(&path) {
                Ok(Some(text)) => text,
                Ok(None) => continue,
                Err(error) => return Err(ConfigError::Unreadable { path, message: error.to_string() }),
            };
            let unreadable = |message: String| ConfigError::Unreadable { path: path.clone(), message };
            let Value::Object(keys) = serde_json::from_str(&text).map_err(|error| unreadable(error.to_string()))?
            else {
                return Err(unreadable("a managed settings file must be a JSON object".into()));
            };
            policy.add(&keys).map_err(unreadable)?;
            policy.files.push(path);
        }
        // A file there that cannot be read still says the organisation chose the servers.
        policy.mcp.exclusive = !matches!(snapshot.read(&mcp_file(env)), Ok(None));
        policy.unenforced.sort();
        policy.unenforced.dedup();
        Ok(policy)
    }

    /// Whether any managed file exists.
    pub fn is_present(&self) -> bool {
        !self.files.is_empty()
    }

    fn add(&mut self, keys: &Map<String, Value>) -> Result<(), String> {
        let list = |value: Option<&Value>, key: &str| -> Result<Vec<String>, String> {
            value.map_or(Ok(Vec::new()), |value| {
                serde_json::from_value(value.clone()).map_err(|error| format!("{key}: {error}"))
            })
        };
        let flag = |key: &str| keys.get(key).and_then(Value::as_bool);
        let permissions = keys.get("permissions");
        let field = |name: &str| permissions.and_then(|permissions| permissions.get(name));
        self.allow.extend(list(field("allow"), "permissions.allow")?);
        self.ask.extend(list(field("ask"), "permissions.ask")?);
        self.deny.extend(list(field("deny"), "permissions.deny")?);
        if let Some(helper) = keys.get("apiKeyHelper").and_then(Value::as_str) {
            self.api_key_helper = Some(helper.to_owned());
        }
        self.additional_directories.extend(list(field("additionalDirectories"), "permissions.additionalDirectories")?);
        if let Some(mode) = field("defaultMode").and_then(Value::as_str) {
            self.default_mode = Some(mode.to_owned());
        }
        self.bypass_disabled |= field("disableBypassPermissionsMode").and_then(Value::as_str) == Some("disable");
        self.rules_only |= flag("allowManagedPermissionRulesOnly") == Some(true);
        self.hooks_only |= flag("allowManagedHooksOnly") == Some(true);
        self.all_hooks_disabled |= flag("disableAllHooks") == Some(true);
        let servers = |key: &str| -> Result<Option<Vec<ServerRule>>, String> {
            keys.get(key)
                .map(|value| serde_json::from_value(value.clone()).map_err(|error| format!("{key}: {error}")))
                .transpose()
        };
        if let Some(allowed) = servers("allowedMcpServers")? {
            self.mcp.allowed.get_or_insert_with(Vec::new).extend(allowed);
        }
        self.mcp.denied.extend(servers("deniedMcpServers")?.unwrap_or_default());
        let sandbox = keys.get("sandbox");
        let enabled = sandbox.and_then(|sandbox| sandbox.get("enabled")).and_then(Value::as_bool);
        self.sandbox.enabled = enabled.or(self.sandbox.enabled);
        claude_code::narrow_sandbox(&mut self.sandbox, keys);
        claude_code::widen_sandbox(&mut self.sandbox, keys);
        let network = sandbox.and_then(|sandbox| sandbox.get("network"));
        self.sandbox.network.managed_domains_only |=
            network.and_then(|network| network.get("allowManagedDomainsOnly")).and_then(Value::as_bool) == Some(true);
        let enforced: Vec<&str> = claude_code::HONOURED_FROM_USER.iter().chain(ENFORCED).copied().collect();
        let mut passed_over = Vec::new();
        claude_code::unhonoured_keys(keys, "", &enforced, &mut passed_over);
        self.unenforced.extend(passed_over.into_iter().filter(|key| !INFORMATIONAL.contains(&key.as_str())));
        Ok(())
    }

    /// Why every call asks, when the policy holds a restriction Larik cannot enforce.
    pub fn fails_closed(&self) -> Option<String> {
        (!self.unenforced.is_empty()).then(|| {
            let keys: Vec<String> = self.unenforced.iter().map(|key| format!("`{key}`")).collect();
            format!(
                "Your organisation's managed settings ({}) set {}, which Larik cannot enforce; so that the policy is not loosened, every tool call asks for your approval.",
                self.files.iter().map(|path| path.display().to_string()).collect::<Vec<_>>().join(", "),
                keys.join(", ")
            )
        })
    }
}

#[cfg(test)]
mod tests;
