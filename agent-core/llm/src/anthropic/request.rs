//! The Messages API request body, serialized straight from the borrowed conversation, with
//! Anthropic's prompt-cache breakpoints: the tools, the system prompt, and two in the
//! conversation (see [`cached_messages`]).

use serde::Serialize;
use serde::ser::{SerializeMap, Serializer};
use serde_json::Value;

use crate::{Message, ModelRequest, Part, ResultPart, Role, ThoughtLevel};

/// The request body, borrowing the conversation: serialized straight into the HTTP body,
/// never copied into a JSON tree first.
pub(super) fn body<'a>(request: &'a ModelRequest<'a>) -> Body<'a> {
    let mark = CacheControl::of(request);
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
        // The tools and the system prompt are stable across a session: each ends a cached
        // prefix, so a change to the system prompt alone still reads the tools from cache.
        system: [SystemBlock { kind: "text", text: request.system, cache_control: mark }],
        messages: Messages { messages: request.messages, cached: cached_messages(request.messages), mark },
        tools: request
            .tools
            .iter()
            .enumerate()
            .map(|(index, tool)| WireTool {
                name: &tool.name,
                description: &tool.description,
                input_schema: &tool.input_schema,
                cache_control: (index + 1 == request.tools.len()).then_some(mark),
            })
            .collect(),
        thinking,
    }
}

#[derive(Serialize)]
pub(super) struct Body<'a> {
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

/// A cache breakpoint: the prefix up to and including the block that carries it is written to
/// Anthropic's prompt cache, and read back by a later request that starts with the same bytes.
#[derive(Serialize, Clone, Copy)]
struct CacheControl {
    #[serde(rename = "type")]
    kind: &'static str,
    /// An hour instead of the default five minutes; every breakpoint of a request has the same.
    #[serde(skip_serializing_if = "Option::is_none")]
    ttl: Option<&'static str>,
}

impl CacheControl {
    fn of(request: &ModelRequest<'_>) -> Self {
        Self { kind: "ephemeral", ttl: request.long_cache.then_some("1h") }
    }
}

/// The messages that end with a cache breakpoint, at most two (with the tools' and the system
/// prompt's, Anthropic's limit of four): the newest, so the next request reads all of this one
/// from cache, and the user message the previous request ended with, where that request wrote
/// its cache. A read finds a cached prefix only at a breakpoint or up to 20 blocks before it, so
/// without the earlier one a request that added many blocks (a batch of tool calls and their
/// results) would read nothing and pay for the whole conversation again.
fn cached_messages(messages: &[Message]) -> [Option<usize>; 2] {
    let newest = messages.len().checked_sub(1);
    let earlier = newest.and_then(|newest| messages[..newest].iter().rposition(|message| message.role == Role::User));
    [newest, earlier]
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
    #[serde(skip_serializing_if = "Option::is_none")]
    cache_control: Option<CacheControl>,
}

/// The conversation in Anthropic's shape, with its cache breakpoints.
struct Messages<'a> {
    messages: &'a [Message],
    cached: [Option<usize>; 2],
    mark: CacheControl,
}

impl Serialize for Messages<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let cached = |index| self.cached.contains(&Some(index));
        serializer.collect_seq(
            self.messages
                .iter()
                .enumerate()
                .map(|(index, message)| WireMessage { message, mark: cached(index).then_some(self.mark) }),
        )
    }
}

struct WireMessage<'a> {
    message: &'a Message,
    /// The cache breakpoint its last block carries, if it does.
    mark: Option<CacheControl>,
}

impl Serialize for WireMessage<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let role = match self.message.role {
            Role::User => "user",
            Role::Assistant => "assistant",
        };
        // Unsigned thinking (from another provider) cannot be sent back to Anthropic.
        let sendable = |part: &&Part| !matches!(part, Part::Thinking { signature: None, .. });
        // Thinking blocks and empty text cannot carry a breakpoint; the block before them can.
        let marked = self.mark.and_then(|_| {
            self.message.content.iter().rposition(|part| {
                !matches!(part, Part::Thinking { .. }) && !matches!(part, Part::Text { text } if text.is_empty())
            })
        });
        let parts = || {
            self.message
                .content
                .iter()
                .enumerate()
                .filter(|(_, part)| sendable(part))
                .map(move |(index, part)| WirePart { part, mark: self.mark.filter(|_| marked == Some(index)) })
        };
        let mut message = serializer.serialize_map(Some(2))?;
        message.serialize_entry("role", role)?;
        message.serialize_entry("content", &Seq(parts))?;
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

struct WirePart<'a> {
    part: &'a Part,
    /// The cache breakpoint it carries, if it does.
    mark: Option<CacheControl>,
}

impl Serialize for WirePart<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut part = serializer.serialize_map(None)?;
        match self.part {
            Part::Text { text } => {
                part.serialize_entry("type", "text")?;
                part.serialize_entry("text", text)?;
            }
            Part::Note(note) => {
                part.serialize_entry("type", "text")?;
                part.serialize_entry("text", &note.render())?;
            }
            Part::Image { media_type, data } => Image { media_type, data }.serialize_into(&mut part)?,
            Part::Thinking { text, signature } => {
                part.serialize_entry("type", "thinking")?;
                part.serialize_entry("thinking", text)?;
                part.serialize_entry("signature", signature)?;
            }
            Part::ToolUse { id, name, input } => {
                part.serialize_entry("type", "tool_use")?;
                part.serialize_entry("id", id)?;
                part.serialize_entry("name", name)?;
                part.serialize_entry("input", &crate::sent_tool_input(input))?;
            }
            Part::ToolResult { tool_use_id, content, is_error } => {
                part.serialize_entry("type", "tool_result")?;
                part.serialize_entry("tool_use_id", tool_use_id)?;
                part.serialize_entry("content", &Seq(|| content.iter().map(WireResultPart)))?;
                part.serialize_entry("is_error", is_error)?;
            }
        }
        if let Some(mark) = &self.mark {
            part.serialize_entry("cache_control", mark)?;
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
            ResultPart::Image { media_type, data } => {
                Image { media_type, data }.serialize_into(&mut part)?;
                part.end()
            }
        }
    }
}

/// An image block: `{"type": "image", "source": {"type": "base64", ...}}`.
struct Image<'a> {
    media_type: &'a str,
    data: &'a str,
}

impl Image<'_> {
    fn serialize_into<M: SerializeMap>(&self, part: &mut M) -> Result<(), M::Error> {
        #[derive(Serialize)]
        struct Source<'a> {
            #[serde(rename = "type")]
            kind: &'static str,
            media_type: &'a str,
            data: &'a str,
        }
        part.serialize_entry("type", "image")?;
        part.serialize_entry("source", &Source { kind: "base64", media_type: self.media_type, data: self.data })
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

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
            cache_key: Some("sess_1"),
            long_cache: false,
        };
        let body = serde_json::to_value(body(&request)).unwrap();
        let budget = ThoughtLevel::High.budget_tokens().unwrap();
        assert_eq!(
            body,
            json!({
                "model": "m",
                "max_tokens": 1000u32.max(budget + 4096),
                "stream": true,
                "system": [{"type": "text", "text": "sys", "cache_control": {"type": "ephemeral"}}],
                "messages": [
                    // The user message the previous request ended with, and the newest, end
                    // with a cache breakpoint.
                    {"role": "user", "content": [{"type": "text", "text": "hi"}, {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AAAA"}, "cache_control": {"type": "ephemeral"}}]},
                    {"role": "assistant", "content": [
                        {"type": "thinking", "thinking": "hmm", "signature": "sig"},
                        {"type": "tool_use", "id": "t1", "name": "read", "input": {"path": "a"}}]},
                    {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": [{"type": "text", "text": "body"}], "is_error": true, "cache_control": {"type": "ephemeral"}}]},
                ],
                "tools": [{"name": "read", "description": "Reads", "input_schema": {"type": "object"}, "cache_control": {"type": "ephemeral"}}],
                "thinking": {"type": "enabled", "budget_tokens": budget},
            })
        );
    }

    /// A request with no thinking and no cache key.
    fn plain<'a>(messages: &'a [Message], tools: &'a [crate::ToolSpec], long_cache: bool) -> ModelRequest<'a> {
        ModelRequest {
            model: "m",
            system: "sys",
            messages,
            tools,
            max_tokens: 1000,
            thought_level: None,
            cache_key: None,
            long_cache,
        }
    }

    /// Over a tool loop, each request reads the cache where the previous one wrote it (its
    /// newest message is the next request's earlier breakpoint), however many blocks a round
    /// adds, and no request has more than Anthropic's four breakpoints.
    #[test]
    fn each_request_reads_the_cache_where_the_previous_one_wrote_it() {
        let tools = [crate::ToolSpec { name: "read".into(), description: "Reads".into(), input_schema: json!({}) }];
        let mut messages = vec![Message::user_text("survey the crate")];
        let mut written: Option<Value> = None;
        for round in 0..6 {
            let body = serde_json::to_value(body(&plain(&messages, &tools, false))).unwrap();
            let text = body.to_string();
            assert_eq!(text.matches("cache_control").count(), if round == 0 { 3 } else { 4 }, "{text}");
            let marked: Vec<Value> = body["messages"]
                .as_array()
                .unwrap()
                .iter()
                .flat_map(|message| message["content"].as_array().unwrap().clone())
                .filter(|block| block.get("cache_control").is_some())
                .collect();
            if let Some(written) = &written {
                assert_eq!(&marked[0], written, "round {round} reads where round {} wrote", round - 1);
            }
            written = marked.last().cloned();
            // Each round adds a thinking block, eight calls and their results: more than the
            // 20 blocks a read looks back.
            let calls: Vec<Part> = (0..8)
                .map(|call| Part::ToolUse { id: format!("t{round}.{call}"), name: "read".into(), input: json!({}) })
                .collect();
            let mut said = vec![Part::Thinking { text: "next".into(), signature: Some("s".into()) }];
            said.extend(calls);
            messages.push(Message { role: Role::Assistant, content: said });
            let results = (0..8)
                .map(|call| Part::ToolResult {
                    tool_use_id: format!("t{round}.{call}"),
                    content: vec![ResultPart::Text { text: format!("file {round}.{call}") }],
                    is_error: false,
                })
                .collect();
            messages.push(Message { role: Role::User, content: results });
        }
    }

    /// `promptCacheTtl: "1h"` puts the hour on every breakpoint: Anthropic refuses a request
    /// whose longer-lived breakpoints come after shorter-lived ones.
    #[test]
    fn a_long_cache_marks_every_breakpoint_for_an_hour() {
        let tools = [crate::ToolSpec { name: "read".into(), description: "Reads".into(), input_schema: json!({}) }];
        let messages = [Message::user_text("one"), Message::user_text("two")];
        let text = serde_json::to_string(&body(&plain(&messages, &tools, true))).unwrap();
        let hour = r#""cache_control":{"type":"ephemeral","ttl":"1h"}"#;
        assert_eq!((text.matches("cache_control").count(), text.matches(hour).count()), (4, 4), "{text}");
    }
}
