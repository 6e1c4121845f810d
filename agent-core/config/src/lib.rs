//! Settings: which model to use and how to reach it. Sources, later ones winning:
//! `~/.config/larik/settings.json`, `<project>/.larik/settings.json`,
//! `<project>/.larik/settings.local.json`, then the environment (`LARIK_MODEL`,
//! `ANTHROPIC_API_KEY`, `ANTHROPIC_BASE_URL`, `OPENAI_API_KEY`, `OPENAI_BASE_URL`).
//! The environment is passed in as a map so tests never mutate the process environment.

mod claude_code;
pub mod managed;
pub mod plugins;
mod project;
mod settings_files;
mod user_files;
mod written_paths;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use larik_llm::anthropic::{self, AnthropicProvider};
use larik_llm::credential::{Credential, DEFAULT_HELPER_TTL};
use larik_llm::openai::{self, OpenAiProvider};
use larik_llm::{Provider, ProviderError, ThoughtLevel};
pub use larik_settings::paths::{Attribution, UserInstructions, user_config_dir, user_data_dir};
pub use larik_settings::{
    BrowserSettings, DEFAULT_MAX_TOKENS, DEFAULT_MAX_TURN_REQUESTS, Mode, PermissionSettings, ProjectChoices,
    ProjectSandbox, ProjectSettings, ProviderKind, SandboxSettings, SearchBackend, Settings, WebSearchSettings,
};
pub use settings_files::SettingsFiles;
pub use user_files::{McpjsonApproval, approved_mcpjson_servers, cleanup_period_days, user_env, user_instructions};
pub use written_paths::{FilesystemPaths, additional_directories, filesystem_paths};

/// Picks the search service: settings first, then whichever key the environment holds.
pub fn resolve_search(settings: &Settings, env: &HashMap<String, String>) -> Option<SearchBackend> {
    let get = |key: &str| env.get(key).filter(|value| !value.is_empty()).cloned();
    let configured = settings.web_search.clone().unwrap_or_default();
    let key = |default: &str| get(configured.api_key_env.as_deref().unwrap_or(default));
    let brave = || {
        let base_url = configured
            .url
            .clone()
            .or_else(|| get("BRAVE_SEARCH_URL"))
            .unwrap_or_else(|| "https://api.search.brave.com".into());
        Some(SearchBackend::Brave { api_key: key("BRAVE_API_KEY")?, base_url })
    };
    let tavily = || {
        let base_url = configured
            .url
            .clone()
            .or_else(|| get("TAVILY_SEARCH_URL"))
            .unwrap_or_else(|| "https://api.tavily.com".into());
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

/// Where a session's settings come from, for the parts that read them again while it lives.
#[derive(Debug, Clone)]
pub struct SettingsSource {
    pub project: PathBuf,
    pub env: HashMap<String, String>,
    /// Whether the user approved the project's settings, so its choices (model, roles) count.
    /// Shared by every copy, so an approval reaches all that read the settings again.
    project_approved: Arc<AtomicBool>,
}

impl SettingsSource {
    pub fn new(project: PathBuf, env: HashMap<String, String>) -> Self {
        Self { project, env, project_approved: Arc::default() }
    }

    /// The settings as the files say now, the project's choices included once approved;
    /// unreadable files count as no settings.
    pub fn load(&self) -> Settings {
        let settings = load_settings(&self.project, &self.env).unwrap_or_else(|error| {
            tracing::warn!(%error, "settings could not be read again");
            Settings::default()
        });
        if self.project_approved() { settings.with_project_choices() } else { settings }
    }

    /// The user approved the project's settings: its choices count from now on.
    pub fn approve_project(&self) {
        self.project_approved.store(true, Ordering::Relaxed);
    }

    pub fn project_approved(&self) -> bool {
        self.project_approved.load(Ordering::Relaxed)
    }

    /// The model the project's approved settings choose, when they choose one (a model, a
    /// provider or the models offered); its endpoint and key are still the user's.
    pub fn approved_model(&self) -> Option<Result<ModelConfig, ConfigError>> {
        let settings = load_settings(&self.project, &self.env).ok()?;
        let choices = &settings.project_choices;
        if choices.model.is_none() && choices.provider.is_none() && choices.models.is_none() {
            return None;
        }
        Some(resolve_model(&settings.with_project_choices(), &self.env))
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("{path}: {message}")]
    Unreadable { path: PathBuf, message: String },
    #[error(
        "no model is configured: set ANTHROPIC_API_KEY or OPENAI_API_KEY (or OPENAI_BASE_URL for a local server), or write \"provider\" and \"model\" in ~/.config/larik/settings.json"
    )]
    NoModel,
}

/// The resolved choice of model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelConfig {
    pub provider: ProviderKind,
    pub model: String,
    pub base_url: String,
    pub api_key: Option<String>,
    /// Where the environment holds no key: the command that prints one.
    pub key_helper: Option<KeyHelper>,
    pub max_tokens: u32,
    pub thought_level: Option<ThoughtLevel>,
    pub max_turn_requests: u32,
    /// The models the user can switch to (the current one included).
    pub models: Vec<String>,
}

/// `apiKeyHelper`, and how long its answer is kept.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyHelper {
    pub command: String,
    pub ttl: std::time::Duration,
}

impl ModelConfig {
    /// The same configuration with another model. A `provider:` prefix switches provider too,
    /// taking that provider's endpoint and key from the environment.
    pub fn with_model(&self, name: &str, env: &HashMap<String, String>) -> ModelConfig {
        let mut settings = Settings::default();
        settings.model = Some(name.to_owned());
        let mut env = env.clone();
        env.insert("LARIK_MODEL".into(), name.to_owned());
        let switched =
            resolve_model(&settings, &env).ok().filter(|other| other.provider != self.provider || name.contains(':'));
        match switched {
            Some(other) => ModelConfig { models: self.models.clone(), ..other },
            None => ModelConfig { model: name.to_owned(), ..self.clone() },
        }
    }

    /// The environment's key, else the helper's.
    fn credential(&self) -> Option<Credential> {
        match (&self.api_key, &self.key_helper) {
            (Some(key), _) => Some(Credential::Fixed(key.clone())),
            (None, Some(helper)) => Some(Credential::helper(&helper.command, helper.ttl)),
            (None, None) => None,
        }
    }

    pub fn build_provider(&self) -> Result<Arc<dyn Provider>, ProviderError> {
        Ok(match self.provider {
            ProviderKind::Anthropic => {
                let credential = self.credential().ok_or_else(|| ProviderError::Auth {
                    message: "ANTHROPIC_API_KEY is not set; export it, or set apiKeyEnv or apiKeyHelper in settings"
                        .into(),
                })?;
                Arc::new(AnthropicProvider::new(&self.base_url, credential)?)
            }
            ProviderKind::Openai => Arc::new(OpenAiProvider::new(&self.base_url, self.credential())?),
        })
    }
}

/// [`load_settings_from`] the files as they are now.
pub fn load_settings(project: &Path, env: &HashMap<String, String>) -> Result<Settings, ConfigError> {
    load_settings_from(&SettingsFiles::default(), project, env)
}

/// Reads and merges every settings file that exists; a malformed one is an error, not ignored.
/// The user's own file is read whole; the project's files only as far as a repository may
/// decide ([`ProjectSettings`]), their choices kept apart until the user approves them.
pub fn load_settings_from(
    files: &SettingsFiles,
    project: &Path,
    env: &HashMap<String, String>,
) -> Result<Settings, ConfigError> {
    let mut settings = Settings::default();
    let user_file = user_config_dir(env).map(|dir| dir.join("settings.json"));
    let users_claude_file = users_claude_settings(env);
    if let Some(path) = &user_file
        && let Some(text) = files.text(path)
    {
        let layer = parse_layer(path, &text)?;
        if let Some(level) = layer.thought_level.as_deref().filter(|level| ThoughtLevel::from_id(level).is_none()) {
            settings.problems.push(format!(
                "{}: thoughtLevel `{level}` is not one of off, low, medium, high; it is ignored",
                path.display()
            ));
        }
        settings = settings.merge(layer);
    }
    if let Some(path) = &users_claude_file
        && let Some(text) = files.text(path)
    {
        claude_code::apply_user_file(&mut settings, path, &text);
    }
    for path in project_settings_files(project) {
        // A project that is the home directory still has the user's own files, read as theirs.
        if [&user_file, &users_claude_file].iter().any(|user| user.as_deref() == Some(path.as_path())) {
            continue;
        }
        let Some(text) = files.text(&path) else { continue };
        if path.parent().is_some_and(|dir| dir.ends_with(".claude")) {
            claude_code::apply_project_file(&mut settings, &path, &text);
        } else {
            project::apply(&mut settings, &path, &text)?;
        }
    }
    // The organisation's policy has the last word on the sandbox and on the key's helper.
    let managed = managed::ManagedPolicy::load(files, env)?;
    if let Some(helper) = managed.api_key_helper {
        settings.api_key_helper = Some(helper);
    }
    let sandbox = settings.sandbox.get_or_insert_with(SandboxSettings::default);
    let policy = managed.sandbox;
    sandbox.enabled = policy.enabled.or(sandbox.enabled);
    // The policy holds only what narrows (`false`, `false`, `true`), so it wins.
    sandbox.auto_allow_bash_if_sandboxed = policy.auto_allow_bash_if_sandboxed.or(sandbox.auto_allow_bash_if_sandboxed);
    sandbox.allow_unsandboxed_commands = policy.allow_unsandboxed_commands.or(sandbox.allow_unsandboxed_commands);
    sandbox.fail_if_unavailable = policy.fail_if_unavailable.or(sandbox.fail_if_unavailable);
    sandbox.excluded_commands.extend(policy.excluded_commands);
    sandbox.filesystem.allow_write.extend(policy.filesystem.allow_write);
    sandbox.filesystem.deny_write.extend(policy.filesystem.deny_write);
    sandbox.filesystem.deny_read.extend(policy.filesystem.deny_read);
    sandbox.filesystem.allow_read.extend(policy.filesystem.allow_read);
    let network = &mut sandbox.network;
    if policy.network.managed_domains_only {
        // Only the policy's own domains are reached without asking, and nothing else asks.
        network.allowed_domains = policy.network.allowed_domains;
        network.managed_domains_only = true;
    } else {
        network.allowed_domains.extend(policy.network.allowed_domains);
    }
    network.denied_domains.extend(policy.network.denied_domains);
    network.allow_all_unix_sockets |= policy.network.allow_all_unix_sockets;
    network.allow_local_binding |= policy.network.allow_local_binding;
    network.allow_unix_sockets.extend(policy.network.allow_unix_sockets);
    if network.managed_domains_only {
        settings.project_choices.allowed_domains.clear();
    }
    Ok(settings)
}

/// The settings files inside the project, in the order they apply: Larik's shared and local
/// ones, then Claude Code's.
fn project_settings_files(project: &Path) -> Vec<PathBuf> {
    [".larik", ".claude"]
        .iter()
        .flat_map(|dir| ["settings.json", "settings.local.json"].map(|name| project.join(dir).join(name)))
        .collect()
}

/// One settings file's text, its unknown keys noted as problems.
pub fn parse_layer(path: &Path, text: &str) -> Result<Settings, ConfigError> {
    let mut layer: Settings = serde_json::from_str(text)
        .map_err(|error| ConfigError::Unreadable { path: path.to_path_buf(), message: error.to_string() })?;
    let unknown: Vec<String> = layer
        .unknown_keys()
        .map(|key| format!("{}: `{key}` is not a Larik setting and is ignored", path.display()))
        .collect();
    layer.problems.extend(unknown);
    Ok(layer)
}

/// The user's own Claude Code settings, `~/.claude/settings.json`.
fn users_claude_settings(env: &HashMap<String, String>) -> Option<PathBuf> {
    env.get("HOME").map(|home| Path::new(home).join(".claude").join("settings.json"))
}

/// Who wrote a settings file, and so how far it is trusted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Writer {
    /// The user: their own files, trusted.
    User,
    /// The repository: a file inside the project, which may only narrow until approved.
    Project,
}

/// The servers of the project's `.mcp.json` that Claude Code settings turn off
/// (`disabledMcpjsonServers`, from the user's file or the project's).
pub fn disabled_mcpjson_servers(files: &SettingsFiles, project: &Path, env: &HashMap<String, String>) -> Vec<String> {
    let project_files = [".claude/settings.json", ".claude/settings.local.json"].map(|name| project.join(name));
    let paths: Vec<PathBuf> = users_claude_settings(env).into_iter().chain(project_files).collect();
    claude_code::listed(files, &paths, "disabledMcpjsonServers", "").0
}

/// Every file that may hold permission rules, in order: the user's Claude Code settings and
/// Larik's own, the project's shared and local settings, Claude Code's project settings, and
/// the private rules "always allow" saved. A project that is the home directory reads the
/// user's files once, as the user's.
pub fn rule_files(project: &Path, env: &HashMap<String, String>) -> Vec<(PathBuf, Writer)> {
    let mut files: Vec<(PathBuf, Writer)> =
        user_files::paths(env).into_iter().map(|path| (path, Writer::User)).collect();
    for path in project_settings_files(project) {
        if !files.iter().any(|(user, _)| *user == path) {
            files.push((path, Writer::Project));
        }
    }
    if let Some(private) = private_rules_file(project, env) {
        files.push((private, Writer::User));
    }
    files
}

/// Where "always allow" rules for a project are saved: under the user's config directory.
pub fn private_rules_file(project: &Path, env: &HashMap<String, String>) -> Option<PathBuf> {
    user_config_dir(env).map(|dir| larik_settings::paths::private_settings_path(&dir, project))
}

/// [`load_permissions_from`] the files as they are now.
pub fn load_permissions(project: &Path, env: &HashMap<String, String>) -> Result<PermissionSettings, ConfigError> {
    load_permissions_from(&SettingsFiles::default(), project, env)
}

/// The union of the permission settings of every rule file; a malformed file is an error, so a
/// deny rule is never silently dropped.
pub fn load_permissions_from(
    files: &SettingsFiles,
    project: &Path,
    env: &HashMap<String, String>,
) -> Result<PermissionSettings, ConfigError> {
    let managed = managed::ManagedPolicy::load(files, env)?;
    let mut all = PermissionSettings {
        allow: managed.allow.clone(),
        ask: managed.ask.clone(),
        deny: managed.deny.clone(),
        managed_rules_only: managed.rules_only,
        bypass_disabled: managed.bypass_disabled,
        fails_closed: managed.fails_closed(),
        additional_directories: managed.additional_directories.clone(),
        ..PermissionSettings::default()
    };
    for (path, writer) in rule_files(project, env) {
        let Some(text) = files.text(&path) else { continue };
        let value: serde_json::Value = serde_json::from_str(&text)
            .map_err(|error| ConfigError::Unreadable { path: path.clone(), message: error.to_string() })?;
        let Some(permissions) = value.get("permissions") else { continue };
        let layer: PermissionSettings = serde_json::from_value(permissions.clone()).map_err(|error| {
            ConfigError::Unreadable { path: path.clone(), message: format!("permissions: {error}") }
        })?;
        // Under the policy's `allowManagedPermissionRulesOnly`, no other file allows anything;
        // their deny and ask rules still narrow.
        match writer {
            _ if managed.rules_only => {}
            Writer::Project => all.project_allow.extend(layer.allow),
            Writer::User => all.allow.extend(layer.allow),
        }
        // A repository may not open directories outside itself (reported by the settings loader).
        if writer == Writer::User {
            all.additional_directories.extend(layer.additional_directories);
        }
        all.deny.extend(layer.deny);
        all.ask.extend(layer.ask);
        all.protected_paths.extend(layer.protected_paths);
        all.bypass_disabled |= layer.disable_bypass_permissions_mode.as_deref() == Some("disable");
        if layer.default_mode.is_some() {
            all.default_mode = layer.default_mode;
            all.default_mode_source = Some(path.clone());
            all.default_mode_from_project = writer == Writer::Project;
        }
    }
    if let Some(mode) = managed.default_mode {
        all.default_mode = Some(mode);
        all.default_mode_source = managed.files.first().cloned();
        all.default_mode_from_project = false;
    }
    Ok(all)
}

/// The mode sessions start in, and what the user should hear about it. A repository may only
/// narrow: a mode from a file inside the project counts when it is `default` or `plan`; one
/// that lets calls run without asking (accept-edits, yolo) is reported and the default used.
/// An unknown value is reported and the default mode used.
pub fn initial_mode(permissions: &PermissionSettings) -> (Mode, Option<String>) {
    let Some(value) = permissions.default_mode.as_deref() else { return (Mode::Default, None) };
    let source = permissions
        .default_mode_source
        .as_deref()
        .map(|path| path.display().to_string())
        .unwrap_or_else(|| "settings".into());
    match Mode::from_setting(value) {
        None => (
            Mode::Default,
            Some(format!(
                "{source}: defaultMode `{value}` is not one of default, acceptEdits, plan, bypassPermissions (or accept-edits, yolo); starting in default"
            )),
        ),
        Some(mode @ (Mode::Yolo | Mode::AcceptEdits)) if permissions.default_mode_from_project => (
            Mode::Default,
            Some(format!(
                "{source}: defaultMode `{value}` comes from the project, which may only choose default or plan; starting in default (set it in ~/.config/larik/settings.json to start in {})",
                mode.id()
            )),
        ),
        Some(Mode::Yolo) if permissions.bypass_disabled => (
            Mode::Default,
            Some(format!(
                "{source}: defaultMode `{value}` is disabled by settings (permissions.disableBypassPermissionsMode); starting in default"
            )),
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
        .or_else(|| settings.api_key_helper.as_ref().map(|_| ProviderKind::Anthropic))
        .or_else(|| {
            (get("OPENAI_API_KEY").is_some() || get("OPENAI_BASE_URL").is_some()).then_some(ProviderKind::Openai)
        })
        .ok_or(ConfigError::NoModel)?;
    let (default_model, default_url, key_var, url_var) = match provider {
        ProviderKind::Anthropic => {
            ("claude-sonnet-4-5", anthropic::DEFAULT_BASE_URL, "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL")
        }
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
        key_helper: settings.api_key_helper.clone().map(|command| KeyHelper {
            command,
            ttl: get("CLAUDE_CODE_API_KEY_HELPER_TTL_MS")
                .and_then(|ms| ms.parse().ok())
                .map_or(DEFAULT_HELPER_TTL, std::time::Duration::from_millis),
        }),
        max_tokens: settings.max_tokens.unwrap_or(DEFAULT_MAX_TOKENS),
        thought_level: settings.thought_level.as_deref().and_then(ThoughtLevel::from_id),
        max_turn_requests: settings.max_turn_requests.unwrap_or(DEFAULT_MAX_TURN_REQUESTS),
    })
}

#[cfg(test)]
mod test_files;
#[cfg(test)]
mod tests;
