//! Larik's settings types: the keys of every settings file as serde data, each mechanism's
//! part of them (roles, language servers, limits, compaction, the mode), and what a settings file
//! inside the project may hold ([`ProjectSettings`]). Loading, merging files and deciding what a
//! project may set live in `larik-core`'s `config`; this crate is a leaf, importing no other
//! Larik crate, so every mechanism can read its settings without importing another mechanism.

mod limits;
mod lsp;
mod mode;
mod network;
pub mod paths;
mod project;
mod roles;

use std::collections::BTreeMap;
use std::path::PathBuf;

use schemars::JsonSchema;
use serde::Deserialize;

pub use limits::{Budget, CompactionSettings};
pub use lsp::{LspSettings, ServerSettings};
pub use mode::Mode;
pub use network::{NetworkLists, NetworkSettings, NetworkShape};
pub use project::{ProjectChoices, ProjectFilesystem, ProjectSandbox, ProjectSettings};
pub use roles::{ContextSize, RoleSettings};

/// The output tokens a response may use unless settings say otherwise.
pub const DEFAULT_MAX_TOKENS: u32 = 16_384;
/// The model requests a turn may make unless settings say otherwise.
pub const DEFAULT_MAX_TURN_REQUESTS: u32 = 100;

/// How long a provider keeps a cached prompt prefix.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, JsonSchema)]
pub enum PromptCacheTtl {
    #[default]
    #[serde(rename = "5m")]
    FiveMinutes,
    #[serde(rename = "1h")]
    OneHour,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ProviderKind {
    Anthropic,
    Openai,
}

impl ProviderKind {
    /// How settings and `LARIK_MODEL` name it.
    pub fn id(self) -> &'static str {
        match self {
            ProviderKind::Anthropic => "anthropic",
            ProviderKind::Openai => "openai",
        }
    }
}

/// The user's own settings file (`~/.config/larik/settings.json`), every field optional. A
/// file inside the project is read as [`ProjectSettings`] instead, which holds only what a
/// repository may decide.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", default)]
pub struct Settings {
    pub provider: Option<ProviderKind>,
    pub model: Option<String>,
    pub base_url: Option<String>,
    /// Name of the environment variable holding the key, e.g. for a gateway.
    pub api_key_env: Option<String>,
    /// A command (run with `/bin/sh -c`) that prints the key, where the environment holds none:
    /// Claude Code's `apiKeyHelper`. Its answer is kept for five minutes
    /// (`CLAUDE_CODE_API_KEY_HELPER_TTL_MS`) or until the provider refuses it, and never logged.
    pub api_key_helper: Option<String>,
    /// Sessions not written to for this many days are removed when Larik starts (Claude Code's
    /// `cleanupPeriodDays`); unset keeps them all.
    pub cleanup_period_days: Option<u32>,
    /// Text the agent ends its commit messages (`commit`) and pull request descriptions (`pr`)
    /// with, as Claude Code's `attribution`.
    pub attribution: Option<paths::Attribution>,
    /// Globs of memory files (`CLAUDE.md`, rules) never to read, matched against their absolute
    /// paths: Claude Code's `claudeMdExcludes`, for another team's files in a monorepo.
    pub claude_md_excludes: Option<Vec<String>>,
    pub max_tokens: Option<u32>,
    /// `off`, `low`, `medium` or `high`: how hard the model thinks before answering.
    pub thought_level: Option<String>,
    pub max_turn_requests: Option<u32>,
    /// Models offered for switching in the editor, e.g. `["claude-sonnet-4-5", "openai:gpt-4.1"]`.
    pub models: Option<Vec<String>>,
    pub web_search: Option<WebSearchSettings>,
    pub permissions: Option<PermissionSettings>,
    pub sandbox: Option<SandboxSettings>,
    /// Subagents' roles by name (`worker`, `explore`, ...): a model, or `{model, maxTurns,
    /// context, isolation}`. Read again for every task, so a change applies without a restart.
    pub roles: Option<BTreeMap<String, RoleSettings>>,
    /// Language servers: `{enabled, servers: {name: {command, args, filetypes, rootMarkers,
    /// initializationOptions, enabled}}}`.
    pub lsp: Option<LspSettings>,
    /// The browser tools: `{executable, headless, enabled}`.
    pub browser: Option<BrowserSettings>,
    /// `true` filters the output of known successful bash commands before the model sees it,
    /// keeping the exact output for `raw_output`. Off by default; the user's own settings only.
    pub token_saver: Option<bool>,
    /// `{maxCostUsd, maxTokens}`: the session stops before a request beyond it.
    pub budget: Option<Budget>,
    /// The model's context window in tokens, for models the catalog does not know (a local
    /// server's window is whatever it was started with).
    pub context_window: Option<u64>,
    /// `{auto, threshold}`: when the conversation is compacted on its own.
    pub compaction: Option<CompactionSettings>,
    /// How long a model stream may stay silent before it is reported as stalled.
    pub stream_idle_timeout_ms: Option<u64>,
    /// How long Anthropic keeps a session's cached prompt between requests: `"5m"`, the
    /// default, or `"1h"` for users who pause longer between prompts (an hour's cache costs
    /// twice the input price to write instead of 1.25 times; reads cost the same).
    pub prompt_cache_ttl: Option<PromptCacheTtl>,
    /// Tools listed in every request even where they would be offered on demand: names, or
    /// prefixes ending in `*` (`["browser_*", "mcp__github__*"]`; `["*"]` lists every tool).
    pub always_offered_tools: Option<Vec<String>>,
    /// Environment variables for everything the process starts (commands, hooks, servers), as
    /// in Claude Code. Read at start-up (`config::user_env`); the user's own files only.
    pub env: Option<BTreeMap<String, serde_json::Value>>,
    /// Read by the hooks' loader; named here so it is not reported as unknown.
    #[serde(rename = "hooks")]
    #[schemars(rename = "hooks", with = "Option<std::collections::BTreeMap<String, serde_json::Value>>")]
    _hooks: Option<serde_json::Value>,
    /// Read by the MCP servers' loader; named here so it is not reported as unknown.
    #[serde(rename = "mcpServers")]
    #[schemars(rename = "mcpServers", with = "Option<std::collections::BTreeMap<String, serde_json::Value>>")]
    _mcp_servers: Option<serde_json::Value>,
    /// Keys no part of Larik reads, kept to be reported rather than silently dropped.
    #[serde(flatten)]
    #[schemars(skip)]
    unknown: std::collections::BTreeMap<String, serde_json::Value>,
    /// What the project's settings chose that applies only once the user approved the project.
    #[serde(skip)]
    pub project_choices: ProjectChoices,
    /// What the user should hear about these settings: unknown keys and values, settings capped
    /// for safety. Filled in while loading.
    #[serde(skip)]
    pub problems: Vec<String>,
}

/// `browser` in the user's settings.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", default)]
pub struct BrowserSettings {
    /// The Chromium or Chrome to run; found on PATH otherwise.
    pub executable: Option<String>,
    /// `false` shows the window.
    pub headless: Option<bool>,
    /// `false` offers no browser tools.
    pub enabled: Option<bool>,
}

/// `permissions` in settings. Rules from every settings file apply together.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", default)]
pub struct PermissionSettings {
    pub allow: Vec<String>,
    /// Allow rules from files inside the project: they count only once the user approved the
    /// project's settings (a cloned repository must not widen its reader's permissions).
    #[serde(skip)]
    pub project_allow: Vec<String>,
    pub deny: Vec<String>,
    pub ask: Vec<String>,
    /// Paths, relative to the project, that the agent must never write, beyond the built-in list.
    pub protected_paths: Vec<String>,
    /// Directories outside the project the agent may work in too (absolute, `~/...`, or
    /// relative to the project). Only the user's own files and the managed policy open them: a
    /// repository's are reported and left out.
    pub additional_directories: Vec<String>,
    /// The mode sessions start in: `default`, `accept-edits`, `plan` or `yolo`, or Claude
    /// Code's `default`, `acceptEdits`, `plan`, `bypassPermissions`.
    pub default_mode: Option<String>,
    /// `"disable"` leaves yolo (`bypassPermissions`) out of the modes a session may run in, as
    /// in Claude Code. Any file may set it: it only narrows.
    pub disable_bypass_permissions_mode: Option<String>,
    /// The file `default_mode` came from.
    #[serde(skip)]
    pub default_mode_source: Option<PathBuf>,
    /// Whether that file is inside the project, written by the repository.
    #[serde(skip)]
    pub default_mode_from_project: bool,
    /// The managed policy's `allowManagedPermissionRulesOnly`: only its allow rules count, and
    /// "always allow" saves none.
    #[serde(skip)]
    pub managed_rules_only: bool,
    /// `disableBypassPermissionsMode` in any file, the managed policy's included: no session
    /// runs in yolo.
    #[serde(skip)]
    pub bypass_disabled: bool,
    /// Why every call asks: the managed policy holds a restriction Larik cannot enforce.
    #[serde(skip)]
    pub fails_closed: Option<String>,
}

/// `sandbox` in settings.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", default)]
pub struct SandboxSettings {
    /// On by default where the kernel supports it.
    pub enabled: Option<bool>,
    /// What sandboxed commands may reach: `true` the network as it is, `false` (the default)
    /// Larik's proxy with no domain allowed beforehand, or Claude Code's object of lists.
    #[serde(deserialize_with = "network::deserialize")]
    #[schemars(with = "Option<NetworkShape>")]
    pub network: NetworkSettings,
    /// More paths sandboxed commands may write, e.g. a build cache.
    pub writable_paths: Vec<String>,
    /// `false` asks before sandboxed commands too, as for any other; by default a command the
    /// sandbox contains runs without asking (Claude Code's key of the same name).
    pub auto_allow_bash_if_sandboxed: Option<bool>,
    /// Commands that run outside the sandbox, asking like any unsandboxed command (`docker`,
    /// `git push`; Claude Code's key of the same name).
    pub excluded_commands: Vec<String>,
    /// `false` takes away a call's choice to run outside the sandbox: every command but the
    /// excluded ones runs confined (Claude Code's key of the same name).
    pub allow_unsandboxed_commands: Option<bool>,
    /// `true` refuses commands where the sandbox cannot hold, instead of asking (Claude Code's
    /// key of the same name).
    pub fail_if_unavailable: Option<bool>,
    /// Claude Code's `sandbox.filesystem`: paths sandboxed commands may also write, may not
    /// write, may not read.
    pub filesystem: FilesystemSettings,
}

/// `sandbox.filesystem`, in Claude Code's shape. Paths are absolute, `~/` from the home, or
/// relative to the project.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", default)]
pub struct FilesystemSettings {
    /// Writable too (the user's and the managed policy's only).
    pub allow_write: Vec<String>,
    /// Kept read-only, inside the project for the agent's own writes too.
    pub deny_write: Vec<String>,
    /// Hidden from sandboxed commands: an empty directory, or an empty file, in their place.
    pub deny_read: Vec<String>,
    /// Inside what `deny_read` hides, readable all the same (the user's and the managed
    /// policy's only).
    pub allow_read: Vec<String>,
}

/// `webSearch` in settings: which search service `web_search` uses.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", default)]
pub struct WebSearchSettings {
    /// `brave`, `tavily` or `searxng`.
    pub provider: Option<String>,
    /// The service's base URL (required for SearXNG, which is self-hosted).
    pub url: Option<String>,
    /// The environment variable holding the key, if not the default one.
    pub api_key_env: Option<String>,
}

/// A configured search service.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SearchBackend {
    Brave { api_key: String, base_url: String },
    Tavily { api_key: String, base_url: String },
    Searxng { base_url: String },
}

impl Settings {
    /// These settings with `over` on top: a later file's keys win, roles merge by name, and a
    /// budget only tightens.
    pub fn merge(self, over: Settings) -> Settings {
        Settings {
            provider: over.provider.or(self.provider),
            model: over.model.or(self.model),
            base_url: over.base_url.or(self.base_url),
            api_key_env: over.api_key_env.or(self.api_key_env),
            api_key_helper: over.api_key_helper.or(self.api_key_helper),
            cleanup_period_days: over.cleanup_period_days.or(self.cleanup_period_days),
            attribution: over.attribution.or(self.attribution),
            claude_md_excludes: over.claude_md_excludes.or(self.claude_md_excludes),
            max_tokens: over.max_tokens.or(self.max_tokens),
            thought_level: over.thought_level.or(self.thought_level),
            max_turn_requests: over.max_turn_requests.or(self.max_turn_requests),
            models: over.models.or(self.models),
            web_search: over.web_search.or(self.web_search),
            permissions: over.permissions.or(self.permissions),
            sandbox: over.sandbox.or(self.sandbox),
            roles: merge_roles(self.roles, over.roles),
            lsp: over.lsp.or(self.lsp),
            browser: over.browser.or(self.browser),
            token_saver: over.token_saver.or(self.token_saver),
            // Every file may only lower a limit: a project cannot raise what the user may spend.
            budget: Budget::tighter(self.budget, over.budget),
            context_window: over.context_window.or(self.context_window),
            compaction: over.compaction.or(self.compaction),
            stream_idle_timeout_ms: over.stream_idle_timeout_ms.or(self.stream_idle_timeout_ms),
            prompt_cache_ttl: over.prompt_cache_ttl.or(self.prompt_cache_ttl),
            always_offered_tools: over.always_offered_tools.or(self.always_offered_tools),
            env: over.env.or(self.env),
            _hooks: None,
            _mcp_servers: None,
            unknown: std::collections::BTreeMap::new(),
            project_choices: self.project_choices,
            problems: [self.problems, over.problems].concat(),
        }
    }
}

impl Settings {
    /// The keys of the file no part of Larik reads, to be reported.
    pub fn unknown_keys(&self) -> impl Iterator<Item = &String> {
        self.unknown.keys()
    }
}

/// Roles from a later file replace an earlier file's role of the same name, one by one.
fn merge_roles<T>(
    under: Option<std::collections::BTreeMap<String, T>>,
    over: Option<std::collections::BTreeMap<String, T>>,
) -> Option<std::collections::BTreeMap<String, T>> {
    match (under, over) {
        (Some(mut under), Some(over)) => {
            under.extend(over);
            Some(under)
        }
        (under, over) => over.or(under),
    }
}
