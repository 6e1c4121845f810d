//! The turn loop: build a request, stream the model's answer, run the tools it called, feed the
//! results back, until the model ends its turn, a limit is hit, or the user cancels.

use std::sync::Arc;

use futures::StreamExt;
use serde_json::json;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::dispatch::{Asking, Dispatch};
use super::environment::SessionEnv;
use super::hook_points::{self, Point};
use super::limits::SpendingLimits;
use super::paced_text::{PacedText, TextKind};
use super::store::Record;
use super::{ModelSettings, StopReason, TurnError};
use crate::event::AgentEvent;
use crate::hooks::HookEvent;
use crate::llm::catalog;
use crate::llm::retry::RetryPolicy;
use crate::llm::{EventStream, Message, ModelRequest, ModelStop, Part, Provider, ProviderError, Role, StreamEvent};
use crate::tools::ToolCall;

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

/// What one streamed model response amounted to.
pub(super) struct ModelResponse {
    pub message: Message,
    pub stop: Option<ModelStop>,
}

/// Whether a response streams to the user as it comes (an answer) or is only read (a summary).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Shown {
    Live,
    Not,
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
                Part::Text { text } if !text.starts_with('<') => Some(text.as_str()),
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
            if let Some(reason) = self.env.limits.budget.exceeded(&self.env.usage.spent()) {
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
            match stop {
                ModelStop::Refusal => {
                    // A refused prompt and everything after it is left out of later requests.
                    self.rewind(history, turn_start);
                    return Ok(StopReason::Refusal);
                }
                ModelStop::MaxTokens if tool_uses.is_empty() => return Ok(StopReason::MaxTokens),
                // The user spoke while the model was answering: the turn goes on with it.
                _ if tool_uses.is_empty() && self.steering.lock().is_ok_and(|steering| !steering.is_empty()) => {
                    continue;
                }
                _ if tool_uses.is_empty() => {
                    // Stop hooks may send the model back to work, with their reason.
                    match self.stop_hooks(history, stop_hook_active).await {
                        Some(feedback) => {
                            stop_hook_active = true;
                            self.record(history, Message { role: Role::User, content: feedback });
                            continue;
                        }
                        None => return Ok(StopReason::EndTurn),
                    }
                }
                _ => {}
            }
            let dispatch = Dispatch { env: self.env, events: self.events, cancel: self.cancel, asking: Asking::User };
            let dispatched = dispatch.run(&tool_uses).await;
            let looping = self
                .child
                .and_then(|guard| guard.lock().ok().map(|mut guard| guard.note(&tool_uses, &dispatched.results)))
                .unwrap_or(false);
            self.record(history, dispatched.results);
            if self.cancel.is_cancelled() {
                return Ok(StopReason::Cancelled);
            }
            if let Some(reason) = dispatched.halt {
                self.emit(AgentEvent::Notice(format!("A hook stopped the turn: {reason}"))).await;
                return Ok(StopReason::EndTurn);
            }
            if looping {
                return Ok(StopReason::MaxTurnRequests);
            }
        }
        Ok(StopReason::MaxTurnRequests)
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
        if let Some(source) = session_start.map(crate::event::SessionStart::id) {
            let mut fields = serde_json::Map::new();
            fields.insert("source".into(), json!(source));
            fields.insert("model".into(), json!(self.model.model));
            let started = self.env.hooks.run(HookEvent::SessionStart, &[source], fields, point).await;
            let context = hook_points::wrapped("context", &started.context).into_iter().map(|text| Part::Text { text });
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
        prompt.extend(hook_points::wrapped("context", &submitted.context).into_iter().map(|text| Part::Text { text }));
        // `@server:uri` mentions of MCP resources come with the resource's contents.
        let mentioned = self.env.mcp.mentioned_resources(&prompt_text(prompt)).await;
        prompt.extend(mentioned.into_iter().map(|text| Part::Text { text }));
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
            hook_points::wrapped("feedback", &feedback).into_iter().map(|text| Part::Text { text }).collect();
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

    /// Streams one response, retrying the opening of the stream when that can help. Returns a
    /// response with `stop: None` when the user cancelled.
    pub(super) async fn stream_response(
        &self,
        request: &ModelRequest<'_>,
        shown: Shown,
    ) -> Result<ModelResponse, ProviderError> {
        let policy = RetryPolicy::default();
        let mut attempt = 1;
        loop {
            // A server that accepts and never answers counts as a stalled stream.
            let idle = self.env.limits.stream_idle_timeout;
            let opened = tokio::select! {
                opened = tokio::time::timeout(idle, self.provider.stream(request)) => opened.unwrap_or(Err(ProviderError::Stalled { seconds: idle.as_secs() })),
                () = self.cancel.cancelled() => return Ok(ModelResponse { message: assistant(Vec::new()), stop: None }),
            };
            let result = match opened {
                Ok(stream) => self.consume(stream, shown).await,
                Err(error) => Err((error, false)),
            };
            let (error, streamed_output) = match result {
                Ok(response) => return Ok(response),
                Err(failure) => failure,
            };
            // Output already shown to the user cannot be taken back: report instead of retrying.
            let delay = if streamed_output { None } else { policy.delay_after(&error, attempt) };
            let Some(delay) = delay else { return Err(error) };
            tracing::warn!(%error, attempt, ?delay, "model call failed; retrying");
            self.emit(AgentEvent::Notice(format!(
                "{error}; retrying in {:.1} s (attempt {} of {})",
                delay.as_secs_f64(),
                attempt + 1,
                policy.max_attempts
            )))
            .await;
            tokio::select! {
                () = tokio::time::sleep(delay) => {}
                () = self.cancel.cancelled() => return Ok(ModelResponse { message: assistant(Vec::new()), stop: None }),
            }
            attempt += 1;
        }
    }

    /// Reads the stream into an assistant message, forwarding deltas as events (text paced, see
    /// `PacedText`). On failure says whether any output had already been shown.
    async fn consume(&self, stream: EventStream, shown: Shown) -> Result<ModelResponse, (ProviderError, bool)> {
        let mut paced = PacedText::default();
        let read = self.read_stream(stream, &mut paced, shown).await;
        // However the stream ended, text already read is shown.
        self.emit_all([paced.take()]).await;
        read
    }

    async fn read_stream(
        &self,
        mut stream: EventStream,
        paced: &mut PacedText,
        shown: Shown,
    ) -> Result<ModelResponse, (ProviderError, bool)> {
        let mut parts: Vec<Part> = Vec::new();
        let mut streamed_output = false;
        // Made once: a fast stream would otherwise register and drop a waiter per delta.
        let cancelled = self.cancel.cancelled();
        tokio::pin!(cancelled);
        // A stream that stays silent this long is given up. Each event only notes its time; the
        // timer is moved when it fires early, not per event of a fast stream.
        let timeout = self.env.limits.stream_idle_timeout;
        let mut last_event = tokio::time::Instant::now();
        let idle = tokio::time::sleep(timeout);
        tokio::pin!(idle);
        loop {
            let next = tokio::select! {
                biased;
                () = &mut cancelled => return Ok(ModelResponse { message: assistant(parts), stop: None }),
                next = stream.next() => {
                    last_event = tokio::time::Instant::now();
                    next
                }
                () = &mut idle => {
                    if last_event.elapsed() >= timeout {
                        return Err((ProviderError::Stalled { seconds: timeout.as_secs() }, streamed_output));
                    }
                    idle.as_mut().reset(last_event + timeout);
                    continue;
                }
                () = paced.frame_ends() => {
                    self.emit_all([paced.take()]).await;
                    continue;
                }
            };
            let event = match next {
                Some(Ok(event)) => event,
                Some(Err(error)) => return Err((error, streamed_output)),
                None => {
                    return Err((
                        ProviderError::StreamBroken { message: "the stream ended without a stop reason".into() },
                        streamed_output,
                    ));
                }
            };
            match event {
                StreamEvent::TextDelta(text) if shown == Shown::Not => append_text(&mut parts, &text),
                StreamEvent::ThinkingDelta(text) if shown == Shown::Not => append_thinking(&mut parts, &text),
                StreamEvent::TextDelta(text) => {
                    streamed_output = true;
                    append_text(&mut parts, &text);
                    let (other, now) = paced.push(TextKind::Message, &text);
                    self.emit_all([other, now]).await;
                }
                StreamEvent::ThinkingDelta(text) => {
                    streamed_output = true;
                    append_thinking(&mut parts, &text);
                    let (other, now) = paced.push(TextKind::Thought, &text);
                    self.emit_all([other, now]).await;
                }
                StreamEvent::ThinkingSignature(signature) => {
                    if let Some(Part::Thinking { signature: slot, .. }) =
                        parts.iter_mut().rev().find(|part| matches!(part, Part::Thinking { .. }))
                    {
                        *slot = Some(signature);
                    }
                }
                StreamEvent::ToolUse { id, name, input } => parts.push(Part::ToolUse { id, name, input }),
                StreamEvent::Usage(usage) => {
                    let cost_usd = catalog::cost_usd(&self.model.model, &usage);
                    self.env.usage.add(&usage, cost_usd);
                    // A summary's request says nothing of the conversation's context: counted, not shown.
                    if shown == Shown::Live {
                        let session_cost_usd = cost_usd.map(|_| self.env.usage.spent().cost_usd);
                        let event = AgentEvent::Usage {
                            usage,
                            context_window: self.context_window(),
                            cost_usd,
                            session_cost_usd,
                        };
                        // Text read before goes out before.
                        self.emit_all([paced.take(), Some(event)]).await;
                    }
                }
                StreamEvent::Stop(stop) => return Ok(ModelResponse { message: assistant(parts), stop: Some(stop) }),
            }
        }
    }

    /// Adds what arrived while the turn ran (the user's words for it, background tasks'
    /// results) to the conversation: into the pending tool results or the prompt, or as a user
    /// message of its own after an answer.
    fn take_steering(&self, history: &mut Vec<Message>) {
        let said: Vec<String> =
            self.steering.lock().map(|mut steering| std::mem::take(&mut *steering)).unwrap_or_default();
        let mut parts: Vec<Part> = said
            .into_iter()
            .map(|text| Part::Text { text: format!("<user-interjection>{text}</user-interjection>") })
            .collect();
        // Background tasks that finished meanwhile report with the next request (a child's
        // turn leaves them to its parent).
        if self.child.is_none() {
            parts
                .extend(self.env.tasks.take_finished().iter().map(|report| Part::Text { text: report.notification() }));
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

fn assistant(content: Vec<Part>) -> Message {
    Message { role: Role::Assistant, content }
}

fn append_text(parts: &mut Vec<Part>, delta: &str) {
    if let Some(Part::Text { text }) = parts.last_mut() {
        text.push_str(delta);
    } else {
        parts.push(Part::Text { text: delta.to_owned() });
    }
}

fn append_thinking(parts: &mut Vec<Part>, delta: &str) {
    if let Some(Part::Thinking { text, .. }) = parts.last_mut() {
        text.push_str(delta);
    } else {
        parts.push(Part::Thinking { text: delta.to_owned(), signature: None });
    }
}
