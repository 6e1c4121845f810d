//! Compaction: the older part of a conversation replaced by the model's summary of it, so a long
//! session goes on within the model's window. Automatic before a request that would come near
//! the window and after the provider said the context overflowed; by hand with
//! `/compact [instructions]`.
//!
//! It has to work when the context is already too large, so the conversation is never sent
//! again whole: the summary is asked for over a plain-text transcript of the older messages
//! (tool inputs and outputs cut), in slices that fit, oldest first, each folded into the summary
//! of the ones before. The latest messages stay as they were, so a turn compacted in the middle
//! goes on where it was.

use serde_json::json;

pub use larik_settings::CompactionSettings;

pub use crate::event::CompactionTrigger as Trigger;

use super::TurnError;
use super::store::Record;
use super::turn::{Shown, Turn};
use crate::event::{AgentEvent, CompactionState};
use crate::hooks::HookEvent;
use crate::llm::{Message, ModelRequest, Part, ResultPart, Role};
use crate::tools::truncate::{floor_char_boundary, truncate_middle};
use crate::tools::{Todo, Tool};

/// How a compaction ended, when it did not fail.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Compacted {
    /// Done; the latest `kept` messages stayed as they were.
    Done {
        kept: usize,
    },
    /// Nothing was compacted (a hook kept it, or there was nothing older to summarize).
    Skipped(String),
    Cancelled,
}

/// A tool's input or output in the transcript is cut to this many bytes.
const TRANSCRIPT_TOOL_BYTES: usize = 2_000;
/// A tool result the kept messages carry is never cut below this many bytes.
const KEPT_RESULT_MIN_BYTES: usize = 2_000;
/// What an image counts for in an estimate.
const IMAGE_TOKENS: u64 = 1_600;
/// The share of the window the kept latest messages may take.
const KEPT_SHARE: u64 = 10;

/// Tokens `messages` take, estimated from their size at about four bytes a token (images at a
/// flat rate: their base64 says nothing about their cost).
pub fn estimated_tokens(messages: &[Message]) -> u64 {
    messages.iter().flat_map(|message| &message.content).map(part_tokens).sum()
}

fn part_tokens(part: &Part) -> u64 {
    let bytes = |text: &str| text.len() as u64 / 4 + 1;
    match part {
        Part::Text { text } | Part::Thinking { text, .. } => bytes(text),
        Part::Note(note) => bytes(&note.render()),
        Part::Image { .. } => IMAGE_TOKENS,
        Part::ToolUse { name, input, .. } => bytes(name) + bytes(&input.to_string()),
        Part::ToolResult { content, .. } => content
            .iter()
            .map(|part| match part {
                ResultPart::Text { text } => bytes(text),
                ResultPart::Image { .. } => IMAGE_TOKENS,
            })
            .sum(),
    }
}

/// Where the kept latest messages start: the earliest point from which they fit in `keep_tokens`
/// and at which a conversation may resume after a summary (an answer of the model's, or a
/// prompt that answers no tool call). In the middle of a turn what the next request answers is
/// always kept: the prompt, or the last call and its results, so the model goes on with them.
pub fn kept_from(history: &[Message], keep_tokens: u64) -> usize {
    let resumable = |index: usize| {
        let message = &history[index];
        message.role == Role::Assistant || !message.content.iter().any(|part| matches!(part, Part::ToolResult { .. }))
    };
    let latest_allowed = match history.last() {
        Some(last) if last.role == Role::User && resumable(history.len() - 1) => history.len() - 1,
        Some(last) if last.role == Role::User => {
            history.iter().rposition(|message| message.role == Role::Assistant).unwrap_or(0)
        }
        _ => history.len(),
    };
    let mut kept = latest_allowed;
    let mut tokens = estimated_tokens(&history[latest_allowed..]);
    for index in (0..latest_allowed).rev() {
        tokens += estimated_tokens(std::slice::from_ref(&history[index]));
        if tokens > keep_tokens {
            break;
        }
        if resumable(index) {
            kept = index;
        }
    }
    kept
}

/// The conversation as plain text for the summarizer: who said what, tool calls with their
/// inputs and results cut to [`TRANSCRIPT_TOOL_BYTES`].
pub fn transcript(messages: &[Message]) -> String {
    let mut text = String::new();
    for message in messages {
        for part in &message.content {
            let line = match (message.role, part) {
                (Role::User, Part::Text { text }) => format!("USER: {text}"),
                (Role::Assistant, Part::Text { text }) => format!("ASSISTANT: {text}"),
                (Role::User, Part::Note(note)) => format!("USER: {}", note.render()),
                (Role::Assistant, Part::Note(note)) => format!("ASSISTANT: {}", note.render()),
                (_, Part::Thinking { .. }) => continue,
                (_, Part::Image { .. }) => "[an image]".to_owned(),
                (_, Part::ToolUse { name, input, .. }) => {
                    format!("TOOL CALL {name}: {}", truncate_middle(&input.to_string(), TRANSCRIPT_TOOL_BYTES))
                }
                (_, Part::ToolResult { content, is_error, .. }) => {
                    let output: String = content
                        .iter()
                        .map(|part| match part {
                            ResultPart::Text { text } => text.as_str(),
                            ResultPart::Image { .. } => "[an image]",
                        })
                        .collect::<Vec<_>>()
                        .join("\n");
                    format!(
                        "TOOL {}: {}",
                        if *is_error { "ERROR" } else { "RESULT" },
                        truncate_middle(&output, TRANSCRIPT_TOOL_BYTES)
                    )
                }
            };
            text.push_str(&line);
            text.push_str("\n\n");
        }
    }
    text
}

/// `text` in slices of at most about `max` bytes, cut between lines where it can be.
pub fn slices(text: &str, max: usize) -> Vec<&str> {
    let mut slices = Vec::new();
    let mut rest = text;
    while rest.len() > max {
        let limit = floor_char_boundary(rest, max);
        let end = rest[..limit].rfind('\n').filter(|at| *at > max / 2).map_or(limit, |at| at + 1);
        slices.push(&rest[..end]);
        rest = &rest[end..];
    }
    if !rest.trim().is_empty() {
        slices.push(rest);
    }
    slices
}

/// The task list as the `todo` tool was last given it, so it survives the summary word for word.
fn latest_todos(messages: &[Message]) -> Option<String> {
    messages.iter().rev().flat_map(|message| message.content.iter().rev()).find_map(|part| match part {
        Part::ToolUse { name, input, .. } if name == <Todo as Tool>::NAME => Some(input.to_string()),
        _ => None,
    })
}

/// The opening of the conversation after a compaction: the summary as a user message, and the
/// model's word that it has it when what follows is the user's again.
pub fn summary_messages(summary: &str, next_is_user: bool) -> Vec<Message> {
    let mut messages = vec![Message::user_text(format!("<conversation-summary>\n{summary}\n</conversation-summary>"))];
    if next_is_user {
        messages
            .push(Message { role: Role::Assistant, content: vec![Part::Text { text: SUMMARY_ACKNOWLEDGED.into() }] });
    }
    messages
}

/// The kept messages with their tool results cut to a share each of `budget_bytes`, so the
/// latest exchange, always kept in the middle of a turn, does not fill the window again.
fn bounded(kept: &[Message], budget_bytes: usize) -> Vec<Message> {
    let mut kept = kept.to_vec();
    let results =
        kept.iter().flat_map(|message| &message.content).filter(|part| matches!(part, Part::ToolResult { .. })).count();
    let share = (budget_bytes / results.max(1)).max(KEPT_RESULT_MIN_BYTES);
    for part in kept.iter_mut().flat_map(|message| message.content.iter_mut()) {
        if let Part::ToolResult { content, .. } = part {
            for result in content.iter_mut() {
                if let ResultPart::Text { text } = result
                    && text.len() > share
                {
                    *text = truncate_middle(text, share);
                }
            }
        }
    }
    kept
}

const SUMMARY_ACKNOWLEDGED: &str = "I have the summary of our conversation and will continue from it.";

const SUMMARIZER_SYSTEM: &str = "You write the working notes a coding agent continues from after its conversation was compacted. You see a transcript of the conversation (possibly in parts, with your notes on the earlier parts). Keep what the agent needs to go on without the transcript: the user's task and requests in their words, decisions made and why, files read, created or changed and how, commands run and what they showed, errors met and open problems, what is done and what is left, and anything the user asked to remember. Be complete but brief; use headed lists. Write only the notes.";

/// The request for one slice of the transcript.
fn summary_request(previous: Option<&str>, slice: &str, part: usize, parts: usize, instructions: &str) -> String {
    let mut request = String::new();
    if let Some(previous) = previous {
        request.push_str(&format!("<notes-so-far>\n{previous}\n</notes-so-far>\n\n"));
    }
    request.push_str(&format!("<transcript part=\"{part} of {parts}\">\n{slice}\n</transcript>\n\n"));
    request.push_str(if previous.is_some() {
        "Update the notes so far with this part of the transcript; keep everything in them that still matters."
    } else {
        "Write the notes for this transcript."
    });
    if !instructions.trim().is_empty() {
        request.push_str(&format!("\n\nThe user's instructions for the notes: {}", instructions.trim()));
    }
    request
}

impl Turn<'_> {
    /// Replaces the older part of `history` with a summary, keeping the latest messages. Hooks
    /// run around it for the session's own turns (PreCompact before, which may refuse it;
    /// SessionStart with `compact` after, whose context joins the summary).
    pub async fn compact(
        &self,
        history: &mut Vec<Message>,
        trigger: Trigger,
        instructions: &str,
    ) -> Result<Compacted, TurnError> {
        if history.is_empty() {
            return Ok(Compacted::Skipped("the conversation is empty".into()));
        }
        let hooks = self.child.is_none();
        if hooks {
            let mut fields = serde_json::Map::new();
            fields.insert("trigger".into(), json!(trigger.id()));
            fields.insert("custom_instructions".into(), json!(instructions));
            let before = self.env.hooks.run(HookEvent::PreCompact, &[trigger.id()], fields, &self.point()).await;
            if let Some(reason) = before.block.or(before.stop) {
                return Ok(Compacted::Skipped(format!("A hook kept the conversation from being compacted: {reason}")));
            }
        }
        let window = self.context_window();
        // By hand between turns everything is summarized; on its own, the latest messages stay.
        let keep = match trigger {
            Trigger::Manual | Trigger::Overflow => 0,
            Trigger::Auto => window / KEPT_SHARE,
        };
        let kept = kept_from(history, keep);
        if kept == 0 {
            return Ok(Compacted::Skipped("there is nothing older than the latest exchange to summarize".into()));
        }
        let id = format!("compaction-{:x}", crate::clock::now_nanos());
        self.emit(AgentEvent::Compaction { id: id.clone(), trigger, state: CompactionState::Started }).await;
        let summary = match self.summarize(&history[..kept], instructions).await {
            Ok(Some(summary)) => summary,
            Ok(None) => {
                self.emit(AgentEvent::Compaction { id, trigger, state: CompactionState::Cancelled }).await;
                return Ok(Compacted::Cancelled);
            }
            Err(error) => {
                self.emit(AgentEvent::Compaction {
                    id,
                    trigger,
                    state: CompactionState::Failed { error: error.to_string() },
                })
                .await;
                return Err(error);
            }
        };
        let mut notes = summary.clone();
        if let Some(todos) = latest_todos(history) {
            notes.push_str(&format!("\n\nThe task list as last set with the todo tool: {todos}"));
        }
        if hooks {
            let mut fields = serde_json::Map::new();
            let source = crate::event::SessionStart::Compact.id();
            fields.insert("source".into(), json!(source));
            fields.insert("model".into(), json!(self.model.model));
            let started = self.env.hooks.run(HookEvent::SessionStart, &[source], fields, &self.point()).await;
            for text in super::hook_points::rendered(crate::llm::HookPurpose::Context, &started.context) {
                notes.push_str("\n\n");
                notes.push_str(&text);
            }
        }
        let tail = bounded(&history[kept..], usize::try_from(window / KEPT_SHARE * 4).unwrap_or(usize::MAX));
        let kept = tail.len();
        let next_is_user = tail.first().is_none_or(|message| message.role == Role::User);
        let mut compacted = summary_messages(&notes, next_is_user);
        compacted.extend(tail);
        if let Some(log) = &self.env.log {
            log.append(&Record::Compaction { id: id.clone(), summary: summary.clone(), messages: compacted.clone() });
        }
        *history = compacted;
        // The summary keeps no scoped memory: it is given again where its files are touched.
        self.env.memory.forget();
        self.emit(AgentEvent::Compaction { id, trigger, state: CompactionState::Completed { summary } }).await;
        Ok(Compacted::Done { kept })
    }

    /// The model's notes on `messages`, asked slice by slice; `None` when the user cancelled.
    async fn summarize(&self, messages: &[Message], instructions: &str) -> Result<Option<String>, TurnError> {
        let transcript = transcript(messages);
        // Half the window for the slice (at four bytes a token), the rest for the notes so far,
        // the instructions and the answer.
        let slice_bytes = usize::try_from(self.context_window() * 2).unwrap_or(usize::MAX).clamp(16_000, 800_000);
        let slices = slices(&transcript, slice_bytes);
        let mut notes: Option<String> = None;
        for (index, slice) in slices.iter().enumerate() {
            let request_text = summary_request(notes.as_deref(), slice, index + 1, slices.len(), instructions);
            let messages = [Message::user_text(request_text)];
            let request = ModelRequest {
                model: &self.model.model,
                system: SUMMARIZER_SYSTEM,
                messages: &messages,
                tools: &[],
                max_tokens: self.model.max_tokens.min(8_192),
                thought_level: None,
                cache_key: Some(&self.env.tools.session_id),
                long_cache: self.env.limits.long_cache,
            };
            let response = self.stream_response(&request, Shown::Not).await?;
            if response.stop.is_none() {
                return Ok(None);
            }
            let text: String = response
                .message
                .content
                .iter()
                .filter_map(|part| match part {
                    Part::Text { text } => Some(text.as_str()),
                    _ => None,
                })
                .collect();
            notes = Some(text.trim().to_owned());
        }
        Ok(notes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn assistant_calls(id: &str) -> Message {
        Message {
            role: Role::Assistant,
            content: vec![Part::ToolUse { id: id.into(), name: "read".into(), input: json!({"path": "a.rs"}) }],
        }
    }

    fn results(id: &str, text: &str) -> Message {
        Message {
            role: Role::User,
            content: vec![Part::ToolResult {
                tool_use_id: id.into(),
                content: vec![ResultPart::Text { text: text.into() }],
                is_error: false,
            }],
        }
    }

    fn answer(text: &str) -> Message {
        Message { role: Role::Assistant, content: vec![Part::Text { text: text.into() }] }
    }

    #[test]
    fn the_kept_messages_start_where_the_conversation_can_resume() {
        let big = "x".repeat(40_000);
        let history = vec![
            Message::user_text("fix the parser"),
            assistant_calls("1"),
            results("1", &big),
            answer("done"),
            Message::user_text("now the lexer"),
            assistant_calls("2"),
            results("2", "small"),
        ];
        // Mid-turn: the last call and its results stay, never the results alone.
        assert_eq!(kept_from(&history, 5), 5);
        // With room for more, the latest prompt and answer are kept too, but not the big result.
        assert_eq!(kept_from(&history, 100), 3);
        assert_eq!(kept_from(&history, 20_000), 0, "everything fits");
        // Between turns, keeping nothing summarizes everything.
        let idle = &history[..4];
        assert_eq!(kept_from(idle, 0), 4);
        assert_eq!(kept_from(idle, 5), 3);
        // At a turn's first request, its prompt stays.
        assert_eq!(kept_from(&history[..5], 0), 4);
    }

    #[test]
    fn a_transcript_cuts_large_outputs_and_slices_fit() {
        let history = vec![
            Message::user_text("go"),
            assistant_calls("1"),
            results("1", &format!("start{}end", "y".repeat(50_000))),
        ];
        let text = transcript(&history);
        assert!(text.len() < 3_000, "{}", text.len());
        assert!(text.contains("start") && text.contains("end") && text.contains("bytes cut"));
        let long = "line of the transcript\n".repeat(10_000);
        let parts = slices(&long, 16_000);
        assert!(parts.len() > 10 && parts.iter().all(|part| part.len() <= 16_000));
        assert_eq!(parts.concat(), long, "nothing is lost between slices");
        assert!(parts.iter().all(|part| part.ends_with('\n')), "cut between lines");
    }

    #[test]
    fn a_summary_opens_the_conversation_in_turn_order() {
        assert_eq!(summary_messages("notes", true).len(), 2);
        let opening = summary_messages("notes", false);
        assert_eq!(opening.len(), 1);
        assert_eq!(opening[0].role, Role::User);
        let kept = bounded(
            &[assistant_calls("1"), results("1", &"z".repeat(100_000)), results("2", &"z".repeat(100_000))],
            20_000,
        );
        let Part::ToolResult { content, .. } = &kept[2].content[0] else { panic!() };
        let ResultPart::Text { text } = &content[0] else { panic!() };
        assert!(text.len() < 10_100, "each of two results gets half: {}", text.len());
    }

    #[test]
    fn the_todo_list_survives_word_for_word() {
        let history = vec![Message {
            role: Role::Assistant,
            content: vec![Part::ToolUse {
                id: "t".into(),
                name: "todo".into(),
                input: json!({"todos": [{"content": "write the lexer", "status": "pending"}]}),
            }],
        }];
        assert!(latest_todos(&history).unwrap().contains("write the lexer"));
    }
}
