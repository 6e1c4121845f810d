//! Anthropic Messages API, streaming: text, thinking (with signatures), tool use with
//! `input_json_delta`, usage, and the `error` event.

use std::collections::BTreeMap;

use serde::Serialize;
use serde::ser::{SerializeMap, Serializer};
use serde_json::{Value, json};

use super::sse::{FrameParser, SseFrame, frame_json, post_streaming};
use super::{
    EventStream, LazyClient, Message, ModelRequest, ModelStop, Part, Provider, ProviderError, Reached, ResultPart,
    Role, StreamEvent, ThoughtLevel, Usage, reach_with,
};

pub const DEFAULT_BASE_URL: &str = "https://api.anthropic.com";
const API_VERSION: &str = "2023-06-01";

pub struct AnthropicProvider {
    client: LazyClient,
    base_url: String,
    api_key: String,
}

impl AnthropicProvider {
    pub fn new(base_url: &str, api_key: String) -> Result<Self, ProviderError> {
        Ok(Self { client: LazyClient::default(), base_url: base_url.trim_end_matches('/').to_owned(), api_key })
    }

    /// The request body, borrowing the conversation: serialized straight into the HTTP body,
    /// never copied into a JSON tree first.
    fn body<'a>(&self, request: &'a ModelRequest<'a>) -> Body<'a> {
        let thinking = request
            .thought_level
            .and_then(ThoughtLevel::budget_tokens)
            .map(|budget_tokens| Thinking { kind: "enabled", budget_tokens });
        Body {
            model: request.model,
            // The answer needs room beyond the thinking.
            max_tokens: thinking
                .as_ref()
                .map_or(request.max_tokens, |thinking| request.max_tokens.max(thinking.budget_tokens + 4096)),
            stream: true,
            // The system prompt is stable across a session, so it is the cached prefix.
            system: [SystemBlock {
                kind: "text",
                text: request.system,
                cache_control: CacheControl { kind: "ephemeral" },
            }],
            messages: Messages(request.messages),
            tools: request
                .tools
                .iter()
                .map(|tool| WireTool {
                    name: &tool.name,
                    description: &tool.description,
                    input_schema: &tool.input_schema,
                })
                .collect(),
            thinking,
        }
    }
}

#[derive(Serialize)]
struct Body<'a> {
    model: &'a str,
    max_tokens: u32,
    stream: bool,
    system: [SystemBlock<'a>; 1],
    messages: Messages<'a>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tools: Vec<WireTool<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    thinking: Option<Thinking>,
}

#[derive(Serialize)]
struct SystemBlock<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    text: &'a str,
    cache_control: CacheControl,
}

#[derive(Serialize)]
struct CacheControl {
    #[serde(rename = "type")]
    kind: &'static str,
}

#[derive(Serialize)]
struct Thinking {
    #[serde(rename = "type")]
    kind: &'static str,
    budget_tokens: u32,
}

#[derive(Serialize)]
struct WireTool<'a> {
    name: &'a str,
    description: &'a str,
    input_schema: &'a Value,
}

/// The conversation in Anthropic's shape.
struct Messages<'a>(&'a [Message]);

impl Serialize for Messages<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.0.iter().map(WireMessage))
    }
}

struct WireMessage<'a>(&'a Message);

impl Serialize for WireMessage<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let role = match self.0.role {
            Role::User => "user",
            Role::Assistant => "assistant",
        };
        // Unsigned thinking (from another provider) cannot be sent back to Anthropic.
        let sendable = |part: &&Part| !matches!(part, Part::Thinking { signature: None, .. });
        let mut message = serializer.serialize_map(Some(2))?;
        message.serialize_entry("role", role)?;
        message.serialize_entry("content", &Seq(|| self.0.content.iter().filter(sendable).map(WirePart)))?;
        message.end()
    }
}

/// A sequence serialized from an iterator made on demand.
struct Seq<F>(F);

impl<F: Fn() -> I, I: Iterator<Item = T>, T: Serialize> Serialize for Seq<F> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq((self.0)())
    }
}

struct WirePart<'a>(&'a Part);

impl Serialize for WirePart<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut part = serializer.serialize_map(None)?;
        match self.0 {
            Part::Text { text } => {
                part.serialize_entry("type", "text")?;
                part.serialize_entry("text", text)?;
            }
            Part::Note(note) => {
                part.serialize_entry("type", "text")?;
                part.serialize_entry("text", &note.render())?;
            }
            Part::Image { media_type, data } => return Image { media_type, data }.serialize_into(part),
            Part::Thinking { text, signature } => {
                part.serialize_entry("type", "thinking")?;
                part.serialize_entry("thinking", text)?;
                part.serialize_entry("signature", signature)?;
            }
            Part::ToolUse { id, name, input } => {
                part.serialize_entry("type", "tool_use")?;
                part.serialize_entry("id", id)?;
                part.serialize_entry("name", name)?;
                part.serialize_entry("input", input)?;
            }
            Part::ToolResult { tool_use_id, content, is_error } => {
                part.serialize_entry("type", "tool_result")?;
                part.serialize_entry("tool_use_id", tool_use_id)?;
                part.serialize_entry("content", &Seq(|| content.iter().map(WireResultPart)))?;
                part.serialize_entry("is_error", is_error)?;
            }
        }
        part.end()
    }
}

struct WireResultPart<'a>(&'a ResultPart);

impl Serialize for WireResultPart<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut part = serializer.serialize_map(None)?;
        match self.0 {
            ResultPart::Text { text } => {
                part.serialize_entry("type", "text")?;
                part.serialize_entry("text", text)?;
                part.end()
            }
            ResultPart::Image { media_type, data } => Image { media_type, data }.serialize_into(part),
        }
    }
}

/// An image block: `{"type": "image", "source": {"type": "base64", ...}}`.
struct Image<'a> {
    media_type: &'a str,
    data: &'a str,
}

impl Image<'_> {
    fn serialize_into<M: SerializeMap>(&self, mut part: M) -> Result<M::Ok, M::Error> {
        #[derive(Serialize)]
        struct Source<'a> {
            #[serde(rename = "type")]
            kind: &'static str,
            media_type: &'a str,
            data: &'a str,
        }
        part.serialize_entry("type", "image")?;
        part.serialize_entry("source", &Source { kind: "base64", media_type: self.media_type, data: self.data })?;
        part.end()
    }
}

#[async_trait::async_trait]
impl Provider for AnthropicProvider {
    fn name(&self) -> &str {
        "anthropic"
    }

    async fn stream(&self, request: &ModelRequest<'_>) -> Result<EventStream, ProviderError> {
        let http = self
            .client
            .get()?
            .post(format!("{}/v1/messages", self.base_url))
            .header("x-api-key", &self.api_key)
            .header("anthropic-version", API_VERSION);
        post_streaming(http, &self.body(request), AnthropicParser::default()).await
    }

    async fn reach(&self) -> Result<Reached, ProviderError> {
        let http = self
            .client
            .get()?
            .get(format!("{}/v1/models", self.base_url))
            .header("x-api-key", &self.api_key)
            .header("anthropic-version", API_VERSION);
        reach_with(http).await
    }
}

/// A tool_use block being assembled from `input_json_delta`s.
#[derive(Default)]
struct PendingToolUse {
    id: String,
    name: String,
    input_json: String,
}

#[derive(Default)]
pub struct AnthropicParser {
    tool_blocks: BTreeMap<u64, PendingToolUse>,
    usage: Usage,
    stop: Option<ModelStop>,
    finished: bool,
}

/// The most frequent frame, a text delta, in the form the API writes it:
/// `{"type":"content_block_delta","index":N,"delta":{"type":"text_delta","text":"…"}}`. The
/// bytes around the text are matched exactly and only the text is parsed, as one JSON string;
/// any other form (spacing, key order, another field) returns `None` for the general path.
fn text_delta_as_written(data: &str) -> Option<String> {
    let index_and_rest = data.strip_prefix(r#"{"type":"content_block_delta","index":"#)?;
    let rest = index_and_rest.trim_start_matches(|character: char| character.is_ascii_digit());
    if rest.len() == index_and_rest.len() {
        return None;
    }
    let text = rest.strip_prefix(r#","delta":{"type":"text_delta","text":"#)?.strip_suffix("}}")?;
    serde_json::from_str(text).ok()
}

impl FrameParser for AnthropicParser {
    fn frame(&mut self, frame: &SseFrame<'_>) -> Result<Vec<StreamEvent>, ProviderError> {
        if frame.event == Some("content_block_delta")
            && let Some(text) = text_delta_as_written(&frame.data)
        {
            return Ok(vec![StreamEvent::TextDelta(text)]);
        }
        let Some(data) = frame_json::<Value>(frame)? else { return Ok(Vec::new()) };
        let kind = data.get("type").and_then(Value::as_str).unwrap_or_default();
        let index = data.get("index").and_then(Value::as_u64).unwrap_or_default();
        let mut events = Vec::new();
        match kind {
            "message_start" => self.add_usage(data.pointer("/message/usage")),
            "content_block_start" => {
                let block = &data["content_block"];
                if block["type"] == "tool_use" {
                    let pending = PendingToolUse {
                        id: text_field(block, "id"),
                        name: text_field(block, "name"),
                        input_json: String::new(),
                    };
                    self.tool_blocks.insert(index, pending);
                }
            }
            "content_block_delta" => {
                let delta = &data["delta"];
                match delta["type"].as_str().unwrap_or_default() {
                    "text_delta" => events.push(StreamEvent::TextDelta(text_field(delta, "text"))),
                    "thinking_delta" => events.push(StreamEvent::ThinkingDelta(text_field(delta, "thinking"))),
                    "signature_delta" => events.push(StreamEvent::ThinkingSignature(text_field(delta, "signature"))),
                    "input_json_delta" => {
                        if let Some(pending) = self.tool_blocks.get_mut(&index) {
                            pending.input_json.push_str(delta["partial_json"].as_str().unwrap_or_default());
                        }
                    }
                    _ => {}
                }
            }
            "content_block_stop" => {
                if let Some(pending) = self.tool_blocks.remove(&index) {
                    events.push(finished_tool_use(pending)?);
                }
            }
            "message_delta" => {
                self.add_usage(data.get("usage"));
                self.stop = data.pointer("/delta/stop_reason").and_then(Value::as_str).map(stop_reason);
            }
            "message_stop" => {
                self.finished = true;
                events.push(StreamEvent::Usage(self.usage));
                events.push(StreamEvent::Stop(self.stop.unwrap_or(ModelStop::EndTurn)));
            }
            "error" => return Err(stream_error(&data)),
            _ => {}
        }
        Ok(events)
    }

    fn finish(&mut self) -> Result<Vec<StreamEvent>, ProviderError> {
        if self.finished {
            Ok(Vec::new())
        } else {
            Err(ProviderError::StreamBroken { message: "the stream closed before message_stop".into() })
        }
    }
}

impl AnthropicParser {
    fn add_usage(&mut self, usage: Option<&Value>) {
        let Some(usage) = usage else { return };
        let count = |key: &str| usage.get(key).and_then(Value::as_u64);
        // message_start carries the input side, message_delta the cumulative output.
        if let Some(input) = count("input_tokens") {
            self.usage.input_tokens = input;
        }
        if let Some(output) = count("output_tokens") {
            self.usage.output_tokens = output;
        }
        if let Some(read) = count("cache_read_input_tokens") {
            self.usage.cache_read_tokens = read;
        }
        if let Some(write) = count("cache_creation_input_tokens") {
            self.usage.cache_write_tokens = write;
        }
    }
}

fn finished_tool_use(pending: PendingToolUse) -> Result<StreamEvent, ProviderError> {
    let input = if pending.input_json.trim().is_empty() {
        json!({})
    } else {
        serde_json::from_str(&pending.input_json).map_err(|error| ProviderError::StreamBroken {
            message: format!("tool input for {} is not valid JSON: {error}", pending.name),
        })?
    };
    Ok(StreamEvent::ToolUse { id: pending.id, name: pending.name, input })
}

fn text_field(value: &Value, key: &str) -> String {
    value.get(key).and_then(Value::as_str).unwrap_or_default().to_owned()
}

fn stop_reason(reason: &str) -> ModelStop {
    match reason {
        "tool_use" => ModelStop::ToolUse,
        "max_tokens" | "model_context_window_exceeded" => ModelStop::MaxTokens,
        "refusal" => ModelStop::Refusal,
        _ => ModelStop::EndTurn,
    }
}

fn stream_error(data: &Value) -> ProviderError {
    let message = data.pointer("/error/message").and_then(Value::as_str).unwrap_or("unknown error").to_owned();
    match data.pointer("/error/type").and_then(Value::as_str).unwrap_or_default() {
        "overloaded_error" | "api_error" => ProviderError::Overloaded { retry_after: None, message },
        "rate_limit_error" => ProviderError::RateLimited { retry_after: None, message },
        "authentication_error" | "permission_error" => ProviderError::Auth { message },
        "invalid_request_error" => ProviderError::BadRequest { message },
        _ => ProviderError::StreamBroken { message },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(data: Value) -> SseFrame<'static> {
        SseFrame { event: None, data: data.to_string().into() }
    }

    #[test]
    fn the_body_has_the_messages_api_shape() {
        let messages = vec![
            Message {
                role: Role::User,
                content: vec![
                    Part::Text { text: "hi".into() },
                    Part::Image { media_type: "image/png".into(), data: "AAAA".into() },
                ],
            },
            Message {
                role: Role::Assistant,
                content: vec![
                    Part::Thinking { text: "hmm".into(), signature: Some("sig".into()) },
                    Part::Thinking { text: "unsigned".into(), signature: None },
                    Part::ToolUse { id: "t1".into(), name: "read".into(), input: json!({"path": "a"}) },
                ],
            },
            Message {
                role: Role::User,
                content: vec![Part::ToolResult {
                    tool_use_id: "t1".into(),
                    content: vec![ResultPart::Text { text: "body".into() }],
                    is_error: true,
                }],
            },
        ];
        let tools = [crate::ToolSpec {
            name: "read".into(),
            description: "Reads".into(),
            input_schema: json!({"type": "object"}),
        }];
        let request = ModelRequest {
            model: "m",
            system: "sys",
            messages: &messages,
            tools: &tools,
            max_tokens: 1000,
            thought_level: Some(ThoughtLevel::High),
        };
        let provider = AnthropicProvider::new("http://127.0.0.1:1", String::new()).unwrap();
        let body = serde_json::to_value(provider.body(&request)).unwrap();
        let budget = ThoughtLevel::High.budget_tokens().unwrap();
        assert_eq!(
            body,
            json!({
                "model": "m",
                "max_tokens": 1000u32.max(budget + 4096),
                "stream": true,
                "system": [{"type": "text", "text": "sys", "cache_control": {"type": "ephemeral"}}],
                "messages": [
                    {"role": "user", "content": [{"type": "text", "text": "hi"}, {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AAAA"}}]},
                    {"role": "assistant", "content": [
                        {"type": "thinking", "thinking": "hmm", "signature": "sig"},
                        {"type": "tool_use", "id": "t1", "name": "read", "input": {"path": "a"}}]},
                    {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": [{"type": "text", "text": "body"}], "is_error": true}]},
                ],
                "tools": [{"name": "read", "description": "Reads", "input_schema": {"type": "object"}}],
                "thinking": {"type": "enabled", "budget_tokens": budget},
            })
        );
    }

    #[test]
    fn assembles_tool_input_from_json_deltas() {
        let mut parser = AnthropicParser::default();
        let frames = [
            json!({"type":"message_start","message":{"usage":{"input_tokens":12,"output_tokens":1}}}),
            json!({"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}),
            json!({"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hi"}}),
            json!({"type":"content_block_stop","index":0}),
            json!({"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_1","name":"read","input":{}}}),
            json!({"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"path\":"}}),
            json!({"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"\"a.txt\"}"}}),
            json!({"type":"content_block_stop","index":1}),
            json!({"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":30}}),
            json!({"type":"message_stop"}),
        ];
        let events: Vec<StreamEvent> =
            frames.into_iter().flat_map(|data| parser.frame(&frame(data)).unwrap_or_default()).collect();
        assert_eq!(events[0], StreamEvent::TextDelta("Hi".into()));
        assert_eq!(
            events[1],
            StreamEvent::ToolUse { id: "toolu_1".into(), name: "read".into(), input: json!({"path": "a.txt"}) }
        );
        assert_eq!(events[2], StreamEvent::Usage(Usage { input_tokens: 12, output_tokens: 30, ..Usage::default() }));
        assert_eq!(events[3], StreamEvent::Stop(ModelStop::ToolUse));
        assert!(parser.finish().is_ok_and(|rest| rest.is_empty()));
    }

    #[test]
    fn a_stream_without_message_stop_is_broken_not_truncated() {
        let mut parser = AnthropicParser::default();
        let _ = parser
            .frame(&frame(json!({"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"par"}})));
        assert!(matches!(parser.finish(), Err(ProviderError::StreamBroken { .. })));
    }

    #[test]
    fn text_deltas_take_the_quick_path_with_escapes_intact() {
        let mut parser = AnthropicParser::default();
        let frame = SseFrame::named(
            "content_block_delta",
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"say \"hi\"\n"}}"#,
        );
        assert_eq!(parser.frame(&frame).unwrap(), vec![StreamEvent::TextDelta("say \"hi\"\n".into())]);
        let thinking = SseFrame::named(
            "content_block_delta",
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"hmm"}}"#,
        );
        assert_eq!(parser.frame(&thinking).unwrap(), vec![StreamEvent::ThinkingDelta("hmm".into())]);
        // Other spellings of the same delta, and text that ends like the frame, read the same.
        for data in [
            r#"{"type":"content_block_delta","index":12,"delta":{"type":"text_delta","text":"a}}"}}"#,
            r#"{"index":12,"type":"content_block_delta","delta":{"text":"a}}","type":"text_delta"}}"#,
            r#"{ "type": "content_block_delta", "index": 12, "delta": { "type": "text_delta", "text": "a}}" } }"#,
        ] {
            assert_eq!(
                parser.frame(&SseFrame::named("content_block_delta", data)).unwrap(),
                vec![StreamEvent::TextDelta("a}}".into())],
                "{data}"
            );
        }
        // Not one JSON string where the text goes: the general path judges the frame.
        let broken = SseFrame::named(
            "content_block_delta",
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"a","x":"b"}}"#,
        );
        assert_eq!(parser.frame(&broken).unwrap(), vec![StreamEvent::TextDelta("a".into())]);
        assert!(
            text_delta_as_written(
                r#"{"type":"content_block_delta","index":,"delta":{"type":"text_delta","text":"a"}}"#
            )
            .is_none()
        );
    }

    #[test]
    fn overloaded_error_event_is_retryable() {
        let mut parser = AnthropicParser::default();
        let result =
            parser.frame(&frame(json!({"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}})));
        assert!(matches!(result, Err(ProviderError::Overloaded { .. })));
    }
}
