//! Settings: which model to use and how to reach it. Sources, later ones winning:
//! `~/.config/larik/settings.json`, `<project>/.larik/settings.json`,
//! `<project>/.larik/settings.local.json`, then the environment (`LARIK_MODEL`,
//! `ANTHROPIC_API_KEY`, `ANTHROPIC_BASE_URL`, `OPENAI_API_KEY`, `OPENAI_BASE_URL`).
//! The environment is passed in as a map so tests never mutate the process environment.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::Deserialize;

use crate::llm::anthropic::{self, AnthropicProvider};
use crate::llm::openai::{self, OpenAiProvider};
use crate::llm::{Provider, ProviderError, ThoughtLevel};
use crate::permission::Mode;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ProviderKind {
    Anthropic,
    Openai,
}

/// The settings file, every field optional.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Settings {
    pub provider: Option<ProviderKind>,
    pub model: Option<String>,
    pub base_url: Option<String>,
    /// Name of the environment variable holding the key, e.g. for a gateway.
    pub api_key_env: Option<String>,
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
    pub roles: Option<std::collections::BTreeMap<String, crate::agents::RoleSettings>>,
    /// Language servers: `{enabled, servers: {name: {command, args, filetypes, rootMarkers,
    /// initializationOptions, enabled}}}`.
    pub lsp: Option<crate::lsp::LspSettings>,
    /// The browser tools: `{executable, headless, enabled}`.
    pub browser: Option<BrowserSettings>,
    /// `true` filters the output of known successful bash commands before the model sees it,
    /// keeping the exact output for `raw_output`. Off by default; the user's own settings only.
    pub token_saver: Option<bool>,
    /// `{maxCostUsd, maxTokens}`: the session stops before a request beyond it.
    pub budget: Option<crate::session::Budget>,
    /// The model's context window in tokens, for models the catalog does not know (a local
    /// server's window is whatever it was started with).
    pub context_window: Option<u64>,
    /// `{auto, threshold}`: when the conversation is compacted on its own.
    pub compaction: Option<crate::session::compaction::CompactionSettings>,
    /// How long a model stream may stay silent before it is reported as stalled.
    pub stream_idle_timeout_ms: Option<u64>,
    /// Read by [`crate::hooks::Hooks::load`]; named here so it is not reported as unknown.
    #[serde(rename = "hooks")]
    _hooks: Option<serde_json::Value>,
    /// Read by [`crate::mcp::config::load`]; named here so it is not reported as unknown.
    #[serde(rename = "mcpServers")]
    _mcp_servers: Option<serde_json::Value>,
    /// Keys no part of Larik reads, kept to be reported rather than silently dropped.
    #[serde(flatten)]
    unknown: std::collections::BTreeMap<String, serde_json::Value>,
    /// What the user should hear about these settings: unknown keys and values, settings capped
    /// for safety. Filled in while loading.
    #[serde(skip)]
    pub problems: Vec<String>,
}

/// `browser` in the user's settings.
#[derive(Debug, Clone, Default, Deserialize)]
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
#[derive(Debug, Clone, Default, Deserialize)]
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
    /// The mode sessions start in: `default`, `accept-edits`, `plan` or `yolo`, or Claude
    /// Code's `default`, `acceptEdits`, `plan`, `bypassPermissions`.
    pub default_mode: Option<String>,
    /// The file `default_mode` came from.
    #[serde(skip)]
    pub default_mode_source: Option<PathBuf>,
}

/// `sandbox` in settings.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct SandboxSettings {
    /// On by default where the kernel supports it.
    pub enabled: Option<bool>,
    /// Let sandboxed commands open network connections (off by default).
    pub network: bool,
    /// More paths sandboxed commands may write, e.g. a build cache.
    pub writable_paths: Vec<String>,
}

/// `webSearch` in settings: which search service `web_search` uses.
#[derive(Debug, Clone, Default, Deserialize)]
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

/// Picks the search service: settings first, then whichever key the environment holds.
pub fn resolve_search(settings: &Settings, env: &HashMap<String, String>) -> Option<SearchBackend> {
    let get = |key: &str| env.get(key).filter(|value| !value.is_empty()).cloned();
    let configured = settings.web_search.clone().unwrap_or_default();
    let key = |default: &str| get(configured.api_key_env.as_deref().unwrap_or(default));
    let brave = || {
        let base_url = configured.url.clone().or_else(|| get("BRAVE_SEARCH_URL")).unwrap_or_else(|| "https://api.search.brave.com".into());
        Some(SearchBackend::Brave { api_key: key("BRAVE_API_KEY")?, base_url })
    };
    let tavily = || {
        let base_url = configured.url.clone().or_else(|| get("TAVILY_SEARCH_URL")).unwrap_or_else(|| "https://api.tavily.com".into());
        Some(SearchBackend::Tavily { api_key: key("TAVILY_API_KEY")?, base_url })
    };
    let searxng = || Some(SearchBackend::Searxng { base_url: configured.url.clone().or_else(|| get("SEARXNG_URL"))? });
    match configured.provider.as_deref() {
        Some("brave") => brave(),
        Some("tavily") => tavily(),
        Some("searxng") => searxng(),
        _ => brave().or_else(tavily).or_else(searxng),
    }
}

impl Settings {
    fn merge(self, over: Settings) -> Settings {
        Settings {
            provider: over.provider.or(self.provider),
            model: over.model.or(self.model),
            base_url: over.base_url.or(self.base_url),
            api_key_env: over.api_key_env.or(self.api_key_env),
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
            budget: crate::session::Budget::tighter(self.budget, over.budget),
            context_window: over.context_window.or(self.context_window),
            compaction: over.compaction.or(self.compaction),
            stream_idle_timeout_ms: over.stream_idle_timeout_ms.or(self.stream_idle_timeout_ms),
            _hooks: None,
            _mcp_servers: None,
            unknown: std::collections::BTreeMap::new(),
            problems: [self.problems, over.problems].concat(),
        }
    }
}

/// Roles from a later file replace an earlier file's role of the same name, one by one.
fn merge_roles<T>(under: Option<std::collections::BTreeMap<String, T>>, over: Option<std::collections::BTreeMap<String, T>>) -> Option<std::collections::BTreeMap<String, T>> {
    match (under, over) {
        (Some(mut under), Some(over)) => {
            under.extend(over);
            Some(under)
        }
        (under, over) => over.or(under),
    }
}

/// Where a session's settings come from, for the parts that read them again while it lives.
#[derive(Debug, Clone)]
pub struct SettingsSource {
    pub project: PathBuf,
    pub env: HashMap<String, String>,
}

impl SettingsSource {
    /// The settings as the files say now; unreadable files count as no settings.
    pub fn load(&self) -> Settings {
        load_settings(&self.project, &self.env).unwrap_or_else(|error| {
            tracing::warn!(%error, "settings could not be read again");
            Settings::default()
        })
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("{path}: {message}")]
    Unreadable { path: PathBuf, message: String },
    #[error("no model is configured: set ANTHROPIC_API_KEY or OPENAI_API_KEY (or OPENAI_BASE_URL for a local server), or write \"provider\" and \"model\" in ~/.config/larik/settings.json")]
    NoModel,
}

/// The resolved choice of model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelConfig {
    pub provider: ProviderKind,
    pub model: String,
    pub base_url: String,
    pub api_key: Option<String>,
    pub max_tokens: u32,
    pub thought_level: Option<ThoughtLevel>,
    pub max_turn_requests: u32,
    /// The models the user can switch to (the current one included).
    pub models: Vec<String>,
}

impl ModelConfig {
    /// The same configuration with another model. A `provider:` prefix switches provider too,
    /// taking that provider's endpoint and key from the environment.
    pub fn with_model(&self, name: &str, env: &HashMap<String, String>) -> ModelConfig {
        let settings = Settings { provider: None, model: Some(name.to_owned()), ..Settings::default() };
        let mut env = env.clone();
        env.insert("LARIK_MODEL".into(), name.to_owned());
        let switched = resolve_model(&settings, &env).ok().filter(|other| other.provider != self.provider || name.contains(':'));
        match switched {
            Some(other) => ModelConfig { models: self.models.clone(), ..other },
            None => ModelConfig { model: name.to_owned(), ..self.clone() },
        }
    }

    pub fn build_provider(&self) -> Result<Arc<dyn Provider>, ProviderError> {
        Ok(match self.provider {
            ProviderKind::Anthropic => {
                let key = self.api_key.clone().ok_or_else(|| ProviderError::Auth {
                    message: "ANTHROPIC_API_KEY is not set; export it or set apiKeyEnv in settings".into(),
                })?;
                Arc::new(AnthropicProvider::new(&self.base_url, key)?)
            }
            ProviderKind::Openai => Arc::new(OpenAiProvider::new(&self.base_url, self.api_key.clone())?),
        })
    }
}

/// The user's own instruction files, read into every session's prompt when they exist: Claude
/// Code's `~/.claude/CLAUDE.md` and Larik's `~/.config/larik/AGENTS.md`.
pub fn user_instruction_files(env: &HashMap<String, String>) -> Vec<PathBuf> {
    let claude = env.get("HOME").map(|home| Path::new(home).join(".claude").join("CLAUDE.md"));
    let larik = user_config_dir(env).map(|dir| dir.join("AGENTS.md"));
    claude.into_iter().chain(larik).collect()
}

/// The user's config directory for Larik (`$XDG_CONFIG_HOME/larik` or `~/.config/larik`).
pub fn user_config_dir(env: &HashMap<String, String>) -> Option<PathBuf> {
    if let Some(xdg) = env.get("XDG_CONFIG_HOME").filter(|dir| !dir.is_empty()) {
        return Some(PathBuf::from(xdg).join("larik"));
    }
    env.get("HOME").map(|home| PathBuf::from(home).join(".config").join("larik"))
}

/// The user's data directory for Larik (`$XDG_DATA_HOME/larik` or `~/.local/share/larik`):
/// sessions, MCP logins.
pub fn user_data_dir(env: &HashMap<String, String>) -> Option<PathBuf> {
    if let Some(xdg) = env.get("XDG_DATA_HOME").filter(|dir| !dir.is_empty()) {
        return Some(PathBuf::from(xdg).join("larik"));
    }
    env.get("HOME").map(|home| PathBuf::from(home).join(".local").join("share").join("larik"))
}

/// Reads and merges every settings file that exists; a malformed one is an error, not ignored.
pub fn load_settings(project: &Path, env: &HashMap<String, String>) -> Result<Settings, ConfigError> {
    let mut files = Vec::new();
    if let Some(dir) = user_config_dir(env) {
        files.push(dir.join("settings.json"));
    }
    files.push(project.join(".larik").join("settings.json"));
    files.push(project.join(".larik").join("settings.local.json"));
    let mut settings = Settings::default();
    for path in files {
        let Ok(text) = std::fs::read_to_string(&path) else { continue };
        let mut layer = parse_layer(&path, &text)?;
        // Which programs run as language servers is the user's choice: a project's files
        // cannot name one (a cloned repository would run its own code).
        if path.starts_with(project) && layer.lsp.take().is_some() {
            layer.problems.push(format!("{}: `lsp` is read from your own settings (~/.config/larik/settings.json) only; a project cannot choose which programs run", path.display()));
        }
        // Likewise the browser: its `executable` is a program to run.
        if path.starts_with(project) && layer.browser.take().is_some() {
            layer.problems.push(format!("{}: `browser` is read from your own settings (~/.config/larik/settings.json) only; a project cannot choose which programs run", path.display()));
        }
        // And the token saver: it changes what the model is shown of every command, and keeps
        // copies of that output on the user's disk.
        if path.starts_with(project) && layer.token_saver.take().is_some() {
            layer.problems.push(format!("{}: `tokenSaver` is read from your own settings (~/.config/larik/settings.json) only", path.display()));
        }
        if let Some(level) = layer.thought_level.as_deref().filter(|level| ThoughtLevel::from_id(level).is_none()) {
            layer.problems.push(format!("{}: thoughtLevel `{level}` is not one of off, low, medium, high; it is ignored", path.display()));
        }
        settings = settings.merge(layer);
    }
    Ok(settings)
}

/// One settings file's text, its unknown keys noted as problems.
pub(crate) fn parse_layer(path: &Path, text: &str) -> Result<Settings, ConfigError> {
    let mut layer: Settings = serde_json::from_str(text).map_err(|error| ConfigError::Unreadable { path: path.to_path_buf(), message: error.to_string() })?;
    layer.problems.extend(layer.unknown.keys().map(|key| format!("{}: `{key}` is not a Larik setting and is ignored", path.display())));
    Ok(layer)
}

/// Every file that may hold permission rules, in order: user settings, the project's shared and
/// local settings, Claude Code's project settings, and the private rules "always allow" saved.
pub fn rule_files(project: &Path, env: &HashMap<String, String>) -> Vec<PathBuf> {
    let mut files = Vec::new();
    if let Some(dir) = user_config_dir(env) {
        files.push(dir.join("settings.json"));
    }
    for dir in [".larik", ".claude"] {
        files.push(project.join(dir).join("settings.json"));
        files.push(project.join(dir).join("settings.local.json"));
    }
    if let Some(private) = private_rules_file(project, env) {
        files.push(private);
    }
    files
}

/// Where "always allow" rules for a project are saved: under the user's config directory.
pub fn private_rules_file(project: &Path, env: &HashMap<String, String>) -> Option<PathBuf> {
    user_config_dir(env).map(|dir| crate::permission::private_settings_path(&dir, project))
}

/// The union of the permission settings of every rule file; a malformed file is an error, so a
/// deny rule is never silently dropped.
pub fn load_permissions(project: &Path, env: &HashMap<String, String>) -> Result<PermissionSettings, ConfigError> {
    let mut all = PermissionSettings::default();
    for path in rule_files(project, env) {
        let Ok(text) = std::fs::read_to_string(&path) else { continue };
        let value: serde_json::Value =
            serde_json::from_str(&text).map_err(|error| ConfigError::Unreadable { path: path.clone(), message: error.to_string() })?;
        let Some(permissions) = value.get("permissions") else { continue };
        let layer: PermissionSettings = serde_json::from_value(permissions.clone())
            .map_err(|error| ConfigError::Unreadable { path: path.clone(), message: format!("permissions: {error}") })?;
        if path.starts_with(project) {
            all.project_allow.extend(layer.allow);
        } else {
            all.allow.extend(layer.allow);
        }
        all.deny.extend(layer.deny);
        all.ask.extend(layer.ask);
        all.protected_paths.extend(layer.protected_paths);
        if layer.default_mode.is_some() {
            all.default_mode = layer.default_mode;
            all.default_mode_source = Some(path.clone());
        }
    }
    Ok(all)
}

/// The mode sessions start in, and what the user should hear about it. A repository must not
/// switch its reader to yolo: a mode from a file inside the project is capped at accept-edits.
/// An unknown value is reported and the default mode used.
pub fn initial_mode(permissions: &PermissionSettings, project: &Path) -> (Mode, Option<String>) {
    let Some(value) = permissions.default_mode.as_deref() else { return (Mode::Default, None) };
    let source = permissions.default_mode_source.as_deref().map(|path| path.display().to_string()).unwrap_or_else(|| "settings".into());
    match Mode::from_setting(value) {
        None => (Mode::Default, Some(format!("{source}: defaultMode `{value}` is not one of default, acceptEdits, plan, bypassPermissions (or accept-edits, yolo); starting in default"))),
        Some(Mode::Yolo) if permissions.default_mode_source.as_deref().is_some_and(|path| path.starts_with(project)) => (
            Mode::AcceptEdits,
            Some(format!("{source}: defaultMode `{value}` comes from the project, which may not choose a mode wider than accept-edits; starting in accept-edits (set it in ~/.config/larik/settings.json to start in yolo)")),
        ),
        Some(mode) => (mode, None),
    }
}

/// Picks provider, model, endpoint and key from settings and the environment.
pub fn resolve_model(settings: &Settings, env: &HashMap<String, String>) -> Result<ModelConfig, ConfigError> {
    let get = |key: &str| env.get(key).filter(|value| !value.is_empty()).cloned();
    // LARIK_MODEL may name the provider: "anthropic:claude-sonnet-4-5" or "openai:gpt-4.1".
    let (env_provider, env_model) = match get("LARIK_MODEL") {
        Some(spec) => match spec.split_once(':') {
            Some(("anthropic", model)) => (Some(ProviderKind::Anthropic), Some(model.to_owned())),
            Some(("openai", model)) => (Some(ProviderKind::Openai), Some(model.to_owned())),
            _ => (None, Some(spec)),
        },
        None => (None, None),
    };
    let model = env_model.or_else(|| settings.model.clone());
    let provider = env_provider
        .or(settings.provider)
        .or_else(|| model.as_deref().filter(|name| name.starts_with("claude")).map(|_| ProviderKind::Anthropic))
        .or_else(|| get("ANTHROPIC_API_KEY").map(|_| ProviderKind::Anthropic))
        .or_else(|| (get("OPENAI_API_KEY").is_some() || get("OPENAI_BASE_URL").is_some()).then_some(ProviderKind::Openai))
        .ok_or(ConfigError::NoModel)?;
    let (default_model, default_url, key_var, url_var) = match provider {
        ProviderKind::Anthropic => ("claude-sonnet-4-5", anthropic::DEFAULT_BASE_URL, "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"),
        ProviderKind::Openai => ("gpt-4.1", openai::DEFAULT_BASE_URL, "OPENAI_API_KEY", "OPENAI_BASE_URL"),
    };
    let key_var = settings.api_key_env.as_deref().unwrap_or(key_var);
    let model = model.unwrap_or_else(|| default_model.to_owned());
    let mut models = settings.models.clone().unwrap_or_default();
    if !models.contains(&model) {
        models.insert(0, model.clone());
    }
    Ok(ModelConfig {
        provider,
        models,
        model,
        base_url: get(url_var).or_else(|| settings.base_url.clone()).unwrap_or_else(|| default_url.to_owned()),
        api_key: get(key_var),
        max_tokens: settings.max_tokens.unwrap_or(16_384),
        thought_level: settings.thought_level.as_deref().and_then(ThoughtLevel::from_id),
        max_turn_requests: settings.max_turn_requests.unwrap_or(100),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_project_cannot_start_its_reader_in_yolo() {
        let home = tempfile::tempdir().unwrap();
        let project = tempfile::tempdir().unwrap();
        let env = env(&[("XDG_CONFIG_HOME", home.path().to_str().unwrap())]);
        let write = |path: &Path, body: &str| {
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, body).unwrap();
        };
        write(&project.path().join(".claude/settings.json"), r#"{"permissions": {"defaultMode": "bypassPermissions"}}"#);
        let (mode, notice) = initial_mode(&load_permissions(project.path(), &env).unwrap(), project.path());
        assert_eq!(mode, Mode::AcceptEdits);
        assert!(notice.unwrap().contains("accept-edits"));
        write(&project.path().join(".claude/settings.json"), r#"{"permissions": {"defaultMode": "acceptEdits"}}"#);
        assert_eq!(initial_mode(&load_permissions(project.path(), &env).unwrap(), project.path()), (Mode::AcceptEdits, None));
        write(&project.path().join(".claude/settings.json"), r#"{"permissions": {"defaultMode": "plan"}}"#);
        assert_eq!(initial_mode(&load_permissions(project.path(), &env).unwrap(), project.path()).0, Mode::Plan);
        // The user's own settings may choose yolo.
        std::fs::remove_file(project.path().join(".claude/settings.json")).unwrap();
        write(&home.path().join("larik/settings.json"), r#"{"permissions": {"defaultMode": "bypassPermissions"}}"#);
        assert_eq!(initial_mode(&load_permissions(project.path(), &env).unwrap(), project.path()), (Mode::Yolo, None));
        write(&home.path().join("larik/settings.json"), r#"{"permissions": {"defaultMode": "Yolo!"}}"#);
        let (mode, notice) = initial_mode(&load_permissions(project.path(), &env).unwrap(), project.path());
        assert_eq!(mode, Mode::Default);
        assert!(notice.unwrap().contains("`Yolo!` is not one of"));
    }

    #[test]
    fn unknown_settings_and_values_are_reported() {
        let home = tempfile::tempdir().unwrap();
        let project = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(project.path().join(".larik")).unwrap();
        std::fs::write(project.path().join(".larik/settings.json"), r#"{"thoughtLevel": "max", "modle": "x", "model": "y", "hooks": {}, "mcpServers": {"gh": {"type": "http", "url": "https://example.com/mcp"}}}"#).unwrap();
        let settings = load_settings(project.path(), &env(&[("XDG_CONFIG_HOME", home.path().to_str().unwrap())])).unwrap();
        assert_eq!(settings.model.as_deref(), Some("y"));
        // Settings other parts read (hooks, MCP servers) are not unknown.
        assert_eq!(settings.problems.len(), 2, "{:?}", settings.problems);
        assert!(settings.problems.iter().any(|problem| problem.contains("`modle` is not a Larik setting")));
        assert!(settings.problems.iter().any(|problem| problem.contains("thoughtLevel `max`")));
    }

    fn env(pairs: &[(&str, &str)]) -> HashMap<String, String> {
        pairs.iter().map(|(key, value)| ((*key).to_owned(), (*value).to_owned())).collect()
    }

    #[test]
    fn environment_picks_the_provider() {
        let settings = Settings::default();
        let anthropic = resolve_model(&settings, &env(&[("ANTHROPIC_API_KEY", "k")])).unwrap();
        assert_eq!((anthropic.provider, anthropic.model.as_str()), (ProviderKind::Anthropic, "claude-sonnet-4-5"));
        let ollama = resolve_model(&settings, &env(&[("OPENAI_BASE_URL", "http://127.0.0.1:11434/v1"), ("LARIK_MODEL", "qwen3")])).unwrap();
        assert_eq!(ollama.provider, ProviderKind::Openai);
        assert_eq!(ollama.base_url, "http://127.0.0.1:11434/v1");
        assert_eq!(ollama.api_key, None);
        let explicit = resolve_model(&settings, &env(&[("LARIK_MODEL", "openai:gpt-5"), ("ANTHROPIC_API_KEY", "k")])).unwrap();
        assert_eq!((explicit.provider, explicit.model.as_str()), (ProviderKind::Openai, "gpt-5"));
        assert!(matches!(resolve_model(&settings, &env(&[])), Err(ConfigError::NoModel)));
    }

    #[test]
    fn search_backend_from_settings_or_environment() {
        let none = Settings::default();
        assert_eq!(resolve_search(&none, &env(&[])), None);
        let tavily = resolve_search(&none, &env(&[("TAVILY_API_KEY", "t")])).unwrap();
        assert!(matches!(tavily, SearchBackend::Tavily { .. }));
        let settings: Settings = serde_json::from_str(r#"{"webSearch": {"provider": "searxng", "url": "http://127.0.0.1:8888"}}"#).unwrap();
        assert_eq!(resolve_search(&settings, &env(&[("BRAVE_API_KEY", "b")])), Some(SearchBackend::Searxng { base_url: "http://127.0.0.1:8888".into() }));
    }

    #[test]
    fn project_settings_override_user_settings() {
        let home = tempfile::tempdir().unwrap();
        let project = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(home.path().join("larik")).unwrap();
        std::fs::write(home.path().join("larik/settings.json"), r#"{"provider":"openai","model":"a","maxTokens":10}"#).unwrap();
        std::fs::create_dir_all(project.path().join(".larik")).unwrap();
        std::fs::write(project.path().join(".larik/settings.json"), r#"{"model":"b"}"#).unwrap();
        let env = env(&[("XDG_CONFIG_HOME", home.path().to_str().unwrap())]);
        let settings = load_settings(project.path(), &env).unwrap();
        assert_eq!(settings.model.as_deref(), Some("b"));
        assert_eq!(settings.max_tokens, Some(10));
        std::fs::write(project.path().join(".larik/settings.local.json"), "{oops").unwrap();
        assert!(matches!(load_settings(project.path(), &env), Err(ConfigError::Unreadable { .. })));
    }
}
