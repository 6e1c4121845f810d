//! Anthropic Messages API, streaming: text, thinking (with signatures), tool use with
//! `input_json_delta`, usage, and the `error` event.

use std::collections::BTreeMap;

use serde_json::Value;

use super::credential::Credential;
use super::sse::{FrameParser, SseFrame, frame_json, post_streaming};
use super::{
    EventStream, LazyClient, ModelRequest, ModelStop, Provider, ProviderError, Reached, StreamEvent, Usage, reach_with,
};

pub const DEFAULT_BASE_URL: &str = "https://api.anthropic.com";
const API_VERSION: &str = "2023-06-01";

mod request;

pub struct AnthropicProvider {
    client: LazyClient,
    base_url: String,
    credential: Credential,
}

impl AnthropicProvider {
    pub fn new(base_url: &str, credential: Credential) -> Result<Self, ProviderError> {
        Ok(Self { client: LazyClient::default(), base_url: base_url.trim_end_matches('/').to_owned(), credential })
    }

    /// A request with the key in both headers a key helper's answer goes in, as Claude Code sends
    /// it (a proxy in front of the API may read either).
    async fn authorized(&self, http: reqwest::RequestBuilder) -> Result<reqwest::RequestBuilder, ProviderError> {
        let key = self.credential.key().await?;
        let http = http.header("x-api-key", &key).header("anthropic-version", API_VERSION);
        Ok(match self.credential {
            Credential::Helper(_) => http.bearer_auth(key),
            Credential::Fixed(_) => http,
        })
    }
}

#[async_trait::async_trait]
impl Provider for AnthropicProvider {
    fn name(&self) -> &str {
        "anthropic"
    }

    async fn stream(&self, request: &ModelRequest<'_>) -> Result<EventStream, ProviderError> {
        let body = request::body(request);
        let send = || async {
            let http = self.authorized(self.client.get()?.post(format!("{}/v1/messages", self.base_url))).await?;
            post_streaming(http, &body, AnthropicParser::default()).await
        };
        match send().await {
            // A helper's key expired early: ask it again, once.
            Err(ProviderError::Auth { .. }) if self.credential.refused() => send().await,
            sent => sent,
        }
    }

    async fn reach(&self) -> Result<Reached, ProviderError> {
        let http = self.authorized(self.client.get()?.get(format!("{}/v1/models", self.base_url))).await?;
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
    let input = crate::streamed_tool_input(&pending.input_json);
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
    use serde_json::json;

    fn frame(data: Value) -> SseFrame<'static> {
        SseFrame { event: None, data: data.to_string().into() }
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
    fn a_call_cut_off_before_its_input_is_json_keeps_the_text_and_goes_back_as_an_empty_object() {
        let mut parser = AnthropicParser::default();
        let frames = [
            json!({"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_1","name":"write","input":{}}}),
            json!({"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"path\": \"a.t"}}),
            json!({"type":"content_block_stop","index":0}),
            json!({"type":"message_delta","delta":{"stop_reason":"max_tokens"},"usage":{"output_tokens":30}}),
            json!({"type":"message_stop"}),
        ];
        let events: Vec<StreamEvent> =
            frames.into_iter().flat_map(|data| parser.frame(&frame(data)).unwrap_or_default()).collect();
        let input = json!("{\"path\": \"a.t");
        assert_eq!(
            events[0],
            StreamEvent::ToolUse { id: "toolu_1".into(), name: "write".into(), input: input.clone() }
        );
        assert_eq!(*crate::sent_tool_input(&input), json!({}));
        assert_eq!(*crate::sent_tool_input(&json!({"path": "a"})), json!({"path": "a"}));
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
