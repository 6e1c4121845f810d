//! `multi_edit`: several exact replacements in one file, applied in order and all-or-nothing.

use schemars::JsonSchema;
use serde::Deserialize;

use super::edit::{EditInput, apply};
use super::{
    CallDescription, CallSubject, ClaudeCodeAlias, HookResponse, RuleFamily, Tool, ToolContext, ToolOutput,
    display_path,
};
use crate::event::{Display, Location, ToolKind};

#[derive(Deserialize, JsonSchema)]
pub struct Replacement {
    /// The exact text to replace.
    pub old_string: String,
    /// The text to put in its place.
    pub new_string: String,
    #[serde(default)]
    pub replace_all: bool,
}

#[derive(Deserialize, JsonSchema)]
pub struct MultiEditInput {
    /// Path of the file, absolute or relative to the project root.
    pub path: String,
    /// Replacements applied one after another, each to the result of the previous one.
    pub edits: Vec<Replacement>,
}

pub struct MultiEdit;

impl MultiEdit {
    fn apply_all(text: &str, input: &MultiEditInput) -> Result<String, String> {
        if input.edits.is_empty() {
            return Err("no edits given".into());
        }
        input.edits.iter().enumerate().try_fold(text.to_owned(), |current, (index, replacement)| {
            let single = EditInput {
                path: input.path.clone(),
                old_string: replacement.old_string.clone(),
                new_string: replacement.new_string.clone(),
                replace_all: replacement.replace_all,
            };
            apply(&current, &single).map_err(|message| {
                format!("edit {} of {}: {message} Nothing was changed.", index + 1, input.edits.len())
            })
        })
    }
}

impl Tool for MultiEdit {
    type Input = MultiEditInput;
    const NAME: &'static str = "multi_edit";
    const CLAUDE_CODE: Option<&'static ClaudeCodeAlias> = Some(&ClaudeCodeAlias {
        name: "MultiEdit",
        fields: super::names::FILE_PATH,
        response: HookResponse::FileChange,
    });
    const DESCRIPTION: &'static str = "Make several exact replacements in one file at once. They apply in order, each to the result of the previous; if any fails, none is applied. Read the file first.";
    const KIND: ToolKind = ToolKind::Edit;
    const RULE_FAMILY: Option<RuleFamily> = Some(super::EDIT_FAMILY);

    fn read_only(&self) -> bool {
        false
    }

    fn describe(&self, input: &MultiEditInput, ctx: &ToolContext) -> CallDescription {
        let path = ctx.env.workspace.absolute(&input.path);
        CallDescription {
            title: format!("Edit {} ({} changes)", display_path(ctx, &path), input.edits.len()),
            locations: vec![Location { path, line: None }],
            subject: CallSubject::Write(input.path.clone()),
        }
    }

    async fn preview(&self, input: &MultiEditInput, ctx: &ToolContext) -> Option<Display> {
        let path = ctx.env.workspace.absolute(&input.path);
        let old_text = ctx.env.workspace.read_text(&path).await.ok()?;
        let new_text = Self::apply_all(&old_text, input).ok()?;
        Some(Display::Diff { path, old_text: Some(old_text), new_text })
    }

    async fn run(&self, input: MultiEditInput, ctx: &ToolContext) -> ToolOutput {
        let path = match ctx.env.workspace.writable(&input.path) {
            Ok(path) => path,
            Err(error) => return ToolOutput::error(error.to_string()),
        };
        if let Err(error) = ctx.env.workspace.check_fresh(&path) {
            return ToolOutput::error(error.to_string());
        }
        let old_text = match ctx.env.workspace.read_text(&path).await {
            Ok(text) => text,
            Err(error) => return ToolOutput::error(format!("cannot read {error}")),
        };
        let new_text = match Self::apply_all(&old_text, &input) {
            Ok(text) => text,
            Err(message) => return ToolOutput::error(format!("{}: {message}", path.display())),
        };
        if let Err(error) = ctx.env.workspace.write_text(&path, &new_text).await {
            return ToolOutput::error(error.to_string());
        }
        ToolOutput::text(format!("Applied {} edits to {}", input.edits.len(), path.display()))
            .with_display(Display::Diff { path, old_text: Some(old_text), new_text })
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::workspace::Workspace;

    #[tokio::test]
    async fn all_or_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let ctx = ToolContext::standalone(Arc::new(Workspace::new(dir.path())));
        let path = dir.path().join("f.txt");
        std::fs::write(&path, "one two three\n").unwrap();
        ctx.env.workspace.record_read(&path.canonicalize().unwrap());
        let edit =
            |old: &str, new: &str| Replacement { old_string: old.into(), new_string: new.into(), replace_all: false };
        let failing = MultiEditInput { path: "f.txt".into(), edits: vec![edit("one", "1"), edit("four", "4")] };
        let output = MultiEdit.run(failing, &ctx).await;
        assert!(output.is_error && output.text_content().contains("edit 2 of 2"), "{}", output.text_content());
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "one two three\n");
        let chained = MultiEditInput { path: "f.txt".into(), edits: vec![edit("one", "1"), edit("1 two", "12")] };
        assert!(!MultiEdit.run(chained, &ctx).await.is_error);
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "12 three\n");
    }
}
