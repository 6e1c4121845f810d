//! What the model reads after an edit: the errors and warnings the file has now and did not
//! have before, one per line as `ERROR 5:19 message`, capped.
//!
//! A problem is the same as one before when its severity, message and code are, and an edit
//! moves lines: so an old problem is first paired with the same problem on the line its own
//! line moved to ([`LineShift`]), then with the nearest one left, and what stays unpaired is
//! new. Paired by text alone, a second "x is not defined" written above the first would be
//! reported at the old one's line.

use lsp_types::{Diagnostic, DiagnosticSeverity};

/// Problems listed, at most; the rest are counted.
const MAX_LISTED: usize = 20;

/// Where the edit moved each line of the file that it left as it was.
pub struct LineShift {
    /// For each line before, its line after when the edit kept it.
    kept: Vec<Option<u32>>,
}

impl LineShift {
    /// Lines moved as a line diff of the two texts says.
    pub fn between(before: &str, after: &str) -> Self {
        let mut kept = Vec::new();
        let diff = similar::TextDiff::from_lines(before, after);
        for change in diff.iter_all_changes() {
            let Some(old) = change.old_index() else { continue };
            if kept.len() <= old {
                kept.resize(old + 1, None);
            }
            kept[old] = change.new_index().and_then(|new| u32::try_from(new).ok());
        }
        Self { kept }
    }

    /// Nothing known of the edit: a line is taken to stay where it was.
    pub fn unknown() -> Self {
        Self { kept: Vec::new() }
    }

    fn after(&self, line: u32) -> u32 {
        if self.kept.is_empty() {
            return line;
        }
        let index = usize::try_from(line).unwrap_or(usize::MAX);
        match self.kept.get(index) {
            Some(Some(moved)) => *moved,
            // A line the edit changed, or one past the end: where the nearest kept line above
            // went, which is where the change stands.
            _ => self.kept[..index.min(self.kept.len())].iter().rev().flatten().next().map_or(0, |above| above + 1),
        }
    }
}

/// The report, or `None` when the edit brought no new error or warning.
pub fn new_problems(before: &[Diagnostic], after: &[Diagnostic], shift: &LineShift, server: &str) -> Option<String> {
    let mut unpaired: Vec<(&Diagnostic, u32)> =
        before.iter().map(|old| (old, shift.after(old.range.start.line))).collect();
    let mut candidates: Vec<&Diagnostic> =
        after.iter().filter(|diagnostic| matches!(severity(diagnostic), "ERROR" | "WARNING")).collect();
    // Where the old problem's line went first, then the nearest.
    candidates.retain(|diagnostic| {
        let at = diagnostic.range.start.line;
        let paired = unpaired.iter().position(|(old, moved)| *moved == at && same(old, diagnostic));
        paired.map(|index| unpaired.swap_remove(index)).is_none()
    });
    let mut new = Vec::new();
    for diagnostic in candidates {
        let at = diagnostic.range.start.line;
        let nearest = unpaired
            .iter()
            .enumerate()
            .filter(|(_, (old, _))| same(old, diagnostic))
            .min_by_key(|(_, (_, moved))| moved.abs_diff(at))
            .map(|(index, _)| index);
        match nearest {
            Some(index) => {
                unpaired.swap_remove(index);
            }
            None => new.push(diagnostic),
        }
    }
    if new.is_empty() {
        return None;
    }
    new.sort_by_key(|diagnostic| {
        (severity(diagnostic) != "ERROR", diagnostic.range.start.line, diagnostic.range.start.character)
    });
    let mut lines: Vec<String> = new.iter().take(MAX_LISTED).map(|diagnostic| line(diagnostic)).collect();
    if new.len() > MAX_LISTED {
        lines.push(format!("... and {} more", new.len() - MAX_LISTED));
    }
    Some(format!("{server} reports new problems in this file after the change:\n{}", lines.join("\n")))
}

/// Every error and warning, for the `lsp` tool's `diagnostics`.
pub fn listed(diagnostics: &[Diagnostic]) -> String {
    let mut shown: Vec<&Diagnostic> =
        diagnostics.iter().filter(|diagnostic| matches!(severity(diagnostic), "ERROR" | "WARNING")).collect();
    shown.sort_by_key(|diagnostic| {
        (severity(diagnostic) != "ERROR", diagnostic.range.start.line, diagnostic.range.start.character)
    });
    super::queries::capped(shown.iter().map(|diagnostic| line(diagnostic)).collect(), "No errors or warnings.")
}

fn same(old: &Diagnostic, new: &Diagnostic) -> bool {
    old.severity == new.severity && old.message == new.message && old.code == new.code
}

fn severity(diagnostic: &Diagnostic) -> &'static str {
    match diagnostic.severity {
        Some(DiagnosticSeverity::WARNING) => "WARNING",
        Some(DiagnosticSeverity::INFORMATION) => "INFO",
        Some(DiagnosticSeverity::HINT) => "HINT",
        // A server that says nothing means an error.
        _ => "ERROR",
    }
}

fn line(diagnostic: &Diagnostic) -> String {
    let message = diagnostic.message.lines().next().unwrap_or_default();
    format!(
        "{} {}:{} {message}",
        severity(diagnostic),
        diagnostic.range.start.line + 1,
        diagnostic.range.start.character + 1
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use lsp_types::{Position, Range};

    fn diagnostic(line: u32, severity: DiagnosticSeverity, message: &str) -> Diagnostic {
        Diagnostic {
            range: Range::new(Position::new(line, 4), Position::new(line, 8)),
            severity: Some(severity),
            message: message.into(),
            ..Diagnostic::default()
        }
    }

    #[test]
    fn only_what_the_edit_brought_sorted_errors_first() {
        let before = [diagnostic(2, DiagnosticSeverity::ERROR, "\"os\" is not defined")];
        let after = [
            diagnostic(9, DiagnosticSeverity::ERROR, "\"os\" is not defined"),
            diagnostic(7, DiagnosticSeverity::WARNING, "Import \"x\" could not be resolved"),
            diagnostic(4, DiagnosticSeverity::ERROR, "\"gret\" is not defined"),
            diagnostic(5, DiagnosticSeverity::HINT, "unused"),
        ];
        let report = new_problems(&before, &after, &LineShift::unknown(), "pyright").unwrap();
        assert_eq!(
            report,
            "pyright reports new problems in this file after the change:\nERROR 5:5 \"gret\" is not defined\nWARNING 8:5 Import \"x\" could not be resolved"
        );
        assert_eq!(new_problems(&after, &before, &LineShift::unknown(), "pyright"), None, "fixing brings nothing new");
    }

    #[test]
    fn the_same_problem_written_again_is_reported_where_it_was_written() {
        let undefined = "\"x\" is not defined";
        let before_text = "import os\n\ndef f():\n    return x\n";
        // Two lines written above the old problem, one of them with the same problem.
        let after_text = "import os\ny = x\n\n\ndef f():\n    return x\n";
        let before = [diagnostic(3, DiagnosticSeverity::ERROR, undefined)];
        let after =
            [diagnostic(1, DiagnosticSeverity::ERROR, undefined), diagnostic(5, DiagnosticSeverity::ERROR, undefined)];
        let shift = LineShift::between(before_text, after_text);
        assert_eq!(
            new_problems(&before, &after, &shift, "pyright").unwrap(),
            format!("pyright reports new problems in this file after the change:\nERROR 2:5 {undefined}")
        );
        // Written below it instead: the new one is the lower one.
        let after_text = "import os\n\ndef f():\n    return x\nz = x\n";
        let after =
            [diagnostic(3, DiagnosticSeverity::ERROR, undefined), diagnostic(4, DiagnosticSeverity::ERROR, undefined)];
        let shift = LineShift::between(before_text, after_text);
        assert_eq!(
            new_problems(&before, &after, &shift, "pyright").unwrap(),
            format!("pyright reports new problems in this file after the change:\nERROR 5:5 {undefined}")
        );
    }

    #[test]
    fn lines_the_edit_kept_move_with_it_and_changed_ones_stand_where_the_change_is() {
        let shift = LineShift::between("a\nb\nc\nd\n", "new\na\nB\nc\nd\n");
        assert_eq!([0, 2, 3].map(|line| shift.after(line)), [1, 3, 4]);
        assert_eq!(shift.after(1), 2, "b became B, on the line after a's");
        assert_eq!(LineShift::unknown().after(7), 7);
    }
}
