//! Renders the editor context a client pushed (`_larik/editor_context`) as the note the model
//! reads at the start of the next prompt.

use larik_core::Note;
use larik_protocol::extensions::EditorContext;

/// Selections longer than this are cut; the model can read the file for the rest.
const MAX_SELECTION_BYTES: usize = 16 * 1024;
const MAX_DIAGNOSTICS: usize = 50;

pub fn render(context: &EditorContext) -> Option<Note> {
    let mut lines = Vec::new();
    if let Some(active) = &context.active_file {
        lines.push(format!("Active file: {active}"));
    }
    if !context.open_files.is_empty() {
        lines.push(format!("Open files: {}", context.open_files.join(", ")));
    }
    if let Some(selection) = &context.selection {
        let mut text = selection.text.clone();
        if text.len() > MAX_SELECTION_BYTES {
            let mut end = MAX_SELECTION_BYTES;
            while !text.is_char_boundary(end) {
                end -= 1;
            }
            text.truncate(end);
            text.push_str("\n[selection cut]");
        }
        lines.push(format!(
            "Selection in {} (lines {}-{}):\n```\n{}\n```",
            selection.path,
            selection.start_line,
            selection.end_line,
            text.trim_end()
        ));
    }
    if !context.diagnostics.is_empty() {
        lines.push("Diagnostics:".into());
        for diagnostic in context.diagnostics.iter().take(MAX_DIAGNOSTICS) {
            lines.push(format!(
                "- {}:{}: {} {}",
                diagnostic.path, diagnostic.line, diagnostic.severity, diagnostic.message
            ));
        }
    }
    if lines.is_empty() {
        return None;
    }
    Some(Note::EditorContext { text: lines.join("\n") })
}

#[cfg(test)]
mod tests {
    use larik_protocol::extensions::{Diagnostic, Selection};

    use super::*;

    #[test]
    fn renders_what_the_user_is_looking_at() {
        let context = EditorContext {
            session_id: "s".into(),
            active_file: Some("/p/a.rs".into()),
            selection: Some(Selection {
                path: "/p/a.rs".into(),
                start_line: 2,
                end_line: 3,
                text: "let x = 1;\n".into(),
            }),
            open_files: vec!["/p/a.rs".into(), "/p/b.rs".into()],
            diagnostics: vec![Diagnostic {
                path: "/p/a.rs".into(),
                line: 2,
                severity: "error".into(),
                message: "unused".into(),
            }],
        };
        let Some(Note::EditorContext { text }) = render(&context) else { panic!("no editor context") };
        assert!(text.contains("Active file: /p/a.rs"));
        assert!(text.contains("Selection in /p/a.rs (lines 2-3):\n```\nlet x = 1;\n```"));
        assert!(text.contains("- /p/a.rs:2: error unused"));
        let empty = EditorContext {
            session_id: "s".into(),
            active_file: None,
            selection: None,
            open_files: vec![],
            diagnostics: vec![],
        };
        assert_eq!(render(&empty), None);
    }
}
