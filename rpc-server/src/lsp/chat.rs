//! Chat files (`*.larik.md`): the prompt is whatever the user wrote under the last heading, and
//! the reply is appended to the file through `workspace/applyEdit`, batched so the editor's undo
//! history gets a few steps rather than one per token.
//!
//! The end of the reply may be provisional (a running tool call, a question waiting on the
//! user): [`ChatWriter::set_tail`] rewrites that tail in place until permanent text follows it.

use std::time::{Duration, Instant};

use lsp_types::{Position, Range};

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

/// The headings a reply uses, following the file's own: the answer's heading at the level of the
/// user's last heading, and the user's heading again below it for the next message.
#[derive(Debug, PartialEq, Eq)]
pub struct Headings {
    pub reply: String,
    pub next: String,
}

pub fn headings_for(text: &str) -> Headings {
    // The user's heading is the last one that is not Larik's own reply heading.
    let user = text
        .lines()
        .rev()
        .filter(|line| line.starts_with('#'))
        .find(|line| line.trim_start_matches('#').trim() != "Larik");
    match user {
        Some(line) => {
            let level = line.chars().take_while(|c| *c == '#').count();
            let hashes = "#".repeat(level);
            Headings { reply: format!("{hashes} Larik"), next: line.trim_end().to_owned() }
        }
        None => Headings { reply: "## Larik".into(), next: "## You".into() },
    }
}

/// Appends to the end of a chat document.
pub struct ChatWriter {
    client: Client,
    uri: String,
    /// The document as it will be after our edits: where its end is.
    text: String,
    /// Where the provisional tail starts in `text`, if one is shown.
    tail_start: Option<usize>,
    /// Text rewritten in place whenever it changes (the plan), wherever it first stood.
    region: Option<std::ops::Range<usize>>,
    pending: String,
    last_flush: Instant,
}

impl ChatWriter {
    pub fn new(client: Client, uri: String, text: String) -> Self {
        Self { client, uri, text, tail_start: None, region: None, pending: String::new(), last_flush: Instant::now() }
    }

    /// Appends permanent text; a provisional tail before it becomes permanent as it stands.
    pub async fn push(&mut self, text: &str) {
        self.tail_start = None;
        self.pending.push_str(text);
        if self.last_flush.elapsed() >= FLUSH_EVERY {
            self.flush().await;
        }
    }

    /// Replaces the provisional tail (empty to remove it) at once.
    pub async fn set_tail(&mut self, tail: &str) {
        self.flush().await;
        let start = self.tail_start.unwrap_or(self.text.len());
        if self.text[start..] != *tail {
            self.replace(start, tail).await;
        }
        self.tail_start = Some(start);
    }

    /// Writes `text` where it was written before, replacing it; the first time, as permanent
    /// text at the end (a tail before it becomes permanent).
    pub async fn set_region(&mut self, text: &str) {
        self.flush().await;
        match self.region.clone() {
            Some(range) if self.text[range.clone()] == *text => {}
            Some(range) => {
                self.splice(range.clone(), text).await;
                self.region = Some(range.start..range.start + text.len());
                if let Some(tail) = self.tail_start.as_mut()
                    && *tail >= range.end
                {
                    *tail = *tail - range.len() + text.len();
                }
            }
            None => {
                self.tail_start = None;
                let start = self.text.len();
                self.splice(start..start, text).await;
                self.region = Some(start..start + text.len());
            }
        }
    }

    /// The text written so far ends with `suffix`, pending text included.
    pub fn ends_with(&self, suffix: &str) -> bool {
        let mut whole = self.text.clone();
        whole.push_str(&self.pending);
        whole.ends_with(suffix)
    }

    pub async fn flush(&mut self) {
        if self.pending.is_empty() {
            return;
        }
        let insert = std::mem::take(&mut self.pending);
        self.replace(self.text.len(), &insert).await;
        self.last_flush = Instant::now();
    }

    /// Replaces `text[start..]` with `with`, in the editor and here.
    async fn replace(&mut self, start: usize, with: &str) {
        self.splice(start..self.text.len(), with).await;
    }

    /// Replaces `text[range]` with `with`, in the editor and here.
    async fn splice(&mut self, range: std::ops::Range<usize>, with: &str) {
        let lsp_range = Range::new(position(&self.text[..range.start]), position(&self.text[..range.end]));
        if let Err(error) = self.client.replace(&self.uri, lsp_range, with.to_owned()).await {
            tracing::warn!(%error, "the chat file could not be written");
        }
        self.text.replace_range(range, with);
    }
}

/// The LSP position just after `text` (UTF-16 columns).
fn position(text: &str) -> Position {
    let line = text.matches('\n').count();
    let character = text.rsplit('\n').next().unwrap_or_default().encode_utf16().count();
    Position::new(u32::try_from(line).unwrap_or(u32::MAX), u32::try_from(character).unwrap_or(u32::MAX))
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

    #[test]
    fn replies_follow_the_files_own_headings() {
        let question = Headings { reply: "# Larik".into(), next: "# Question".into() };
        assert_eq!(headings_for("# Question\n\nWhy?\n"), question);
        assert_eq!(headings_for("# Question\n\nWhy?\n\n# Larik\n\nBecause.\n\n# Question\n\nAnd?\n"), question);
        assert_eq!(headings_for("Why?\n"), Headings { reply: "## Larik".into(), next: "## You".into() });
        assert_eq!(headings_for("# Notes\n\n## You\n\nWhy?\n").next, "## You");
    }

    #[test]
    fn positions_count_utf16_columns() {
        assert_eq!(position("a\nbé😀"), Position::new(1, 4));
        assert_eq!(position(""), Position::new(0, 0));
    }
}
