//! `lsp`: questions to the file's language server (definition, references, hover, symbols,
//! diagnostics), answered as `path:line:col` lines. Read-only: it changes nothing, and read
//! deny rules apply to the file asked about.

use schemars::JsonSchema;
use serde::Deserialize;

use super::{CallDescription, CallSubject, Tool, ToolContext, ToolOutput};
use crate::event::ToolKind;
use crate::lsp::queries::Operation;

#[derive(Deserialize, JsonSchema)]
pub struct LspInput {
    pub operation: Operation,
    /// The file, absolute or relative to the project root.
    pub file: String,
    /// 1-based line of the symbol (definition, references, hover) or of the code actions.
    #[serde(default)]
    pub line: Option<u32>,
    /// 1-based column of the symbol on that line.
    #[serde(default)]
    pub character: Option<u32>,
    /// The name to look for (workspace_symbols).
    #[serde(default)]
    pub query: Option<String>,
}

pub struct Lsp;

impl Tool for Lsp {
    type Input = LspInput;
    const NAME: &'static str = "lsp";
    const DESCRIPTION: &'static str = "Ask the file's language server: `definition`, `references` or `hover` of the symbol at `line`/`character` (1-based), the file's `document_symbols`, `workspace_symbols` matching `query` (the file picks the server), the file's current `diagnostics`, or the `code_actions` (quick fixes, refactorings) offered at `line`. Precise where grep guesses: use it to follow a symbol across files.";
    const KIND: ToolKind = ToolKind::Search;

    fn read_only(&self) -> bool {
        true
    }

    fn describe(&self, input: &LspInput, ctx: &ToolContext) -> CallDescription {
        let path = ctx.env.workspace.absolute(&input.file);
        let shown = path.strip_prefix(ctx.env.workspace.root()).unwrap_or(&path).display().to_string();
        let place = input.line.map(|line| format!(":{line}")).unwrap_or_default();
        let operation = serde_json::to_value(input.operation)
            .ok()
            .and_then(|value| value.as_str().map(|name| name.replace('_', " ")))
            .unwrap_or_default();
        CallDescription {
            subject: CallSubject::Read(input.file.clone()),
            ..CallDescription::titled(format!("LSP {operation} {shown}{place}"))
        }
    }

    async fn run(&self, input: LspInput, ctx: &ToolContext) -> ToolOutput {
        let path = ctx.env.workspace.absolute(&input.file);
        if input.operation.needs_position() && (input.line.is_none() || input.character.is_none()) {
            return ToolOutput::error("This operation needs the symbol's `line` and `character` (1-based).");
        }
        if input.operation == Operation::CodeActions && input.line.is_none() {
            return ToolOutput::error("code_actions needs the `line` (1-based).");
        }
        if input.operation == Operation::WorkspaceSymbols && input.query.as_deref().is_none_or(str::is_empty) {
            return ToolOutput::error("workspace_symbols needs a `query`.");
        }
        match ctx
            .env
            .lsp
            .query(
                input.operation,
                &path,
                input.line.unwrap_or(1),
                input.character.unwrap_or(1),
                input.query.as_deref().unwrap_or_default(),
            )
            .await
        {
            Ok(text) => ToolOutput::text(text),
            Err(error) => ToolOutput::error(error.to_string()),
        }
    }
}
