//! A session: one conversation in one project. It takes prompts, runs turns and emits
//! [`AgentEvent`]s; it is cancelled through a tree of tokens (session -> turn -> tool call).
//! One turn runs at a time per session; a second prompt waits for the first to finish.

mod built_in;
mod command_prompt;
pub mod compaction;
mod configuration;
mod dispatch;
mod environment;
pub(crate) mod hook_points;
pub mod limits;
mod opening;
mod paced_text;
pub mod store;
mod subagent;
mod turn;

pub use crate::event::StopReason;
pub use crate::models::ModelSettings;
pub use compaction::{Compacted, Trigger};
pub use configuration::{SessionConfig, domain_policy};
pub use limits::{Budget, Limits};

use std::path::Path;
use std::sync::{Arc, Mutex};

use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::config::{self, ModelConfig};
use crate::event::AgentEvent;
use crate::llm::{Message, Note, Part, Provider, ProviderError};
use crate::models::Models;
use crate::permission::{Mode, Permissions};
use environment::SessionEnv;

/// A turn that could not finish; named for what the front end does next.
#[derive(Debug, thiserror::Error)]
pub enum TurnError {
    /// The model call failed for good (after retries where retrying made sense).
    #[error(transparent)]
    Provider(#[from] ProviderError),
}

/// The prompt of a turn that only hands the model background tasks' results.
pub const BACKGROUND_RESULTS: &str = "Background task results arrived (above). Use them to finish what you were asked.";

/// What a turn does.
enum Work {
    Prompt(Vec<Part>),
    /// `/compact` with the user's instructions for the summary.
    Compact(String),
}

pub struct Session {
    env: Arc<SessionEnv>,
    /// The mode the previous prompt ran in, to tell the model when plan mode ends.
    last_prompt_mode: Mutex<Mode>,
    sandbox_off: Option<String>,
    /// Whether the first prompt has told the user where the sandbox cannot hold.
    sandbox_told: std::sync::atomic::AtomicBool,
    title: Mutex<Option<String>>,
    /// The system prompt, rebuilt at each fresh context (the skills index may have changed).
    system: Mutex<Arc<str>>,
    /// The user's own instruction files, read into the system prompt.
    user_files: config::UserInstructions,
    history: tokio::sync::Mutex<Vec<Message>>,
    cancel: CancellationToken,
    current_turn: Mutex<Option<CancellationToken>>,
    /// What the user said while a turn was running, for the turn to take in.
    steering: Mutex<Vec<String>>,
    /// Set until the next turn runs the SessionStart hooks: how the session (re)started.
    session_start: Mutex<Option<crate::event::SessionStart>>,
}

/// What the model is told in each prompt while plan mode is on.
const PLAN_MODE_ON: &str = "Plan mode is on: explore and read, then present a plan. Do not change files or run commands that change anything; such calls are denied.";
/// What the model is told in the first prompt after plan mode.
const PLAN_MODE_OVER: &str =
    "Plan mode has ended: you may now carry out the plan, changing files and running commands.";

impl Session {
    pub fn new(mut config: SessionConfig, parent_cancel: &CancellationToken) -> Self {
        let cancel = parent_cancel.child_token();
        let workspace = opening::workspace(&mut config);
        let user_files =
            config.settings.as_ref().map(|settings| config::user_instructions(&settings.env)).unwrap_or_default();
        let (skills, skill_problems) = crate::skills::Skills::load(config.settings.clone());
        let skills = Arc::new(skills);
        let system = opening::system_prompt(&workspace, &user_files, &skills);
        let settings = config.settings.take().map(Arc::new);
        let tasks = Arc::new(crate::agents::BackgroundTasks::new(cancel.clone()));
        // The exact output of bash calls and the tool that reads it, when the user turned the
        // token saver on.
        let token_saver =
            crate::token_saver::TokenSaver::for_session(settings.as_deref(), config.data_dir.as_deref(), &config.id);
        let registry = opening::registry(&mut config);
        opening::Offered {
            tasks: &tasks,
            skills: &skills,
            token_saver: token_saver.as_ref(),
            language_servers: !config.language_servers.is_empty(),
            #[cfg(feature = "browser")]
            browser: config.browser.take().map(|settings_of_browser| opening::BrowserStart {
                settings: settings_of_browser,
                source: settings.as_deref(),
                data_dir: config.data_dir.as_deref(),
                cancel: &cancel,
            }),
        }
        .add_to(&registry);
        let notices = opening::first_notices(config.notice.take(), &skill_problems);
        let guarded = opening::guarded(&mut config, settings.as_deref(), &registry, &notices, &cancel);
        let project_approved = guarded.hooks.project_approved();
        let checkpoints = config
            .data_dir
            .as_deref()
            .map(|dir| Arc::new(crate::checkpoints::Checkpoints::new(workspace.root(), dir, &config.id)));
        let tools = opening::tool_env(&mut config, workspace, &notices, token_saver, &guarded.permissions, &cancel);
        let models = Arc::new(Models::new(config.provider, config.model));
        if let Some(model_config) = &config.model_config {
            models.remember(model_config);
        }
        let env = Arc::new(SessionEnv {
            memory: Arc::new(crate::prompt::ScopedMemory::new(tools.workspace.root(), &user_files)),
            tools: Arc::new(tools),
            checkpoints,
            permissions: guarded.permissions,
            registry,
            hooks: Arc::new(guarded.hooks),
            models: Arc::clone(&models),
            settings: settings.clone(),
            skills: Arc::clone(&skills),
            usage: Arc::default(),
            limits: config.limits,
            log: config.log,
            tasks: Arc::clone(&tasks),
            mcp: guarded.mcp,
            notices,
        });
        // The task tool runs children through this session's loop; it lives in the session's
        // registry, so its runner holds the session weakly.
        let runner = Arc::new(subagent::SessionRunner { parent: Arc::downgrade(&env) });
        let parent = crate::agents::ParentSession { settings, models, skills, tasks, runner };
        env.registry.add(Arc::new(crate::agents::TaskTool::new(config.agents, parent)));
        // Approved in an earlier session, as the project's settings are now.
        if project_approved {
            env.project_approved();
        }
        let session_start = if config.history.is_empty() {
            crate::event::SessionStart::Startup
        } else {
            crate::event::SessionStart::Resume
        };
        Self {
            session_start: Mutex::new(Some(session_start)),
            env,
            last_prompt_mode: Mutex::new(Mode::Default),
            sandbox_off: config.sandbox_off,
            sandbox_told: std::sync::atomic::AtomicBool::new(false),
            title: Mutex::new(config.title),
            system: Mutex::new(system.into()),
            user_files,
            history: tokio::sync::Mutex::new(config.history),
            cancel,
            current_turn: Mutex::new(None),
            steering: Mutex::new(Vec::new()),
        }
    }

    pub fn cwd(&self) -> &Path {
        self.env.tools.workspace.root()
    }

    /// Waits, at the first prompt, for the sandbox's check, which the session opened without
    /// (so every later decision finds the answer in), and tells the user where it cannot hold.
    async fn tell_where_the_sandbox_cannot_hold(&self) {
        if self.sandbox_told.swap(true, std::sync::atomic::Ordering::Relaxed) {
            return;
        }
        let Some(sandbox) = &self.env.tools.sandbox else { return };
        sandbox.checked().await;
        if let Err(reason) = sandbox.holds() {
            self.env
                .notices
                .push_all(Some(format!("The shell sandbox is off: {reason}. Commands will ask for approval instead.")));
        }
    }

    /// Waits, without blocking the event loop, until [`Session::sandbox_state`] answers at once.
    pub async fn sandbox_checked(&self) {
        if let Some(sandbox) = &self.env.tools.sandbox {
            sandbox.checked().await;
        }
    }

    /// How commands are confined: `Ok(network)` when the sandbox holds, else why it is off.
    pub fn sandbox_state(&self) -> Result<bool, crate::sandbox::Unconfined> {
        match &self.env.tools.sandbox {
            Some(sandbox) => sandbox.holds().map(|()| sandbox.network()),
            None => Err(crate::sandbox::Unconfined {
                reason: self.sandbox_off.clone().unwrap_or_else(|| "the sandbox is off".into()),
            }),
        }
    }

    pub fn permissions(&self) -> &Permissions {
        &self.env.permissions
    }

    /// The prompts of the session's MCP servers as slash commands, once the servers still
    /// connecting are in (at most the connect timeout).
    pub async fn mcp_commands(&self) -> Vec<crate::mcp::McpCommand> {
        self.env.mcp.settle(crate::mcp::McpServers::connect_timeout()).await;
        self.env.mcp.commands()
    }

    /// The skills and custom commands the user can run as `/name args`.
    pub fn skill_commands(&self) -> Vec<crate::skills::SlashCommand> {
        self.env.skills.commands()
    }

    /// The prompt a typed `/mcp__server__name args` stands for: the MCP server's prompt.
    /// `Ok(None)` for other text: a skill or custom command typed as the prompt is expanded
    /// inside its turn (see `session::command_prompt`), so its inline commands take the dispatch
    /// pipeline. `Err` when an MCP prompt cannot be had.
    pub async fn expand_command(&self, text: &str) -> Result<Option<String>, crate::mcp::McpError> {
        let Some((name, args)) = crate::skills::slash_command(text) else { return Ok(None) };
        if name.starts_with("mcp__") {
            return self.env.mcp.expand(name, args).await.map(Some);
        }
        Ok(None)
    }

    /// Whether a background task runs or has a result the model has not had yet.
    pub fn background_pending(&self) -> bool {
        self.env.tasks.pending()
    }

    /// Sends the events of background subagents to `events` rather than to the turn that
    /// started them: for a front end that shows them apart, also once that turn is over.
    pub fn watch_background(&self, events: mpsc::Sender<AgentEvent>) {
        self.env.tasks.watch(events);
    }

    /// Changes whenever a background task finishes or stops.
    pub fn background_changes(&self) -> tokio::sync::watch::Receiver<u64> {
        self.env.tasks.changes()
    }

    /// A turn the agent starts itself to hand the model background tasks' results that arrived
    /// while the session was idle; `None` when there are none (a turn that ran meanwhile took
    /// them). It waits for a running turn to end first.
    pub async fn deliver_background(
        &self,
        events: mpsc::Sender<AgentEvent>,
        cancel: CancellationToken,
    ) -> Option<Result<StopReason, TurnError>> {
        let ready = {
            let _idle = self.history.lock().await;
            self.env.tasks.undelivered()
        };
        if !ready {
            return None;
        }
        Some(self.prompt(vec![Part::Text { text: BACKGROUND_RESULTS.into() }], events, cancel).await)
    }

    /// Waits until no background task runs, or `cancel` fires.
    pub async fn background_settled(&self, cancel: &CancellationToken) {
        self.env.tasks.settle(cancel).await;
    }

    /// The model the next request goes to.
    pub fn model(&self) -> String {
        self.env.models.settings().model
    }

    pub fn thought_level(&self) -> Option<crate::llm::ThoughtLevel> {
        self.env.models.settings().thought_level
    }

    /// Sets how hard the model thinks from the next request on.
    pub fn set_thought_level(&self, level: crate::llm::ThoughtLevel) {
        self.env.models.update(|settings| settings.thought_level = Some(level));
    }

    /// Switches model (and provider) for the following requests; a running turn keeps its own.
    pub fn set_model(&self, provider: Result<Arc<dyn Provider>, ProviderError>, model: ModelSettings) {
        self.env.models.set(provider, model);
    }

    /// Switches to the model `config` describes, which subagents then derive theirs from.
    pub fn switch_model(&self, config: &ModelConfig) {
        self.env.models.switch(config);
    }

    /// Where the current model came from (provider, endpoint, key, the models offered), when
    /// settings chose it.
    pub fn model_config(&self) -> Option<ModelConfig> {
        self.env.models.config()
    }

    pub fn title(&self) -> Option<String> {
        self.title.lock().ok().and_then(|title| title.clone())
    }

    /// Gives an untitled session a title from its first prompt, saves it and says so.
    async fn name_from_first_prompt(&self, prompt: &[Part], events: &mpsc::Sender<AgentEvent>) {
        let text: String = prompt
            .iter()
            .filter_map(|part| match part {
                Part::Text { text } => Some(text.as_str()),
                _ => None,
            })
            .collect::<Vec<_>>()
            .join("\n");
        let title = {
            let Ok(mut current) = self.title.lock() else { return };
            if current.is_some() || text.trim().is_empty() {
                return;
            }
            let title = store::title_from(&text);
            *current = Some(title.clone());
            title
        };
        if let Some(log) = &self.env.log {
            log.append(&store::Record::Title { title: title.clone() });
        }
        let _ = events.send(AgentEvent::TitleChanged(title)).await;
    }

    /// Notes for the model about the mode, carried in the user message so the cached system
    /// prompt never changes: a reminder in plan mode, and word when plan mode has ended.
    fn mode_note(&self) -> Option<Note> {
        let mode = self.env.permissions.mode();
        let previous = self.last_prompt_mode.lock().map(|mut last| std::mem::replace(&mut *last, mode)).unwrap_or(mode);
        match (previous, mode) {
            (_, Mode::Plan) => Some(Note::SystemNote { text: PLAN_MODE_ON.into() }),
            (Mode::Plan, _) => Some(Note::SystemNote { text: PLAN_MODE_OVER.into() }),
            _ => None,
        }
    }

    /// Reads the skills again before a prompt, so one added or edited since is there without a
    /// restart: the model is told in `prompt` (the system prompt's index is the cached prefix,
    /// kept until the conversation starts over) and the editor gets the new menu.
    async fn skills_reread(&self, prompt: &mut Vec<Part>, events: &mpsc::Sender<AgentEvent>) {
        let Some(changes) = self.env.skills.refresh() else { return };
        crate::skills::tool::offer_if_any(&self.env.registry, &self.env.skills);
        if let Some(text) = changes.note() {
            prompt.push(Part::Note(Note::SystemNote { text }));
        }
        if !changes.problems.is_empty() {
            let _ = events.send(AgentEvent::Notice(changes.problems.join("\n"))).await;
        }
        if changes.menu_changed {
            let mcp = self.env.mcp.commands();
            let _ = events.send(AgentEvent::CommandsChanged { mcp, skills: self.env.skills.commands() }).await;
        }
    }

    /// Runs one turn for `prompt`, sending events as they happen. `cancel` belongs to the caller's
    /// tree (e.g. the request that asked for the turn); the session's own shutdown cancels it too.
    /// Returns when the turn is over; every event of the turn has been handed to `events` by then.
    pub async fn prompt(
        &self,
        prompt: Vec<Part>,
        events: mpsc::Sender<AgentEvent>,
        cancel: CancellationToken,
    ) -> Result<StopReason, TurnError> {
        self.run_turn(Work::Prompt(prompt), events, cancel).await
    }

    /// The next turn runs the SessionStart hooks with `source`.
    fn restarted(&self, source: crate::event::SessionStart) {
        if let Ok(mut start) = self.session_start.lock() {
            *start = Some(source);
        }
    }

    async fn run_turn(
        &self,
        work: Work,
        events: mpsc::Sender<AgentEvent>,
        cancel: CancellationToken,
    ) -> Result<StopReason, TurnError> {
        let mut history = self.history.lock().await;
        if let Ok(mut current) = self.current_turn.lock() {
            *current = Some(cancel.clone());
        }
        // Closing the session cancels its running turn.
        let link = tokio::spawn({
            let session = self.cancel.clone();
            let turn = cancel.clone();
            async move {
                session.cancelled().await;
                turn.cancel();
            }
        });
        self.tell_where_the_sandbox_cannot_hold().await;
        for notice in self.env.notices.take() {
            let _ = events.send(AgentEvent::Notice(notice)).await;
        }
        let work = match work {
            Work::Prompt(mut prompt) => {
                // Before the model is chosen: an approval of the project's settings may choose it.
                self.env.hooks.settle(&hook_points::Point { env: &self.env, events: &events, cancel: &cancel }).await;
                self.name_from_first_prompt(&prompt, &events).await;
                if let Some(note) = self.mode_note() {
                    prompt.push(Part::Note(note));
                }
                self.skills_reread(&mut prompt, &events).await;
                Work::Prompt(prompt)
            }
            Work::Compact(instructions) => Work::Compact(instructions),
        };
        let model = self.env.models.settings();
        let system = self.system.lock().map(|system| Arc::clone(&system)).unwrap_or_else(|_| Arc::from(""));
        let outcome = match self.env.models.provider() {
            Ok(provider) => {
                let turn = turn::Turn {
                    env: &self.env,
                    provider: provider.as_ref(),
                    model: &model,
                    system: &system,
                    events: &events,
                    cancel: &cancel,
                    steering: &self.steering,
                    child: None,
                };
                match work {
                    Work::Prompt(prompt) => {
                        let started = self.session_start.lock().ok().and_then(|mut start| start.take());
                        turn.run(&mut history, prompt, started).await
                    }
                    Work::Compact(instructions) => {
                        match turn.compact(&mut history, Trigger::Manual, &instructions).await {
                            Ok(Compacted::Done { .. }) => Ok(StopReason::EndTurn),
                            Ok(Compacted::Skipped(reason)) => {
                                let _ =
                                    events.send(AgentEvent::Notice(format!("Nothing was compacted: {reason}"))).await;
                                Ok(StopReason::EndTurn)
                            }
                            Ok(Compacted::Cancelled) => Ok(StopReason::Cancelled),
                            Err(error) => Err(error),
                        }
                    }
                }
            }
            Err(error) => Err(error.into()),
        };
        link.abort();
        if let Ok(mut current) = self.current_turn.lock() {
            *current = None;
        }
        outcome
    }

    /// Adds what the user said to the running turn, before its next model request. Returns false
    /// when no turn is running (the text should be sent as a prompt instead).
    pub fn steer(&self, text: String) -> bool {
        let running = self.current_turn.lock().map(|turn| turn.is_some()).unwrap_or(false);
        if running && let Ok(mut steering) = self.steering.lock() {
            steering.push(text);
        }
        running
    }

    /// Cancels the running turn, if any: the model stream stops, running tools are killed and
    /// pending permission prompts resolve as cancelled.
    pub fn cancel_turn(&self) {
        if let Ok(current) = self.current_turn.lock()
            && let Some(token) = current.as_ref()
        {
            token.cancel();
        }
    }

    /// Cancels everything the session runs; used when the session closes.
    pub fn shutdown(&self) {
        self.cancel.cancel();
        // The language servers end with the session, whoever holds it.
        let servers = Arc::clone(&self.env.tools.lsp);
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move { servers.shutdown().await });
        }
    }

    /// Fires when the session is shut down.
    pub fn closed(&self) -> tokio_util::sync::WaitForCancellationFuture<'_> {
        self.cancel.cancelled()
    }

    /// Ends the session: its SessionEnd hooks run with `reason` (`clear`, `logout`,
    /// `prompt_input_exit`, `other`), bounded by their timeouts, then everything it runs is
    /// cancelled. Nobody is there to answer a question now, so unapproved project hooks stay off.
    pub async fn end(&self, reason: &str) {
        let (events, _) = mpsc::channel(16);
        let cancel = CancellationToken::new();
        let point = hook_points::Point { env: &self.env, events: &events, cancel: &cancel };
        let mut fields = serde_json::Map::new();
        fields.insert("reason".into(), serde_json::json!(reason));
        self.env.hooks.run(crate::hooks::HookEvent::SessionEnd, &[reason], fields, &point).await;
        self.shutdown();
    }
}
