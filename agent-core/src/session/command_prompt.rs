//! A skill or custom command typed as the prompt (`/name args`), expanded inside its turn. Its
//! inline commands (`` !`cmd` ``) and attached files (`@path`) are calls like the model's: they
//! take the one dispatch pipeline (PreToolUse hooks, which may block or rewrite them, the
//! permission decision, the turn's checkpoint, output truncation, the session record, the
//! editor's tool events), except that a call that would ask is left out with a note instead:
//! the user typed a command, not an approval of what a file in the repository runs.

use serde_json::{Value, json};

use super::dispatch::{Asking, Dispatch};
use super::turn::Turn;
use crate::llm::Part;
use crate::skills::expand::{self, Expansion, MAX_INLINE, Outcome};
use crate::tools::{Bash, Read, Tool, ToolCall, ToolCallId, ToolOutput};

impl Turn<'_> {
    /// When the user's text in `prompt` calls a skill or command, replaces it with the
    /// expansion. Returns why the turn must stop, when a hook said so.
    pub(super) async fn expand_command(&self, prompt: &mut [Part]) -> Option<String> {
        // The user's own text: the editor's context and hooks' come as notes.
        let (index, typed) = prompt.iter().enumerate().find_map(|(index, part)| match part {
            Part::Text { text } => Some((index, text.as_str())),
            _ => None,
        })?;
        let (skill, args) = self.env.skills.typed(typed)?;
        let expansion = Expansion::new(&skill, &args, &self.env.tools);
        let commands: Vec<ToolCall> = expansion
            .commands()
            .into_iter()
            .take(MAX_INLINE)
            .enumerate()
            .map(|(number, command)| {
                inline_call(
                    number,
                    <Bash as Tool>::NAME,
                    json!({"command": command, "description": format!("inline command of /{}", skill.name)}),
                )
            })
            .collect();
        let files = expand::attachments(&expansion.body(), &self.env.tools);
        let (outcomes, halt) = self.run_unasked(&commands).await;
        let text = expansion.with_outputs(outcomes);
        if halt.is_some() {
            return halt;
        }
        let reads: Vec<ToolCall> = files
            .iter()
            .enumerate()
            .map(|(number, path)| inline_call(MAX_INLINE + number, <Read as Tool>::NAME, json!({"path": path})))
            .collect();
        let (outcomes, halt) = self.run_unasked(&reads).await;
        prompt[index] = Part::Text { text: expand::with_attachments(text, &files, outcomes) };
        halt
    }

    /// Runs `calls` through the dispatch pipeline without asking anyone: each one's output, or
    /// why it did not run; and why the turn must stop, when a hook said so.
    async fn run_unasked(&self, calls: &[ToolCall]) -> (Vec<Outcome>, Option<String>) {
        if calls.is_empty() {
            return (Vec::new(), None);
        }
        let dispatch = Dispatch { env: self.env, events: self.events, cancel: self.cancel, asking: Asking::LeaveOut };
        let dispatched = dispatch.run(calls).await;
        let outcomes = dispatched
            .results
            .content
            .into_iter()
            .map(|part| match part {
                Part::ToolResult { content, is_error, .. } => {
                    let text = ToolOutput { content, is_error, display: None }.text_content();
                    if is_error { Err(text) } else { Ok(text) }
                }
                _ => Err("it gave no result".to_owned()),
            })
            .collect();
        (outcomes, dispatched.halt)
    }
}

/// A call the prompt makes, with an id unique in the session (the editor shows it like any).
fn inline_call(number: usize, tool: &str, input: Value) -> ToolCall {
    ToolCall {
        id: ToolCallId(format!("prompt-{:x}-{number}", crate::clock::now_nanos())),
        name: tool.to_owned(),
        input,
    }
}
