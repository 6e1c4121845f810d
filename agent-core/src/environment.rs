//! The session environment: what a session's turns, its dispatch pipeline and its tools share,
//! by reference. One value replaces the field lists that used to be copied from the session to
//! the turn to the dispatch to each tool call. A child agent's environment is derived from its
//! parent's: a filtered registry and its own working directory, the same permission state (a
//! mode switch reaches both), hooks, models and usage totals.

use std::path::Path;
use std::sync::{Arc, Mutex};

use tokio_util::sync::CancellationToken;

use crate::config::ModelConfig;
use crate::llm::{Provider, ProviderError, Usage};
use crate::mcp::{McpServers, Notices};
use crate::permission::Permissions;
use crate::sandbox::Sandbox;
use crate::session::ModelSettings;
use crate::session::hook_points::HookPoints;
use crate::session::store::SessionLog;
use crate::tools::background::BackgroundShells;
use crate::tools::{EditorServices, Registry};
use crate::workspace::Workspace;

pub struct SessionEnv {
    /// The session's id, as hooks and transcripts name it.
    pub session_id: String,
    pub workspace: Arc<Workspace>,
    pub permissions: Arc<Permissions>,
    pub registry: Arc<Registry>,
    /// Hooks at the points of the loop, and the user's word on the project's hooks.
    pub hooks: Arc<HookPoints>,
    pub models: Arc<Models>,
    /// What the front end offers beyond files: questions to the user, terminals.
    pub services: EditorServices,
    pub sandbox: Option<Arc<Sandbox>>,
    pub shells: Arc<BackgroundShells>,
    pub usage: Arc<UsageTotals>,
    /// The budget (shared by a child: its spending counts against the root's), the window and
    /// compaction's settings.
    pub limits: crate::session::Limits,
    pub log: Option<Arc<SessionLog>>,
    /// The user's data directory for Larik (subagents' worktrees go there).
    pub data_dir: Option<std::path::PathBuf>,
    /// Subagents running in the background.
    pub tasks: Arc<crate::agents::BackgroundTasks>,
    /// The session's MCP servers (their tools are in the registry).
    pub mcp: Arc<McpServers>,
    /// Where the settings came from, for what reads them again while the session lives
    /// (subagents' roles); `None` for a session built without settings files.
    pub settings: Option<Arc<crate::config::SettingsSource>>,
    /// What the user should hear at the next turn (a server failed between turns).
    pub notices: Arc<Notices>,
    /// The skills and commands, read again at each fresh context.
    pub skills: Arc<crate::skills::Skills>,
    /// The language servers, shared with children.
    pub lsp: Arc<crate::lsp::LanguageServers>,
    /// The token saver, when the user turned it on; a child shares its parent's (and so its
    /// sidecar, where `raw_output` finds any of the session's calls).
    pub token_saver: Option<Arc<crate::token_saver::TokenSaver>>,
    /// The project's checkpoints, where the session has a data directory to keep them; shared
    /// with a child working in the same directory (a child in a worktree has none).
    pub checkpoints: Option<Arc<crate::checkpoints::Checkpoints>>,
}

impl SessionEnv {
    /// An environment of its own around `workspace`: built-in tools, default permissions, no
    /// model, no sandbox, no front end. For running tools directly (tests, benchmarks).
    pub fn standalone(workspace: Arc<Workspace>) -> Self {
        Self {
            session_id: "standalone".into(),
            workspace,
            permissions: Arc::new(Permissions::default()),
            registry: Arc::new(Registry::builtin(None)),
            hooks: Arc::new(HookPoints::none()),
            models: Arc::new(Models::new(
                Err(ProviderError::BadRequest { message: "no model in a standalone environment".into() }),
                ModelSettings::none(),
            )),
            services: EditorServices::default(),
            sandbox: None,
            shells: Arc::new(BackgroundShells::new(CancellationToken::new())),
            usage: Arc::default(),
            limits: crate::session::Limits::default(),
            log: None,
            data_dir: None,
            tasks: Arc::new(crate::agents::BackgroundTasks::new(CancellationToken::new())),
            mcp: Arc::new(McpServers::none()),
            notices: Arc::default(),
            settings: None,
            skills: Arc::default(),
            lsp: Arc::new(crate::lsp::LanguageServers::none()),
            token_saver: None,
            checkpoints: None,
        }
    }

    /// The user approved the project's settings: its allow rules count, its MCP servers start,
    /// and what it chose (model, provider, roles) applies from the next request on.
    pub fn project_approved(&self) {
        self.permissions.trust_project_rules();
        self.mcp.start(true);
        let Some(source) = &self.settings else { return };
        source.approve_project();
        match source.approved_model() {
            // A signed-out session stays signed out; signing in brings the chosen model.
            Some(Ok(config)) if self.models.provider().is_err() => self.models.remember(&config),
            Some(Ok(config)) => self.models.switch(&config),
            Some(Err(error)) => {
                self.notices.push_all(Some(format!("The project's model choice cannot be used: {error}")))
            }
            None => {}
        }
    }

    /// A child's environment: its own working directory (and sandbox for it), the tools `keep`
    /// accepts, its own background shells under `cancel`; permissions, models, services and
    /// usage shared with the parent.
    pub fn child(
        &self,
        session_id: String,
        cwd: &Path,
        keep: impl Fn(&str) -> bool,
        cancel: CancellationToken,
    ) -> Self {
        let workspace = Arc::new(Workspace::new(cwd).with_protected(&self.workspace.protected_paths()));
        let same_root = workspace.root() == self.workspace.root();
        Self {
            session_id,
            sandbox: self.sandbox.as_ref().map(|sandbox| Arc::new(sandbox.for_root(workspace.root()))),
            workspace,
            permissions: Arc::clone(&self.permissions),
            registry: Arc::new(self.registry.filtered(keep)),
            hooks: Arc::clone(&self.hooks),
            models: Arc::clone(&self.models),
            services: self.services.clone(),
            shells: Arc::new(BackgroundShells::new(cancel)),
            usage: Arc::clone(&self.usage),
            limits: self.limits,
            log: None,
            data_dir: self.data_dir.clone(),
            tasks: Arc::clone(&self.tasks),
            mcp: Arc::clone(&self.mcp),
            notices: Arc::clone(&self.notices),
            settings: self.settings.clone(),
            skills: Arc::clone(&self.skills),
            lsp: Arc::clone(&self.lsp),
            token_saver: self.token_saver.clone(),
            checkpoints: self.checkpoints.clone().filter(|_| same_root),
        }
    }
}

/// The provider and model the session talks to; switchable while it lives (a running turn keeps
/// the ones it started with).
pub struct Models {
    provider: Mutex<Result<Arc<dyn Provider>, ProviderError>>,
    settings: Mutex<ModelSettings>,
    /// Where the model came from (provider, endpoint, key), for a subagent that asks for another
    /// model of the same provider or another; `None` when the session was given a provider.
    config: Mutex<Option<ModelConfig>>,
}

impl Models {
    pub fn new(provider: Result<Arc<dyn Provider>, ProviderError>, settings: ModelSettings) -> Self {
        Self { provider: Mutex::new(provider), settings: Mutex::new(settings), config: Mutex::new(None) }
    }

    /// The model settings and the environment chose.
    pub fn configured(config: &ModelConfig) -> Self {
        let models = Self::new(config.build_provider(), ModelSettings::from(config));
        models.remember(config);
        models
    }

    pub fn config(&self) -> Option<ModelConfig> {
        self.config.lock().ok().and_then(|config| config.clone())
    }

    /// Switches to `config`'s model (and provider).
    pub fn switch(&self, config: &ModelConfig) {
        self.set(config.build_provider(), ModelSettings::from(config));
        self.remember(config);
    }

    /// Records where the current model came from.
    pub fn remember(&self, config: &ModelConfig) {
        if let Ok(mut current) = self.config.lock() {
            *current = Some(config.clone());
        }
    }

    pub fn provider(&self) -> Result<Arc<dyn Provider>, ProviderError> {
        self.provider
            .lock()
            .map(|provider| provider.clone())
            .unwrap_or_else(|_| Err(ProviderError::BadRequest { message: "session state poisoned".into() }))
    }

    pub fn settings(&self) -> ModelSettings {
        self.settings.lock().map(|settings| settings.clone()).unwrap_or_else(|_| ModelSettings::none())
    }

    pub fn set(&self, provider: Result<Arc<dyn Provider>, ProviderError>, settings: ModelSettings) {
        if let (Ok(mut current_provider), Ok(mut current_settings)) = (self.provider.lock(), self.settings.lock()) {
            *current_provider = provider;
            *current_settings = settings;
        }
    }

    pub fn update(&self, change: impl FnOnce(&mut ModelSettings)) {
        if let Ok(mut settings) = self.settings.lock() {
            change(&mut settings);
        }
    }
}

/// Tokens and cost a session spent, its children and its hooks included.
#[derive(Default)]
pub struct UsageTotals {
    spent: Mutex<Spent>,
}

#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Spent {
    pub usage: Usage,
    pub cost_usd: f64,
}

impl UsageTotals {
    pub fn add(&self, usage: &Usage, cost_usd: Option<f64>) {
        if let Ok(mut spent) = self.spent.lock() {
            spent.usage.input_tokens += usage.input_tokens;
            spent.usage.output_tokens += usage.output_tokens;
            spent.usage.cache_read_tokens += usage.cache_read_tokens;
            spent.usage.cache_write_tokens += usage.cache_write_tokens;
            spent.cost_usd += cost_usd.unwrap_or(0.0);
        }
    }

    pub fn spent(&self) -> Spent {
        self.spent.lock().map(|spent| *spent).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::permission::Mode;

    #[test]
    fn a_child_shares_permissions_and_sees_only_the_tools_it_is_given() {
        let parent_dir = tempfile::tempdir().unwrap();
        let child_dir = tempfile::tempdir().unwrap();
        let parent = SessionEnv::standalone(Arc::new(Workspace::new(parent_dir.path())));
        let child = parent.child("child".into(), child_dir.path(), |name| name != "bash", CancellationToken::new());
        assert_eq!(child.workspace.root(), child_dir.path().canonicalize().unwrap());
        assert!(child.registry.get("bash").is_none() && child.registry.get("read").is_some());
        assert!(parent.registry.get("bash").is_some());
        parent.permissions.set_mode(Mode::Plan);
        assert_eq!(child.permissions.mode(), Mode::Plan, "a mode switch reaches the child");
        child.usage.add(&Usage { input_tokens: 10, ..Usage::default() }, Some(0.5));
        assert_eq!(parent.usage.spent().usage.input_tokens, 10, "the child's spend counts for the parent");
    }
}
