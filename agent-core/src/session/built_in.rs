//! The built-in slash commands, run on the session: each answers with a [`Reply`] as data.
//! `/compact` runs as a turn of its own; the others change the session, or only look at it.

use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::{Session, TurnError, Work, hook_points, store};
use crate::checkpoints::{Checkpoint, UndoError, Undone};
use crate::commands::{Command, McpAction, Reply};
use crate::event::AgentEvent;
use crate::mcp::{McpReport, McpServers};
use crate::spending::Spending;

impl Session {
    /// Runs a built-in command (see [`crate::commands::parse`]). `events` carries what a turn
    /// sends (`/compact`'s, or the project's settings question of `/mcp approve`); `cancel`
    /// belongs to the caller's tree, as for [`Session::prompt`].
    pub async fn run_command(
        &self,
        command: Command,
        events: mpsc::Sender<AgentEvent>,
        cancel: CancellationToken,
    ) -> Result<Reply, TurnError> {
        Ok(match command {
            Command::Compact(instructions) => {
                Reply::Compacted(self.run_turn(Work::Compact(instructions), events, cancel).await?)
            }
            Command::Clear => {
                self.clear().await;
                Reply::Cleared
            }
            Command::Mode(Some(mode), _) => match self.env.permissions.set_mode(mode) {
                Ok(()) => Reply::ModeSet(mode),
                Err(refused) => Reply::ModeRefused(refused),
            },
            Command::Mode(None, asked) => Reply::NotAMode(asked),
            Command::Model(_) => Reply::Unavailable("model"),
            Command::Config(..) => Reply::Unavailable("config"),
            Command::Mcp(action) => self.mcp_command(action, events, cancel).await,
            Command::Plugin(action) => {
                let settings = self.env.settings.as_deref();
                let Some(source) = settings else { return Ok(Reply::Unavailable("plugin")) };
                match crate::plugin_install::run(action, &source.project, &source.env) {
                    Ok(outcome) => Reply::Plugin(outcome),
                    Err(error) => Reply::PluginFailed(error.to_string()),
                }
            }
            Command::Tasks(None) => Reply::Tasks(self.env.tasks.running()),
            Command::Tasks(Some(id)) => match self.env.tasks.stop(&id) {
                Ok(task) => Reply::TaskStopping(task),
                Err(error) => Reply::TaskNotStopped(error),
            },
            Command::Budget => Reply::Spending(self.spending()),
            Command::Checkpoints => Reply::Checkpoints(self.checkpoints()),
            Command::Sandbox => {
                self.sandbox_checked().await;
                let tools = &self.env.tools;
                Reply::Sandbox(crate::commands::SandboxReport {
                    state: self.sandbox_state(),
                    domains: tools.sandbox.as_ref().and_then(|sandbox| sandbox.domains().cloned()),
                    reached: tools.network_log.lock().map(|log| log.clone()).unwrap_or_default(),
                })
            }
            Command::Undo(id) => match self.undo(id).await {
                Ok(undone) => Reply::Undone(Box::new(undone)),
                Err(error) => Reply::NothingUndone(error),
            },
        })
    }

    async fn mcp_command(
        &self,
        action: McpAction,
        events: mpsc::Sender<AgentEvent>,
        cancel: CancellationToken,
    ) -> Reply {
        match action {
            McpAction::List => Reply::McpServers(self.mcp_servers().await),
            McpAction::Login(server) => match self.mcp_login(&server, &cancel).await {
                Ok(()) => Reply::McpLoggedIn(server),
                Err(error) => Reply::McpFailed(error),
            },
            McpAction::Reconnect(server) => match self.env.mcp.reconnect(&server) {
                Ok(()) => Reply::McpReconnecting(server),
                Err(error) => Reply::McpFailed(error),
            },
            McpAction::Approve => {
                // Asks for the project's settings (its MCP servers, hooks and rules) now;
                // approved, its servers start connecting.
                let point = hook_points::Point { env: &self.env, events: &events, cancel: &cancel };
                Reply::ProjectSettings { approved: self.env.hooks.ask_again(&point).await }
            }
            McpAction::Usage(asked) => Reply::McpUsage(asked),
        }
    }

    /// Where each MCP server is; waits first (at most the connect timeout) for servers still
    /// connecting.
    pub async fn mcp_servers(&self) -> McpReport {
        self.env.mcp.settle(McpServers::connect_timeout()).await;
        self.env.mcp.report()
    }

    /// `/mcp login <server>`: logs in through the editor (or the terminal's browser), then
    /// reconnects the server.
    pub async fn mcp_login(&self, server: &str, cancel: &CancellationToken) -> Result<(), crate::mcp::McpError> {
        self.env.mcp.login(server, cancel).await
    }

    /// What the session has spent against its budget.
    pub fn spending(&self) -> Spending {
        Spending { budget: self.env.limits.budget, spent: self.env.usage.spent() }
    }

    /// The checkpoints of this session's turns, oldest first (none without a data directory).
    pub fn checkpoints(&self) -> Vec<Checkpoint> {
        self.env.checkpoints.as_ref().map(|checkpoints| checkpoints.list()).unwrap_or_default()
    }

    /// `/undo [checkpoint]`: the project's files back as they were before the last turn that
    /// changed them (or before checkpoint `id`), what commands did included, files changed by
    /// hand since kept; the conversation goes back to the same point. Waits for a running turn.
    pub async fn undo(&self, id: Option<String>) -> Result<Undone, UndoError> {
        let Some(checkpoints) = &self.env.checkpoints else { return Err(UndoError::NotKept) };
        let mut history = self.history.lock().await;
        let undone = checkpoints.undo(id).await?;
        let to = undone.checkpoint.history_len;
        // A compaction since may have made the conversation shorter than the checkpoint's point.
        if to <= history.len() {
            history.truncate(to);
            if let Some(log) = &self.env.log {
                log.append(&store::Record::Rewind { to });
            }
        }
        Ok(undone)
    }

    /// Starts over with an empty conversation (the session file keeps the old one), with the
    /// skills read again: one added or edited since is in the new context.
    async fn clear(&self) {
        let mut history = self.history.lock().await;
        history.clear();
        self.env.memory.forget();
        self.restarted(crate::event::SessionStart::Clear);
        let problems = self.env.skills.reload();
        crate::skills::tool::offer_if_any(&self.env.registry, &self.env.skills);
        // The conversation starts over, so its cached prefix does: the tools are listed anew.
        self.env.registry.list_anew();
        self.env.notices.push_all((!problems.is_empty()).then(|| problems.join("\n")));
        let system = super::opening::system_prompt(&self.env.tools.workspace, &self.user_files, &self.env.skills);
        if let Ok(mut current) = self.system.lock() {
            *current = system.into();
        }
        if let Some(log) = &self.env.log {
            log.append(&store::Record::Rewind { to: 0 });
        }
    }
}
