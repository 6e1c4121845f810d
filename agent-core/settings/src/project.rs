//! What a settings file inside the project may hold. Such a file is parsed into
//! [`ProjectSettings`], a type with only what a repository may decide; everything else in it
//! lands in `rest`, to be reported. So a new setting is user-only until someone adds it here, on
//! purpose: the boundary is a type, not a list of keys to strip. `larik-core`'s
//! `config::project` applies it and `protocol-spec/spec/settings.md` gives each key's reason.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use crate::{Budget, CompactionSettings, ProviderKind, RoleSettings, Settings};

/// A settings file inside the project, as far as a repository may decide anything.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", default)]
pub struct ProjectSettings {
    /// A lower limit on each response's output tokens; a higher one is ignored.
    pub max_tokens: Option<u32>,
    /// A lower limit on model requests per turn; a higher one is ignored.
    pub max_turn_requests: Option<u32>,
    pub thought_level: Option<String>,
    /// Only lowers the user's budget.
    pub budget: Option<Budget>,
    pub context_window: Option<u64>,
    pub compaction: Option<CompactionSettings>,
    pub stream_idle_timeout_ms: Option<u64>,
    /// Read with every file's rules, where allow rules wait for the user's approval and a mode
    /// wider than `plan` is refused.
    pub permissions: Option<ProjectPermissions>,
    pub sandbox: Option<ProjectSandbox>,
    /// Chosen only with the user's approval.
    pub provider: Option<ProviderKind>,
    /// Chosen only with the user's approval.
    pub model: Option<String>,
    /// Chosen only with the user's approval.
    pub models: Option<Vec<String>>,
    /// Chosen only with the user's approval.
    pub roles: Option<BTreeMap<String, RoleSettings>>,
    /// Read by the hooks' loader, which runs them only once approved.
    #[schemars(with = "Option<BTreeMap<String, Value>>")]
    pub hooks: Option<Value>,
    /// Read by the MCP servers' loader, which starts them only once approved.
    #[schemars(with = "Option<BTreeMap<String, Value>>")]
    pub mcp_servers: Option<Value>,
    /// Everything a repository may not decide, or that is no setting at all: reported, ignored.
    #[serde(flatten)]
    #[schemars(skip)]
    rest: BTreeMap<String, Value>,
}

/// `permissions` in a project's settings: rules and modes (each read as the permissions'
/// loader says), but no directory outside the project.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", default)]
pub struct ProjectPermissions {
    pub allow: Vec<String>,
    pub deny: Vec<String>,
    pub ask: Vec<String>,
    pub protected_paths: Vec<String>,
    pub default_mode: Option<String>,
    pub disable_bypass_permissions_mode: Option<String>,
    #[serde(flatten)]
    #[schemars(skip)]
    rest: BTreeMap<String, Value>,
}

/// `sandbox` in a project's settings: it may only narrow (turn the full network off, deny
/// domains, make sandboxed commands ask); its `network.allowedDomains` waits for the user's
/// approval.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", default)]
pub struct ProjectSandbox {
    /// `false`, or the lists: `deniedDomains` at once, `allowedDomains` once approved; `true`
    /// and the rest of the lists are ignored.
    pub network: Option<crate::NetworkShape>,
    /// `false` only; `true` is ignored.
    pub auto_allow_bash_if_sandboxed: Option<bool>,
    /// `false` only; `true` is ignored.
    pub allow_unsandboxed_commands: Option<bool>,
    /// `true` only; `false` is ignored.
    pub fail_if_unavailable: Option<bool>,
    /// `denyWrite` and `denyRead` only: they narrow.
    pub filesystem: Option<ProjectFilesystem>,
    #[serde(flatten)]
    #[schemars(skip)]
    rest: BTreeMap<String, Value>,
}

/// `sandbox.filesystem` in a project's settings: what only narrows.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", default)]
pub struct ProjectFilesystem {
    pub deny_write: Vec<String>,
    pub deny_read: Vec<String>,
    #[serde(flatten)]
    #[schemars(skip)]
    rest: BTreeMap<String, Value>,
}

impl ProjectSettings {
    /// The keys of the file a repository may not set (or that are no setting at all), dotted
    /// below `sandbox`: reported, and of no effect.
    pub fn unread_keys(&self) -> Vec<String> {
        let sandbox = self.sandbox.iter().flat_map(|sandbox| {
            let filesystem = sandbox.filesystem.iter().flat_map(|filesystem| filesystem.rest.keys());
            sandbox
                .rest
                .keys()
                .map(|key| format!("sandbox.{key}"))
                .chain(filesystem.map(|key| format!("sandbox.filesystem.{key}")))
        });
        let permissions = self
            .permissions
            .iter()
            .flat_map(|permissions| permissions.rest.keys().map(|key| format!("permissions.{key}")));
        self.rest.keys().cloned().chain(sandbox).chain(permissions).collect()
    }
}

/// What a project's settings chose that waits for the user's approval of the project.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ProjectChoices {
    pub provider: Option<ProviderKind>,
    pub model: Option<String>,
    pub models: Option<Vec<String>>,
    pub roles: BTreeMap<String, RoleSettings>,
    /// The models the project's own subagent definitions name, by subagent.
    pub subagent_models: BTreeMap<String, String>,
    /// `sandbox.network.allowedDomains`: reached without asking once the user approved them.
    pub allowed_domains: Vec<String>,
}

impl ProjectChoices {
    /// One line per choice, for the approval question and its fingerprint.
    pub fn describe(&self) -> Vec<String> {
        let mut lines = Vec::new();
        if let Some(provider) = self.provider {
            lines.push(format!("provider: {}", provider.id()));
        }
        if let Some(model) = &self.model {
            lines.push(format!("model: {model}"));
        }
        if let Some(models) = &self.models {
            lines.push(format!("models offered: {}", models.join(", ")));
        }
        for (name, model) in &self.subagent_models {
            lines.push(format!("subagent {name}: model {model}"));
        }
        for (name, role) in &self.roles {
            let mut said = vec![format!("model {}", role.model.as_deref().unwrap_or("inherited"))];
            said.extend(role.max_turns.map(|turns| format!("at most {turns} turns")));
            said.extend(role.context.map(|context| format!("{context:?} context").to_lowercase()));
            said.extend(role.isolation.as_ref().map(|isolation| format!("isolation {isolation}")));
            lines.push(format!("role {name}: {}", said.join(", ")));
        }
        if !self.allowed_domains.is_empty() {
            lines.push(format!("sandboxed commands reach without asking: {}", self.allowed_domains.join(", ")));
        }
        lines
    }

    /// Adds what `layer` (a later file) chose.
    pub fn add(&mut self, layer: &ProjectSettings) {
        self.provider = layer.provider.or(self.provider);
        self.model = layer.model.clone().or(self.model.take());
        self.models = layer.models.clone().or(self.models.take());
        self.roles.extend(layer.roles.clone().unwrap_or_default());
    }
}

impl Settings {
    /// These settings with what the project chose and the user approved.
    pub fn with_project_choices(mut self) -> Settings {
        let choices = std::mem::take(&mut self.project_choices);
        self.provider = choices.provider.or(self.provider);
        self.model = choices.model.or(self.model);
        self.models = choices.models.or(self.models);
        if !choices.roles.is_empty() {
            self.roles.get_or_insert_with(BTreeMap::new).extend(choices.roles);
        }
        self
    }
}
