//! The session environment: what a session's turns and its dispatch pipeline share, by
//! reference; its tools see only the part inside it, the `ToolEnv`. A child agent's environment
//! is derived from its parent's: a filtered registry and its own working directory, the same
//! permission state (a mode switch reaches both), hooks and models, and usage totals of its own
//! that count toward the parent's.

use std::path::Path;
use std::sync::{Arc, Mutex};

use tokio_util::sync::CancellationToken;

use crate::llm::Usage;
use crate::mcp::{McpServers, Notices};
use crate::models::Models;
use crate::permission::Permissions;
use crate::session::hook_points::HookPoints;
use crate::session::store::SessionLog;
use crate::spending::Spent;
use crate::tools::{Registry, ToolEnv};
use crate::workspace::Workspace;

pub struct SessionEnv {
    /// What the session's tool calls may reach: the files, the sandbox, shells, the editor's
    /// services. The only part of the environment a tool sees.
    pub tools: Arc<ToolEnv>,
    pub permissions: Arc<Permissions>,
    pub registry: Arc<Registry>,
    /// Hooks at the points of the loop, and the user's word on the project's hooks.
    pub hooks: Arc<HookPoints>,
    pub models: Arc<Models>,
    pub usage: Arc<UsageTotals>,
    /// The budget (shared by a child: its spending counts against the root's), the window and
    /// compaction's settings.
    pub limits: crate::session::Limits,
    pub log: Option<Arc<SessionLog>>,
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
    /// The project's checkpoints, where the session has a data directory to keep them; shared
    /// with a child working in the same directory (a child in a worktree has none).
    pub checkpoints: Option<Arc<crate::checkpoints::Checkpoints>>,
    /// Nested memory files and path-scoped rules, given as the agent's calls reach their files.
    pub memory: Arc<crate::prompt::ScopedMemory>,
}

impl SessionEnv {
    /// An environment of its own around `workspace`: built-in tools, default permissions, no
    /// model, no sandbox, no front end.
    #[cfg(test)]
    pub fn standalone(workspace: Arc<Workspace>) -> Self {
        Self {
            tools: Arc::new(ToolEnv::standalone(workspace)),
            permissions: Arc::new(Permissions::default()),
            registry: Arc::new(Registry::builtin(None)),
            hooks: Arc::new(HookPoints::none()),
            models: Arc::new(Models::new(
                Err(crate::llm::ProviderError::BadRequest { message: "no model in a standalone environment".into() }),
                crate::models::ModelSettings::none(),
            )),
            usage: Arc::default(),
            limits: crate::session::Limits::default(),
            log: None,
            tasks: Arc::new(crate::agents::BackgroundTasks::new(CancellationToken::new())),
            mcp: Arc::new(McpServers::none()),
            notices: Arc::default(),
            settings: None,
            skills: Arc::default(),
            checkpoints: None,
            memory: Arc::new(crate::prompt::ScopedMemory::new(Path::new("/nonexistent"), &Default::default())),
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

    /// A child's environment: its own working directory (and a sandbox for it: `sandbox` where
    /// the caller chose one), the tools `keep` accepts, its own background shells under
    /// `cancel`; permissions, models and services shared with the parent, and its own usage
    /// totals under the parent's.
    pub fn child(
        &self,
        session_id: String,
        cwd: &Path,
        keep: impl Fn(crate::tools::ToolNames<'_>) -> bool,
        sandbox: Option<Arc<crate::sandbox::Sandbox>>,
        cancel: CancellationToken,
    ) -> Self {
        let workspace = Arc::new(
            Workspace::new(cwd)
                .with_protected(&self.tools.workspace.protected_paths())
                .with_extra_roots(self.tools.workspace.extra_roots()),
        );
        let same_root = workspace.root() == self.tools.workspace.root();
        Self {
            tools: Arc::new(self.tools.child(session_id, workspace, sandbox, cancel)),
            permissions: Arc::clone(&self.permissions),
            registry: Arc::new(self.registry.filtered(keep)),
            hooks: Arc::clone(&self.hooks),
            models: Arc::clone(&self.models),
            usage: Arc::new(UsageTotals::under(&self.usage)),
            limits: self.limits,
            log: None,
            tasks: Arc::clone(&self.tasks),
            mcp: Arc::clone(&self.mcp),
            notices: Arc::clone(&self.notices),
            settings: self.settings.clone(),
            skills: Arc::clone(&self.skills),
            checkpoints: self.checkpoints.clone().filter(|_| same_root),
            // A child's conversation is its own: what the parent read, it has not.
            memory: Arc::new(self.memory.for_root(cwd)),
        }
    }
}

/// Tokens and cost an agent spent, its hooks included; a session's also its children's, which
/// count toward their parent's totals as they spend.
#[derive(Default)]
pub struct UsageTotals {
    spent: Mutex<Spent>,
    parent: Option<Arc<UsageTotals>>,
}

impl UsageTotals {
    /// A child's totals: what it spends counts for `parent` too.
    pub fn under(parent: &Arc<UsageTotals>) -> Self {
        Self { spent: Mutex::default(), parent: Some(Arc::clone(parent)) }
    }

    pub fn add(&self, usage: &Usage, cost_usd: Option<f64>) {
        if let Ok(mut spent) = self.spent.lock() {
            spent.usage.input_tokens += usage.input_tokens;
            spent.usage.output_tokens += usage.output_tokens;
            spent.usage.cache_read_tokens += usage.cache_read_tokens;
            spent.usage.cache_write_tokens += usage.cache_write_tokens;
            spent.cost_usd += cost_usd.unwrap_or(0.0);
        }
        if let Some(parent) = &self.parent {
            parent.add(usage, cost_usd);
        }
    }

    /// What this agent spent (a session: with its children).
    pub fn spent(&self) -> Spent {
        self.spent.lock().map(|spent| *spent).unwrap_or_default()
    }

    /// What the whole session spent, the agent's parent and siblings included: what the budget
    /// is held to.
    pub fn session_spent(&self) -> Spent {
        match &self.parent {
            Some(parent) => parent.session_spent(),
            None => self.spent(),
        }
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
        let child = parent.child(
            "child".into(),
            child_dir.path(),
            |names| names.name != "bash",
            None,
            CancellationToken::new(),
        );
        assert_eq!(child.tools.workspace.root(), child_dir.path().canonicalize().unwrap());
        assert!(child.registry.get("bash").is_none() && child.registry.get("read").is_some());
        assert!(parent.registry.get("bash").is_some());
        parent.permissions.set_mode(Mode::Plan).unwrap();
        assert_eq!(child.permissions.mode(), Mode::Plan, "a mode switch reaches the child");
        parent.usage.add(&Usage { input_tokens: 5, ..Usage::default() }, Some(0.25));
        child.usage.add(&Usage { input_tokens: 10, ..Usage::default() }, Some(0.5));
        assert_eq!(parent.usage.spent().usage.input_tokens, 15, "the child's spend counts for the parent");
        assert_eq!(child.usage.spent().usage.input_tokens, 10, "the child's own totals are its own");
        assert_eq!(child.usage.spent().cost_usd, 0.5);
        assert_eq!(child.usage.session_spent().usage.input_tokens, 15, "the budget sees the whole session");
    }

    #[test]
    fn a_child_in_the_same_directory_shares_the_checkpoints_and_one_in_a_worktree_has_none() {
        let project = tempfile::tempdir().unwrap();
        let worktree = tempfile::tempdir().unwrap();
        let data = tempfile::tempdir().unwrap();
        let mut parent = SessionEnv::standalone(Arc::new(Workspace::new(project.path())));
        let checkpoints = Arc::new(crate::checkpoints::Checkpoints::new(project.path(), data.path(), "s"));
        parent.checkpoints = Some(Arc::clone(&checkpoints));
        let child = |cwd: &Path| parent.child("child".into(), cwd, |_| true, None, CancellationToken::new());
        let in_place = child(project.path());
        assert!(
            in_place.checkpoints.as_ref().is_some_and(|shared| Arc::ptr_eq(shared, &checkpoints)),
            "the parent's turn's checkpoint covers the child's changes"
        );
        // The session's checkpoints snapshot the parent's directory: none of a worktree's files.
        assert!(child(worktree.path()).checkpoints.is_none());
    }
}
