//! Notes: text the model reads in a user message that the user did not type there (what the
//! editor shows, a file they attached, Larik's word on the mode, a hook's context, a background
//! task's ending). The conversation keeps them typed, so a title, a replay or a skill's lookup
//! for the typed text tells them apart by variant, never by parsing text. The providers send each
//! as the tagged text [`Note::render`] gives, byte for byte what earlier versions sent, so a
//! session's cached prefix does not change.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Note {
    /// What the editor shows: its open files, the selection, the cursor.
    EditorContext { text: String },
    /// Larik's word on the session (plan mode on, or over).
    SystemNote { text: String },
    /// What the user said while the turn ran.
    Interjection { text: String },
    /// A file the user attached, as the editor sent it.
    Attachment { uri: String, text: String },
    /// An MCP resource the prompt mentioned (`@server:uri`).
    McpResource { server: String, uri: String, text: String },
    /// What a hook added: context for the prompt, or feedback on a stop it blocked.
    Hook { purpose: HookPurpose, source: String, text: String },
    /// A background task's ending.
    TaskNotification { id: String, task: String, status: String, text: String },
}

/// Why a hook's text is in the conversation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HookPurpose {
    Context,
    Feedback,
}

impl HookPurpose {
    fn tag(self) -> &'static str {
        match self {
            Self::Context => "hook-context",
            Self::Feedback => "hook-feedback",
        }
    }
}

impl Note {
    /// The text the model reads.
    pub fn render(&self) -> String {
        match self {
            Self::EditorContext { text } => format!("<editor-context>\n{text}\n</editor-context>"),
            Self::SystemNote { text } => format!("<system-note>{text}</system-note>"),
            Self::Interjection { text } => format!("<user-interjection>{text}</user-interjection>"),
            Self::Attachment { uri, text } => format!("<file uri=\"{uri}\">\n{text}\n</file>"),
            Self::McpResource { server, uri, text } => {
                format!("<mcp-resource server=\"{server}\" uri=\"{uri}\">\n{text}\n</mcp-resource>")
            }
            Self::Hook { purpose, source, text } => {
                let tag = purpose.tag();
                format!("<{tag} source=\"{}\">\n{text}\n</{tag}>", source.replace('"', "'"))
            }
            Self::TaskNotification { id, task, status, text } => {
                format!(
                    "<task-notification id=\"{id}\" task=\"{task}\" status=\"{status}\">\n{text}\n</task-notification>"
                )
            }
        }
    }

    /// The note a session file written before notes were typed holds as plain text, for the
    /// kinds a title or a replay tells apart; `None` for anything else, which stays text.
    pub fn from_legacy_text(text: &str) -> Option<Self> {
        let within = |open: &str, close: &str| text.strip_prefix(open)?.strip_suffix(close).map(str::to_owned);
        let note = if let Some(inner) = within("<editor-context>\n", "\n</editor-context>") {
            Self::EditorContext { text: inner }
        } else if let Some(inner) = within("<system-note>", "</system-note>") {
            Self::SystemNote { text: inner }
        } else if let Some(inner) = within("<user-interjection>", "</user-interjection>") {
            Self::Interjection { text: inner }
        } else {
            let (uri, body) = text.strip_prefix("<file uri=\"")?.split_once("\">\n")?;
            Self::Attachment { uri: uri.to_owned(), text: body.strip_suffix("\n</file>")?.to_owned() }
        };
        // Only what renders back to the very same text is taken for a note.
        (note.render() == text).then_some(note)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn every_kind() -> Vec<Note> {
        let text = || "line one\nline \"two\"".to_owned();
        vec![
            Note::EditorContext { text: text() },
            Note::SystemNote { text: text() },
            Note::Interjection { text: text() },
            Note::Attachment { uri: "file:///p/a.rs".into(), text: text() },
            Note::McpResource { server: "docs".into(), uri: "docs://x".into(), text: text() },
            Note::Hook { purpose: HookPurpose::Context, source: "a \"quoted\" hook".into(), text: text() },
            Note::Hook { purpose: HookPurpose::Feedback, source: "stop".into(), text: text() },
            Note::TaskNotification {
                id: "bg-1".into(),
                task: "explore".into(),
                status: "completed".into(),
                text: text(),
            },
        ]
    }

    /// The tags the model has always read, so a conversation's prefix is the same bytes whether
    /// it was stored as text or as notes.
    #[test]
    fn each_note_renders_as_the_tagged_text_earlier_versions_sent() {
        let rendered: Vec<String> = every_kind().iter().map(Note::render).collect();
        assert_eq!(rendered[0], "<editor-context>\nline one\nline \"two\"\n</editor-context>");
        assert_eq!(rendered[1], "<system-note>line one\nline \"two\"</system-note>");
        assert_eq!(rendered[2], "<user-interjection>line one\nline \"two\"</user-interjection>");
        assert_eq!(rendered[3], "<file uri=\"file:///p/a.rs\">\nline one\nline \"two\"\n</file>");
        assert_eq!(
            rendered[4],
            "<mcp-resource server=\"docs\" uri=\"docs://x\">\nline one\nline \"two\"\n</mcp-resource>"
        );
        assert_eq!(rendered[5], "<hook-context source=\"a 'quoted' hook\">\nline one\nline \"two\"\n</hook-context>");
        assert_eq!(rendered[6], "<hook-feedback source=\"stop\">\nline one\nline \"two\"\n</hook-feedback>");
        assert_eq!(
            rendered[7],
            "<task-notification id=\"bg-1\" task=\"explore\" status=\"completed\">\nline one\nline \"two\"\n</task-notification>"
        );
    }

    #[test]
    fn notes_are_stored_typed_and_read_back() {
        for note in every_kind() {
            let part = crate::Part::Note(note.clone());
            let stored = serde_json::to_value(&part).unwrap();
            assert_eq!(stored["type"], "note", "{stored}");
            assert_eq!(serde_json::from_value::<crate::Part>(stored).unwrap(), part);
        }
        let stored = serde_json::json!({"type": "note", "kind": "editor_context", "text": "a.rs open"});
        assert_eq!(
            serde_json::from_value::<crate::Part>(stored).unwrap(),
            crate::Part::Note(Note::EditorContext { text: "a.rs open".into() })
        );
    }

    #[test]
    fn old_session_files_tagged_text_reads_as_notes_and_nothing_else_does() {
        for note in every_kind().into_iter().take(4) {
            assert_eq!(Note::from_legacy_text(&note.render()), Some(note));
        }
        for text in [
            "<editor-context> not closed",
            "plain words",
            "<file uri=\"a\">\nno end",
            "<system-note>a</system-note> and more the user typed",
        ] {
            assert_eq!(Note::from_legacy_text(text), None, "{text}");
        }
    }
}
