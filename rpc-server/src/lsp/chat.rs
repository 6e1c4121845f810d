//! Chat files (`*.larik.md`): the prompt is whatever the user wrote under the last heading, and
//! the reply is appended to the file through `workspace/applyEdit`, batched so the editor's undo
//! history gets a few steps rather than one per token.

use std::time::{Duration, Instant};

use serde_json::json;

use super::client::Client;

pub const EXTENSION: &str = ".larik.md";
const FLUSH_EVERY: Duration = Duration::from_millis(250);

pub fn is_chat(uri: &str) -> bool {
    uri.ends_with(EXTENSION)
}

/// The text under the last heading, if any was written there.
pub fn prompt_from(text: &str) -> Option<String> {
    let lines: Vec<&str> = text.lines().collect();
    let start = lines.iter().rposition(|line| line.starts_with('#')).map_or(0, |index| index + 1);
    let prompt = lines[start..].join("\n").trim().to_owned();
    (!prompt.is_empty()).then_some(prompt)
}

/// Appends to the end of a chat document.
pub struct ChatWriter {
    client: Client,
    uri: String,
    /// The document as it will be after our edits: where its end is.
    text: String,
    pending: String,
    last_flush: Instant,
}

impl ChatWriter {
    pub fn new(client: Client, uri: String, text: String) -> Self {
        Self { client, uri, text, pending: String::new(), last_flush: Instant::now() }
    }

    pub async fn push(&mut self, text: &str) {
        self.pending.push_str(text);
        if self.last_flush.elapsed() >= FLUSH_EVERY {
            self.flush().await;
        }
    }

    pub async fn flush(&mut self) {
        if self.pending.is_empty() {
            return;
        }
        let insert = std::mem::take(&mut self.pending);
        let line = self.text.matches('\n').count();
        let character = self.text.rsplit('\n').next().unwrap_or_default().encode_utf16().count();
        let position = json!({"line": line, "character": character});
        let edit = json!({"changes": {self.uri.clone(): [{"range": {"start": position, "end": position}, "newText": insert}]}});
        let _ = self.client.request("workspace/applyEdit", json!({"label": "Larik", "edit": edit})).await;
        self.text.push_str(&insert);
        self.last_flush = Instant::now();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_prompt_is_under_the_last_heading() {
        assert_eq!(prompt_from("# Chat\n\n## You\n\nFix the tests\nplease\n"), Some("Fix the tests\nplease".into()));
        assert_eq!(prompt_from("## Larik\n\nDone.\n\n## You\n\n"), None);
        assert_eq!(prompt_from("no heading at all"), Some("no heading at all".into()));
    }
}
