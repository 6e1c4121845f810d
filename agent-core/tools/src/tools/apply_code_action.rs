//! `apply_code_action`: applies a fix or refactoring the file's language server offers (see the
//! `lsp` tool's `code_actions`), chosen by title. It changes files, so rules and modes treat it
//! like `edit`: the prompt shows the diff, and each file it changes goes through the workspace
//! layer (project bounds, protected paths, read before write, atomic replace, the editor's
//! buffers). The action is asked for again on the current text, never taken from an old answer.
//! The call was approved for the file it names; every file the action (or its command) changes
//! is checked against the edit deny rules too ([`EditRules`]), so an action offered in one file
//! cannot reach another the rules keep from edits.

use schemars::JsonSchema;
use serde::Deserialize;

use super::{CallDescription, CallSubject, Location, Tool, ToolContext, ToolOutput};
use crate::event::{Display, ToolKind};
use crate::lsp::code_action::{PlannedAction, shown};

#[derive(Deserialize, JsonSchema)]
pub struct ApplyCodeActionInput {
    /// The file, absolute or relative to the project root.
    pub file: String,
    /// 1-based line the action was offered at.
    pub line: u32,
    /// The action's title, as `lsp` `code_actions` listed it.
    pub title: String,
}

pub struct ApplyCodeAction;

/// What the session's edit deny rules say of a file, for the files a call changes beyond the
/// one it was approved for.
pub trait EditRules: Send + Sync {
    /// Why editing `path` (inside the project at `root`) is denied by a rule, if it is.
    fn edit_denied(&self, path: &std::path::Path, root: &std::path::Path) -> Option<String>;
}

impl Tool for ApplyCodeAction {
    type Input = ApplyCodeActionInput;
    const NAME: &'static str = "apply_code_action";
    const DESCRIPTION: &'static str = "Apply a code action (quick fix, refactoring) the language server offers at a line, by its title as `lsp` `code_actions` listed it. The server's edit is applied to the files it names; files must have been read first.";
    const KIND: ToolKind = ToolKind::Edit;
    const RULE_FAMILY: Option<crate::tools::RuleFamily> = Some(crate::tools::EDIT_FAMILY);

    fn read_only(&self) -> bool {
        false
    }

    fn describe(&self, input: &ApplyCodeActionInput, ctx: &ToolContext) -> CallDescription {
        let path = ctx.env.workspace.absolute(&input.file);
        CallDescription {
            title: format!("Apply \"{}\" in {}:{}", input.title, shown(&path, ctx.env.workspace.root()), input.line),
            locations: vec![Location { path, line: Some(input.line) }],
            subject: CallSubject::Write(input.file.clone()),
        }
    }

    async fn preview(&self, input: &ApplyCodeActionInput, ctx: &ToolContext) -> Option<Display> {
        let path = ctx.env.workspace.absolute(&input.file);
        let planned = ctx.env.lsp.plan_code_action(&path, input.line, &input.title).await.ok()?;
        main_change(&planned, &path)
    }

    async fn run(&self, input: ApplyCodeActionInput, ctx: &ToolContext) -> ToolOutput {
        let workspace = &ctx.env.workspace;
        let path = workspace.absolute(&input.file);
        let planned = match ctx.env.lsp.plan_code_action(&path, input.line, &input.title).await {
            Ok(planned) => planned,
            Err(error) => return ToolOutput::error(error.to_string()),
        };
        if planned.changes.is_empty() && planned.command.is_none() {
            return ToolOutput::error(format!("The code action \"{}\" changes nothing.", planned.title));
        }
        if let Err(error) = write_changes(&ctx.env, &planned.changes).await {
            return ToolOutput::error(format!("The code action \"{}\" was not applied: {error}", planned.title));
        }
        let changed: Vec<String> = planned.changes.iter().map(|change| shown(&change.path, workspace.root())).collect();
        let mut text = if changed.is_empty() {
            format!("Ran the code action \"{}\".", planned.title)
        } else {
            format!("Applied the code action \"{}\": changed {}.", planned.title, changed.join(", "))
        };
        if let Some(command) = &planned.command {
            let name = command["command"].as_str().unwrap_or_default();
            // What the command edits while it runs passes the same checks as the action's edit.
            let apply = |changes: Vec<crate::lsp::code_action::FileChange>| async move {
                write_changes(&ctx.env, &changes).await.map_err(crate::lsp::EditRefused)
            };
            let run = ctx.env.lsp.run_command(&path, command, apply).await;
            let edited: Vec<String> = run.changed.iter().map(|path| shown(path, workspace.root())).collect();
            text.push_str(&match (edited.is_empty(), run.ended) {
                (true, Ok(())) => format!(" Its command `{name}` ran."),
                (false, Ok(())) => format!(" Its command `{name}` ran and changed {}.", edited.join(", ")),
                (true, Err(error)) => format!(" Its command did not run: {error}"),
                (false, Err(error)) => {
                    format!(" Its command `{name}` changed {}, then stopped: {error}", edited.join(", "))
                }
            });
        }
        let output = ToolOutput::text(text);
        match main_change(&planned, &path) {
            Some(display) => output.with_display(display),
            None => output,
        }
    }
}

/// Writes an action's changes through the workspace layer: every file passes the checks
/// (inside the project, not protected, no edit deny rule, read first and unchanged since)
/// before any is written, and each is replaced atomically. The error names the file that
/// stopped it.
async fn write_changes(
    env: &crate::tools::ToolEnv,
    changes: &[crate::lsp::code_action::FileChange],
) -> Result<(), String> {
    let workspace = &env.workspace;
    let mut targets = Vec::new();
    for change in changes {
        if let Some(reason) =
            env.edit_rules.as_ref().and_then(|rules| rules.edit_denied(&change.path, workspace.root()))
        {
            return Err(format!("{} may not be edited: {reason}", shown(&change.path, workspace.root())));
        }
        let target = workspace
            .writable(&change.path.display().to_string())
            .and_then(|target| workspace.check_fresh(&target).map(|()| target))
            .map_err(|error| error.to_string())?;
        targets.push(target);
    }
    for (change, target) in changes.iter().zip(&targets) {
        workspace
            .write_text(target, &change.new_text)
            .await
            .map_err(|error| format!("stopped at {}: {error}", target.display()))?;
    }
    Ok(())
}

/// The change to the file asked about (else the first), as a diff.
fn main_change(planned: &PlannedAction, path: &std::path::Path) -> Option<Display> {
    let change = planned.changes.iter().find(|change| change.path == path).or_else(|| planned.changes.first())?;
    Some(Display::Diff {
        path: change.path.clone(),
        old_text: Some(change.old_text.clone()),
        new_text: change.new_text.clone(),
    })
}
