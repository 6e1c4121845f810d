//! The questions the `lsp` tool asks a file's server, and their answers as the model reads
//! them: `path:line:col` lines (1-based) with the line's text, symbols as `kind name line`,
//! hover text as the server wrote it; capped.

use std::path::Path;

use serde_json::{Value, json};

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
    pub fn code_actions_request(path: &Path, line: u32, diagnostics: &[lsp_types::Diagnostic]) -> Value {
        let on_line: Vec<&lsp_types::Diagnostic> = diagnostics
            .iter()
            .filter(|diagnostic| diagnostic.range.start.line <= line && line <= diagnostic.range.end.line)
            .collect();
        json!({
            "textDocument": {"uri": uri::from_path(path)},
            "range": {"start": {"line": line, "character": 0}, "end": {"line": line + 1, "character": 0}},
            "context": {"diagnostics": on_line, "triggerKind": 1}
        })
    }

    /// The request for it, with `position` 0-based.
    pub fn request(self, path: &Path, line: u32, character: u32, query: &str) -> Option<(&'static str, Value)> {
        let document = json!({"uri": uri::from_path(path)});
        let position = json!({"line": line, "character": character});
        Some(match self {
            Self::Definition => ("textDocument/definition", json!({"textDocument": document, "position": position})),
            Self::References => (
                "textDocument/references",
                json!({"textDocument": document, "position": position, "context": {"includeDeclaration": true}}),
            ),
            Self::Hover => ("textDocument/hover", json!({"textDocument": document, "position": position})),
            Self::DocumentSymbols => ("textDocument/documentSymbol", json!({"textDocument": document})),
            Self::WorkspaceSymbols => ("workspace/symbol", json!({"query": query})),
            Self::Diagnostics | Self::CodeActions => return None,
        })
    }

    /// The answer as text; `project` shortens paths.
    pub fn render(self, answer: &Value, project: &Path) -> String {
        let lines = match self {
            Self::Definition | Self::References => locations(answer, project),
            Self::Hover => hover(answer),
            Self::DocumentSymbols | Self::WorkspaceSymbols => symbols(answer, project, 0),
            Self::CodeActions => actions(answer),
            Self::Diagnostics => Vec::new(),
        };
        capped(lines, "nothing found")
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

/// `Location`, `Location[]` or `LocationLink[]`, each with the line it points at.
fn locations(answer: &Value, project: &Path) -> Vec<String> {
    let list = match answer {
        Value::Array(list) => list.clone(),
        Value::Null => Vec::new(),
        single => vec![single.clone()],
    };
    list.iter()
        .filter_map(|location| {
            let address = location.get("uri").or_else(|| location.get("targetUri"))?.as_str()?;
            let range = location.get("range").or_else(|| location.get("targetSelectionRange"))?;
            let path = uri::to_path(address)?;
            let line = range["start"]["line"].as_u64()?;
            let character = range["start"]["character"].as_u64()?;
            let text = std::fs::read_to_string(&path)
                .ok()
                .and_then(|text| text.lines().nth(usize::try_from(line).ok()?).map(|line| line.trim().to_owned()))
                .unwrap_or_default();
            Some(format!("{}:{}:{}  {text}", shown(&path, project), line + 1, character + 1))
        })
        .collect()
}

/// Hover contents: `MarkupContent`, a `MarkedString`, or a list of them.
fn hover(answer: &Value) -> Vec<String> {
    let contents = &answer["contents"];
    let pieces: Vec<String> = match contents {
        Value::String(text) => vec![text.clone()],
        Value::Array(list) => list
            .iter()
            .filter_map(|piece| {
                piece.as_str().map(str::to_owned).or_else(|| piece["value"].as_str().map(str::to_owned))
            })
            .collect(),
        Value::Object(_) => contents["value"].as_str().map(str::to_owned).into_iter().collect(),
        _ => Vec::new(),
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

/// `DocumentSymbol[]` (nested, indented) or `SymbolInformation[]`.
fn symbols(answer: &Value, project: &Path, depth: usize) -> Vec<String> {
    let Some(list) = answer.as_array() else { return Vec::new() };
    let mut lines = Vec::new();
    for symbol in list {
        let name = symbol["name"].as_str().unwrap_or_default();
        let kind = kind_name(symbol["kind"].as_u64().unwrap_or(0));
        let (place, line) = match symbol.get("location") {
            Some(location) => {
                let path = location["uri"]
                    .as_str()
                    .and_then(uri::to_path)
                    .map(|path| format!("{}:", shown(&path, project)))
                    .unwrap_or_default();
                (path, location["range"]["start"]["line"].as_u64().unwrap_or(0))
            }
            None => (
                String::new(),
                symbol["selectionRange"]["start"]["line"]
                    .as_u64()
                    .or_else(|| symbol["range"]["start"]["line"].as_u64())
                    .unwrap_or(0),
            ),
        };
        lines.push(format!("{}{kind} {name}  {place}{}", "  ".repeat(depth), line + 1));
        if let Some(children) = symbol.get("children") {
            lines.extend(symbols(children, project, depth + 1));
        }
    }
    lines
}

fn kind_name(kind: u64) -> &'static str {
    match kind {
        1 => "file",
        2 => "module",
        3 => "namespace",
        4 => "package",
        5 => "class",
        6 => "method",
        7 => "property",
        8 => "field",
        9 => "constructor",
        10 => "enum",
        11 => "interface",
        12 => "function",
        13 => "variable",
        14 => "constant",
        22 => "enum-member",
        23 => "struct",
        26 => "type-parameter",
        _ => "symbol",
    }
}

fn shown(path: &Path, project: &Path) -> String {
    path.strip_prefix(project).unwrap_or(path).display().to_string()
}
