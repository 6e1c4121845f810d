//! Anthropic Messages API, streaming: text, thinking (with signatures), tool use with
//! `input_json_delta`, usage, and the `error` event.

use std::collections::BTreeMap;

use serde_json::{Value, json};
use sse_stream::Sse;

use super::sse::{FrameParser, frame_json, post_streaming};
use super::{EventStream, Message, ModelRequest, ThoughtLevel, ModelStop, Part, Provider, ProviderError, ResultPart, Role, StreamEvent, Usage, LazyClient};

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

    fn body(&self, request: &ModelRequest<'_>) -> Value {
        let tools: Vec<Value> = request
            .tools
            .iter()
            .map(|tool| json!({"name": tool.name, "description": tool.description, "input_schema": tool.input_schema}))
            .collect();
        let mut body = json!({
            "model": request.model,
            "max_tokens": request.max_tokens,
            "stream": true,
            // The system prompt is stable across a session, so it is the cached prefix.
            "system": [{"type": "text", "text": request.system, "cache_control": {"type": "ephemeral"}}],
            "messages": request.messages.iter().map(message_json).collect::<Vec<_>>(),
        });
        if !tools.is_empty() {
            body["tools"] = Value::Array(tools);
        }
        if let Some(budget) = request.thought_level.and_then(ThoughtLevel::budget_tokens) {
            body["thinking"] = json!({"type": "enabled", "budget_tokens": budget});
            // The answer needs room beyond the thinking.
            body["max_tokens"] = json!(request.max_tokens.max(budget + 4096));
        }
        body
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
}

fn message_json(message: &Message) -> Value {
    let role = match message.role {
        Role::User => "user",
        Role::Assistant => "assistant",
    };
    let content: Vec<Value> = message.content.iter().filter_map(part_json).collect();
    json!({"role": role, "content": content})
}

fn part_json(part: &Part) -> Option<Value> {
    Some(match part {
        Part::Text { text } => json!({"type": "text", "text": text}),
        Part::Image { media_type, data } => image_json(media_type, data),
        // Unsigned thinking (from another provider) cannot be sent back to Anthropic.
        Part::Thinking { text, signature } => json!({"type": "thinking", "thinking": text, "signature": signature.as_ref()?}),
        Part::ToolUse { id, name, input } => json!({"type": "tool_use", "id": id, "name": name, "input": input}),
        Part::ToolResult { tool_use_id, content, is_error } => {
            let content: Vec<Value> = content
                .iter()
                .map(|part| match part {
                    ResultPart::Text { text } => json!({"type": "text", "text": text}),
                    ResultPart::Image { media_type, data } => image_json(media_type, data),
                })
                .collect();
            json!({"type": "tool_result", "tool_use_id": tool_use_id, "content": content, "is_error": is_error})
        }
    })
}

fn image_json(media_type: &str, data: &str) -> Value {
    json!({"type": "image", "source": {"type": "base64", "media_type": media_type, "data": data}})
}

/// A tool_use block being assembled from `input_json_delta`s.
#[derive(Default)]
struct PendingToolUse {
    id: String,
    name: String,
    input_json: String,
}

#[derive(Default)]
struct AnthropicParser {
    tool_blocks: BTreeMap<u64, PendingToolUse>,
    usage: Usage,
    stop: Option<ModelStop>,
    finished: bool,
}

/// The most frequent frame, a text delta, read without building a JSON tree.
#[derive(serde::Deserialize)]
struct TextDeltaFrame<'a> {
    #[serde(borrow)]
    delta: TextDelta<'a>,
}

#[derive(serde::Deserialize)]
struct TextDelta<'a> {
    #[serde(rename = "type")]
    kind: &'a str,
    #[serde(borrow)]
    text: Option<std::borrow::Cow<'a, str>>,
}

impl FrameParser for AnthropicParser {
    fn frame(&mut self, frame: Sse) -> Result<Vec<StreamEvent>, ProviderError> {
        if frame.event.as_deref() == Some("content_block_delta")
            && let Some(data) = frame.data.as_deref()
            && let Ok(TextDeltaFrame { delta: TextDelta { kind: "text_delta", text: Some(text) } }) = serde_json::from_str::<TextDeltaFrame<'_>>(data)
        {
            return Ok(vec![StreamEvent::TextDelta(text.into_owned())]);
        }
        let Some(data) = frame_json(&frame)? else { return Ok(Vec::new()) };
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

    fn frame(data: Value) -> Sse {
        Sse::default().data(data.to_string())
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
        let events: Vec<StreamEvent> = frames.into_iter().flat_map(|data| parser.frame(frame(data)).unwrap_or_default()).collect();
        assert_eq!(events[0], StreamEvent::TextDelta("Hi".into()));
        assert_eq!(events[1], StreamEvent::ToolUse { id: "toolu_1".into(), name: "read".into(), input: json!({"path": "a.txt"}) });
        assert_eq!(events[2], StreamEvent::Usage(Usage { input_tokens: 12, output_tokens: 30, ..Usage::default() }));
        assert_eq!(events[3], StreamEvent::Stop(ModelStop::ToolUse));
        assert!(parser.finish().is_ok_and(|rest| rest.is_empty()));
    }

    #[test]
    fn a_stream_without_message_stop_is_broken_not_truncated() {
        let mut parser = AnthropicParser::default();
        let _ = parser.frame(frame(json!({"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"par"}})));
        assert!(matches!(parser.finish(), Err(ProviderError::StreamBroken { .. })));
    }

    #[test]
    fn text_deltas_take_the_quick_path_with_escapes_intact() {
        let mut parser = AnthropicParser::default();
        let frame = Sse::default().event("content_block_delta").data(r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"say \"hi\"\n"}}"#);
        assert_eq!(parser.frame(frame).unwrap(), vec![StreamEvent::TextDelta("say \"hi\"\n".into())]);
        let thinking = Sse::default().event("content_block_delta").data(r#"{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"hmm"}}"#);
        assert_eq!(parser.frame(thinking).unwrap(), vec![StreamEvent::ThinkingDelta("hmm".into())]);
    }

    #[test]
    fn overloaded_error_event_is_retryable() {
        let mut parser = AnthropicParser::default();
        let result = parser.frame(frame(json!({"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}})));
        assert!(matches!(result, Err(ProviderError::Overloaded { .. })));
    }
}
