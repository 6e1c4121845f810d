//! The dispatch pipeline: every tool call, built-in, MCP or subagent, takes this one path.
//!
//! ```text
//! resolve -> PreToolUse hooks (may rewrite the input) -> decide() with the hooks' verdict
//!   -> ask (PermissionRequest hooks may answer first; Notification hooks hear of it)
//!   -> run under the call's cancellation token -> PostToolUse / PostToolUseFailure hooks -> event
//! ```
//!
//! The calls of one model response go through it in two phases. First each call is authorized,
//! in order and one at a time (asking is interactive); unknown tools, malformed input and
//! denials become error results at once. Then approved calls execute in batches: a run of
//! consecutive parallel-safe calls runs concurrently, anything else alone. Results keep their
//! original order and go back to the model as one message. A hook that says `continue: false`
//! halts the turn once the batch is done.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::environment::SessionEnv;
use super::hook_points::{self, Point};

mod asking;
use super::store::{MAX_REPLAY_OUTPUT_BYTES, Record, StoredDiff, ToolRecord};
use crate::event::{AgentEvent, Display, ToolCallView, ToolStatus};
use crate::hooks::{HookEvent, HookOutcome};
use crate::llm::{HookPurpose, Message, Part, ResultPart, Role};
use crate::permission::Decision;
use crate::review;
use crate::tools::truncate::{MAX_OUTPUT_BYTES, truncate_middle};
use crate::tools::{CallSubject, DynTool, PreparedCall, ToolCall, ToolContext, ToolNames, ToolOutput, ToolProgress};

pub(super) struct Dispatch<'a> {
    pub env: &'a Arc<SessionEnv>,
    pub events: &'a mpsc::Sender<AgentEvent>,
    pub cancel: &'a CancellationToken,
    pub asking: Asking,
}

/// Whether a call the permission decision would ask about is asked, or left out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Asking {
    /// The model's calls: the user is asked.
    User,
    /// Calls the user did not see before they were made (a skill's inline commands): left out,
    /// with the reason as the result.
    LeaveOut,
}

/// The results of one response's calls, and why the turn must stop, if a hook said so.
pub(super) struct Dispatched {
    pub results: Message,
    pub halt: Option<String>,
}

/// A call that passed authorization and waits to run.
struct Approved {
    index: usize,
    /// The call, its input parsed once (as a PreToolUse hook may have rewritten it).
    prepared: Box<dyn PreparedCall>,
    /// Set when the user accepted only some hunks of the change: this replaces running the tool.
    partial: Option<PartialChange>,
    facts: CallFacts,
}

/// What the steps after a call's run need to know of it.
struct CallFacts {
    view: ToolCallView,
    tool: Arc<dyn DynTool>,
    /// The input as JSON, for hooks.
    input: Value,
    /// What the call acts on, from that input.
    subject: CallSubject,
    /// What PreToolUse hooks added for the model, appended to the result.
    context: Vec<String>,
}

/// The part of a previewed change the user accepted, hunk by hunk.
struct PartialChange {
    path: std::path::PathBuf,
    old_text: String,
    new_text: String,
    accepted: Vec<usize>,
}

const CANCELLED: &str = "The user cancelled this tool call before it finished.";

/// How long a cancelled call may take to end by itself (a command's process group is killed, an
/// MCP server told) before the turn stops waiting for it.
const CANCEL_GRACE: Duration = Duration::from_secs(2);

/// Runs a call to its end, or until the turn is cancelled and the call has had its grace to end
/// by itself: a cancelled turn never waits on a call that ignores cancellation (an editor that
/// never answers a write, a tool stuck in I/O). Dropping the call drops what it waits on.
async fn until_cancelled(run: impl Future<Output = ToolOutput>, cancel: &CancellationToken) -> ToolOutput {
    tokio::pin!(run);
    tokio::select! {
        output = &mut run => return output,
        () = cancel.cancelled() => {}
    }
    match tokio::time::timeout(CANCEL_GRACE, run).await {
        Ok(output) => output,
        Err(_) => {
            tracing::warn!("a cancelled tool call did not end within its grace; the turn goes on without it");
            ToolOutput::error(CANCELLED)
        }
    }
}

impl Approved {
    fn new(index: usize, view: ToolCallView, call: Authorized) -> Self {
        let Authorized { tool, prepared, input, partial, context } = call;
        let subject = prepared.description().subject.clone();
        Self { index, prepared, partial, facts: CallFacts { view, tool, input, subject, context } }
    }
}

/// A shell command that runs to its end in this call (one started in the background is not
/// followed): what it changes in the project is found by comparing snapshots around it.
fn is_command(call: &CallFacts) -> bool {
    matches!(call.subject, CallSubject::Command { foreground: true, .. })
}

/// Tells the model which files a command changed and gives the editor their diffs.
fn with_changes(output: &mut ToolOutput, changes: Vec<crate::checkpoints::FileChange>, root: &std::path::Path) {
    use crate::checkpoints::ChangeKind;
    if changes.is_empty() {
        return;
    }
    let kept: Vec<&crate::checkpoints::FileChange> = changes.iter().filter(|change| !change.ignored).collect();
    let listed: Vec<String> = kept
        .iter()
        .take(30)
        .map(|change| {
            let mark = match change.kind {
                ChangeKind::Added => '+',
                ChangeKind::Modified => '~',
                ChangeKind::Deleted => '-',
            };
            format!("{mark}{}", change.path.strip_prefix(root).unwrap_or(&change.path).display())
        })
        .collect();
    let more = kept.len().saturating_sub(listed.len());
    let mut parts = vec![listed.join(" ")];
    if more > 0 {
        parts[0].push_str(&format!(" and {more} more"));
    }
    let ignored = crate::checkpoints::IgnoredChanges::of(&changes, root);
    if let Some(ignored) = &ignored {
        parts.push(format!("ignored by the project: {ignored}"));
    }
    parts.retain(|part| !part.is_empty());
    let note = format!("\n[files changed: {}]", parts.join("; "));
    if let Some(ResultPart::Text { text }) =
        output.content.iter_mut().rev().find(|part| matches!(part, ResultPart::Text { .. }))
    {
        text.push_str(&note);
    }
    if let Some(Display::Command { changes: shown, ignored: shown_ignored, .. }) = &mut output.display {
        *shown = changes.into_iter().filter(|change| !change.ignored).collect();
        *shown_ignored = ignored;
    }
}

impl Dispatch<'_> {
    pub async fn run(&self, calls: &[ToolCall]) -> Dispatched {
        // Why the turn must stop once these calls are done: the first hook that said so.
        let mut halt: Option<String> = None;
        let mut results: Vec<Option<ToolOutput>> = vec![None; calls.len()];
        let mut approved = Vec::new();
        for (index, call) in calls.iter().enumerate() {
            if self.cancel.is_cancelled() || halt.is_some() {
                break;
            }
            let (view, authorization) = self.authorize(call).await;
            match authorization {
                // A call that only reports (the plan) changes nothing: it runs at once, so the
                // editor shows it without waiting for the prompts of the calls after it.
                Authorization::Run(call) if call.tool.report_only() && call.partial.is_none() => {
                    let (output, halted) = self.execute(Approved::new(index, view, call)).await;
                    halt = halt.or(halted);
                    results[index] = Some(output);
                }
                Authorization::Run(call) => approved.push(Approved::new(index, view, call)),
                Authorization::Refused { output, halt: halted } => {
                    self.finish(&view, &output).await;
                    halt = halt.or(halted);
                    results[index] = Some(output);
                }
            }
        }
        for batch in batches(approved) {
            if self.cancel.is_cancelled() || halt.is_some() {
                break;
            }
            // Before the turn's first change, the project as it was (a command takes its own
            // snapshot, to tell what it changed).
            if let Some(checkpoints) = &self.env.checkpoints
                && batch.iter().any(|call| !call.facts.tool.read_only() && !is_command(&call.facts))
            {
                checkpoints.checkpoint_turn().await;
            }
            let runs = batch.into_iter().map(|call| async move { (call.index, self.execute(call).await) });
            for (index, (output, halted)) in futures::future::join_all(runs).await {
                halt = halt.or(halted);
                results[index] = Some(output);
            }
        }
        let content = calls
            .iter()
            .zip(results)
            .map(|(call, output)| {
                let output = output.unwrap_or_else(|| ToolOutput::error(CANCELLED));
                Part::ToolResult { tool_use_id: call.id.0.clone(), content: output.content, is_error: output.is_error }
            })
            .collect();
        Dispatched { results: Message { role: Role::User, content }, halt }
    }

    /// Results for calls the model made in a response that was cancelled before they ran.
    pub fn cancelled_results(calls: &[ToolCall]) -> Message {
        let content = calls
            .iter()
            .map(|call| Part::ToolResult {
                tool_use_id: call.id.0.clone(),
                content: vec![ResultPart::Text { text: CANCELLED.into() }],
                is_error: true,
            })
            .collect();
        Message { role: Role::User, content }
    }

    /// What a tool runs with; a call that runs gets a channel for the output it streams.
    fn context(&self, running: Option<&str>) -> ToolContext {
        ToolContext {
            env: Arc::clone(&self.env.tools),
            cancel: self.cancel.child_token(),
            progress: running.map(|id| ToolProgress { call_id: id.to_owned(), events: self.events.clone() }),
            call_id: running.unwrap_or_default().to_owned(),
        }
    }

    pub(super) fn point(&self) -> Point<'_> {
        Point { env: self.env, events: self.events, cancel: self.cancel }
    }

    /// Announces the call (the view the editor is shown) and decides whether it may run.
    async fn authorize(&self, call: &ToolCall) -> (ToolCallView, Authorization) {
        let ctx = self.context(None);
        // A `use_tool` call is the call of the tool it names, from here on.
        let target = crate::tools::UseTool::target(call);
        let call = target.as_ref().unwrap_or(call);
        let name = call.name.as_str();
        // Resolve, and parse the input once.
        let tool = self.env.registry.get(name);
        let prepared = match &tool {
            Some(tool) => Arc::clone(tool).prepare(&call.input, &ctx).map_err(|error| error.to_string()),
            None => Err(format!("unknown tool `{name}`")),
        };
        let view = announced_view(call, tool.as_deref(), prepared.as_deref().ok(), &call.input);
        self.emit(AgentEvent::ToolCallStarted(view.clone())).await;
        let authorization = match (tool, prepared) {
            (Some(tool), Ok(prepared)) => self.decide(call, tool, prepared, &view, &ctx).await,
            (Some(_), Err(message)) => Authorization::refused(ToolOutput::error(message)),
            (None, _) if self.env.registry.listed_but_gone(name) => Authorization::refused(ToolOutput::error(format!(
                "the tool `{name}` is not available now: its MCP server is not connected"
            ))),
            (None, _) => Authorization::refused(ToolOutput::error(format!(
                "unknown tool `{name}`; use one of the tools you were given"
            ))),
        };
        (view, authorization)
    }

    /// The hooks' and the permission decision's word on a resolved call.
    async fn decide(
        &self,
        call: &ToolCall,
        tool: Arc<dyn DynTool>,
        mut prepared: Box<dyn PreparedCall>,
        view: &ToolCallView,
        ctx: &ToolContext,
    ) -> Authorization {
        let id = call.id.0.as_str();
        // PreToolUse hooks: they may block, stop the turn, rewrite the input or give a verdict.
        let mut input = call.input.clone();
        let names = tool.names();
        let pre = self.tool_hooks(HookEvent::PreToolUse, names, || hook_points::tool_fields(names, &input, id)).await;
        let context = hook_points::rendered(HookPurpose::Context, &pre.context);
        let refused = |output: ToolOutput| Authorization::refused(with_context(output, &context));
        if let Some(reason) = pre.stop {
            let output = ToolOutput::error(format!("A hook stopped the turn before this call ran: {reason}"));
            return Authorization::Refused { output: with_context(output, &context), halt: Some(reason) };
        }
        if let Some(reason) = pre.block {
            return refused(ToolOutput::error(format!("Blocked by a hook: {reason}")));
        }
        if let Some(updated) = &pre.updated_input {
            input = names.from_claude_code_input(updated);
            prepared = match Arc::clone(&tool).prepare(&input, ctx) {
                Ok(prepared) => prepared,
                Err(message) => {
                    let output =
                        ToolOutput::error(format!("a hook rewrote the input into one that is not valid: {message}"));
                    return Authorization::refused(output);
                }
            };
        }
        let verdict = pre.permission.as_ref().map(crate::hooks::HookPermission::verdict);
        let view = ToolCallView { input: input.clone(), ..view.clone() };
        let workspace = &self.env.tools.workspace;
        let partial =
            match self.env.permissions.decide(tool.as_ref(), prepared.description(), workspace, verdict.as_ref()) {
                Decision::Allow => None,
                Decision::Deny { reason } => return refused(ToolOutput::error(format!("Permission denied: {reason}"))),
                Decision::Ask { reason } if self.asking == Asking::LeaveOut => {
                    return refused(ToolOutput::error(format!("it would need your approval ({reason})")));
                }
                Decision::Ask { reason } => {
                    match self.ask(tool.as_ref(), prepared.as_ref(), &view, &input, reason, ctx).await {
                        Ok(partial) => partial,
                        Err(output) => return refused(output),
                    }
                }
            };
        Authorization::Run(Authorized { tool, prepared, input, partial, context })
    }

    /// Runs a tool event's hooks; tools match by Larik's name and by Claude Code's. The payload
    /// is built only when some hook listens to the event.
    pub(super) async fn tool_hooks(
        &self,
        event: HookEvent,
        names: ToolNames<'_>,
        fields: impl FnOnce() -> serde_json::Map<String, Value>,
    ) -> HookOutcome {
        if !self.env.hooks.listens(event) {
            return HookOutcome::default();
        }
        let targets = [names.name, names.claude_code_name()];
        self.env.hooks.run(event, &targets, fields(), &self.point()).await
    }

    /// Runs an approved call; its result, and why the turn must stop when a hook said so.
    async fn execute(&self, call: Approved) -> (ToolOutput, Option<String>) {
        let Approved { prepared, partial, facts: call, .. } = call;
        let id = call.view.id.as_str();
        self.emit(AgentEvent::ToolCallUpdated {
            id: id.to_owned(),
            status: ToolStatus::InProgress,
            output: None,
            display: None,
            locations: None,
        })
        .await;
        let ctx = self.context(Some(id));
        let span = tracing::info_span!("tool_call", tool = call.tool.name(), id);
        let before = match &self.env.checkpoints {
            Some(checkpoints) if is_command(&call) => checkpoints.before_command().await,
            _ => None,
        };
        let run = async {
            match &partial {
                Some(partial) => self.apply_partial(partial).await,
                None => tracing::Instrument::instrument(prepared.run(&ctx), span).await,
            }
        };
        let mut output = until_cancelled(run, self.cancel).await;
        if let (Some(checkpoints), Some(before)) = (&self.env.checkpoints, before) {
            let changes = checkpoints.changed_since(before).await;
            with_changes(&mut output, changes, self.env.tools.workspace.root());
        }
        for part in &mut output.content {
            if let ResultPart::Text { text } = part {
                *text = truncate_middle(text, MAX_OUTPUT_BYTES);
            }
        }
        let (output, halt) = self.after_run(&call, output).await;
        self.finish(&call.view, &output).await;
        (output, halt)
    }

    /// The steps after a call ran: PostToolUse (or PostToolUseFailure) hooks add feedback and
    /// context to the result, or stop the turn.
    async fn after_run(&self, call: &CallFacts, output: ToolOutput) -> (ToolOutput, Option<String>) {
        let output = self.with_diagnostics(output).await;
        if let CallSubject::Read(path) = &call.subject
            && !output.is_error
        {
            // The file's language server gets ready in the background, for an edit to come.
            let (servers, path) = (Arc::clone(&self.env.tools.lsp), self.env.tools.workspace.absolute(path));
            tokio::spawn(async move { servers.warm(&path).await });
        }
        let names = call.tool.names();
        let event = if output.is_error { HookEvent::PostToolUseFailure } else { HookEvent::PostToolUse };
        let fields = || {
            let text = output.text_content();
            let mut fields = hook_points::tool_fields(names, &call.input, &call.view.id);
            if output.is_error {
                fields.insert("error".into(), json!(text));
                fields.insert("is_interrupt".into(), json!(self.cancel.is_cancelled()));
            } else {
                fields.insert("tool_response".into(), names.tool_response(&call.input, &text, output.is_error));
            }
            fields
        };
        let post = self.tool_hooks(event, names, fields).await;
        let mut feedback = post.feedback;
        if feedback.is_empty()
            && let Some(reason) = post.block
        {
            feedback.push(crate::hooks::HookText { source: "PostToolUse hook".into(), text: reason });
        }
        let mut added = call.context.clone();
        if let CallSubject::Read(path) | CallSubject::Write(path) = &call.subject
            && !output.is_error
        {
            added.extend(self.env.memory.touched(&self.env.tools.workspace.absolute(path)));
        }
        added.extend(hook_points::rendered(HookPurpose::Feedback, &feedback));
        added.extend(hook_points::rendered(HookPurpose::Context, &post.context));
        (with_context(output, &added), post.stop)
    }

    /// A change to a file gets what its language server now reports against it, in the same
    /// result: the model sees the errors it made without running a build.
    async fn with_diagnostics(&self, output: ToolOutput) -> ToolOutput {
        let Some(Display::Diff { path, old_text, new_text }) = &output.display else { return output };
        if output.is_error {
            return output;
        }
        let path = self.env.tools.workspace.absolute(&path.display().to_string());
        let report = self.env.tools.lsp.after_write(&path, old_text.as_deref(), new_text).await;
        match report {
            Some(report) => with_context(output, &[report]),
            None => output,
        }
    }

    /// Writes the accepted hunks only, through the same checks as any write, and tells the model
    /// exactly what was kept and what was refused.
    async fn apply_partial(&self, partial: &PartialChange) -> ToolOutput {
        let PartialChange { path, old_text, new_text, accepted } = partial;
        let path_text = path.display().to_string();
        let workspace = &self.env.tools.workspace;
        let checked = workspace.writable(&path_text).and_then(|path| workspace.check_fresh(&path).map(|()| path));
        let path = match checked {
            Ok(path) => path,
            Err(error) => return ToolOutput::error(error.to_string()),
        };
        let merged = review::apply_accepted(old_text, new_text, accepted);
        if let Err(error) = workspace.write_text(&path, &merged).await {
            return ToolOutput::error(error.to_string());
        }
        let hunks = review::hunks(old_text, new_text);
        if hunks.iter().all(|hunk| accepted.contains(&hunk.index)) {
            return ToolOutput::text(format!("The user reviewed the change to {path_text} and applied all of it."))
                .with_display(Display::Diff { path, old_text: Some(old_text.clone()), new_text: merged });
        }
        let mut report = format!(
            "The user reviewed the change to {path_text} hunk by hunk and kept only some of it. The file now holds what the user chose.\n"
        );
        for hunk in hunks {
            let verdict = if accepted.contains(&hunk.index) { "applied" } else { "REJECTED (not applied)" };
            report.push_str(&format!(
                "\nHunk {} at line {}: {verdict}\n--- old\n{}+++ new\n{}",
                hunk.index + 1,
                hunk.old_start.max(1),
                hunk.old_text,
                hunk.new_text
            ));
        }
        let old_text = Some(old_text.clone());
        ToolOutput::text(report).with_display(Display::Diff { path, old_text, new_text: merged })
    }

    async fn finish(&self, view: &ToolCallView, output: &ToolOutput) {
        let status = if output.is_error { ToolStatus::Failed } else { ToolStatus::Completed };
        if let Some(log) = &self.env.log {
            log.append(&Record::Tool(Box::new(tool_record(view, output))));
        }
        self.emit(AgentEvent::ToolCallUpdated {
            id: view.id.clone(),
            status,
            output: Some(output.text_content()),
            display: output.display.clone(),
            locations: None,
        })
        .await;
    }

    pub(super) async fn emit(&self, event: AgentEvent) {
        let _ = self.events.send(event).await;
    }
}

/// What authorization decided for one call.
enum Authorization {
    /// It may run.
    Run(Authorized),
    /// Its result is known without running it (unknown tool, bad input, blocked, denied,
    /// declined); `halt` when a hook also stopped the turn.
    Refused { output: ToolOutput, halt: Option<String> },
}

impl Authorization {
    fn refused(output: ToolOutput) -> Self {
        Self::Refused { output, halt: None }
    }
}

/// What authorization gives a call that may run: the tool, the call prepared from its
/// (possibly rewritten) input, the hunks the user accepted, and what PreToolUse hooks added for
/// the model.
struct Authorized {
    tool: Arc<dyn DynTool>,
    prepared: Box<dyn PreparedCall>,
    input: Value,
    partial: Option<PartialChange>,
    context: Vec<String>,
}

/// The call as the editor first sees it.
fn announced_view(
    call: &ToolCall,
    tool: Option<&dyn DynTool>,
    prepared: Option<&dyn PreparedCall>,
    input: &Value,
) -> ToolCallView {
    let (title, kind, locations) = match (tool, prepared.map(PreparedCall::description)) {
        (Some(tool), Some(description)) => (description.title.clone(), tool.kind(), description.locations.clone()),
        (Some(tool), None) => (call.name.clone(), tool.kind(), Vec::new()),
        (None, _) => (call.name.clone(), crate::event::ToolKind::Other, Vec::new()),
    };
    let streams_output = prepared.is_some_and(PreparedCall::streams_output);
    let report_only = tool.is_some_and(DynTool::report_only);
    ToolCallView {
        id: call.id.0.clone(),
        name: call.name.clone(),
        title,
        kind,
        input: input.clone(),
        locations,
        streams_output,
        report_only,
    }
}

/// Appends what hooks said to a result, as text parts of their own.
fn with_context(mut output: ToolOutput, added: &[String]) -> ToolOutput {
    output.content.extend(added.iter().map(|text| ResultPart::Text { text: text.clone() }));
    output
}

/// How a finished call is kept for replay: output and diff bounded.
fn tool_record(view: &ToolCallView, output: &ToolOutput) -> ToolRecord {
    let diff = match &output.display {
        Some(Display::Diff { path, old_text, new_text }) => {
            StoredDiff::bounded(path.clone(), old_text.clone(), new_text.clone())
        }
        _ => None,
    };
    ToolRecord {
        id: view.id.clone(),
        name: view.name.clone(),
        title: view.title.clone(),
        kind: view.kind,
        failed: output.is_error,
        output: truncate_middle(&output.text_content(), MAX_REPLAY_OUTPUT_BYTES),
        diff,
        locations: view.locations.iter().map(|location| (location.path.clone(), location.line)).collect(),
        input: Some(view.input.clone()).filter(|input| input.to_string().len() <= MAX_REPLAY_OUTPUT_BYTES),
    }
}

/// Groups approved calls: consecutive parallel-safe calls share a batch, others run alone.
fn batches(approved: Vec<Approved>) -> Vec<Vec<Approved>> {
    let mut batches: Vec<Vec<Approved>> = Vec::new();
    for call in approved {
        let parallel = call.facts.tool.concurrency_safe();
        match batches.last_mut() {
            Some(last) if parallel && last.iter().all(|other| other.facts.tool.concurrency_safe()) => last.push(call),
            _ => batches.push(vec![call]),
        }
    }
    batches
}

#[cfg(test)]
mod tests;
