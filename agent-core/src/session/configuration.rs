//! What a session is opened with: [`SessionConfig`], plain for replays and tests, or read from
//! the settings files, the environment and the project (`from_settings`).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::limits::{self, Limits};
use super::store::SessionLog;
use crate::config::{self, ConfigError, ModelConfig};
use crate::llm::{Message, Provider, ProviderError};
use crate::models::ModelSettings;
use crate::permission::Mode;
use crate::permission::rules::RuleSet;
use crate::sandbox::{DomainPolicy, Sandbox};
use crate::tools::EditorServices;
use crate::workspace::EditorFiles;

/// What a session is opened with.
pub struct SessionConfig {
    /// How hooks and transcripts name the session; front ends with their own ids set it.
    pub id: String,
    pub cwd: PathBuf,
    /// May be an error (e.g. a missing key): the session still opens, and each prompt reports
    /// that error so the editor can show how to fix it.
    pub provider: Result<Arc<dyn Provider>, ProviderError>,
    pub model: ModelSettings,
    /// The editor's buffers, when the front end offers them.
    pub editor: Option<Arc<dyn EditorFiles>>,
    /// Questions to the user and terminals, when the front end offers them.
    pub services: EditorServices,
    /// The web search service, if one is configured.
    pub search: Option<crate::config::SearchBackend>,
    pub rules: RuleSet,
    /// Extra project-relative paths the agent must never write.
    pub protected_paths: Vec<String>,
    /// Directories outside `cwd` the agent may work in too: the settings' and the editor's.
    pub additional_directories: Vec<PathBuf>,
    pub initial_mode: Mode,
    /// What the organisation's managed policy imposes on every decision.
    pub policy: crate::permission::Policy,
    /// Which MCP servers the organisation's managed policy lets run, whoever configured them.
    pub mcp_policy: crate::config::managed::McpPolicy,
    /// Confines bash commands; `None` runs them unconfined (and so asks before each).
    pub sandbox: Option<Arc<Sandbox>>,
    /// Why there is no sandbox, when there is none.
    pub sandbox_off: Option<String>,
    /// Whether a command the sandbox contains runs without asking; `false` where settings say
    /// `sandbox.autoAllowBashIfSandboxed: false`.
    pub sandboxed_commands_run_unasked: bool,
    /// `sandbox.failIfUnavailable`: where the sandbox cannot hold, commands are refused.
    pub sandbox_required: bool,
    /// Where "always allow" rules are saved.
    pub rules_file: Option<PathBuf>,
    /// Something the user should hear once, e.g. that the sandbox is unavailable.
    pub notice: Option<String>,
    /// Where the conversation is saved as it happens.
    pub log: Option<Arc<SessionLog>>,
    /// Hooks from every settings file (the project's run only once the user approved them).
    pub hooks: crate::hooks::Hooks,
    /// MCP servers from settings and `.mcp.json` (the project's connect only once approved), and
    /// any the front end adds.
    pub mcp_servers: Vec<crate::mcp::McpServerConfig>,
    /// The user's data directory for Larik (MCP logins are kept there).
    pub data_dir: Option<PathBuf>,
    /// The subagents the `task` tool offers.
    pub agents: Vec<crate::agents::Definition>,
    /// Where `provider` and `model` came from, for subagents that ask for another model.
    pub model_config: Option<ModelConfig>,
    /// Where the settings came from, for what reads them again later (subagents' roles).
    pub settings: Option<crate::config::SettingsSource>,
    /// What the project's settings choose (model, provider, roles), for the user to approve with
    /// the project's hooks and rules.
    pub project_choices: crate::config::ProjectChoices,
    /// `sandbox.network.deniedDomains`: refused to `web_fetch` and the browser too.
    pub denied_domains: Vec<crate::sandbox::network::DomainPattern>,
    /// The language servers the session may start.
    pub language_servers: Vec<crate::lsp::ServerSpec>,
    /// The browser tools' settings; `None` offers no browser tools.
    pub browser: Option<crate::config::BrowserSettings>,
    /// Tools listed in every request even where they would be offered on demand
    /// (`alwaysOfferedTools`).
    pub always_offered_tools: Vec<String>,
    /// The budget, the model's window when settings name it, and compaction's settings.
    pub limits: Limits,
    /// The conversation so far, for a session loaded from disk.
    pub history: Vec<Message>,
    pub title: Option<String>,
}

impl SessionConfig {
    /// A session with this model and no rules, sandbox or editor: for replays and tests.
    pub fn plain(cwd: PathBuf, provider: Result<Arc<dyn Provider>, ProviderError>, model: ModelSettings) -> Self {
        Self {
            id: fresh_id(),
            cwd,
            provider,
            model,
            editor: None,
            services: EditorServices::default(),
            search: None,
            rules: RuleSet::default(),
            protected_paths: Vec::new(),
            additional_directories: Vec::new(),
            initial_mode: Mode::Default,
            policy: crate::permission::Policy::default(),
            mcp_policy: Default::default(),
            sandbox: None,
            sandbox_off: Some("no sandbox was configured for this session".into()),
            sandboxed_commands_run_unasked: true,
            sandbox_required: false,
            rules_file: None,
            notice: None,
            log: None,
            hooks: crate::hooks::Hooks::default(),
            mcp_servers: Vec::new(),
            data_dir: None,
            agents: crate::agents::definitions::builtin(),
            model_config: None,
            settings: None,
            project_choices: crate::config::ProjectChoices::default(),
            denied_domains: Vec::new(),
            language_servers: Vec::new(),
            browser: None,
            always_offered_tools: Vec::new(),
            limits: Limits::default(),
            history: Vec::new(),
            title: None,
        }
    }

    /// The configuration settings files and the environment describe for a project. A missing
    /// model is not an error here: the session opens and its prompts report what to configure.
    /// `sandbox_helper` is the binary that can confine commands (`larik` itself), if any.
    /// Also returns the resolved model, for front ends that let the user switch it.
    pub fn from_settings(
        cwd: PathBuf,
        env: &std::collections::HashMap<String, String>,
        sandbox_helper: Option<PathBuf>,
    ) -> Result<(Self, Option<ModelConfig>), ConfigError> {
        // One reading of the files for everything below, so the parts agree on what they said.
        let files = config::SettingsFiles::default();
        let settings = config::load_settings_from(&files, &cwd, env)?;
        let mut permissions = config::load_permissions_from(&files, &cwd, env)?;
        let hooks = crate::hooks::Hooks::load(&files, &cwd, env)
            .map_err(|error| ConfigError::Unreadable { path: cwd.clone(), message: error.to_string() })?;
        let (mcp_servers, mcp_problems) = crate::mcp::config::load(&files, &cwd, env)
            .map_err(|error| ConfigError::Unreadable { path: error.path.clone(), message: error.message.clone() })?;
        let (agents, agent_problems) = crate::agents::definitions::load(&files, &cwd, env);
        let search = config::resolve_search(&settings, env);
        let (provider, model, resolved) = match config::resolve_model(&settings, env) {
            Ok(model) => (model.build_provider(), ModelSettings::from(&model), Some(model)),
            Err(error) => (Err(ProviderError::Auth { message: error.to_string() }), ModelSettings::none(), None),
        };
        let sandbox = sandbox_for(&settings, sandbox_helper, &cwd, &mut permissions, env);
        let (initial_mode, mode_notice) = config::initial_mode(&permissions);
        let (additional_directories, directory_problems) = config::additional_directories(&permissions, &cwd, env);
        let notices: Vec<String> = permissions
            .fails_closed
            .clone()
            .into_iter()
            .chain(mode_notice)
            .chain(directory_problems)
            .chain(sandbox.problems)
            .chain(settings.problems.iter().cloned())
            .chain(hooks.problems().iter().cloned())
            .chain(mcp_problems)
            .chain(agent_problems)
            .collect();
        let notice = (!notices.is_empty()).then(|| notices.join("\n"));
        // The project's own subagent definitions choose models too: the same approval decides.
        let project_choices = crate::config::ProjectChoices {
            subagent_models: agents
                .iter()
                .filter(|definition| definition.from_project)
                .filter_map(|definition| Some((definition.name.clone(), definition.model.clone()?)))
                .collect(),
            ..settings.project_choices.clone()
        };
        let config = Self {
            id: fresh_id(),
            rules: RuleSet::from_lists(&permissions.allow, &permissions.deny, &permissions.ask)
                .with_project_allow(&permissions.project_allow),
            protected_paths: permissions.protected_paths,
            additional_directories,
            initial_mode,
            mcp_policy: crate::config::managed::ManagedPolicy::load(&files, env)?.mcp,
            policy: crate::permission::Policy {
                fails_closed: permissions.fails_closed.clone(),
                bypass_disabled: permissions.bypass_disabled,
                rules_only: permissions.managed_rules_only,
            },
            rules_file: config::private_rules_file(&cwd, env),
            settings: Some(config::SettingsSource::new(cwd.clone(), env.clone())),
            cwd,
            provider,
            model,
            editor: None,
            services: EditorServices::default(),
            search,
            sandbox: sandbox.sandbox,
            sandbox_off: sandbox.off,
            sandboxed_commands_run_unasked: sandbox.run_unasked,
            sandbox_required: sandbox.required,
            notice,
            log: None,
            hooks,
            mcp_servers,
            data_dir: crate::config::user_data_dir(env),
            agents,
            model_config: resolved.clone(),
            project_choices,
            denied_domains: sandbox.denied_domains,
            language_servers: crate::lsp::ServerSpec::available(env, &settings.lsp.clone().unwrap_or_default()),
            browser: Some(settings.browser.clone().unwrap_or_default())
                .filter(|browser| browser.enabled != Some(false)),
            always_offered_tools: settings.always_offered_tools.clone().unwrap_or_default(),
            limits: limits_from(&settings),
            history: Vec::new(),
            title: None,
        };
        Ok((config, resolved))
    }
}

/// A session id unique on this machine: the time in nanoseconds and the process id.
fn fresh_id() -> String {
    format!("session-{:x}-{}", crate::clock::now_nanos(), std::process::id())
}

/// The sandbox settings ask for, or why there is none, and how commands are decided with it.
struct SandboxSetup {
    sandbox: Option<Arc<Sandbox>>,
    off: Option<String>,
    /// `sandbox.autoAllowBashIfSandboxed` is not `false`.
    run_unasked: bool,
    /// `sandbox.failIfUnavailable`.
    required: bool,
    /// `sandbox.network.deniedDomains`, for the fetching tools too.
    denied_domains: Vec<crate::sandbox::network::DomainPattern>,
    /// What of `sandbox.network` cannot be honoured.
    problems: Vec<String>,
}

/// The sandbox settings ask for. Whether this machine can hold it is the probe's to say, later:
/// opening a session does not wait for it ([`Sandbox::holds`]). `sandbox.filesystem.denyWrite`
/// inside the project joins the protected paths, for the agent's own writes too.
fn sandbox_for(
    settings: &config::Settings,
    sandbox_helper: Option<PathBuf>,
    cwd: &Path,
    permissions: &mut config::PermissionSettings,
    env: &std::collections::HashMap<String, String>,
) -> SandboxSetup {
    let (domains, problems) = domain_policy(settings);
    let denied_domains = domains.denied.clone();
    let sandbox_settings = settings.sandbox.clone().unwrap_or_default();
    let filesystem = config::filesystem_paths(&sandbox_settings, cwd, env);
    permissions.protected_paths.extend(filesystem.protected);
    let (sandbox, off) = match (sandbox_settings.enabled, sandbox_helper) {
        (Some(false), _) => (None, Some("sandbox.enabled is false in settings".to_owned())),
        (_, None) => (None, Some("the sandbox helper (the larik binary) was not found".to_owned())),
        (_, Some(helper)) => {
            let mut writable: Vec<PathBuf> = sandbox_settings.writable_paths.iter().map(PathBuf::from).collect();
            writable.extend(filesystem.writable);
            let exemptions = crate::sandbox::Exemptions {
                excluded_commands: sandbox_settings.excluded_commands.clone(),
                model_may_opt_out: sandbox_settings.allow_unsandboxed_commands != Some(false),
            };
            let sandbox = Sandbox::new(
                helper,
                cwd.to_path_buf(),
                writable,
                &permissions.protected_paths,
                sandbox_settings.network.full,
            )
            .with_exemptions(exemptions)
            .with_denied(filesystem.read_only, filesystem.hidden, filesystem.readable)
            .with_domains(domains);
            (Some(Arc::new(sandbox)), None)
        }
    };
    SandboxSetup {
        sandbox,
        off,
        run_unasked: sandbox_settings.auto_allow_bash_if_sandboxed != Some(false),
        required: sandbox_settings.fail_if_unavailable == Some(true),
        denied_domains,
        problems,
    }
}

/// The proxy's lists from `sandbox.network` and the project's approved domains, and what in them
/// cannot be honoured: entries that are no domain, and Unix socket paths (Linux cannot open
/// sockets by path, so the list opens none).
pub fn domain_policy(settings: &config::Settings) -> (DomainPolicy, Vec<String>) {
    let network = settings.sandbox.as_ref().map(|sandbox| sandbox.network.clone()).unwrap_or_default();
    let (allowed, mut bad) = DomainPolicy::patterns(&network.allowed_domains);
    let (denied, bad_denied) = DomainPolicy::patterns(&network.denied_domains);
    let (project_allowed, bad_project) = DomainPolicy::patterns(&settings.project_choices.allowed_domains);
    bad.extend(bad_denied);
    bad.extend(bad_project);
    let mut problems: Vec<String> = bad
        .iter()
        .map(|entry| format!("sandbox.network: `{entry}` is not a domain (write `example.com`, `*.example.com` or `host:port`); it is ignored"))
        .collect();
    if !network.allow_unix_sockets.is_empty() && !network.allow_all_unix_sockets {
        problems.push(format!(
            "sandbox.network.allowUnixSockets ({}) cannot be honoured on Linux, which cannot open Unix sockets by path: sandboxed commands still open none (set allowAllUnixSockets to open them all)",
            network.allow_unix_sockets.join(", ")
        ));
    }
    let policy = DomainPolicy {
        allowed,
        denied,
        project_allowed,
        managed_only: network.managed_domains_only,
        local_binding: network.allow_local_binding,
        unix_sockets: network.allow_all_unix_sockets,
    };
    (policy, problems)
}

/// The budget, the context window, compaction and the stream timeout settings name.
fn limits_from(settings: &config::Settings) -> Limits {
    Limits {
        budget: settings.budget.unwrap_or_default(),
        context_window: settings.context_window,
        compaction: settings.compaction.unwrap_or_default(),
        stream_idle_timeout: settings
            .stream_idle_timeout_ms
            .map_or(limits::DEFAULT_STREAM_IDLE_TIMEOUT, |ms| std::time::Duration::from_millis(ms.max(1_000))),
        long_cache: settings.prompt_cache_ttl == Some(larik_settings::PromptCacheTtl::OneHour),
    }
}
