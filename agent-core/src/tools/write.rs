//! `write`: create or replace a whole file, atomically, inside the project.

use schemars::JsonSchema;
use serde::Deserialize;

use super::{CallDescription, Tool, ToolContext, ToolOutput, display_path};
use crate::event::{Display, Location, ToolKind};

#[derive(Deserialize, JsonSchema)]
pub struct WriteInput {
    /// Path of the file, absolute or relative to the project root.
    pub path: String,
    /// The complete new content.
    pub content: String,
}

pub struct Write;

impl Tool for Write {
    type Input = WriteInput;
    const NAME: &'static str = "write";
    const DESCRIPTION: &'static str = include_str!("write.md");
    const KIND: ToolKind = ToolKind::Edit;

    fn read_only(&self) -> bool {
        false
    }

    fn describe(&self, input: &WriteInput, ctx: &ToolContext) -> CallDescription {
        let path = ctx.workspace.absolute(&input.path);
        CallDescription {
            title: format!("Write {}", display_path(ctx, &path)),
            locations: vec![Location { path, line: None }],
            target_path: Some(input.path.clone()),
            command: None,
        }
    }

    async fn preview(&self, input: &WriteInput, ctx: &ToolContext) -> Option<Display> {
        let path = ctx.workspace.absolute(&input.path);
        let old_text = if path.is_file() { ctx.workspace.read_text(&path).await.ok() } else { None };
        Some(Display::Diff { path, old_text, new_text: input.content.clone() })
    }

    async fn run(&self, input: WriteInput, ctx: &ToolContext) -> ToolOutput {
        let path = match ctx.workspace.writable(&input.path) {
            Ok(path) => path,
            Err(error) => return ToolOutput::error(error.to_string()),
        };
        if path.is_dir() {
            return ToolOutput::error(format!("{} is a directory", path.display()));
        }
        if let Err(error) = ctx.workspace.check_fresh(&path) {
            return ToolOutput::error(error.to_string());
        }
        let old_text = if path.is_file() { ctx.workspace.read_text(&path).await.ok() } else { None };
        if let Err(error) = ctx.workspace.write_text(&path, &input.content).await {
            return ToolOutput::error(error.to_string());
        }
        let verb = if old_text.is_some() { "Replaced" } else { "Created" };
        let lines = input.content.lines().count();
        ToolOutput::text(format!("{verb} {} ({lines} lines)", path.display()))
            .with_display(Display::Diff { path, old_text, new_text: input.content })
    }
}
