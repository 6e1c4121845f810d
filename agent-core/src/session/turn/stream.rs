//! One model response, streamed: the stream opened (retried when that can help), read into an
//! assistant message, its text and thinking forwarded to the user as they come, a stall or a
//! broken stream reported.

use futures::StreamExt;

use super::Turn;
use crate::event::AgentEvent;
use crate::llm::catalog;
use crate::llm::retry::RetryPolicy;
use crate::llm::{EventStream, Message, ModelRequest, ModelStop, Part, ProviderError, Role, StreamEvent};
use crate::session::paced_text::{PacedText, TextKind};

/// What one streamed model response amounted to.
pub(in crate::session) struct ModelResponse {
    pub message: Message,
    pub stop: Option<ModelStop>,
}

/// Whether a response streams to the user as it comes (an answer) or is only read (a summary).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(in crate::session) enum Shown {
    Live,
    Not,
}

/// A response being read: its parts so far, and whether any of it was shown.
#[derive(Default)]
struct Reading {
    parts: Vec<Part>,
    streamed_output: bool,
}

impl Turn<'_> {
    /// Streams one response, retrying the opening of the stream when that can help. Returns a
    /// response with `stop: None` when the user cancelled.
    pub(in crate::session) async fn stream_response(
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
        let mut reading = Reading::default();
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
                () = &mut cancelled => return Ok(ModelResponse { message: assistant(reading.parts), stop: None }),
                next = stream.next() => {
                    last_event = tokio::time::Instant::now();
                    next
                }
                () = &mut idle => {
                    if last_event.elapsed() >= timeout {
                        return Err((ProviderError::Stalled { seconds: timeout.as_secs() }, reading.streamed_output));
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
                Some(Err(error)) => return Err((error, reading.streamed_output)),
                None => {
                    return Err((
                        ProviderError::StreamBroken { message: "the stream ended without a stop reason".into() },
                        reading.streamed_output,
                    ));
                }
            };
            if let Some(stop) = self.take_event(event, &mut reading, paced, shown).await {
                return Ok(ModelResponse { message: assistant(reading.parts), stop: Some(stop) });
            }
        }
    }

    /// Adds one event to the response being read, shows what the user sees of it, and returns
    /// the stop reason when the response ended.
    async fn take_event(
        &self,
        event: StreamEvent,
        reading: &mut Reading,
        paced: &mut PacedText,
        shown: Shown,
    ) -> Option<ModelStop> {
        let parts = &mut reading.parts;
        match event {
            StreamEvent::TextDelta(text) if shown == Shown::Not => append_text(parts, &text),
            StreamEvent::ThinkingDelta(text) if shown == Shown::Not => append_thinking(parts, &text),
            StreamEvent::TextDelta(text) => {
                reading.streamed_output = true;
                append_text(parts, &text);
                let (other, now) = paced.push(TextKind::Message, &text);
                self.emit_all([other, now]).await;
            }
            StreamEvent::ThinkingDelta(text) => {
                reading.streamed_output = true;
                append_thinking(parts, &text);
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
                    let spent = self.env.usage.spent();
                    let session_cost_usd = cost_usd.map(|_| spent.cost_usd);
                    let context_window = self.context_window();
                    let event =
                        AgentEvent::Usage { usage, context_window, cost_usd, session_cost_usd, spent: spent.usage };
                    // Text read before goes out before.
                    self.emit_all([paced.take(), Some(event)]).await;
                }
            }
            StreamEvent::Stop(stop) => return Some(stop),
        }
        None
    }
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
