//! Entry points for the fuzz targets (`fuzz/`): the parsers and matchers that take bytes
//! nobody vetted (a model's stream, a bash line, a session file, settings and Markdown
//! definitions from a cloned repository), driven through the same code the agent runs. Not for
//! front ends.

use std::path::Path;

use futures::StreamExt;

use crate::llm::{EventStream, ProviderError, StreamEvent};

/// Which wire format a stream is parsed as.
#[derive(Debug, Clone, Copy)]
pub enum WireFormat {
    Anthropic,
    OpenAi,
}

/// The events a response body yields when it arrives in these pieces, adjacent text (and
/// thinking) deltas joined, as each would print: whatever the split, the same list.
pub fn stream_events(format: WireFormat, pieces: &[&[u8]]) -> Vec<String> {
    let body = futures::stream::iter(
        pieces.iter().map(|piece| Ok::<Vec<u8>, std::convert::Infallible>(piece.to_vec())).collect::<Vec<_>>(),
    );
    let stream: EventStream = match format {
        WireFormat::Anthropic => crate::llm::sse::parse_body(body, crate::llm::anthropic::AnthropicParser::default()),
        WireFormat::OpenAi => crate::llm::sse::parse_body(body, crate::llm::openai::OpenAiParser::default()),
    };
    let events: Vec<Result<StreamEvent, ProviderError>> = futures::executor::block_on(stream.collect());
    let mut joined: Vec<Result<StreamEvent, ProviderError>> = Vec::new();
    for event in events {
        match (joined.last_mut(), event) {
            (Some(Ok(StreamEvent::TextDelta(text))), Ok(StreamEvent::TextDelta(more))) => text.push_str(&more),
            (Some(Ok(StreamEvent::ThinkingDelta(text))), Ok(StreamEvent::ThinkingDelta(more))) => text.push_str(&more),
            (_, event) => joined.push(event),
        }
    }
    joined.into_iter().filter(|event| !matches!(event, Ok(StreamEvent::TextDelta(text) | StreamEvent::ThinkingDelta(text)) if text.is_empty())).map(|event| format!("{event:?}")).collect()
}

/// What the shell splitter makes of a line: its simple commands, and whether it has command
/// substitution, writes a file, or did not parse.
pub fn shell_line(line: &str) -> (Vec<String>, bool, bool, bool) {
    let parsed = crate::shell::parse(line);
    (parsed.commands, parsed.has_substitution, parsed.writes_file, parsed.unparsable)
}

/// Whether these allow rules (Claude Code's `Bash(ls:*)` form) let `line` run without asking.
pub fn bash_line_allowed(allow: &[String], line: &str) -> bool {
    crate::permission::bash_line_allowed(allow, line)
}

/// Loads a session file's bytes; returns the record count, the skipped lines and the
/// conversation's message count.
pub fn session_file(bytes: &[u8]) -> (usize, usize, usize) {
    let session = crate::session::store::StoredSession::from_bytes("fuzz", bytes);
    (session.records.len(), session.skipped_lines, session.messages().len())
}

/// Reads a settings file's text the way each part does: the settings, the permission rules,
/// the hooks. Returns whether the settings parsed.
pub fn settings_file(text: &str) -> bool {
    let path = Path::new("/project/.claude/settings.json");
    let parsed = crate::config::parse_layer(path, text).is_ok();
    if let Ok(value) = serde_json::from_str::<serde_json::Value>(text) {
        if let Some(permissions) = value.get("permissions").cloned()
            && let Ok(permissions) = serde_json::from_value::<crate::config::PermissionSettings>(permissions)
        {
            let _ =
                crate::permission::rules::RuleSet::from_lists(&permissions.allow, &permissions.deny, &permissions.ask);
        }
        let mut hooks = crate::hooks::Hooks::default();
        let _ = hooks.read_settings(path, crate::hooks::Scope::Project, &value);
    }
    parsed
}

/// Reads a Markdown definition as an agent, a skill and a command.
pub fn markdown_definition(text: &str) {
    let _ = crate::agents::definitions::parse(Path::new("/project/.claude/agents/fuzz.md"), text);
    let _ = crate::skills::discovery::parse(
        "fuzz".into(),
        crate::skills::Kind::Skill { dir: "/project/.claude/skills/fuzz".into() },
        Path::new("/project/.claude/skills/fuzz/SKILL.md"),
        text,
    );
    let _ = crate::skills::discovery::parse(
        "fuzz".into(),
        crate::skills::Kind::Command,
        Path::new("/project/.claude/commands/fuzz.md"),
        text,
    );
}
