//! Model providers: one streaming trait, the conversation types every provider translates from,
//! and the provider errors sorted by what the caller does next.
//!
//! A provider turns a [`ModelRequest`] into a stream of [`StreamEvent`]s. Tool calls arrive whole
//! (their JSON input is assembled inside the provider), text and thinking arrive as deltas.

pub mod anthropic;
pub mod catalog;
pub mod credential;
pub mod http;
mod note;
pub mod openai;
pub mod replay;
pub mod retry;
pub mod sse;

use std::time::Duration;

use futures::stream::BoxStream;
use serde::{Deserialize, Serialize};
use serde_json::Value;

pub use self::note::{HookPurpose, Note};

/// Who said a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    User,
    Assistant,
}

/// One message of the conversation, in the provider-neutral form the session keeps.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Message {
    pub role: Role,
    pub content: Vec<Part>,
}

impl Message {
    pub fn user_text(text: impl Into<String>) -> Self {
        Self { role: Role::User, content: vec![Part::Text { text: text.into() }] }
    }
}

/// A piece of a message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Part {
    Text {
        text: String,
    },
    Image {
        media_type: String,
        data: String,
    },
    /// The model's reasoning. Anthropic requires the signature to be sent back unchanged.
    Thinking {
        text: String,
        signature: Option<String>,
    },
    /// `input` is the JSON object the model wrote, or, where what it wrote is not JSON (a
    /// broken or cut-off call), that text as a string: the call then fails as malformed input
    /// and the model is told so, and the request sends the call back as [`sent_tool_input`]
    /// gives it.
    ToolUse {
        id: String,
        name: String,
        input: Value,
    },
    ToolResult {
        tool_use_id: String,
        content: Vec<ResultPart>,
        is_error: bool,
    },
    /// Text the user did not type, kept typed; sent as [`Note::render`] gives it.
    Note(Note),
}

/// What a tool result may carry back to the model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ResultPart {
    Text { text: String },
    Image { media_type: String, data: String },
}

/// A tool call's input as the model streamed it: `{}` when empty, the JSON value when it is
/// JSON, else the text itself as a string (see [`Part::ToolUse`]).
pub fn streamed_tool_input(streamed: &str) -> Value {
    if streamed.trim().is_empty() {
        return Value::Object(serde_json::Map::new());
    }
    serde_json::from_str(streamed).unwrap_or_else(|_| Value::String(streamed.to_owned()))
}

/// A tool call's input as a request sends it back: an object as it is; input that was not JSON
/// as an empty object, which is all a provider accepts there (its text stays in the
/// conversation's own record and in the call's error result).
pub fn sent_tool_input(input: &Value) -> std::borrow::Cow<'_, Value> {
    match input {
        Value::Object(_) => std::borrow::Cow::Borrowed(input),
        _ => std::borrow::Cow::Owned(Value::Object(serde_json::Map::new())),
    }
}

/// A tool as the model sees it: the schema is derived from the tool's input type.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolSpec {
    pub name: String,
    pub description: String,
    pub input_schema: Value,
}

/// Everything one model call needs. It borrows the conversation: a long session is not copied
/// for every request.
#[derive(Debug, Clone, Copy)]
pub struct ModelRequest<'a> {
    pub model: &'a str,
    pub system: &'a str,
    pub messages: &'a [Message],
    pub tools: &'a [ToolSpec],
    pub max_tokens: u32,
    /// How hard the model should think before answering; `None` leaves it to the model.
    pub thought_level: Option<ThoughtLevel>,
    /// The session the request belongs to, for providers that route requests by a key so a
    /// session's prefix stays in one cache (OpenAI's `prompt_cache_key`).
    pub cache_key: Option<&'a str>,
    /// Keep the cached prefix an hour rather than the provider's default (Anthropic's five
    /// minutes), where the provider offers it.
    pub long_cache: bool,
}

/// How much reasoning to ask for, in the provider's own terms.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ThoughtLevel {
    Off,
    Low,
    Medium,
    High,
}

impl ThoughtLevel {
    pub const ALL: [ThoughtLevel; 4] = [ThoughtLevel::Off, ThoughtLevel::Low, ThoughtLevel::Medium, ThoughtLevel::High];

    pub fn id(self) -> &'static str {
        match self {
            ThoughtLevel::Off => "off",
            ThoughtLevel::Low => "low",
            ThoughtLevel::Medium => "medium",
            ThoughtLevel::High => "high",
        }
    }

    pub fn from_id(id: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|level| level.id() == id)
    }

    /// Anthropic's extended thinking budget.
    pub fn budget_tokens(self) -> Option<u32> {
        match self {
            ThoughtLevel::Off => None,
            ThoughtLevel::Low => Some(2_048),
            ThoughtLevel::Medium => Some(8_192),
            ThoughtLevel::High => Some(24_576),
        }
    }

    /// OpenAI's `reasoning_effort`.
    pub fn reasoning_effort(self) -> Option<&'static str> {
        match self {
            ThoughtLevel::Off => None,
            ThoughtLevel::Low => Some("low"),
            ThoughtLevel::Medium => Some("medium"),
            ThoughtLevel::High => Some("high"),
        }
    }
}

/// Why the model stopped producing output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ModelStop {
    EndTurn,
    ToolUse,
    MaxTokens,
    Refusal,
}

/// Token counts reported by the provider.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cache_read_tokens: u64,
    pub cache_write_tokens: u64,
}

/// One item of a provider's output stream.
#[derive(Debug, Clone, PartialEq)]
pub enum StreamEvent {
    TextDelta(String),
    ThinkingDelta(String),
    ThinkingSignature(String),
    /// A complete tool call: providers assemble streamed JSON input before emitting it.
    ToolUse {
        id: String,
        name: String,
        input: Value,
    },
    Usage(Usage),
    Stop(ModelStop),
}

pub type EventStream = BoxStream<'static, Result<StreamEvent, ProviderError>>;

/// Provider failures, named for what the caller does next.
#[derive(Debug, Clone, thiserror::Error)]
pub enum ProviderError {
    /// Credentials are missing or rejected: tell the user how to configure them.
    #[error("authentication failed: {message}")]
    Auth { message: String },
    /// Retry after a delay (HTTP 429).
    #[error("rate limited: {message}")]
    RateLimited { retry_after: Option<Duration>, message: String },
    /// The provider is busy (HTTP 529/503): retry after a delay.
    #[error("model overloaded: {message}")]
    Overloaded { retry_after: Option<Duration>, message: String },
    /// The conversation no longer fits: compact it or start over.
    #[error("context window exceeded: {message}")]
    ContextOverflow { message: String },
    /// The request itself is wrong; retrying will not help.
    #[error("bad request: {message}")]
    BadRequest { message: String },
    /// Connection or stream failure; worth retrying when nothing was streamed yet.
    #[error("network error: {message}")]
    Network { message: String },
    /// The stream ended or broke before the model finished.
    #[error("model stream ended early: {message}")]
    StreamBroken { message: String },
    /// The model sent nothing for the stream idle timeout, the connection open (or never
    /// answered at all); worth retrying when nothing was streamed yet.
    #[error("the model sent nothing for {seconds} s (stream idle timeout)")]
    Stalled { seconds: u64 },
}

impl ProviderError {
    /// Whether a fresh attempt may succeed, and how long the provider asked us to wait.
    pub fn retry_hint(&self) -> Option<Option<Duration>> {
        match self {
            Self::RateLimited { retry_after, .. } | Self::Overloaded { retry_after, .. } => Some(*retry_after),
            Self::Network { .. } | Self::StreamBroken { .. } | Self::Stalled { .. } => Some(None),
            Self::Auth { .. } | Self::ContextOverflow { .. } | Self::BadRequest { .. } => None,
        }
    }
}

/// A model backend. One required method: stream a response.
#[async_trait::async_trait]
pub trait Provider: Send + Sync {
    /// A short name for logs ("anthropic", "openai", "replay").
    fn name(&self) -> &str;
    async fn stream(&self, request: &ModelRequest<'_>) -> Result<EventStream, ProviderError>;
    /// Asks the endpoint something that costs no tokens (its model list), for `larik doctor`.
    async fn reach(&self) -> Result<Reached, ProviderError> {
        Ok(Reached::NotAsked)
    }
}

/// What an endpoint said when [`Provider::reach`] asked it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reached {
    /// It listed its models for our key (or without one, for a local server).
    Listed,
    /// It answered, with a status that says nothing against the key (a server without a model
    /// list, say).
    Answered(u16),
    /// This provider is not behind an endpoint.
    NotAsked,
}

/// Sends `request` (a model list, with the provider's credentials) and sorts the answer.
pub async fn reach_with(request: reqwest::RequestBuilder) -> Result<Reached, ProviderError> {
    let response = request.send().await.map_err(network_error)?;
    let status = response.status().as_u16();
    match status {
        200..=299 => Ok(Reached::Listed),
        401 | 403 => {
            let body = response.text().await.unwrap_or_default();
            Err(classify_http_error(status, None, &body))
        }
        _ => Ok(Reached::Answered(status)),
    }
}

/// Classifies an HTTP error status and body the way both wire formats report them.
pub fn classify_http_error(status: u16, retry_after: Option<Duration>, body: &str) -> ProviderError {
    let message = error_message_from_body(body).unwrap_or_else(|| format!("HTTP {status}"));
    let lowered = message.to_lowercase();
    let overflow = lowered.contains("context")
        && (lowered.contains("length") || lowered.contains("window") || lowered.contains("too long"))
        || lowered.contains("prompt is too long")
        || lowered.contains("maximum context");
    match status {
        401 | 403 => ProviderError::Auth { message },
        429 => ProviderError::RateLimited { retry_after, message },
        503 | 529 => ProviderError::Overloaded { retry_after, message },
        400 | 413 if overflow => ProviderError::ContextOverflow { message },
        400..=499 => ProviderError::BadRequest { message },
        _ => ProviderError::Overloaded { retry_after, message },
    }
}

/// Both Anthropic and OpenAI wrap errors as `{"error": {"message": ...}}`.
fn error_message_from_body(body: &str) -> Option<String> {
    let value: Value = serde_json::from_str(body).ok()?;
    value.pointer("/error/message").and_then(Value::as_str).map(str::to_owned)
}

/// Reads `retry-after` (seconds) from response headers.
pub fn retry_after_header(headers: &reqwest::header::HeaderMap) -> Option<Duration> {
    let raw = headers.get(reqwest::header::RETRY_AFTER)?.to_str().ok()?;
    raw.trim().parse::<f64>().ok().filter(|secs| *secs >= 0.0).map(Duration::from_secs_f64)
}

/// The HTTP client model calls use, built on first use: loading the system's root certificates
/// costs milliseconds that opening a session should not pay.
#[derive(Default)]
pub struct LazyClient(std::sync::OnceLock<reqwest::Client>);

impl LazyClient {
    pub fn get(&self) -> Result<&reqwest::Client, ProviderError> {
        if let Some(client) = self.0.get() {
            return Ok(client);
        }
        let client = crate::http::client_builder()
            .connect_timeout(Duration::from_secs(30))
            .build()
            .map_err(|error| ProviderError::Network { message: error.to_string() })?;
        Ok(self.0.get_or_init(|| client))
    }
}

pub fn network_error(error: reqwest::Error) -> ProviderError {
    ProviderError::Network { message: error.to_string() }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn http_errors_are_sorted_by_next_step() {
        let overflow = r#"{"error":{"message":"prompt is too long: 250000 tokens > 200000 maximum"}}"#;
        assert!(matches!(classify_http_error(400, None, overflow), ProviderError::ContextOverflow { .. }));
        assert!(matches!(classify_http_error(400, None, "{}"), ProviderError::BadRequest { .. }));
        assert!(matches!(classify_http_error(401, None, "{}"), ProviderError::Auth { .. }));
        let limited = classify_http_error(429, Some(Duration::from_secs(3)), "{}");
        assert_eq!(limited.retry_hint(), Some(Some(Duration::from_secs(3))));
        assert!(matches!(classify_http_error(529, None, "{}"), ProviderError::Overloaded { .. }));
        assert_eq!(classify_http_error(400, None, "{}").retry_hint(), None);
    }
}
