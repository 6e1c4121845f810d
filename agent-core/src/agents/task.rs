//! The `task` tool: starts a subagent for a self-contained piece of work and returns its final
//! report. It is read-only for the pipeline (the call changes nothing itself; every call inside
//! the child is checked on its own), so several task calls in one response run side by side.

use std::sync::Arc;

use larik_settings::ContextSize;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;
use tokio::sync::mpsc;

use super::BackgroundTasks;
use super::definitions::Definition;
use super::roles::ChildModel;
use super::runner::{ChildError, ChildRun, SubagentOutcome, SubagentRunner};
use super::worktree::TaskWorktree;
use crate::config::SettingsSource;
use crate::event::{Display, StopReason, ToolKind};
use crate::llm::ToolSpec;
use crate::models::Models;
use crate::skills::Skills;
use crate::spending::Spent;
use crate::tools::{
    CallDescription, ClaudeCodeAlias, DynTool, HookResponse, InputError, PreparedCall, ToolContext, ToolNames,
    ToolOutput,
};

/// A child's model requests, at most (a definition's `maxTurns` may lower it).
pub const MAX_TURNS: u32 = 100;

const DESCRIPTION: &str = "Start a subagent for a self-contained piece of work: a search across the code, a question that needs many reads, a change with its checks. It starts with a fresh context and sees nothing of this conversation, so the prompt must say everything it needs: the goal, what is known, what to report. Only its final report comes back to you. Start several in one response to run them side by side.";

/// What the child is told on top of its definition: the parent sees only its last message.
const REPORT_FOOTER: &str = "When you are done, reply with a complete final report: what you found or did, with file paths and line numbers where they help, and anything left undone or uncertain. The agent that asked sees only that reply, none of your tool calls.";

#[derive(Deserialize, JsonSchema)]
pub struct TaskInput {
    /// Which kind of subagent, one of those listed in the description.
    pub subagent_type: String,
    /// A short name for the task (3-6 words), shown to the user.
    pub description: String,
    /// The whole task for the subagent, self-contained.
    pub prompt: String,
    /// A role from the settings or a model (`provider:model`); by default the subagent type's.
    #[serde(default)]
    pub model: Option<String>,
    /// `worktree` to have it work in its own git worktree (a branch from HEAD), for changes to
    /// review and merge afterwards; by default it works in this checkout.
    #[serde(default)]
    pub isolation: Option<Isolation>,
    /// Run it in the background: `bg-N` comes back at once and its result arrives by itself
    /// when it finishes (or use task_wait). For work you need not wait on.
    #[serde(default)]
    pub run_in_background: bool,
}

#[derive(Deserialize, JsonSchema, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Isolation {
    Worktree,
}

pub struct TaskTool {
    definitions: Arc<[Definition]>,
    parent: Arc<ParentSession>,
}

/// What the `task` tool needs of the session it starts children for.
pub struct ParentSession {
    /// Where the roles are read from, afresh for every request and every task.
    pub settings: Option<Arc<SettingsSource>>,
    /// The session's model, which a child has unless a role or the call names another.
    pub models: Arc<Models>,
    /// The skills, whose index a child's system prompt lists.
    pub skills: Arc<Skills>,
    /// The session's background tasks, where `run_in_background` starts a child.
    pub tasks: Arc<BackgroundTasks>,
    /// Runs a child through the session's turn loop.
    pub runner: Arc<dyn SubagentRunner>,
}

impl TaskTool {
    pub const NAME: &'static str = "task";

    pub fn new(definitions: Vec<Definition>, parent: ParentSession) -> Self {
        Self { definitions: definitions.into(), parent: Arc::new(parent) }
    }

    fn definition(&self, name: &str) -> Option<&Definition> {
        self.definitions.iter().find(|definition| definition.name == name)
    }
}

impl DynTool for TaskTool {
    fn spec(&self) -> ToolSpec {
        let listed: Vec<String> = self
            .definitions
            .iter()
            .map(|definition| format!("- {}: {}", definition.name, first_paragraph(&definition.description)))
            .collect();
        let mut description = format!("{DESCRIPTION}\n\nSubagents:\n{}", listed.join("\n"));
        let mut input_schema = crate::tools::input_schema::<TaskInput>();
        let roles = roles(self.parent.settings.as_deref());
        if super::roles::any_model(&roles) {
            let mapped: Vec<String> = roles
                .iter()
                .filter_map(|(name, role)| role.model.as_ref().map(|model| format!("- {name}: {model}")))
                .collect();
            description.push_str(&format!(
                "\n\nRoles for `model` (the default is the subagent type's):\n{}",
                mapped.join("\n")
            ));
        } else if let Some(properties) = input_schema.get_mut("properties").and_then(Value::as_object_mut) {
            // No role has a model: there is nothing useful to choose.
            properties.remove("model");
        }
        ToolSpec { name: Self::NAME.into(), description, input_schema }
    }

    fn live_spec(&self) -> bool {
        self.parent.settings.is_some()
    }

    fn name(&self) -> &str {
        Self::NAME
    }

    fn names(&self) -> ToolNames<'_> {
        const ALIAS: ClaudeCodeAlias = ClaudeCodeAlias { name: "Task", fields: &[], response: HookResponse::Output };
        ToolNames { name: Self::NAME, claude_code: Some(&ALIAS), family: None }
    }

    fn kind(&self) -> ToolKind {
        ToolKind::Other
    }

    fn read_only(&self) -> bool {
        true
    }

    fn concurrency_safe(&self) -> bool {
        true
    }

    fn report_only(&self) -> bool {
        false
    }

    fn prepare(self: Arc<Self>, input: &Value, _ctx: &ToolContext) -> Result<Box<dyn PreparedCall>, InputError> {
        let input: TaskInput = crate::tools::parse_input(Self::NAME, input)?;
        let description = CallDescription::titled(format!("{}: {}", input.subagent_type, input.description));
        Ok(Box::new(TaskCall { tool: self, input, description }))
    }
}

/// One call of the task tool, its input parsed.
struct TaskCall {
    tool: Arc<TaskTool>,
    input: TaskInput,
    description: CallDescription,
}

#[async_trait::async_trait]
impl PreparedCall for TaskCall {
    fn description(&self) -> &CallDescription {
        &self.description
    }

    async fn run(self: Box<Self>, ctx: &ToolContext) -> ToolOutput {
        let Self { tool, input, .. } = *self;
        tool.start(input, ctx).await
    }
}

impl TaskTool {
    /// Runs the child the call asks for, or starts it in the background.
    async fn start(&self, input: TaskInput, ctx: &ToolContext) -> ToolOutput {
        let Some(definition) = self.definition(&input.subagent_type) else {
            let names: Vec<&str> = self.definitions.iter().map(|definition| definition.name.as_str()).collect();
            return ToolOutput::error(format!(
                "There is no subagent `{}`; use one of: {}.",
                input.subagent_type,
                names.join(", ")
            ));
        };
        let label = format!("{}: {}", definition.name, input.description);
        // A project's definition chooses what the user pays for only once the user approved the
        // project's settings; until then its child has the parent's model.
        let settings = self.parent.settings.as_deref();
        let approved = settings.is_none_or(crate::config::SettingsSource::project_approved);
        let defined = definition.model.clone().filter(|_| !definition.from_project || approved);
        let named = input.model.clone().or(defined);
        let chosen = super::roles::choose(
            named.as_deref(),
            &roles(settings),
            &self.parent.models,
            settings.map_or(&EMPTY_ENV, |settings| &settings.env),
        );
        // Where the child's calls are shown: under this call, for as long as the turn lasts.
        let shown_under = ctx
            .progress
            .as_ref()
            .map(|progress| Relay { call_id: progress.call_id.clone(), events: progress.events.downgrade() });
        if input.run_in_background {
            // A front end watching background children shows this one for as long as it runs.
            let shown_under = match (self.parent.tasks.watcher(), shown_under) {
                (Some(watcher), Some(relay)) => Some(Relay { call_id: relay.call_id, events: watcher }),
                (_, relay) => relay,
            };
            let (definition, ctx, shown) = (definition.clone(), ctx.clone(), label.clone());
            let parent = Arc::clone(&self.parent);
            let started = self.parent.tasks.clone().start(label.clone(), move |cancel| {
                // Its own token: cancelling the turn does not stop it. And no hold on the turn's
                // events, which would keep the turn from ending.
                let ctx = ToolContext { cancel, progress: None, ..ctx };
                async move {
                    let child = Child { definition: &definition, label: &shown, model: chosen, prompt: input.prompt };
                    execute(&parent, child, input.isolation, shown_under, &ctx).await
                }
            });
            return match started {
                Ok(id) => ToolOutput::text(format!(
                    "Started the background task `{id}` ({label}). Its result arrives by itself when it finishes; task_wait waits for it, task_stop stops it."
                )),
                Err(error) => ToolOutput::error(error.to_string()),
            };
        }
        let child = Child { definition, label: &label, model: chosen, prompt: input.prompt };
        execute(&self.parent, child, input.isolation, shown_under, ctx).await
    }
}

/// The child a call asks for.
struct Child<'a> {
    definition: &'a Definition,
    label: &'a str,
    model: ChildModel,
    prompt: String,
}

static EMPTY_ENV: std::sync::LazyLock<std::collections::HashMap<String, String>> =
    std::sync::LazyLock::new(std::collections::HashMap::new);

/// The roles as the settings say now.
fn roles(settings: Option<&SettingsSource>) -> std::collections::BTreeMap<String, larik_settings::RoleSettings> {
    settings.and_then(|settings| settings.load().roles).unwrap_or_default()
}

/// The parent's call a child's events are shown under, and the turn's events, held weakly.
struct Relay {
    call_id: String,
    events: mpsc::WeakSender<crate::event::AgentEvent>,
}

/// Runs a task to its end; its report, or why there is none.
async fn execute(
    parent: &ParentSession,
    child: Child<'_>,
    isolation: Option<Isolation>,
    relay: Option<Relay>,
    ctx: &ToolContext,
) -> ToolOutput {
    // The task's word, else the definition's, else the role's.
    let isolation = isolation.map(|_| "worktree").or(child.definition.isolation.as_deref()).or(child
        .model
        .role
        .isolation
        .as_deref());
    let (worktree, notice) = if isolation == Some("worktree") { worktree_for(ctx).await } else { (None, None) };
    let label = child.label;
    let outcome = run_child(parent, child, worktree.as_ref(), relay, ctx).await;
    // The worktree is finished whatever the child's end: its work is kept or cleaned up.
    let report = match worktree {
        Some(worktree) => {
            let label = label.to_owned();
            match tokio::task::spawn_blocking(move || worktree.finish(&label)).await {
                Ok(Ok(report)) => Some(report),
                Ok(Err(error)) => Some(format!("The subagent's worktree could not be finished: {error}")),
                Err(error) => Some(format!("The subagent's worktree could not be finished: {error}")),
            }
        }
        None => notice,
    };
    let with_report = |text: String| match &report {
        Some(report) => format!("{text}\n\n{report}"),
        None => text,
    };
    match outcome {
        Ok(outcome) => {
            let spent = outcome.spent;
            with_spending(ended(outcome, label, with_report), &spent)
        }
        Err(error) => ToolOutput::error(with_report(format!("The subagent `{label}` failed: {error}"))),
    }
}

/// The task's result from how the child ended: its report, or why it stopped early.
fn ended(outcome: SubagentOutcome, label: &str, with_report: impl Fn(String) -> String) -> ToolOutput {
    if outcome.stop == StopReason::EndTurn {
        return ToolOutput::text(with_report(
            outcome.last_text.unwrap_or_else(|| "The subagent finished without a report.".into()),
        ));
    }
    let why = match outcome.stop {
        _ if outcome.looped => "it kept making the same calls with the same results".to_owned(),
        StopReason::MaxTurnRequests => format!("it reached its limit of {} model requests", outcome.requests),
        StopReason::Cancelled => "it was cancelled".to_owned(),
        StopReason::MaxTokens => "its answer hit the output limit".to_owned(),
        StopReason::BudgetExhausted => "the session's budget is spent".to_owned(),
        StopReason::Refusal | StopReason::EndTurn => "the model refused".to_owned(),
    };
    let last = outcome.last_text.map(|text| format!(" Its last message:\n\n{text}")).unwrap_or_default();
    ToolOutput::error(with_report(format!(
        "The subagent `{label}` was stopped before it finished: {why}. Check what it changed before relying on it.{last}"
    )))
}

/// The result as the editor shows it under the task: what the child said, then what it spent.
/// The model reads what the child said alone.
fn with_spending(output: ToolOutput, spent: &Spent) -> ToolOutput {
    let display = Display::Annotated { text: output.text_content(), note: format!("The subagent spent {spent}.") };
    output.with_display(display)
}

/// A worktree for the task, or why it works in place (not a git repository, no data directory).
async fn worktree_for(ctx: &ToolContext) -> (Option<TaskWorktree>, Option<String>) {
    let in_place = |why: &str| (None, Some(format!("The subagent worked in this checkout, not a worktree: {why}.")));
    let Some(data_dir) = ctx.env.data_dir.clone() else {
        return in_place("there is no data directory to keep worktrees in");
    };
    let cwd = ctx.env.workspace.root().to_path_buf();
    match tokio::task::spawn_blocking(move || TaskWorktree::create(&cwd, &data_dir)).await {
        Ok(Ok(Some(worktree))) => (Some(worktree), None),
        Ok(Ok(None)) => in_place("this is not a git repository with a commit to start from"),
        Ok(Err(error)) => in_place(&error.to_string()),
        Err(error) => in_place(&error.to_string()),
    }
}

/// Runs the child to its end, its events relayed to the editor under the task's call.
async fn run_child(
    parent: &ParentSession,
    child: Child<'_>,
    worktree: Option<&TaskWorktree>,
    relay: Option<Relay>,
    ctx: &ToolContext,
) -> Result<SubagentOutcome, ChildError> {
    let Child { definition, label, model, prompt } = child;
    let cancel = ctx.cancel.child_token();
    let call_id = relay.as_ref().map_or_else(|| "task".to_owned(), |relay| relay.call_id.clone());
    let child_id = format!(
        "{}-{}",
        ctx.env.session_id,
        call_id.replace(|c: char| !c.is_ascii_alphanumeric() && c != '-' && c != '_', "_")
    );
    let cwd = worktree.map_or_else(|| ctx.env.workspace.root().to_path_buf(), |worktree| worktree.cwd.clone());
    // As the child's workspace will name it.
    let root = std::fs::canonicalize(&cwd).unwrap_or_else(|_| cwd.clone());
    // Commits in a worktree write the repository's shared git directory.
    let worktree_sandbox = worktree.and_then(|worktree| {
        ctx.env.sandbox.as_ref().map(|sandbox| Arc::new(sandbox.for_worktree(&worktree.path, &worktree.shared_git)))
    });
    let today = crate::clock::today_utc();
    let place = crate::prompt::Place { cwd: &root, additional: ctx.env.workspace.extra_roots() };
    let user = user_instructions(parent.settings.as_deref());
    let shared = match model.role.context {
        Some(ContextSize::Minimal) => crate::prompt::minimal_context(place, &today, &user),
        _ => crate::prompt::context(place, &today, &user, &crate::skills::index(&parent.skills.all())),
    };
    let system = format!("{}\n\n{REPORT_FOOTER}\n\n{shared}", definition.prompt);
    let ChildModel { provider, settings: mut model_settings, role, notice } = model;
    model_settings.max_turn_requests =
        definition.max_turns.or(role.max_turns).map_or(MAX_TURNS, |limit| limit.clamp(1, MAX_TURNS));
    let parent_events = relay.map(|relay| relay.events);
    let announce = |event: crate::event::AgentEvent| {
        let parent = parent_events.as_ref().and_then(mpsc::WeakSender::upgrade);
        async move {
            if let Some(parent) = parent {
                let _ = parent.send(event).await;
            }
        }
    };
    if let Some(notice) = notice {
        announce(crate::event::AgentEvent::Notice(notice)).await;
    }
    announce(crate::event::AgentEvent::ChildStarted {
        session: child_id.clone(),
        call: call_id.clone(),
        label: label.to_owned(),
        cwd: cwd.clone(),
        cancel: cancel.clone(),
    })
    .await;
    let (events, received) = mpsc::channel(256);
    let identity = super::relay::ChildIdentity { session: &child_id, call: &call_id, label };
    let relayed = super::relay::relay(received, parent_events.clone(), &identity);
    let run = ChildRun {
        id: child_id.clone(),
        cwd,
        worktree_sandbox,
        definition: definition.clone(),
        provider,
        model: model_settings,
        system,
        prompt,
    };
    let run = async {
        let outcome = parent.runner.run(run, &events, &cancel).await;
        // The relay ends once the child's events are all through.
        drop(events);
        outcome
    };
    let (outcome, ()) = tokio::join!(run, relayed);
    let stop = outcome.as_ref().ok().map(|outcome| outcome.stop);
    announce(crate::event::AgentEvent::ChildEnded { session: child_id, stop }).await;
    outcome
}

/// The user's own instruction files, which every agent of theirs reads.
fn user_instructions(settings: Option<&SettingsSource>) -> larik_settings::paths::UserInstructions {
    settings.map(|settings| crate::config::user_instructions(&settings.env)).unwrap_or_default()
}

fn first_paragraph(text: &str) -> &str {
    text.split("\n\n").next().unwrap_or(text).trim()
}
