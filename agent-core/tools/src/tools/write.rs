//! `write`: create or replace a whole file, atomically, inside the project.

use schemars::JsonSchema;
use serde::Deserialize;

use super::{
    CallDescription, CallSubject, ClaudeCodeAlias, HookResponse, RuleFamily, Tool, ToolContext, ToolOutput,
    display_path,
};
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
    const CLAUDE_CODE: Option<&'static ClaudeCodeAlias> =
        Some(&ClaudeCodeAlias { name: "Write", fields: super::names::FILE_PATH, response: HookResponse::FileChange });
    const DESCRIPTION: &'static str = include_str!("write.md");
    const KIND: ToolKind = ToolKind::Edit;
    const RULE_FAMILY: Option<RuleFamily> = Some(super::EDIT_FAMILY);

    fn read_only(&self) -> bool {
        false
    }

    fn describe(&self, input: &WriteInput, ctx: &ToolContext) -> CallDescription {
        let path = ctx.env.workspace.absolute(&input.path);
        CallDescription {
            title: format!("Write {}", display_path(ctx, &path)),
            locations: vec![Location { path, line: None }],
            subject: CallSubject::Write(input.path.clone()),
        }
    }

    async fn preview(&self, input: &WriteInput, ctx: &ToolContext) -> Option<Display> {
        let path = ctx.env.workspace.absolute(&input.path);
        let old_text = if path.is_file() { ctx.env.workspace.read_text(&path).await.ok() } else { None };
        Some(Display::Diff { path, old_text, new_text: input.content.clone() })
    }

    async fn run(&self, input: WriteInput, ctx: &ToolContext) -> ToolOutput {
        let path = match ctx.env.workspace.writable(&input.path) {
            Ok(path) => path,
            Err(error) => return ToolOutput::error(error.to_string()),
        };
        if path.is_dir() {
            return ToolOutput::error(format!("{} is a directory", path.display()));
        }
        if let Err(error) = ctx.env.workspace.check_fresh(&path) {
            return ToolOutput::error(error.to_string());
        }
        let old_text = if path.is_file() { ctx.env.workspace.read_text(&path).await.ok() } else { None };
        if let Err(error) = ctx.env.workspace.write_text(&path, &input.content).await {
            return ToolOutput::error(error.to_string());
        }
        let verb = if old_text.is_some() { "Replaced" } else { "Created" };
        let lines = input.content.lines().count();
        ToolOutput::text(format!("{verb} {} ({lines} lines)", path.display())).with_display(Display::Diff {
            path,
            old_text,
            new_text: input.content,
        })
    }
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt;
    use std::sync::Arc;

    use super::*;
    use crate::workspace::Workspace;

    fn write(path: &str, content: &str) -> WriteInput {
        WriteInput { path: path.into(), content: content.into() }
    }

    #[tokio::test]
    async fn creates_replaces_and_refuses() {
        let dir = tempfile::tempdir().unwrap();
        let ctx = ToolContext::standalone(Arc::new(Workspace::new(dir.path())));
        let created = Write.run(write("a/b/new.sh", "echo hi\n"), &ctx).await;
        assert!(!created.is_error, "{}", created.text_content());
        let path = dir.path().join("a/b/new.sh");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "echo hi\n");
        assert!(matches!(created.display, Some(Display::Diff { old_text: None, .. })));
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o750)).unwrap();
        let replaced = Write.run(write("a/b/new.sh", "echo bye\n"), &ctx).await;
        assert!(!replaced.is_error, "a file the session wrote counts as read");
        assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o750);
        std::fs::write(dir.path().join("unread.txt"), "x").unwrap();
        let unread = Write.run(write("unread.txt", "y"), &ctx).await;
        assert!(unread.is_error && unread.text_content().contains("read it first"));
        assert_eq!(std::fs::read_to_string(dir.path().join("unread.txt")).unwrap(), "x");
        assert!(Write.run(write("../escape.txt", "y"), &ctx).await.text_content().contains("outside the project"));
        assert!(Write.run(write(".git/config", "y"), &ctx).await.text_content().contains("protected"));
        assert!(Write.run(write("a", "y"), &ctx).await.text_content().contains("is a directory"));
        let leftovers: Vec<_> = std::fs::read_dir(dir.path().join("a/b"))
            .unwrap()
            .filter_map(Result::ok)
            .filter(|entry| entry.file_name().to_string_lossy().starts_with(".larik-write-"))
            .collect();
        assert!(leftovers.is_empty(), "no temp files left behind");
    }
}
