//! The questions the `lsp` tool asks a file's server, and their answers as the model reads
//! them: `path:line:col` lines (1-based) with the line's text, symbols as `kind name line`,
//! hover text as the server wrote it; capped.

use std::path::Path;

use lsp_types::request::{DocumentSymbolRequest, GotoDefinition, HoverRequest, References, WorkspaceSymbolRequest};
use lsp_types::{
    CodeActionContext, CodeActionParams, CodeActionTriggerKind, Diagnostic, DocumentSymbol, DocumentSymbolParams,
    DocumentSymbolResponse, GotoDefinitionParams, GotoDefinitionResponse, Hover, HoverContents, HoverParams,
    MarkedString, OneOf, PartialResultParams, Position, Range, ReferenceContext, ReferenceParams, SymbolInformation,
    SymbolKind, TextDocumentIdentifier, TextDocumentPositionParams, Uri, WorkDoneProgressParams, WorkspaceSymbol,
    WorkspaceSymbolParams, WorkspaceSymbolResponse,
};
use serde_json::Value;

use super::connection::LspError;
use super::server::Server;
use super::uri;

/// Lines an answer has, at most.
const MAX_LINES: usize = 100;

/// What the tool may ask.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Operation {
    /// Where the symbol at the position is defined.
    Definition,
    /// Every use of the symbol at the position.
    References,
    /// The type and documentation of the symbol at the position.
    Hover,
    /// The file's classes, functions, methods and the rest, nested.
    DocumentSymbols,
    /// Symbols across the project whose name matches `query`.
    WorkspaceSymbols,
    /// The file's current errors and warnings.
    Diagnostics,
    /// The fixes and refactorings the server offers at `line` (its diagnostics there passed
    /// along, so quick fixes come back).
    CodeActions,
}

impl Operation {
    pub fn needs_position(self) -> bool {
        matches!(self, Self::Definition | Self::References | Self::Hover)
    }

    /// The request for the actions at 0-based `line`, given the diagnostics on it.
    pub fn code_actions_request(path: &Path, line: u32, diagnostics: &[Diagnostic]) -> Option<Value> {
        let on_line: Vec<Diagnostic> = diagnostics
            .iter()
            .filter(|diagnostic| diagnostic.range.start.line <= line && line <= diagnostic.range.end.line)
            .cloned()
            .collect();
        let params = CodeActionParams {
            text_document: TextDocumentIdentifier { uri: uri::document(path)? },
            range: Range::new(Position::new(line, 0), Position::new(line + 1, 0)),
            context: CodeActionContext {
                diagnostics: on_line,
                only: None,
                trigger_kind: Some(CodeActionTriggerKind::INVOKED),
            },
            work_done_progress_params: WorkDoneProgressParams::default(),
            partial_result_params: PartialResultParams::default(),
        };
        serde_json::to_value(params).ok()
    }

    /// Asks `server` about `path` at the 0-based `position` (or for `query`); the answer as text
    /// (`project` shortens paths). `None` for the operations answered from diagnostics.
    pub async fn ask(
        self,
        server: &Server,
        path: &Path,
        position: Position,
        query: &str,
        project: &Path,
    ) -> Option<Result<String, LspError>> {
        let document = TextDocumentIdentifier { uri: uri::document(path)? };
        let at = TextDocumentPositionParams { text_document: document.clone(), position };
        let (work, partial) = (WorkDoneProgressParams::default(), PartialResultParams::default());
        let lines = match self {
            Self::Definition => {
                let params = GotoDefinitionParams {
                    text_document_position_params: at,
                    work_done_progress_params: work,
                    partial_result_params: partial,
                };
                server.ask::<GotoDefinition>(params).await.map(|answer| definitions(answer, project))
            }
            Self::References => {
                let context = ReferenceContext { include_declaration: true };
                let params = ReferenceParams {
                    text_document_position: at,
                    work_done_progress_params: work,
                    partial_result_params: partial,
                    context,
                };
                server.ask::<References>(params).await.map(|answer| {
                    let found = answer.unwrap_or_default();
                    located(found.iter().map(|location| (&location.uri, location.range.start)), project)
                })
            }
            Self::Hover => {
                let params = HoverParams { text_document_position_params: at, work_done_progress_params: work };
                server.ask::<HoverRequest>(params).await.map(|answer| answer.map(hover).unwrap_or_default())
            }
            Self::DocumentSymbols => {
                let params = DocumentSymbolParams {
                    text_document: document,
                    work_done_progress_params: work,
                    partial_result_params: partial,
                };
                server.ask::<DocumentSymbolRequest>(params).await.map(|answer| match answer {
                    Some(DocumentSymbolResponse::Nested(nested)) => nested_symbols(&nested, 0),
                    Some(DocumentSymbolResponse::Flat(flat)) => flat_symbols(&flat, project),
                    None => Vec::new(),
                })
            }
            Self::WorkspaceSymbols => {
                let params = WorkspaceSymbolParams {
                    query: query.to_owned(),
                    work_done_progress_params: work,
                    partial_result_params: partial,
                };
                server.ask::<WorkspaceSymbolRequest>(params).await.map(|answer| match answer {
                    Some(WorkspaceSymbolResponse::Flat(flat)) => flat_symbols(&flat, project),
                    Some(WorkspaceSymbolResponse::Nested(nested)) => workspace_symbols(&nested, project),
                    None => Vec::new(),
                })
            }
            Self::Diagnostics | Self::CodeActions => return None,
        };
        Some(lines.map(|lines| capped(lines, "nothing found")))
    }

    /// The server's code actions (`(Command | CodeAction)[]`) as text.
    pub fn render_actions(answer: &Value) -> String {
        capped(actions(answer), "nothing found")
    }
}

pub fn capped(mut lines: Vec<String>, empty: &str) -> String {
    if lines.is_empty() {
        return empty.to_owned();
    }
    if lines.len() > MAX_LINES {
        let more = lines.len() - MAX_LINES;
        lines.truncate(MAX_LINES);
        lines.push(format!("... and {more} more"));
    }
    lines.join("\n")
}

/// `Location`, `Location[]` or `LocationLink[]`.
fn definitions(answer: Option<GotoDefinitionResponse>, project: &Path) -> Vec<String> {
    match answer {
        Some(GotoDefinitionResponse::Scalar(location)) => located([(&location.uri, location.range.start)], project),
        Some(GotoDefinitionResponse::Array(list)) => {
            located(list.iter().map(|location| (&location.uri, location.range.start)), project)
        }
        Some(GotoDefinitionResponse::Link(links)) => {
            located(links.iter().map(|link| (&link.target_uri, link.target_selection_range.start)), project)
        }
        None => Vec::new(),
    }
}

/// Each place as `path:line:col` (1-based) with the text of the line it points at.
fn located<'a>(places: impl IntoIterator<Item = (&'a Uri, Position)>, project: &Path) -> Vec<String> {
    places
        .into_iter()
        .filter_map(|(address, start)| {
            let path = uri::to_path(address.as_str())?;
            let text = std::fs::read_to_string(&path)
                .ok()
                .and_then(|text| text.lines().nth(usize::try_from(start.line).ok()?).map(|line| line.trim().to_owned()))
                .unwrap_or_default();
            Some(format!("{}:{}:{}  {text}", shown(&path, project), start.line + 1, start.character + 1))
        })
        .collect()
}

/// Hover contents: `MarkupContent`, a `MarkedString`, or a list of them.
fn hover(answer: Hover) -> Vec<String> {
    let marked = |piece: MarkedString| match piece {
        MarkedString::String(text) => text,
        MarkedString::LanguageString(code) => code.value,
    };
    let pieces: Vec<String> = match answer.contents {
        HoverContents::Scalar(piece) => vec![marked(piece)],
        HoverContents::Array(list) => list.into_iter().map(marked).collect(),
        HoverContents::Markup(markup) => vec![markup.value],
    };
    pieces.join("\n").lines().map(str::to_owned).collect()
}

/// `(Command | CodeAction)[]` as `title [kind]`, the server's preferred fix marked.
fn actions(answer: &Value) -> Vec<String> {
    let Some(list) = answer.as_array() else { return Vec::new() };
    list.iter()
        .filter(|action| action["disabled"].is_null())
        .filter_map(|action| {
            let title = action["title"].as_str()?;
            let kind = action["kind"].as_str().map(|kind| format!(" [{kind}]")).unwrap_or_default();
            let preferred = if action["isPreferred"] == true { " (preferred)" } else { "" };
            Some(format!("{title}{kind}{preferred}"))
        })
        .collect()
}

/// `DocumentSymbol[]`, nested and indented, each at its name's line.
fn nested_symbols(list: &[DocumentSymbol], depth: usize) -> Vec<String> {
    let mut lines = Vec::new();
    for symbol in list {
        let line = symbol.selection_range.start.line;
        lines.push(format!("{}{} {}  {}", "  ".repeat(depth), kind_name(symbol.kind), symbol.name, line + 1));
        if let Some(children) = &symbol.children {
            lines.extend(nested_symbols(children, depth + 1));
        }
    }
    lines
}

/// `SymbolInformation[]`, each at its place.
#[allow(deprecated)] // `deprecated` is a field of the struct, not read here.
fn flat_symbols(list: &[SymbolInformation], project: &Path) -> Vec<String> {
    list.iter()
        .map(|symbol| symbol_at(symbol.kind, &symbol.name, &symbol.location.uri, Some(symbol.location.range), project))
        .collect()
}

/// `WorkspaceSymbol[]`: a place, or only a file.
fn workspace_symbols(list: &[WorkspaceSymbol], project: &Path) -> Vec<String> {
    list.iter()
        .map(|symbol| match &symbol.location {
            OneOf::Left(location) => symbol_at(symbol.kind, &symbol.name, &location.uri, Some(location.range), project),
            OneOf::Right(file) => symbol_at(symbol.kind, &symbol.name, &file.uri, None, project),
        })
        .collect()
}

fn symbol_at(kind: SymbolKind, name: &str, address: &Uri, range: Option<Range>, project: &Path) -> String {
    let place = uri::to_path(address.as_str()).map(|path| format!("{}:", shown(&path, project))).unwrap_or_default();
    let line = range.map_or(0, |range| range.start.line);
    format!("{} {name}  {place}{}", kind_name(kind), line + 1)
}

fn kind_name(kind: SymbolKind) -> &'static str {
    match kind {
        SymbolKind::FILE => "file",
        SymbolKind::MODULE => "module",
        SymbolKind::NAMESPACE => "namespace",
        SymbolKind::PACKAGE => "package",
        SymbolKind::CLASS => "class",
        SymbolKind::METHOD => "method",
        SymbolKind::PROPERTY => "property",
        SymbolKind::FIELD => "field",
        SymbolKind::CONSTRUCTOR => "constructor",
        SymbolKind::ENUM => "enum",
        SymbolKind::INTERFACE => "interface",
        SymbolKind::FUNCTION => "function",
        SymbolKind::VARIABLE => "variable",
        SymbolKind::CONSTANT => "constant",
        SymbolKind::ENUM_MEMBER => "enum-member",
        SymbolKind::STRUCT => "struct",
        SymbolKind::TYPE_PARAMETER => "type-parameter",
        _ => "symbol",
    }
}

fn shown(path: &Path, project: &Path) -> String {
    path.strip_prefix(project).unwrap_or(path).display().to_string()
}
