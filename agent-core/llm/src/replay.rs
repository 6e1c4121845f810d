//! A provider that plays the model's side from a recording: for the offline demo, bug reports and
//! tests. Each model call takes the next recorded response; running out is an error, not silence.

use std::sync::Mutex;
use std::time::Duration;

use futures::StreamExt;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{EventStream, ModelRequest, ModelStop, Provider, ProviderError, StreamEvent, Usage};

/// One recorded model response.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct RecordedResponse {
    pub thinking: Option<String>,
    pub text: Option<String>,
    pub tool_calls: Vec<RecordedToolCall>,
    pub stop_reason: Option<ModelStop>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RecordedToolCall {
    #[serde(default)]
    pub id: Option<String>,
    pub name: String,
    #[serde(default)]
    pub input: Value,
}

impl RecordedResponse {
    /// The stop reason as recorded, or what the content implies.
    pub fn effective_stop(&self) -> ModelStop {
        self.stop_reason.unwrap_or(if self.tool_calls.is_empty() { ModelStop::EndTurn } else { ModelStop::ToolUse })
    }

    /// Splits the text into words so a replay streams like a model does.
    pub fn events(&self, response_index: usize) -> Vec<StreamEvent> {
        let mut events = Vec::new();
        if let Some(thinking) = &self.thinking {
            events.push(StreamEvent::ThinkingDelta(thinking.clone()));
        }
        if let Some(text) = &self.text {
            events.extend(text.split_inclusive(' ').map(|word| StreamEvent::TextDelta(word.to_owned())));
        }
        for (call_index, call) in self.tool_calls.iter().enumerate() {
            let id = call.id.clone().unwrap_or_else(|| format!("toolu_replay_{response_index}_{call_index}"));
            events.push(StreamEvent::ToolUse { id, name: call.name.clone(), input: call.input.clone() });
        }
        events.push(StreamEvent::Usage(Usage::default()));
        events.push(StreamEvent::Stop(self.effective_stop()));
        events
    }
}

/// A whole recording: the model's side of a session.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Recording {
    pub responses: Vec<RecordedResponse>,
}

pub struct ReplayProvider {
    responses: Vec<RecordedResponse>,
    next: Mutex<usize>,
    /// Pause between streamed pieces, so a demo reads like a live session.
    pace: Duration,
}

impl ReplayProvider {
    pub fn new(recording: Recording, pace: Duration) -> Self {
        Self { responses: recording.responses, next: Mutex::new(0), pace }
    }
}

#[async_trait::async_trait]
impl Provider for ReplayProvider {
    fn name(&self) -> &str {
        "replay"
    }

    async fn stream(&self, _request: &ModelRequest<'_>) -> Result<EventStream, ProviderError> {
        let index = {
            let mut next =
                self.next.lock().map_err(|_| ProviderError::BadRequest { message: "replay state poisoned".into() })?;
            let index = *next;
            *next += 1;
            index
        };
        let response = self.responses.get(index).ok_or_else(|| ProviderError::BadRequest {
            message: format!(
                "the recording has {} responses; a call for response {} has none",
                self.responses.len(),
                index + 1
            ),
        })?;
        let pace = self.pace;
        let events = response.events(index);
        Ok(futures::stream::iter(events)
            .then(move |event| async move {
                if !pace.is_zero() {
                    tokio::time::sleep(pace).await;
                }
                Ok(event)
            })
            .boxed())
    }
}
