//! What the model reads after an edit: the errors and warnings the file has now and did not
//! have before (matched by severity, message and code, not position: an edit moves lines), one
//! per line as `ERROR 5:19 message`, capped.

use lsp_types::{Diagnostic, DiagnosticSeverity};

/// Problems listed, at most; the rest are counted.
const MAX_LISTED: usize = 20;

/// The report, or `None` when the edit brought no new error or warning.
pub fn new_problems(before: &[Diagnostic], after: &[Diagnostic], server: &str) -> Option<String> {
    let mut unmatched: Vec<&Diagnostic> = before.iter().collect();
    let mut new: Vec<&Diagnostic> = Vec::new();
    for diagnostic in after.iter().filter(|diagnostic| matches!(severity(diagnostic), "ERROR" | "WARNING")) {
        match unmatched.iter().position(|old| same(old, diagnostic)) {
            Some(index) => {
                unmatched.swap_remove(index);
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
        let report = new_problems(&before, &after, "pyright").unwrap();
        assert_eq!(
            report,
            "pyright reports new problems in this file after the change:\nERROR 5:5 \"gret\" is not defined\nWARNING 8:5 Import \"x\" could not be resolved"
        );
        assert_eq!(new_problems(&after, &before, "pyright"), None, "fixing brings nothing new");
    }
}
