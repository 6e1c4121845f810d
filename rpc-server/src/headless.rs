//! `larik -p "prompt"`: one turn in the current directory, the answer on stdout, and a turn more
//! for each round of background tasks' results. Calls that would need approval are denied at
//! once (nobody is there to ask), and the model is told why.

use std::collections::HashMap;
use std::io::Write;

use crate::side_by_side::side_by_side;
use larik_core::Part;
use larik_core::commands::{Command, Reply};
use larik_core::event::{AgentEvent, CompactionState, PermissionAnswer, ToolStatus};
use larik_core::session::limits::Spent;
use larik_core::session::{Session, SessionConfig, StopReason};
use serde_json::json;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum OutputFormat {
    /// The answer as plain text, streamed.
    Text,
    /// One JSON object when the turn ends.
    Json,
    /// One JSON object per event, one per line.
    StreamJson,
}

const HEADLESS_DENIAL: &str = "Headless mode (larik -p) cannot ask for approval, so this call was denied. Use tools that need no approval, or tell the user what to run.";

/// Runs the turn; returns the process exit code.
pub async fn run(prompt: &str, format: OutputFormat, env: HashMap<String, String>) -> anyhow::Result<i32> {
    let cwd = std::env::current_dir()?;
    let (config, _) = SessionConfig::from_settings(cwd, &env, std::env::current_exe().ok())?;
    let cancel = CancellationToken::new();
    let session = Session::new(config, &cancel);
    let mut transcript = Transcript { format, answer: String::new(), tool_calls: Vec::new() };
    let outcome = match larik_core::commands::parse(prompt) {
        // `larik -p /mcp` and the other built-in commands answer as in the editor.
        Some(command) => built_in(&session, command, &mut transcript, &cancel).await,
        None => turns(&session, prompt, &mut transcript, &cancel).await,
    };
    session.end("other").await;
    match outcome {
        Ok(stop) => {
            transcript.finish(stop, &session.spending().spent);
            Ok(0)
        }
        Err(error) => {
            let _ = writeln!(std::io::stderr(), "larik: {error}");
            if matches!(format, OutputFormat::Json | OutputFormat::StreamJson) {
                emit_line(&json!({"type": "error", "message": error.to_string()}));
            }
            Ok(1)
        }
    }
}

/// A skill, custom command or MCP prompt expanded (`larik -p "/commit"`, as in the editor), or
/// the prompt as typed: its turn, then a turn more for each round of background tasks' results.
async fn turns(
    session: &Session,
    prompt: &str,
    transcript: &mut Transcript,
    cancel: &CancellationToken,
) -> anyhow::Result<StopReason> {
    let mut text = session.expand_command(prompt).await?.unwrap_or_else(|| prompt.to_owned());
    // The process ends only once every background task finished and its result was delivered:
    // each round of results gets a turn of its own.
    loop {
        let (events_tx, events_rx) = mpsc::channel(256);
        let turn = session.prompt(vec![Part::Text { text }], events_tx, cancel.child_token());
        let outcome = side_by_side(turn, transcript.print(events_rx)).await;
        if outcome.is_err() || !session.background_pending() {
            return Ok(outcome?);
        }
        session.background_settled(cancel).await;
        text = larik_core::session::BACKGROUND_RESULTS.to_owned();
    }
}

/// A built-in command; its reply is the answer.
async fn built_in(
    session: &Session,
    command: Command,
    transcript: &mut Transcript,
    cancel: &CancellationToken,
) -> anyhow::Result<StopReason> {
    let (events_tx, events_rx) = mpsc::channel(256);
    let run = session.run_command(command, events_tx, cancel.child_token());
    let reply = side_by_side(run, transcript.print(events_rx)).await?;
    transcript.event(AgentEvent::TextDelta(reply.to_string()));
    Ok(match reply {
        Reply::Compacted(stop) => stop,
        _ => StopReason::EndTurn,
    })
}

struct Transcript {
    format: OutputFormat,
    answer: String,
    tool_calls: Vec<serde_json::Value>,
}

impl Transcript {
    async fn print(&mut self, mut events: mpsc::Receiver<AgentEvent>) {
        while let Some(event) = events.recv().await {
            // A subagent's calls show (and are denied) as the parent's, labelled.
            if let Some(event) = larik_core::subagents::flattened(event) {
                self.event(event);
            }
        }
    }

    fn event(&mut self, event: AgentEvent) {
        match event {
            AgentEvent::TextDelta(text) => {
                match self.format {
                    OutputFormat::Text => {
                        let mut stdout = std::io::stdout().lock();
                        let _ = stdout.write_all(text.as_bytes());
                        let _ = stdout.flush();
                    }
                    OutputFormat::StreamJson => emit_line(&json!({"type": "text", "text": text})),
                    OutputFormat::Json => {}
                }
                self.answer.push_str(&text);
            }
            AgentEvent::ThinkingDelta(text) => {
                if let OutputFormat::StreamJson = self.format {
                    emit_line(&json!({"type": "thinking", "text": text}));
                }
            }
            AgentEvent::ToolCallStarted(view) => {
                let call = json!({"type": "tool_call", "id": view.id, "name": view.name, "title": view.title, "input": view.input});
                if let OutputFormat::StreamJson = self.format {
                    emit_line(&call);
                }
                self.tool_calls.push(call);
            }
            AgentEvent::ToolCallUpdated { id, status, output, .. } => {
                if matches!(status, ToolStatus::Completed | ToolStatus::Failed) {
                    let failed = status == ToolStatus::Failed;
                    if let Some(call) = self.tool_calls.iter_mut().find(|call| call["id"] == id) {
                        call["status"] = json!(if failed { "failed" } else { "completed" });
                    }
                    if let OutputFormat::StreamJson = self.format {
                        emit_line(&json!({"type": "tool_result", "id": id, "is_error": failed, "output": output}));
                    }
                }
            }
            AgentEvent::ToolTerminal { .. } | AgentEvent::ToolProgressNote { .. } => {}
            AgentEvent::ToolOutput { id, text } => {
                if let OutputFormat::StreamJson = self.format {
                    emit_line(&json!({"type": "tool_output", "id": id, "text": text}));
                }
            }
            AgentEvent::PermissionRequested(request) => {
                let _ = writeln!(
                    std::io::stderr(),
                    "larik: denied {} ({}): headless mode cannot ask for approval",
                    request.tool_call.title,
                    request.reason
                );
                if let OutputFormat::StreamJson = self.format {
                    emit_line(
                        &json!({"type": "permission_denied", "id": request.tool_call.id, "title": request.tool_call.title}),
                    );
                }
                let _ = request.reply.send(PermissionAnswer::Reject { feedback: Some(HEADLESS_DENIAL.into()) });
            }
            // Subagents' events came flattened (see `run`).
            AgentEvent::Usage { .. }
            | AgentEvent::TitleChanged(_)
            | AgentEvent::CommandsChanged { .. }
            | AgentEvent::ChildStarted { .. }
            | AgentEvent::Child { .. }
            | AgentEvent::ChildEnded { .. } => {}
            AgentEvent::Notice(message) => {
                let _ = writeln!(std::io::stderr(), "larik: {message}");
            }
            AgentEvent::Compaction { state, .. } => match state {
                CompactionState::Completed { .. } => {
                    let _ =
                        writeln!(std::io::stderr(), "larik: the conversation was compacted; it goes on from a summary");
                }
                CompactionState::Failed { error } => {
                    let _ = writeln!(std::io::stderr(), "larik: the conversation could not be compacted: {error}");
                }
                CompactionState::Started | CompactionState::Cancelled => {}
            },
        }
    }

    /// The end of the output: with JSON, the answer, how the turn ended and what the session
    /// spent (its subagents included), in the fields Claude Code's `-p` writes.
    fn finish(&self, stop: StopReason, spent: &Spent) {
        let stop_reason = match stop {
            StopReason::EndTurn => "end_turn",
            StopReason::MaxTokens => "max_tokens",
            StopReason::MaxTurnRequests => "max_turn_requests",
            StopReason::Refusal => "refusal",
            StopReason::Cancelled => "cancelled",
            StopReason::BudgetExhausted => "budget_exhausted",
        };
        match self.format {
            OutputFormat::Text => {
                if !self.answer.ends_with('\n') {
                    let _ = std::io::stdout().write_all(b"\n");
                }
            }
            OutputFormat::Json => emit_line(&with_spending(
                json!({"result": self.answer, "stop_reason": stop_reason, "tool_calls": self.tool_calls}),
                spent,
            )),
            OutputFormat::StreamJson => emit_line(&with_spending(
                json!({"type": "result", "result": self.answer, "stop_reason": stop_reason}),
                spent,
            )),
        }
    }
}

/// `usage` by how it is billed, and `total_cost_usd` where the model's price is known.
fn with_spending(mut result: serde_json::Value, spent: &Spent) -> serde_json::Value {
    let usage = &spent.usage;
    result["usage"] = json!({
        "input_tokens": usage.input_tokens,
        "cache_creation_input_tokens": usage.cache_write_tokens,
        "cache_read_input_tokens": usage.cache_read_tokens,
        "output_tokens": usage.output_tokens,
    });
    if spent.cost_usd > 0.0 {
        result["total_cost_usd"] = json!(spent.cost_usd);
    }
    result
}

fn emit_line(value: &serde_json::Value) {
    let mut stdout = std::io::stdout().lock();
    let _ = writeln!(stdout, "{value}");
    let _ = stdout.flush();
}
