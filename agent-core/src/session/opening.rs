//! How a session is put together from its [`SessionConfig`]: the tools it offers beyond the
//! built-in ones, what it says with its first turn, its MCP servers, hooks and permissions, and
//! the environment its tools see.

#[cfg(feature = "browser")]
use std::path::Path;
use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use super::SessionConfig;
use super::hook_points::HookPoints;
use crate::agents::BackgroundTasks;
#[cfg(feature = "browser")]
use crate::config::SettingsSource;
use crate::mcp::{McpServers, McpSupport, McpTimeouts, Notices};
use crate::permission::Permissions;
use crate::skills::Skills;
use crate::token_saver::TokenSaver;
use crate::tools::background::BackgroundShells;
use crate::tools::{DynTool, Registry, ToolEnv};
use crate::workspace::Workspace;

/// The tools a session offers beside the built-in ones and the task tool (which needs the
/// session's environment): the task controls, skills when there are any, the token saver's raw
/// output when it is on, language-server questions when servers may start, the browser when
/// configured.
pub(super) struct Offered<'a> {
    pub tasks: &'a Arc<BackgroundTasks>,
    pub skills: &'a Arc<Skills>,
    pub token_saver: Option<&'a Arc<TokenSaver>>,
    pub language_servers: bool,
    #[cfg(feature = "browser")]
    pub browser: Option<BrowserStart<'a>>,
}

/// The browser's settings and what starting it needs: the user's environment, the data
/// directory its profile lives in, the session's cancellation that closes it.
#[cfg(feature = "browser")]
pub(super) struct BrowserStart<'a> {
    pub settings: crate::config::BrowserSettings,
    pub source: Option<&'a SettingsSource>,
    pub data_dir: Option<&'a Path>,
    pub cancel: &'a CancellationToken,
}

impl Offered<'_> {
    pub fn add_to(self, registry: &Registry) {
        registry.add_all([
            Arc::new(crate::agents::task_control::TaskWait(Arc::clone(self.tasks))) as Arc<dyn DynTool>,
            Arc::new(crate::agents::task_control::TaskStop(Arc::clone(self.tasks))),
        ]);
        crate::skills::tool::offer_if_any(registry, self.skills);
        crate::tools::raw_output::offer_if_on(registry, self.token_saver);
        if self.language_servers {
            registry.add_all([
                Arc::new(crate::tools::lsp_query::Lsp) as Arc<dyn DynTool>,
                Arc::new(crate::tools::apply_code_action::ApplyCodeAction),
            ]);
        }
        #[cfg(feature = "browser")]
        if let Some(start) = self.browser {
            let env = start.source.map(|source| source.env.clone()).unwrap_or_default();
            let profile = start.data_dir.map_or_else(std::env::temp_dir, Path::to_path_buf).join("browser-profile");
            let browser = crate::browser::WebBrowser::new(
                crate::browser::BrowserSetup { settings: start.settings, env, profile },
                start.cancel,
            );
            registry.add_all(crate::tools::browser::all(&browser));
        }
    }
}

/// The project's files as the tools see them: the settings' protected paths, the editor's
/// buffers when it offers them.
pub(super) fn workspace(config: &mut SessionConfig) -> Arc<Workspace> {
    let workspace = Workspace::new(&config.cwd)
        .with_protected(&config.protected_paths)
        .with_extra_roots(&config.additional_directories);
    // Commands may write where the tools may.
    if let Some(sandbox) = config.sandbox.take() {
        let extra = workspace.extra_roots();
        config.sandbox =
            Some(if extra.is_empty() { sandbox } else { Arc::new((*sandbox).clone().with_extra_roots(extra)) });
    }
    Arc::new(match config.editor.take() {
        Some(editor) => workspace.with_editor(editor),
        None => workspace,
    })
}

/// The system prompt for the project at `root`, with the user's instruction files and the
/// skills' index.
pub(super) fn system_prompt(
    workspace: &Workspace,
    user_files: &crate::config::UserInstructions,
    skills: &Skills,
) -> String {
    let place = crate::prompt::Place { cwd: workspace.root(), additional: workspace.extra_roots() };
    crate::prompt::system_prompt(place, &crate::clock::today_utc(), user_files, &crate::skills::index(&skills.all()))
}

/// The built-in tools, and what decides how later ones are offered: the user's always-offered
/// tools, and whether tools may arrive after the first request (MCP servers still connecting).
pub(super) fn registry(config: &mut SessionConfig) -> Arc<Registry> {
    let registry = Arc::new(Registry::builtin(config.search.take()));
    registry.set_policy(crate::tools::OfferPolicy {
        always: std::mem::take(&mut config.always_offered_tools),
        late_tools: !config.mcp_servers.is_empty(),
    });
    registry
}

/// The environment the session's tools see; takes the session's id, services, sandbox and
/// language servers out of `config`.
pub(super) fn tool_env(
    config: &mut SessionConfig,
    workspace: Arc<Workspace>,
    notices: &Arc<Notices>,
    token_saver: Option<Arc<TokenSaver>>,
    permissions: &Arc<Permissions>,
    cancel: &CancellationToken,
) -> ToolEnv {
    let lsp = crate::lsp::LanguageServers::new(
        workspace.root(),
        std::mem::take(&mut config.language_servers),
        Arc::clone(notices),
        config.services.diagnostics.clone(),
    );
    ToolEnv {
        session_id: std::mem::take(&mut config.id),
        workspace,
        lsp: Arc::new(lsp),
        services: std::mem::take(&mut config.services),
        sandbox: config.sandbox.take(),
        shells: Arc::new(BackgroundShells::new(cancel.clone())),
        data_dir: config.data_dir.clone(),
        token_saver,
        domain_rules: Some(Arc::clone(permissions) as Arc<dyn crate::tools::network_prompt::DomainRules>),
        edit_rules: Some(Arc::clone(permissions) as Arc<dyn crate::tools::apply_code_action::EditRules>),
        network_log: Arc::default(),
    }
}

/// What the session says with its next turn: what the settings made of it and the skills that
/// could not be read, then whatever the MCP servers report between turns.
pub(super) fn first_notices(notice: Option<String>, skill_problems: &[String]) -> Arc<Notices> {
    let notices: Arc<Notices> = Arc::default();
    notices.push_all(notice);
    notices.push_all((!skill_problems.is_empty()).then(|| skill_problems.join("\n")));
    notices
}

/// The session's MCP servers, the hooks and the permissions, which all depend on what the user
/// approved of the project. Starts the servers that may connect.
pub(super) struct Guarded {
    pub mcp: Arc<McpServers>,
    pub hooks: HookPoints,
    pub permissions: Arc<Permissions>,
}

/// Takes the MCP servers, hooks, rules and sandbox out of `config`; `settings` says where the
/// settings came from (the environment's MCP timeouts are read from it).
pub(super) fn guarded(
    config: &mut SessionConfig,
    settings: Option<&crate::config::SettingsSource>,
    registry: &Arc<Registry>,
    notices: &Arc<Notices>,
    cancel: &CancellationToken,
) -> Guarded {
    let (timeouts, timeout_problems) =
        settings.map(|settings| McpTimeouts::from_env(&settings.env)).unwrap_or_default();
    notices.push_all(timeout_problems);
    let support = McpSupport {
        data_dir: config.data_dir.clone(),
        browser: config.services.browser.clone(),
        ask_user: config.services.ask_user.clone(),
        timeouts,
    };
    let mut servers = std::mem::take(&mut config.mcp_servers);
    let policy = &config.mcp_policy;
    notices.push_all(servers.iter().filter_map(|server| server.refused_by(policy)).collect::<Vec<_>>());
    servers.retain(|server| server.refused_by(policy).is_none());
    let mcp =
        Arc::new(McpServers::new(servers, support, Arc::clone(registry), Arc::clone(notices), cancel.child_token()));
    let project_allow: Vec<String> = config.rules.project_allow.iter().map(|rule| rule.text.clone()).collect();
    let hooks = HookPoints::new(
        std::mem::take(&mut config.hooks),
        project_allow,
        mcp.project_servers(),
        config.project_choices.describe(),
        config.rules_file.clone(),
    );
    if let Some(sandbox) = &config.sandbox {
        sandbox.sweep_stand_ins();
    }
    let unasked = config.sandbox.clone().filter(|_| config.sandboxed_commands_run_unasked);
    let mut permissions = Permissions::new(
        std::mem::take(&mut config.rules),
        move || unasked.as_ref().is_some_and(|sandbox| sandbox.holds().is_ok()),
        config.rules_file.take(),
    )
    .under(std::mem::take(&mut config.policy))
    .denying_domains(std::mem::take(&mut config.denied_domains));
    if let Some(sandbox) = config.sandbox.clone().filter(|_| config.sandbox_required) {
        permissions = permissions.requiring_sandbox(move || {
            sandbox.holds().err().map(|reason| {
                format!("the sandbox cannot hold here ({reason}) and settings require it (sandbox.failIfUnavailable), so commands are refused")
            })
        });
    }
    if let Err(refused) = permissions.set_mode(config.initial_mode) {
        tracing::warn!(%refused, "the session starts in the default mode");
    }
    mcp.start(false);
    Guarded { mcp, hooks, permissions: Arc::new(permissions) }
}
