//! `edit`: replace an exact string in a file. It must match once unless `replace_all`; a miss shows
//! the closest lines so the model can correct itself. CRLF files and trailing newlines stay as
//! they were.

use schemars::JsonSchema;
use serde::Deserialize;

use super::{CallDescription, CallSubject, ClaudeCodeAlias, HookResponse, Tool, ToolContext, ToolOutput, display_path};
use crate::event::{Display, Location, ToolKind};

#[derive(Deserialize, JsonSchema)]
pub struct EditInput {
    /// Path of the file, absolute or relative to the project root.
    pub path: String,
    /// The exact text to replace, including indentation.
    pub old_string: String,
    /// The text to put in its place.
    pub new_string: String,
    /// Replace every occurrence instead of requiring exactly one.
    #[serde(default)]
    pub replace_all: bool,
}

pub struct Edit;

/// Claude Code's `Edit`; also the name of the family of tools that edit a file.
pub(crate) const ALIAS: ClaudeCodeAlias =
    ClaudeCodeAlias { name: "Edit", fields: super::names::FILE_PATH, response: HookResponse::FileChange };

impl Tool for Edit {
    type Input = EditInput;
    const NAME: &'static str = "edit";
    const CLAUDE_CODE: Option<&'static ClaudeCodeAlias> = Some(&ALIAS);
    const DESCRIPTION: &'static str = include_str!("edit.md");
    const KIND: ToolKind = ToolKind::Edit;

    fn read_only(&self) -> bool {
        false
    }

    fn describe(&self, input: &EditInput, ctx: &ToolContext) -> CallDescription {
        let path = ctx.env.workspace.absolute(&input.path);
        let line = std::fs::read_to_string(&path).ok().and_then(|text| first_match_line(&text, &input.old_string));
        CallDescription {
            title: format!("Edit {}", display_path(ctx, &path)),
            locations: vec![Location { path, line }],
            subject: CallSubject::Write(input.path.clone()),
        }
    }

    async fn preview(&self, input: &EditInput, ctx: &ToolContext) -> Option<Display> {
        let path = ctx.env.workspace.absolute(&input.path);
        let old_text = ctx.env.workspace.read_text(&path).await.ok()?;
        let new_text = apply(&old_text, input).ok()?;
        Some(Display::Diff { path, old_text: Some(old_text), new_text })
    }

    async fn run(&self, input: EditInput, ctx: &ToolContext) -> ToolOutput {
        let path = match ctx.env.workspace.writable(&input.path) {
            Ok(path) => path,
            Err(error) => return ToolOutput::error(error.to_string()),
        };
        if !path.exists() {
            return ToolOutput::error(format!("{} does not exist; use write to create it", path.display()));
        }
        if let Err(error) = ctx.env.workspace.check_fresh(&path) {
            return ToolOutput::error(error.to_string());
        }
        let old_text = match ctx.env.workspace.read_text(&path).await {
            Ok(text) => text,
            Err(error) => return ToolOutput::error(format!("cannot read {error}")),
        };
        let new_text = match apply(&old_text, &input) {
            Ok(text) => text,
            Err(message) => return ToolOutput::error(format!("{}: {message}", path.display())),
        };
        if let Err(error) = ctx.env.workspace.write_text(&path, &new_text).await {
            return ToolOutput::error(error.to_string());
        }
        ToolOutput::text(format!("Edited {}", path.display())).with_display(Display::Diff {
            path,
            old_text: Some(old_text),
            new_text,
        })
    }
}

/// Why a replacement cannot be made; the model reads it and tries again.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EditError {
    #[error("old_string is empty; to create a file use write")]
    EmptyOldString,
    #[error("old_string and new_string are the same; nothing would change")]
    NothingChanges,
    /// With the lines most like it, to show what the file really has.
    #[error("old_string was not found.{closest}")]
    NotFound { closest: String },
    #[error("old_string matches {count} times; add surrounding lines to make it unique, or set replace_all")]
    Ambiguous { count: usize },
}

/// Applies the replacement to `text`, or says why it cannot.
pub fn apply(text: &str, input: &EditInput) -> Result<String, EditError> {
    if input.old_string.is_empty() {
        return Err(EditError::EmptyOldString);
    }
    if input.old_string == input.new_string {
        return Err(EditError::NothingChanges);
    }
    // Models write LF; a CRLF file keeps its line endings.
    let crlf = text.contains("\r\n") && !input.old_string.contains('\r');
    let (old, new) = if crlf {
        (input.old_string.replace('\n', "\r\n"), input.new_string.replace('\n', "\r\n"))
    } else {
        (input.old_string.clone(), input.new_string.clone())
    };
    let count = text.matches(old.as_str()).count();
    match count {
        0 => Err(EditError::NotFound { closest: closest_candidate(text, &input.old_string) }),
        1 => Ok(text.replacen(old.as_str(), &new, 1)),
        _ if input.replace_all => Ok(text.replace(old.as_str(), &new)),
        _ => Err(EditError::Ambiguous { count }),
    }
}

fn first_match_line(text: &str, needle: &str) -> Option<u32> {
    let first_line = needle.lines().find(|line| !line.trim().is_empty())?;
    let index = text.lines().position(|line| line.contains(first_line))?;
    u32::try_from(index + 1).ok()
}

/// The lines most like the first line of `old_string`, numbered, to show what the file really has.
fn closest_candidate(text: &str, old_string: &str) -> String {
    let Some(wanted) = old_string.lines().map(str::trim).find(|line| !line.is_empty()) else { return String::new() };
    let lines: Vec<&str> = text.lines().collect();
    let best = lines
        .iter()
        .enumerate()
        .filter(|(_, line)| !line.trim().is_empty())
        .map(|(index, line)| (index, similar::TextDiff::from_chars(wanted, line.trim()).ratio()))
        .max_by(|a, b| a.1.total_cmp(&b.1));
    let Some((index, ratio)) = best.filter(|(_, ratio)| *ratio > 0.5) else {
        return " No similar line exists in the file; read it again.".into();
    };
    let span = old_string.lines().count().max(1);
    let start = index.saturating_sub(1);
    let end = (index + span + 1).min(lines.len());
    let shown: String = (start..end).map(|i| format!("{:>6}\t{}\n", i + 1, lines[i].trim_end_matches('\r'))).collect();
    format!(" The closest match ({:.0}% similar) is near line {}:\n{shown}", ratio * 100.0, index + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input(old: &str, new: &str, replace_all: bool) -> EditInput {
        EditInput { path: "f.txt".into(), old_string: old.into(), new_string: new.into(), replace_all }
    }

    #[test]
    fn replaces_exactly_one_match() {
        assert_eq!(apply("a b c\n", &input("b", "x", false)).unwrap(), "a x c\n");
        assert_eq!(apply("b b\n", &input("b", "x", false)).unwrap_err(), EditError::Ambiguous { count: 2 });
        assert!(EditError::Ambiguous { count: 2 }.to_string().contains("matches 2 times"));
        assert_eq!(apply("b b\n", &input("b", "x", true)).unwrap(), "x x\n");
    }

    #[test]
    fn keeps_crlf_line_endings() {
        let text = "one\r\ntwo\r\nthree\r\n";
        assert_eq!(apply(text, &input("one\ntwo", "uno\ndos", false)).unwrap(), "uno\r\ndos\r\nthree\r\n");
    }

    #[tokio::test]
    async fn edits_only_fresh_existing_files_and_leaves_them_intact_on_failure() {
        use std::sync::Arc;

        use crate::workspace::Workspace;
        let dir = tempfile::tempdir().unwrap();
        let ctx = ToolContext::standalone(Arc::new(Workspace::new(dir.path())));
        let path = dir.path().canonicalize().unwrap().join("f.txt");
        std::fs::write(&path, "alpha\nbeta\n").unwrap();
        let stale = Edit.run(input("beta", "gamma", false), &ctx).await;
        assert!(stale.is_error && stale.text_content().contains("read it first"));
        ctx.env.workspace.record_read(&path);
        let missing = Edit.run(input("delta", "gamma", false), &ctx).await;
        assert!(missing.is_error && missing.text_content().contains("not found"));
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "alpha\nbeta\n", "a failed edit leaves the file as it was");
        let done = Edit.run(input("beta", "gamma", false), &ctx).await;
        assert!(!done.is_error);
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "alpha\ngamma\n");
        let absent = Edit.run(EditInput { path: "none.txt".into(), ..input("a", "b", false) }, &ctx).await;
        assert!(absent.text_content().contains("does not exist"));
    }

    #[test]
    fn a_miss_shows_the_closest_lines() {
        let text = "fn main() {\n    println!(\"hello\");\n}\n";
        let error = apply(text, &input("    println!(\"helo\");", "x", false)).unwrap_err().to_string();
        assert!(error.contains("not found"), "{error}");
        assert!(error.contains("near line 2"), "{error}");
        assert!(error.contains("println!(\"hello\")"), "{error}");
    }
}
