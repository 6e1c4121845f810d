//! The turn loop: build a request, stream the model's answer, run the tools it called, feed the
//! results back, until the model ends its turn, a limit is hit, or the user cancels.

use std::sync::Arc;

use serde_json::json;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::dispatch::{Asking, Dispatch};
use super::environment::SessionEnv;
use super::hook_points::{self, Point};
use super::limits::SpendingLimits;
use super::store::Record;
use super::{ModelSettings, StopReason, TurnError};
use crate::event::AgentEvent;
use crate::hooks::HookEvent;
use crate::llm::catalog;
use crate::llm::{HookPurpose, Message, ModelRequest, ModelStop, Note, Part, Provider, ProviderError, Role};
use crate::tools::ToolCall;

mod stream;

pub(super) use stream::Shown;

pub(super) struct Turn<'a> {
    pub env: &'a Arc<SessionEnv>,
    /// The provider and model this turn started with; a switch applies from the next turn.
    pub provider: &'a dyn Provider,
    pub model: &'a ModelSettings,
    pub system: &'a str,
    pub events: &'a mpsc::Sender<AgentEvent>,
    pub cancel: &'a CancellationToken,
    pub steering: &'a std::sync::Mutex<Vec<String>>,
    /// Set for a subagent's turn: no session hooks of its own (the parent's prompt ran them),
    /// SubagentStop instead of Stop, and the loop guard watching its calls.
    pub child: Option<&'a std::sync::Mutex<LoopGuard>>,
}

/// Stops a subagent that goes round in circles: the same calls with the same results
/// [`LoopGuard::REPEATS`] times within the last [`LoopGuard::WINDOW`] model turns.
#[derive(Default)]
pub struct LoopGuard {
    recent: std::collections::VecDeque<u64>,
    pub tripped: bool,
}

impl LoopGuard {
    const WINDOW: usize = 8;
    const REPEATS: usize = 4;

    /// Notes one model turn's calls and their results; whether the child is looping.
    fn note(&mut self, calls: &[ToolCall], results: &Message) -> bool {
        use std::hash::{Hash, Hasher};
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        for call in calls {
            call.name.hash(&mut hasher);
            call.input.to_string().hash(&mut hasher);
        }
        // The results without their call ids, which differ every time.
        for part in &results.content {
            if let Part::ToolResult { content, is_error, .. } = part {
                format!("{content:?}").hash(&mut hasher);
                is_error.hash(&mut hasher);
            }
        }
        let turn = hasher.finish();
        self.recent.push_back(turn);
        if self.recent.len() > Self::WINDOW {
            self.recent.pop_front();
        }
        self.tripped = self.recent.iter().filter(|seen| **seen == turn).count() >= Self::REPEATS;
        self.tripped
    }
}

impl Turn<'_> {
    /// Runs a turn for `prompt`. `session_start` is set for the first turn after the session
    /// started (`startup`, `resume`) or started over (`clear`, `compact`).
    pub async fn run(
        &self,
        history: &mut Vec<Message>,
        mut prompt: Vec<Part>,
        session_start: Option<crate::event::SessionStart>,
    ) -> Result<StopReason, TurnError> {
        let point = self.point();
        if self.child.is_none() && !self.prepare(&mut prompt, session_start, &point).await {
            return Ok(StopReason::Refusal);
        }
        let turn_start = history.len();
        // The turn's first change takes a checkpoint to undo it by (a child's share the
        // parent's turn).
        let checkpoints = self.env.checkpoints.as_ref().filter(|_| self.child.is_none());
        if let Some(checkpoints) = checkpoints {
            let said = prompt.iter().find_map(|part| match part {
                Part::Text { text } => Some(text.as_str()),
                _ => None,
            });
            checkpoints.begin_turn(said.unwrap_or_default(), turn_start);
        }
        // A skill typed as the prompt runs its inline commands now, inside the turn, so the
        // checkpoint covers what they change.
        if self.child.is_none()
            && let Some(reason) = self.expand_command(&mut prompt).await
        {
            self.emit(AgentEvent::Notice(format!("A hook stopped the turn: {reason}"))).await;
            if let Some(checkpoints) = checkpoints {
                checkpoints.end_turn().await;
            }
            return Ok(StopReason::EndTurn);
        }
        self.record(history, Message { role: Role::User, content: prompt });
        let outcome = self.requests(history, turn_start).await;
        if let Some(checkpoints) = checkpoints {
            checkpoints.end_turn().await;
        }
        outcome
    }

    /// The model requests of a turn whose prompt is recorded at `turn_start`, and the tool calls
    /// they make, until the model ends the turn or a limit is hit.
    async fn requests(&self, history: &mut Vec<Message>, turn_start: usize) -> Result<StopReason, TurnError> {
        let mut stop_hook_active = false;
        let mut turn_start = turn_start;
        // The provider said the context overflowed and a compaction followed: once per turn.
        let mut compacted_for_overflow = false;
        // The length of the conversation after the last compaction of this turn, so one that
        // left it above the threshold is not run again before anything was added.
        let mut compacted_at: Option<usize> = None;
        for _ in 0..self.model.max_turn_requests {
            self.take_steering(history);
            if let Some(reason) = self.env.limits.budget.exceeded(&self.env.usage.session_spent()) {
                self.emit(AgentEvent::Notice(reason)).await;
                return Ok(StopReason::BudgetExhausted);
            }
            // A snapshot: tools added or removed meanwhile take part from the next request.
            let tools = self.env.registry.specs();
            if compacted_at.is_none_or(|at| history.len() > at) && self.near_window(history, &tools) {
                match self.compact_within_turn(history, &mut turn_start, super::compaction::Trigger::Auto).await {
                    Ok(true) => compacted_at = Some(history.len()),
                    Ok(false) => {}
                    Err(_) if self.cancel.is_cancelled() => return Ok(StopReason::Cancelled),
                    // A failed compaction is reported; the request may still fit.
                    Err(_) => compacted_at = Some(history.len()),
                }
            }
            let request = ModelRequest {
                model: &self.model.model,
                system: self.system,
                messages: history,
                tools: &tools,
                max_tokens: self.model.max_tokens,
                thought_level: self.model.thought_level,
                cache_key: Some(&self.env.tools.session_id),
                long_cache: self.env.limits.long_cache,
            };
            let response = match self.stream_response(&request, Shown::Live).await {
                Ok(response) => response,
                Err(ProviderError::ContextOverflow { message }) if !compacted_for_overflow => {
                    compacted_for_overflow = true;
                    tracing::warn!(%message, "the context overflowed; compacting and trying again");
                    match self.compact_within_turn(history, &mut turn_start, super::compaction::Trigger::Overflow).await
                    {
                        Ok(true) => {
                            compacted_at = Some(history.len());
                            continue;
                        }
                        Ok(false) | Err(_) => {
                            self.rewind(history, turn_start);
                            return Err(ProviderError::ContextOverflow { message }.into());
                        }
                    }
                }
                Err(error) => {
                    // The failed prompt stays out of history so a retry of the prompt starts clean.
                    self.rewind(history, turn_start);
                    return Err(error.into());
                }
            };
            let tool_uses = ToolCall::all_in(&response.message);
            if !response.message.content.is_empty() {
                self.record(history, response.message);
            }
            let Some(stop) = response.stop else {
                // The stream was cancelled: keep what was said, close any tool calls it opened.
                if !tool_uses.is_empty() {
                    self.record(history, Dispatch::cancelled_results(&tool_uses));
                }
                return Ok(StopReason::Cancelled);
            };
            if matches!(stop, ModelStop::Refusal) {
                // A refused prompt and everything after it is left out of later requests.
                self.rewind(history, turn_start);
                return Ok(StopReason::Refusal);
            }
            let ended = if tool_uses.is_empty() {
                self.answered(&stop, history, &mut stop_hook_active).await
            } else {
                self.run_tools(history, &tool_uses).await
            };
            if let Some(reason) = ended {
                return Ok(reason);
            }
        }
        Ok(StopReason::MaxTurnRequests)
    }

    /// The model answered without calling a tool: the turn ends, unless the user spoke
    /// meanwhile or a Stop hook sends the model back to work with its reason.
    async fn answered(
        &self,
        stop: &ModelStop,
        history: &mut Vec<Message>,
        stop_hook_active: &mut bool,
    ) -> Option<StopReason> {
        if matches!(stop, ModelStop::MaxTokens) {
            return Some(StopReason::MaxTokens);
        }
        if self.steering.lock().is_ok_and(|steering| !steering.is_empty()) {
            return None;
        }
        let Some(feedback) = self.stop_hooks(history, *stop_hook_active).await else {
            return Some(StopReason::EndTurn);
        };
        *stop_hook_active = true;
        self.record(history, Message { role: Role::User, content: feedback });
        None
    }

    /// Runs the calls of a response and records their results; says why the turn ends, if it
    /// does (cancelled, a hook halted it, a child looping).
    async fn run_tools(&self, history: &mut Vec<Message>, tool_uses: &[ToolCall]) -> Option<StopReason> {
        let dispatch = Dispatch { env: self.env, events: self.events, cancel: self.cancel, asking: Asking::User };
        let dispatched = dispatch.run(tool_uses).await;
        let looping = self
            .child
            .and_then(|guard| guard.lock().ok().map(|mut guard| guard.note(tool_uses, &dispatched.results)))
            .unwrap_or(false);
        self.record(history, dispatched.results);
        if self.cancel.is_cancelled() {
            return Some(StopReason::Cancelled);
        }
        if let Some(reason) = dispatched.halt {
            self.emit(AgentEvent::Notice(format!("A hook stopped the turn: {reason}"))).await;
            return Some(StopReason::EndTurn);
        }
        looping.then_some(StopReason::MaxTurnRequests)
    }

    /// What a prompt of the user's goes through before the model sees it: the project's
    /// approval, servers still connecting, notices, SessionStart and UserPromptSubmit hooks and
    /// MCP resources it mentions. A subagent's prompt comes from its parent and skips all this.
    async fn prepare(
        &self,
        prompt: &mut Vec<Part>,
        session_start: Option<crate::event::SessionStart>,
        point: &Point<'_>,
    ) -> bool {
        // MCP servers still connecting get a bounded wait, so their tools are in this request.
        let late = self.env.mcp.settle(crate::mcp::McpServers::connect_timeout()).await;
        for notice in self.env.notices.take().into_iter().chain(late) {
            self.emit(AgentEvent::Notice(notice)).await;
        }
        // Tools that arrived after the list was sent are told of here, after the cached prefix.
        let arrived = self.env.registry.take_news();
        if !arrived.is_empty() {
            let text = format!(
                "More tools are offered on demand (find their schemas with tool_search, call them with use_tool): {}.",
                arrived.join(", ")
            );
            prompt.push(Part::Note(crate::llm::Note::SystemNote { text }));
        }
        if let Some(source) = session_start.map(crate::event::SessionStart::id) {
            let mut fields = serde_json::Map::new();
            fields.insert("source".into(), json!(source));
            fields.insert("model".into(), json!(self.model.model));
            let started = self.env.hooks.run(HookEvent::SessionStart, &[source], fields, point).await;
            let context = hook_points::notes(HookPurpose::Context, &started.context).into_iter().map(Part::Note);
            prompt.splice(0..0, context);
        }
        let mut fields = serde_json::Map::new();
        fields.insert("prompt".into(), json!(prompt_text(prompt)));
        let submitted = self.env.hooks.run(HookEvent::UserPromptSubmit, &[], fields, point).await;
        if let Some(reason) = submitted.block.or(submitted.stop) {
            // The prompt is refused: it never reaches the model or the conversation.
            self.emit(AgentEvent::Notice(format!("A hook blocked this prompt: {reason}"))).await;
            return false;
        }
        prompt.extend(hook_points::notes(HookPurpose::Context, &submitted.context).into_iter().map(Part::Note));
        // `@server:uri` mentions of MCP resources come with the resource's contents.
        let mentioned = self.env.mcp.mentioned_resources(&prompt_text(prompt)).await;
        prompt.extend(mentioned.into_iter().map(Part::Note));
        true
    }

    /// The Stop hooks' word when the model ends its turn: the feedback to continue with, if a
    /// hook blocked the stop.
    async fn stop_hooks(&self, history: &[Message], stop_hook_active: bool) -> Option<Vec<Part>> {
        let mut fields = serde_json::Map::new();
        fields.insert("stop_hook_active".into(), json!(stop_hook_active));
        let last = history
            .last()
            .filter(|message| message.role == Role::Assistant)
            .map(|message| prompt_text(&message.content))
            .unwrap_or_default();
        fields.insert("last_assistant_message".into(), json!(last));
        let event = if self.child.is_some() { HookEvent::SubagentStop } else { HookEvent::Stop };
        let outcome = self.env.hooks.run(event, &[], fields, &self.point()).await;
        if outcome.stop.is_some() {
            return None;
        }
        let mut feedback = outcome.feedback;
        if feedback.is_empty() {
            feedback.extend(
                outcome.block.map(|reason| crate::hooks::HookText { source: "Stop hook".into(), text: reason }),
            );
        }
        let parts: Vec<Part> =
            hook_points::notes(HookPurpose::Feedback, &feedback).into_iter().map(Part::Note).collect();
        (!parts.is_empty()).then_some(parts)
    }

    /// Whether the next request, `history` with the system prompt and `tools`, comes near the
    /// window (the compaction threshold's share of it), when compaction may step in on its own.
    fn near_window(&self, history: &[Message], tools: &[crate::llm::ToolSpec]) -> bool {
        let settings = self.env.limits.compaction;
        if !settings.auto {
            return false;
        }
        let fixed = (self.system.len() + serde_json::to_string(tools).map_or(0, |json| json.len())) as u64 / 4;
        let estimate = fixed + super::compaction::estimated_tokens(history);
        estimate as f64 > self.context_window() as f64 * settings.threshold()
    }

    /// An automatic compaction in the middle of a turn. Whether it compacted; where the turn's
    /// prompt now is (the summary replaced it, or it is kept) goes to `turn_start`, for a
    /// rewind of a prompt that fails later.
    async fn compact_within_turn(
        &self,
        history: &mut Vec<Message>,
        turn_start: &mut usize,
        trigger: super::compaction::Trigger,
    ) -> Result<bool, TurnError> {
        let before = history.len();
        let outcome = self.compact(history, trigger, "").await;
        match outcome {
            Ok(super::compaction::Compacted::Done { kept }) => {
                // The messages of this turn that were kept are the last ones; the summary stands
                // for the rest, which a failed prompt can no longer take back.
                let kept_of_turn = (before - *turn_start).min(kept);
                *turn_start = history.len() - kept_of_turn;
                Ok(true)
            }
            Ok(super::compaction::Compacted::Skipped(reason)) => {
                self.emit(AgentEvent::Notice(format!(
                    "The conversation nears the model's window but was not compacted: {reason}"
                )))
                .await;
                Ok(false)
            }
            Ok(super::compaction::Compacted::Cancelled) => Ok(false),
            Err(error) => {
                self.emit(AgentEvent::Notice(format!("The conversation could not be compacted: {error}"))).await;
                Err(error)
            }
        }
    }

    /// The model's window: as settings name it, else as the catalog knows it.
    pub(super) fn context_window(&self) -> u64 {
        self.env.limits.context_window.unwrap_or_else(|| catalog::context_window(&self.model.model))
    }

    pub(super) fn point(&self) -> Point<'_> {
        Point { env: self.env, events: self.events, cancel: self.cancel }
    }

    /// Adds what arrived while the turn ran (the user's words for it, background tasks'
    /// results) to the conversation: into the pending tool results or the prompt, or as a user
    /// message of its own after an answer.
    fn take_steering(&self, history: &mut Vec<Message>) {
        let said: Vec<String> =
            self.steering.lock().map(|mut steering| std::mem::take(&mut *steering)).unwrap_or_default();
        let mut parts: Vec<Part> = said.into_iter().map(|text| Part::Note(Note::Interjection { text })).collect();
        // Background tasks that finished meanwhile report with the next request (a child's
        // turn leaves them to its parent).
        if self.child.is_none() {
            parts.extend(self.env.tasks.take_finished().iter().map(|report| Part::Note(report.notification())));
        }
        if parts.is_empty() {
            return;
        }
        let before_last = history.len().saturating_sub(1);
        match history.last_mut() {
            Some(last) if last.role == Role::User => {
                last.content.extend(parts);
                if let Some(log) = &self.env.log {
                    // The session file records the whole amended message.
                    log.append(&Record::Rewind { to: before_last });
                    log.append(&Record::Message { message: last.clone() });
                }
            }
            _ => self.record(history, Message { role: Role::User, content: parts }),
        }
    }

    /// Adds a message to the conversation and to the session file.
    fn record(&self, history: &mut Vec<Message>, message: Message) {
        if let Some(log) = &self.env.log {
            log.append(&Record::Message { message: message.clone() });
        }
        history.push(message);
    }

    fn rewind(&self, history: &mut Vec<Message>, to: usize) {
        history.truncate(to);
        if let Some(log) = &self.env.log {
            log.append(&Record::Rewind { to });
        }
    }

    pub(super) async fn emit(&self, event: AgentEvent) {
        if let Some(problem) = self.env.log.as_ref().and_then(|log| log.untold_failure()) {
            let _ = self.events.send(AgentEvent::Notice(problem)).await;
        }
        // A front end that stopped listening loses nothing it could still show.
        let _ = self.events.send(event).await;
    }

    async fn emit_all<const N: usize>(&self, events: [Option<AgentEvent>; N]) {
        for event in events.into_iter().flatten() {
            self.emit(event).await;
        }
    }
}

/// The text of a message's parts, as hooks read a prompt.
fn prompt_text(parts: &[Part]) -> String {
    parts
        .iter()
        .filter_map(|part| match part {
            Part::Text { text } => Some(text.as_str()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("\n")
}
