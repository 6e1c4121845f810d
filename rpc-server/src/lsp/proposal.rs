//! A proposed edit under review in the editor: its hunks, where each now sits in the buffer
//! (earlier applied hunks shift later ones), and the user's decision on each.

use std::path::PathBuf;

use larik_core::event::PermissionAnswer;
use larik_core::review::{self, Hunk};
use tokio::sync::oneshot;

pub struct Proposal {
    pub id: u64,
    pub path: PathBuf,
    pub uri: String,
    pub hunks: Vec<Hunk>,
    decisions: Vec<Option<bool>>,
    reply: Option<oneshot::Sender<PermissionAnswer>>,
}

/// A text edit in buffer coordinates: replace lines `start..end` (0-based, end exclusive).
pub struct LineEdit {
    pub start: usize,
    pub end: usize,
    pub new_text: String,
}

impl Proposal {
    pub fn new(id: u64, path: PathBuf, uri: String, old_text: &str, new_text: &str, reply: oneshot::Sender<PermissionAnswer>) -> Self {
        let hunks = review::hunks(old_text, new_text);
        Self { id, path, uri, decisions: vec![None; hunks.len()], hunks, reply: Some(reply) }
    }

    /// Hunks still waiting for a decision.
    pub fn pending(&self) -> impl Iterator<Item = &Hunk> {
        self.hunks.iter().filter(|hunk| self.decisions[hunk.index].is_none())
    }

    /// Where hunk `index` starts in the buffer now, 0-based.
    pub fn current_start(&self, index: usize) -> usize {
        let hunk = &self.hunks[index];
        // A pure insertion names the line it follows; a change starts at its first old line.
        let original = if hunk.old_lines == 0 { hunk.old_start } else { hunk.old_start.saturating_sub(1) };
        let shift: isize = self.hunks[..index]
            .iter()
            .filter(|earlier| self.decisions[earlier.index] == Some(true))
            .map(|earlier| earlier.new_lines as isize - earlier.old_lines as isize)
            .sum();
        original.saturating_add_signed(shift)
    }

    /// The buffer edit that applies hunk `index` where it now is.
    pub fn edit(&self, index: usize) -> LineEdit {
        let start = self.current_start(index);
        LineEdit { start, end: start + self.hunks[index].old_lines, new_text: self.hunks[index].new_text.clone() }
    }

    /// Records a decision; once every hunk is decided, answers the waiting turn.
    pub fn decide(&mut self, index: usize, accept: bool) -> bool {
        if let Some(slot) = self.decisions.get_mut(index) {
            *slot = Some(accept);
        }
        if self.decisions.iter().any(Option::is_none) {
            return false;
        }
        self.finish();
        true
    }

    fn finish(&mut self) {
        let accepted: Vec<usize> = self.decisions.iter().enumerate().filter(|(_, decision)| **decision == Some(true)).map(|(index, _)| index).collect();
        let answer = if accepted.is_empty() { PermissionAnswer::Reject { feedback: None } } else { PermissionAnswer::AllowHunks(accepted) };
        if let Some(reply) = self.reply.take() {
            let _ = reply.send(answer);
        }
    }

    pub fn is_done(&self) -> bool {
        self.reply.is_none()
    }
}

/// Applies a line edit to a text, as the editor will.
pub fn apply_line_edit(text: &str, edit: &LineEdit) -> String {
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let start = edit.start.min(lines.len());
    let end = edit.end.min(lines.len());
    format!("{}{}{}", lines[..start].concat(), edit.new_text, lines[end..].concat())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn later_hunks_move_with_earlier_accepted_ones() {
        let old = "a\nb\nc\nd\n";
        let new = "a\nB1\nB2\nc\nd\ne\n";
        let (reply, answer) = oneshot::channel();
        let mut proposal = Proposal::new(1, PathBuf::from("/p/f"), "file:///p/f".into(), old, new, reply);
        assert_eq!(proposal.hunks.len(), 2);
        let mut buffer = old.to_owned();
        let first = proposal.edit(0);
        buffer = apply_line_edit(&buffer, &first);
        assert!(!proposal.decide(0, true));
        let second = proposal.edit(1);
        assert_eq!(second.start, 5, "the second hunk moved down by one line");
        buffer = apply_line_edit(&buffer, &second);
        assert!(proposal.decide(1, true));
        assert_eq!(buffer, new);
        assert_eq!(answer.blocking_recv().ok(), Some(PermissionAnswer::AllowHunks(vec![0, 1])));
    }
}
