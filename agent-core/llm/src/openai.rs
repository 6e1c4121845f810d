//! OpenAI Chat Completions, streaming, with tool-call deltas. Works for every OpenAI-compatible
//! server (OpenAI, Ollama, llama.cpp, vLLM) through a configurable base URL; the key is optional.

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::Value;

use super::credential::Credential;
use super::sse::{FrameParser, SseFrame, frame_json, post_streaming};
use super::{
    EventStream, LazyClient, Message, ModelRequest, ModelStop, Part, Provider, ProviderError, Reached, ResultPart,
    Role, StreamEvent, ThoughtLevel, Usage, reach_with,
};

pub const DEFAULT_BASE_URL: &str = "https://api.openai.com/v1";

pub struct OpenAiProvider {
    client: LazyClient,
    base_url: String,
    credential: Option<Credential>,
}

impl OpenAiProvider {
    pub fn new(base_url: &str, credential: Option<Credential>) -> Result<Self, ProviderError> {
        Ok(Self { client: LazyClient::default(), base_url: base_url.trim_end_matches('/').to_owned(), credential })
    }

    async fn authorized(&self, http: reqwest::RequestBuilder) -> Result<reqwest::RequestBuilder, ProviderError> {
        Ok(match &self.credential {
            Some(credential) => http.bearer_auth(credential.key().await?),
            None => http,
        })
    }
}

#[async_trait::async_trait]
impl Provider for OpenAiProvider {
    fn name(&self) -> &str {
        "openai"
    }

    async fn stream(&self, request: &ModelRequest<'_>) -> Result<EventStream, ProviderError> {
        let body = request_body(request);
        let send = || async {
            let http = self.authorized(self.client.get()?.post(format!("{}/chat/completions", self.base_url))).await?;
            post_streaming(http, &body, OpenAiParser::default()).await
        };
        match send().await {
            // A helper's key expired early: ask it again, once.
            Err(ProviderError::Auth { .. }) if self.credential.as_ref().is_some_and(Credential::refused) => {
                send().await
            }
            sent => sent,
        }
    }

    async fn reach(&self) -> Result<Reached, ProviderError> {
        let http = self.authorized(self.client.get()?.get(format!("{}/models", self.base_url))).await?;
        reach_with(http).await
    }
}

/// The request body, borrowing the conversation: serialized straight into the HTTP body.
fn request_body<'a>(request: &'a ModelRequest<'a>) -> Body<'a> {
    let mut messages = vec![ChatMessage::System { content: request.system }];
    for message in request.messages {
        append_message(&mut messages, message);
    }
    Body {
        model: request.model,
        stream: true,
        stream_options: StreamOptions { include_usage: true },
        messages,
        reasoning_effort: request.thought_level.and_then(ThoughtLevel::reasoning_effort),
        prompt_cache_key: request.cache_key,
        tools: request
            .tools
            .iter()
            .map(|tool| FunctionTool {
                kind: "function",
                function: Function { name: &tool.name, description: &tool.description, parameters: &tool.input_schema },
            })
            .collect(),
    }
}

#[derive(Serialize)]
struct Body<'a> {
    model: &'a str,
    stream: bool,
    stream_options: StreamOptions,
    messages: Vec<ChatMessage<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    reasoning_effort: Option<&'static str>,
    /// Requests with the same key go to the same cache, so a session's growing prefix is read
    /// back instead of paid for again.
    #[serde(skip_serializing_if = "Option::is_none")]
    prompt_cache_key: Option<&'a str>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tools: Vec<FunctionTool<'a>>,
}

#[derive(Serialize)]
struct StreamOptions {
    include_usage: bool,
}

#[derive(Serialize)]
struct FunctionTool<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    function: Function<'a>,
}

#[derive(Serialize)]
struct Function<'a> {
    name: &'a str,
    description: &'a str,
    parameters: &'a Value,
}

#[derive(Serialize)]
#[serde(tag = "role", rename_all = "lowercase")]
enum ChatMessage<'a> {
    System {
        content: &'a str,
    },
    /// `content` is null when the turn only called tools.
    Assistant {
        content: Option<String>,
        #[serde(skip_serializing_if = "Vec::is_empty")]
        tool_calls: Vec<ToolCall<'a>>,
    },
    Tool {
        tool_call_id: &'a str,
        content: String,
    },
    User {
        content: Vec<UserPart<'a>>,
    },
}

#[derive(Serialize)]
struct ToolCall<'a> {
    id: &'a str,
    #[serde(rename = "type")]
    kind: &'static str,
    function: CallFunction<'a>,
}

#[derive(Serialize)]
struct CallFunction<'a> {
    name: &'a str,
    /// The arguments as a JSON text, as the API wants them.
    arguments: String,
}

#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum UserPart<'a> {
    Text { text: std::borrow::Cow<'a, str> },
    ImageUrl { image_url: ImageUrl },
}

#[derive(Serialize)]
struct ImageUrl {
    url: String,
}

/// One neutral message can become several chat messages: tool results are messages of their own.
fn append_message<'a>(out: &mut Vec<ChatMessage<'a>>, message: &'a Message) {
    match message.role {
        Role::Assistant => {
            let text: String = message
                .content
                .iter()
                .filter_map(|part| match part {
                    Part::Text { text } => Some(text.as_str()),
                    _ => None,
                })
                .collect();
            let tool_calls = message
                .content
                .iter()
                .filter_map(|part| match part {
                    Part::ToolUse { id, name, input } => Some(ToolCall {
                        id,
                        kind: "function",
                        function: CallFunction { name, arguments: crate::sent_tool_input(input).to_string() },
                    }),
                    _ => None,
                })
                .collect();
            out.push(ChatMessage::Assistant { content: Some(text).filter(|text| !text.is_empty()), tool_calls });
        }
        Role::User => {
            let mut user_parts = Vec::new();
            for part in &message.content {
                match part {
                    Part::Text { text } => user_parts.push(UserPart::Text { text: text.into() }),
                    Part::Note(note) => user_parts.push(UserPart::Text { text: note.render().into() }),
                    Part::Image { media_type, data } => user_parts.push(image_part(media_type, data)),
                    Part::ToolResult { tool_use_id, content, is_error } => {
                        let mut text = String::new();
                        if *is_error {
                            text.push_str("Error: ");
                        }
                        for piece in content {
                            match piece {
                                ResultPart::Text { text: chunk } => text.push_str(chunk),
                                // Chat tool messages carry text only; images follow as user content.
                                ResultPart::Image { media_type, data } => user_parts.push(image_part(media_type, data)),
                            }
                        }
                        out.push(ChatMessage::Tool { tool_call_id: tool_use_id, content: text });
                    }
                    Part::Thinking { .. } | Part::ToolUse { .. } => {}
                }
            }
            if !user_parts.is_empty() {
                out.push(ChatMessage::User { content: user_parts });
            }
        }
    }
}

fn image_part(media_type: &str, data: &str) -> UserPart<'static> {
    UserPart::ImageUrl { image_url: ImageUrl { url: format!("data:{media_type};base64,{data}") } }
}

#[derive(Default)]
struct PendingCall {
    id: String,
    name: String,
    arguments: String,
}

#[derive(Default)]
pub struct OpenAiParser {
    calls: BTreeMap<u64, PendingCall>,
    usage: Usage,
    stop: Option<ModelStop>,
    done: bool,
}

/// One streamed chunk as the servers send it, read straight into the fields used: fields a server
/// leaves out or sets to `null` are `None` (serde's rule for `Option`), fields nobody reads
/// are skipped unparsed.
#[derive(serde::Deserialize)]
struct Chunk {
    choices: Option<Vec<Choice>>,
    usage: Option<ChunkUsage>,
    /// Servers disagree on its shape (an object with a message, or a string).
    error: Option<Value>,
}

#[derive(serde::Deserialize)]
struct Choice {
    delta: Option<Delta>,
    finish_reason: Option<String>,
}

#[derive(serde::Deserialize)]
struct Delta {
    content: Option<String>,
    /// Reasoning servers disagree on the field name.
    reasoning_content: Option<String>,
    reasoning: Option<String>,
    tool_calls: Option<Vec<ToolCallDelta>>,
}

#[derive(serde::Deserialize)]
struct ToolCallDelta {
    index: Option<u64>,
    id: Option<String>,
    function: Option<FunctionDelta>,
}

#[derive(serde::Deserialize)]
struct FunctionDelta {
    name: Option<String>,
    /// A JSON text in pieces; a few servers send the whole object instead.
    arguments: Option<Value>,
}

#[derive(serde::Deserialize)]
struct ChunkUsage {
    prompt_tokens: Option<u64>,
    completion_tokens: Option<u64>,
    prompt_tokens_details: Option<PromptTokensDetails>,
}

#[derive(serde::Deserialize)]
struct PromptTokensDetails {
    cached_tokens: Option<u64>,
}

impl FrameParser for OpenAiParser {
    fn frame(&mut self, frame: &SseFrame<'_>) -> Result<Vec<StreamEvent>, ProviderError> {
        if frame.data.trim() == "[DONE]" {
            return self.finish();
        }
        let Some(chunk) = frame_json::<Chunk>(frame)? else { return Ok(Vec::new()) };
        if let Some(error) = chunk.error {
            let message = match &error {
                Value::String(message) => message.as_str(),
                _ => error.get("message").and_then(Value::as_str).unwrap_or("unknown error"),
            };
            return Err(ProviderError::StreamBroken { message: message.to_owned() });
        }
        if let Some(usage) = chunk.usage {
            // `prompt_tokens` counts the cached ones too; ours are apart, as Anthropic's are.
            let cached = usage.prompt_tokens_details.and_then(|details| details.cached_tokens).unwrap_or_default();
            let prompt = usage.prompt_tokens.unwrap_or_default();
            self.usage = Usage {
                input_tokens: prompt.saturating_sub(cached),
                output_tokens: usage.completion_tokens.unwrap_or_default(),
                cache_read_tokens: cached.min(prompt),
                cache_write_tokens: 0,
            };
        }
        let mut events = Vec::new();
        let Some(choice) = chunk.choices.and_then(|choices| choices.into_iter().next()) else { return Ok(events) };
        if let Some(delta) = choice.delta {
            for thought in
                [delta.reasoning_content, delta.reasoning].into_iter().flatten().filter(|text| !text.is_empty())
            {
                events.push(StreamEvent::ThinkingDelta(thought));
            }
            if let Some(text) = delta.content.filter(|text| !text.is_empty()) {
                events.push(StreamEvent::TextDelta(text));
            }
            for call in delta.tool_calls.into_iter().flatten() {
                let pending = self.calls.entry(call.index.unwrap_or_default()).or_default();
                if let Some(id) = call.id {
                    pending.id = id;
                }
                if let Some(function) = call.function {
                    pending.name.push_str(function.name.as_deref().unwrap_or_default());
                    match function.arguments {
                        Some(Value::String(piece)) => pending.arguments.push_str(&piece),
                        Some(Value::Null) | None => {}
                        Some(whole) => pending.arguments.push_str(&whole.to_string()),
                    }
                }
            }
        }
        if let Some(reason) = choice.finish_reason {
            self.stop = Some(match reason.as_str() {
                "tool_calls" | "function_call" => ModelStop::ToolUse,
                "length" => ModelStop::MaxTokens,
                "content_filter" => ModelStop::Refusal,
                _ => ModelStop::EndTurn,
            });
        }
        Ok(events)
    }

    fn finish(&mut self) -> Result<Vec<StreamEvent>, ProviderError> {
        if self.done {
            return Ok(Vec::new());
        }
        self.done = true;
        let Some(stop) = self.stop else {
            return Err(ProviderError::StreamBroken { message: "the stream closed before a finish_reason".into() });
        };
        let mut events = Vec::new();
        for (_, call) in std::mem::take(&mut self.calls) {
            let input = crate::streamed_tool_input(&call.arguments);
            events.push(StreamEvent::ToolUse { id: call.id, name: call.name, input });
        }
        events.push(StreamEvent::Usage(self.usage));
        // Some servers say "stop" even when they called tools.
        let stop = if stop == ModelStop::EndTurn && events.len() > 1 { ModelStop::ToolUse } else { stop };
        events.push(StreamEvent::Stop(stop));
        Ok(events)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn frame(data: &str) -> SseFrame<'_> {
        SseFrame::data(data)
    }

    #[test]
    fn assembles_tool_calls_from_deltas() {
        let mut parser = OpenAiParser::default();
        let frames = [
            r#"{"choices":[{"index":0,"delta":{"role":"assistant","content":"Let me look"}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"read","arguments":""}}]}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"path\":\"a\"}"}}]}}]}"#,
            r#"{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}"#,
            r#"{"choices":[],"usage":{"prompt_tokens":10,"completion_tokens":5}}"#,
            "[DONE]",
        ];
        let events: Vec<StreamEvent> =
            frames.into_iter().flat_map(|data| parser.frame(&frame(data)).unwrap_or_default()).collect();
        assert_eq!(events[0], StreamEvent::TextDelta("Let me look".into()));
        assert_eq!(
            events[1],
            StreamEvent::ToolUse { id: "call_1".into(), name: "read".into(), input: json!({"path": "a"}) }
        );
        assert_eq!(events[2], StreamEvent::Usage(Usage { input_tokens: 10, output_tokens: 5, ..Usage::default() }));
        assert_eq!(events[3], StreamEvent::Stop(ModelStop::ToolUse));
    }

    #[test]
    fn tool_results_become_tool_messages() {
        let messages = vec![
            Message {
                role: Role::Assistant,
                content: vec![Part::ToolUse { id: "c1".into(), name: "read".into(), input: json!({"path": "a"}) }],
            },
            Message {
                role: Role::User,
                content: vec![Part::ToolResult {
                    tool_use_id: "c1".into(),
                    content: vec![ResultPart::Text { text: "body".into() }],
                    is_error: false,
                }],
            },
        ];
        let request = ModelRequest {
            model: "m",
            system: "sys",
            max_tokens: 100,
            tools: &[],
            thought_level: None,
            messages: &messages,
            cache_key: Some("sess_1"),
            long_cache: false,
        };
        let body = serde_json::to_value(request_body(&request)).unwrap();
        assert_eq!(body["prompt_cache_key"], "sess_1", "a session's requests share one cache");
        assert_eq!(body["messages"][0], json!({"role": "system", "content": "sys"}));
        assert_eq!(body["messages"][1]["content"], Value::Null, "a turn of tool calls only has null content");
        assert_eq!(body["messages"][1]["tool_calls"][0]["function"]["arguments"], json!("{\"path\":\"a\"}"));
        assert_eq!(body["messages"][2], json!({"role": "tool", "tool_call_id": "c1", "content": "body"}));
    }

    #[test]
    fn servers_own_spellings_read_the_same() {
        let mut parser = OpenAiParser::default();
        let frames = [
            // llama.cpp and vLLM: nulls where nothing is said, extra fields, reasoning by either name.
            r#"{"id":"x","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":null},"logprobs":null,"finish_reason":null}],"usage":null}"#,
            r#"{"choices":[{"index":0,"delta":{"reasoning_content":"think"},"finish_reason":null}]}"#,
            r#"{"choices":[{"index":0,"delta":{"reasoning":"ing"}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"content":"say \"hi\"\n"}}]}"#,
            // Ollama: a tool call without an index, its arguments whole; another server's as an object.
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"id":"call_9","function":{"name":"read","arguments":"{\"path\":\"b\"}"}}]}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"call_10","function":{"name":"glob","arguments":{"pattern":"*.rs"}}}]}}]}"#,
            r#"{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":{"prompt_tokens":7,"completion_tokens":3,"prompt_tokens_details":{"cached_tokens":4}}}"#,
            r#"{"choices":null}"#,
            "",
            "[DONE]",
        ];
        let events: Vec<StreamEvent> =
            frames.into_iter().flat_map(|data| parser.frame(&frame(data)).unwrap()).collect();
        assert_eq!(
            events,
            vec![
                StreamEvent::ThinkingDelta("think".into()),
                StreamEvent::ThinkingDelta("ing".into()),
                StreamEvent::TextDelta("say \"hi\"\n".into()),
                StreamEvent::ToolUse { id: "call_9".into(), name: "read".into(), input: json!({"path": "b"}) },
                StreamEvent::ToolUse { id: "call_10".into(), name: "glob".into(), input: json!({"pattern": "*.rs"}) },
                // 7 prompt tokens, 4 of them cached: 3 uncached input tokens.
                StreamEvent::Usage(Usage {
                    input_tokens: 3,
                    output_tokens: 3,
                    cache_read_tokens: 4,
                    cache_write_tokens: 0
                }),
                StreamEvent::Stop(ModelStop::ToolUse),
            ]
        );
        for (data, message) in [
            (r#"{"error":{"message":"model not loaded"}}"#, "model not loaded"),
            (r#"{"error":"out of memory"}"#, "out of memory"),
        ] {
            let failed = OpenAiParser::default().frame(&frame(data));
            assert!(
                matches!(&failed, Err(ProviderError::StreamBroken { message: said }) if said == message),
                "{data}: {failed:?}"
            );
        }
        assert!(OpenAiParser::default().frame(&frame("{not json")).is_err());
    }

    #[test]
    fn a_stream_without_finish_reason_is_broken() {
        let mut parser = OpenAiParser::default();
        let _ = parser.frame(&frame(r#"{"choices":[{"index":0,"delta":{"content":"par"}}]}"#));
        assert!(matches!(parser.finish(), Err(ProviderError::StreamBroken { .. })));
    }
}
