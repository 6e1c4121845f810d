//! Runs the tool calls of one model response in two phases. First each call is authorized, in
//! order and one at a time (asking is interactive); unknown tools, malformed input and denials
//! become error results at once. Then approved calls execute in batches: a run of consecutive
//! parallel-safe calls runs concurrently, anything else alone. Results keep their original order
//! and go back to the model as one message.

use std::sync::Arc;

use serde_json::Value;
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;

use crate::event::{AgentEvent, Display, PermissionAnswer, PermissionRequest, ToolCallView, ToolStatus};
use crate::review;
use super::store::{MAX_REPLAY_OUTPUT_BYTES, Record, StoredDiff, ToolRecord};
use crate::llm::{Message, Part, ResultPart, Role};
use crate::environment::SessionEnv;
use crate::permission::{Decision, suggested_rule};
use crate::tools::truncate::{MAX_OUTPUT_BYTES, truncate_middle};
use crate::tools::{DynTool, ToolCall, ToolContext, ToolOutput, ToolProgress};

pub(super) struct Dispatch<'a> {
    pub env: &'a Arc<SessionEnv>,
    pub events: &'a mpsc::Sender<AgentEvent>,
    pub cancel: &'a CancellationToken,
}

/// A call that passed authorization and waits to run.
struct Approved {
    index: usize,
    view: ToolCallView,
    tool: Arc<dyn DynTool>,
    input: Value,
    /// Set when the user accepted only some hunks of the change: this replaces running the tool.
    partial: Option<PartialChange>,
}

/// The part of a previewed change the user accepted, hunk by hunk.
struct PartialChange {
    path: std::path::PathBuf,
    old_text: String,
    new_text: String,
    accepted: Vec<usize>,
}

const CANCELLED: &str = "The user cancelled this tool call before it finished.";

impl Dispatch<'_> {
    pub async fn run(&self, calls: &[ToolCall]) -> Message {
        let mut results: Vec<Option<ToolOutput>> = vec![None; calls.len()];
        let mut approved = Vec::new();
        for (index, call) in calls.iter().enumerate() {
            if self.cancel.is_cancelled() {
                break;
            }
            let (view, authorized) = self.authorize(&call.id.0, &call.name, &call.input).await;
            match authorized {
                Ok((tool, partial)) => approved.push(Approved { index, view, tool, input: call.input.clone(), partial }),
                Err(output) => {
                    self.finish(&view, &output).await;
                    results[index] = Some(output);
                }
            }
        }
        for batch in batches(approved) {
            if self.cancel.is_cancelled() {
                break;
            }
            let runs = batch.iter().map(|call| self.execute(call));
            let outputs = futures::future::join_all(runs).await;
            for (call, output) in batch.iter().zip(outputs) {
                results[call.index] = Some(output);
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
        Message { role: Role::User, content }
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
            env: Arc::clone(self.env),
            cancel: self.cancel.child_token(),
            progress: running.map(|id| ToolProgress { call_id: id.to_owned(), events: self.events.clone() }),
        }
    }

    /// Announces the call and decides whether it may run; the error is the result for the model.
    async fn authorize(&self, id: &str, name: &str, input: &Value) -> (ToolCallView, Result<(Arc<dyn DynTool>, Option<PartialChange>), ToolOutput>) {
        let mut shown = None;
        let decision = self.decide_call(id, name, input, &mut shown).await;
        let view = shown.unwrap_or_else(|| ToolCallView { id: id.to_owned(), name: name.to_owned(), title: name.to_owned(), kind: crate::event::ToolKind::Other, input: input.clone(), locations: Vec::new(), streams_output: false });
        (view, decision)
    }

    async fn decide_call(&self, id: &str, name: &str, input: &Value, shown: &mut Option<ToolCallView>) -> Result<(Arc<dyn DynTool>, Option<PartialChange>), ToolOutput> {
        let ctx = self.context(None);
        let tool = self.env.registry.get(name);
        let description = match &tool {
            Some(tool) => tool.describe(input, &ctx),
            None => Err(format!("unknown tool `{name}`")),
        };
        let (title, kind, locations) = match (&tool, &description) {
            (Some(tool), Ok(description)) => (description.title.clone(), tool.kind(), description.locations.clone()),
            (Some(tool), Err(_)) => (name.to_owned(), tool.kind(), Vec::new()),
            (None, _) => (name.to_owned(), crate::event::ToolKind::Other, Vec::new()),
        };
        let streams_output = matches!((&tool, &description), (Some(tool), Ok(_)) if tool.streams_output(input));
        let view = ToolCallView { id: id.to_owned(), name: name.to_owned(), title, kind, input: input.clone(), locations, streams_output };
        *shown = Some(view.clone());
        self.emit(AgentEvent::ToolCallStarted(view.clone())).await;
        let (tool, description) = match (tool, description) {
            (Some(tool), Ok(description)) => (tool, description),
            (Some(_), Err(message)) => return Err(ToolOutput::error(message)),
            (None, _) => return Err(ToolOutput::error(format!("unknown tool `{name}`; use one of the tools you were given"))),
        };
        // Pre-tool hooks will feed their verdict in here.
        match self.env.permissions.decide(tool.as_ref(), &description, &self.env.workspace, None) {
            Decision::Allow => Ok((tool, None)),
            Decision::Deny { reason } => Err(ToolOutput::error(format!("Permission denied: {reason}"))),
            Decision::Ask { reason } => {
                let (reply, answer) = oneshot::channel();
                let rule = suggested_rule(tool.as_ref(), &description);
                let preview = tool.preview(input, &ctx).await;
                let change = match &preview {
                    Some(Display::Diff { path, old_text, new_text }) => Some((path.clone(), old_text.clone().unwrap_or_default(), new_text.clone())),
                    _ => None,
                };
                self.emit(AgentEvent::PermissionRequested(Box::new(PermissionRequest { tool_call: view, reason, preview, suggested_rule: rule.clone(), reply })))
                    .await;
                let answer = tokio::select! {
                    answer = answer => answer.unwrap_or(PermissionAnswer::Cancelled),
                    () = self.cancel.cancelled() => PermissionAnswer::Cancelled,
                };
                match answer {
                    PermissionAnswer::AllowOnce => Ok((tool, None)),
                    PermissionAnswer::AllowAlways => {
                        if let Err(error) = self.env.permissions.allow_always(&rule) {
                            self.emit(AgentEvent::Notice(format!("`{rule}` is allowed for this session but was not saved: {error}"))).await;
                        }
                        Ok((tool, None))
                    }
                    // What the user reviewed is what gets written, even when it is all of it:
                    // an editor may already hold the accepted hunks in its buffer.
                    PermissionAnswer::AllowHunks(accepted) => match change {
                        _ if accepted.is_empty() => Err(ToolOutput::error("The user rejected every hunk of this change; nothing was written.")),
                        Some((path, old_text, new_text)) => Ok((tool, Some(PartialChange { path, old_text, new_text, accepted }))),
                        None => Ok((tool, None)),
                    },
                    PermissionAnswer::Reject { feedback } => Err(ToolOutput::error(match feedback.filter(|text| !text.trim().is_empty()) {
                        Some(feedback) => format!("The user rejected this tool call and said: {feedback}"),
                        None => "The user rejected this tool call. Do not retry it unchanged; ask what they want instead if unsure.".into(),
                    })),
                    PermissionAnswer::Cancelled if self.cancel.is_cancelled() => Err(ToolOutput::error(CANCELLED)),
                    PermissionAnswer::Cancelled => Err(ToolOutput::error("The user dismissed the permission prompt; the call did not run.")),
                }
            }
        }
    }

    async fn execute(&self, call: &Approved) -> ToolOutput {
        let id = call.view.id.as_str();
        self.emit(AgentEvent::ToolCallUpdated { id: id.to_owned(), status: ToolStatus::InProgress, output: None, display: None, locations: None })
            .await;
        let ctx = self.context(Some(id));
        let span = tracing::info_span!("tool_call", tool = call.tool.name(), id);
        let mut output = match &call.partial {
            Some(partial) => self.apply_partial(partial).await,
            None => tracing::Instrument::instrument(call.tool.run(call.input.clone(), &ctx), span).await,
        };
        for part in &mut output.content {
            if let ResultPart::Text { text } = part {
                *text = truncate_middle(text, MAX_OUTPUT_BYTES);
            }
        }
        self.finish(&call.view, &output).await;
        output
    }

    /// Writes the accepted hunks only, through the same checks as any write, and tells the model
    /// exactly what was kept and what was refused.
    async fn apply_partial(&self, partial: &PartialChange) -> ToolOutput {
        let PartialChange { path, old_text, new_text, accepted } = partial;
        let path_text = path.display().to_string();
        let workspace = &self.env.workspace;
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
        let mut report = format!("The user reviewed the change to {path_text} hunk by hunk and kept only some of it. The file now holds what the user chose.\n");
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

    async fn emit(&self, event: AgentEvent) {
        let _ = self.events.send(event).await;
    }
}

/// How a finished call is kept for replay: output and diff bounded.
fn tool_record(view: &ToolCallView, output: &ToolOutput) -> ToolRecord {
    let diff = match &output.display {
        Some(Display::Diff { path, old_text, new_text }) => StoredDiff::bounded(path.clone(), old_text.clone(), new_text.clone()),
        _ => None,
    };
    ToolRecord {
        id: view.id.clone(),
        name: view.name.clone(),
        title: view.title.clone(),
        kind: format!("{:?}", view.kind).to_lowercase(),
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
        let parallel = call.tool.concurrency_safe();
        match batches.last_mut() {
            Some(last) if parallel && last.iter().all(|other| other.tool.concurrency_safe()) => last.push(call),
            _ => batches.push(vec![call]),
        }
    }
    batches
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;
    use std::sync::Mutex;
    use std::time::Duration;

    use schemars::JsonSchema;
    use serde::Deserialize;
    use serde_json::json;
    use tokio::sync::Barrier;

    use super::*;
    use crate::event::ToolKind;
    use crate::permission::Mode;
    use crate::tools::{CallDescription, Tool};
    use crate::workspace::Workspace;

    /// Shared by the probe tools: a log of starts and ends, and barriers that only open when
    /// every call of a batch has arrived, so a batch that ran one call at a time would hang.
    #[derive(Default)]
    struct Lab {
        log: Mutex<Vec<String>>,
        barriers: Mutex<HashMap<String, Arc<Barrier>>>,
    }

    #[derive(Deserialize, JsonSchema)]
    struct ProbeInput {
        name: String,
        #[serde(default)]
        barrier: Option<String>,
    }

    struct Parallel(Arc<Lab>);
    struct Exclusive(Arc<Lab>);

    impl Lab {
        async fn visit(&self, input: &ProbeInput) -> ToolOutput {
            self.log.lock().unwrap().push(format!("start {}", input.name));
            if let Some(name) = &input.barrier {
                let barrier = self.barriers.lock().unwrap().entry(name.clone()).or_insert_with(|| Arc::new(Barrier::new(2))).clone();
                barrier.wait().await;
            }
            self.log.lock().unwrap().push(format!("end {}", input.name));
            ToolOutput::text(format!("result of {}", input.name))
        }
    }

    impl Tool for Parallel {
        type Input = ProbeInput;
        const NAME: &'static str = "parallel";
        const DESCRIPTION: &'static str = "test";
        const KIND: ToolKind = ToolKind::Read;
        fn read_only(&self) -> bool {
            true
        }
        fn describe(&self, input: &ProbeInput, _ctx: &ToolContext) -> CallDescription {
            CallDescription::titled(input.name.clone())
        }
        async fn run(&self, input: ProbeInput, _ctx: &ToolContext) -> ToolOutput {
            self.0.visit(&input).await
        }
    }

    impl Tool for Exclusive {
        type Input = ProbeInput;
        const NAME: &'static str = "exclusive";
        const DESCRIPTION: &'static str = "test";
        const KIND: ToolKind = ToolKind::Execute;
        fn read_only(&self) -> bool {
            false
        }
        fn describe(&self, input: &ProbeInput, _ctx: &ToolContext) -> CallDescription {
            CallDescription::titled(input.name.clone())
        }
        async fn run(&self, input: ProbeInput, _ctx: &ToolContext) -> ToolOutput {
            self.0.visit(&input).await
        }
    }

    fn call(id: &str, tool: &str, name: &str, barrier: Option<&str>) -> ToolCall {
        ToolCall { id: crate::tools::ToolCallId(id.into()), name: tool.into(), input: json!({"name": name, "barrier": barrier}) }
    }

    #[tokio::test]
    async fn parallel_safe_runs_share_a_batch_and_results_keep_their_order() {
        let lab = Arc::new(Lab::default());
        let dir = tempfile::tempdir().unwrap();
        let mut env = SessionEnv::standalone(Arc::new(Workspace::new(dir.path())));
        let registry = crate::tools::Registry::default();
        registry.add(Arc::new(Parallel(Arc::clone(&lab))));
        registry.add(Arc::new(Exclusive(Arc::clone(&lab))));
        env.registry = Arc::new(registry);
        env.permissions.set_mode(Mode::Yolo);
        let env = Arc::new(env);
        let cancel = CancellationToken::new();
        let (events, mut received) = mpsc::channel(256);
        tokio::spawn(async move { while received.recv().await.is_some() {} });
        let dispatch = Dispatch { env: &env, events: &events, cancel: &cancel };
        let calls = vec![
            call("1", "parallel", "a", Some("first")),
            call("2", "parallel", "b", Some("first")),
            call("3", "exclusive", "x", None),
            call("4", "nonexistent", "?", None),
            call("5", "parallel", "c", Some("second")),
            call("6", "parallel", "d", Some("second")),
        ];
        let message = tokio::time::timeout(Duration::from_secs(10), dispatch.run(&calls)).await.expect("batches ran concurrently");
        let ids: Vec<&str> = message
            .content
            .iter()
            .map(|part| match part {
                Part::ToolResult { tool_use_id, .. } => tool_use_id.as_str(),
                _ => "",
            })
            .collect();
        assert_eq!(ids, ["1", "2", "3", "4", "5", "6"]);
        let Part::ToolResult { content, is_error, .. } = &message.content[3] else { panic!() };
        assert!(*is_error && matches!(&content[0], ResultPart::Text { text } if text.contains("unknown tool")));
        let log = lab.log.lock().unwrap().clone();
        let position = |entry: &str| log.iter().position(|logged| logged == entry).unwrap();
        assert!(position("start x") > position("end a") && position("start x") > position("end b"), "{log:?}");
        assert!(position("end x") < position("start c") && position("end x") < position("start d"), "{log:?}");
    }
}
