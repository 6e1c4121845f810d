//! A proposed edit under review in the editor: its hunks, where each now sits in the buffer
//! (earlier applied hunks shift later ones), and the user's decision on each.

use std::path::PathBuf;

use larik_core::Hunk;
use larik_core::event::PermissionAnswer;
use tokio::sync::oneshot;

pub struct Proposal {
    pub id: u64,
    /// The tool call whose change this is.
    pub tool_id: String,
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
    pub fn new(
        id: u64,
        tool_id: String,
        path: PathBuf,
        uri: String,
        old_text: &str,
        new_text: &str,
        reply: oneshot::Sender<PermissionAnswer>,
    ) -> Self {
        let hunks = larik_core::hunks(old_text, new_text);
        Self { id, tool_id, path, uri, decisions: vec![None; hunks.len()], hunks, reply: Some(reply) }
    }

    /// How the user decided, once every hunk is decided: "2 of 2 hunks applied".
    pub fn outcome(&self) -> String {
        let applied = self.decisions.iter().filter(|decision| **decision == Some(true)).count();
        match (applied, self.hunks.len()) {
            (0, _) => "rejected".to_owned(),
            (1, 1) => "applied".to_owned(),
            (applied, total) => format!("{applied} of {total} hunks applied"),
        }
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

    /// Records a decision; returns whether every hunk is now decided (then call [`Self::finish`]).
    pub fn decide(&mut self, index: usize, accept: bool) -> bool {
        if let Some(slot) = self.decisions.get_mut(index) {
            *slot = Some(accept);
        }
        self.decisions.iter().all(Option::is_some)
    }

    /// Answers the waiting turn with the hunks the user accepted.
    pub fn finish(&mut self) {
        let accepted: Vec<usize> = self
            .decisions
            .iter()
            .enumerate()
            .filter(|(_, decision)| **decision == Some(true))
            .map(|(index, _)| index)
            .collect();
        let answer = if accepted.is_empty() {
            PermissionAnswer::Reject { feedback: None }
        } else {
            PermissionAnswer::AllowHunks(accepted)
        };
        if let Some(reply) = self.reply.take() {
            let _ = reply.send(answer);
        }
    }

    pub fn is_done(&self) -> bool {
        self.reply.is_none()
    }
}

/// What a hunk changes, in a few words for a menu: its first added line, or the first removed
/// one for a deletion, cut to `width` characters.
pub fn summary(hunk: &Hunk, width: usize) -> String {
    let first = |text: &str| text.lines().map(str::trim).find(|line| !line.is_empty()).map(str::to_owned);
    let (sign, line) = match (first(&hunk.new_text), first(&hunk.old_text)) {
        (Some(added), _) => ("+", added),
        (None, Some(removed)) => ("-", removed),
        (None, None) => ("+", "blank lines".to_owned()),
    };
    let more = hunk.new_lines.max(hunk.old_lines) > 1;
    let cut: String = line.chars().take(width).collect();
    let ellipsis = if more || cut.chars().count() < line.chars().count() { " …" } else { "" };
    format!("{sign} {cut}{ellipsis}")
}

/// Lines of a hunk its hint shows; more are counted.
const HINT_LINES: usize = 8;

/// A hunk's hint beside its line: what to do on the first line (all an end-of-line hint shows),
/// then the hunk's lines as a diff (shown whole on the cursor's line).
pub fn hint(hunk: &Hunk) -> String {
    let mut lines =
        vec![format!("Larik proposes an edit (+{} -{}) · space a: apply or reject", hunk.new_lines, hunk.old_lines)];
    let changed: Vec<String> = hunk
        .old_text
        .lines()
        .map(|line| format!("- {line}"))
        .chain(hunk.new_text.lines().map(|line| format!("+ {line}")))
        .collect();
    lines.extend(changed.iter().take(HINT_LINES).cloned());
    if changed.len() > HINT_LINES {
        lines.push(format!("… {} more lines", changed.len() - HINT_LINES));
    }
    lines.join("\n")
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
        let mut proposal = Proposal::new(1, "t1".into(), PathBuf::from("/p/f"), "file:///p/f".into(), old, new, reply);
        assert_eq!(proposal.hunks.len(), 2);
        let mut buffer = old.to_owned();
        let first = proposal.edit(0);
        buffer = apply_line_edit(&buffer, &first);
        assert!(!proposal.decide(0, true));
        let second = proposal.edit(1);
        assert_eq!(second.start, 5, "the second hunk moved down by one line");
        buffer = apply_line_edit(&buffer, &second);
        assert!(proposal.decide(1, true));
        assert!(!proposal.is_done(), "the turn hears of it on finish");
        proposal.finish();
        assert_eq!(buffer, new);
        assert_eq!(answer.blocking_recv().ok(), Some(PermissionAnswer::AllowHunks(vec![0, 1])));
        assert_eq!(proposal.outcome(), "2 of 2 hunks applied");
    }

    #[test]
    fn a_hunk_is_summed_up_by_its_first_new_line() {
        let hunks = larik_core::hunks("a\n    return lo\nc\nd\n", "a\n    return hi\nc\n");
        assert_eq!(summary(&hunks[0], 40), "+ return hi");
        assert_eq!(summary(&hunks[1], 40), "- d");
        let long = larik_core::hunks("x\n", "a very long line indeed\nsecond\n");
        assert_eq!(summary(&long[0], 6), "+ a very …");
    }
}
