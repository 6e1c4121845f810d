//! A code action the model chose by title, made concrete: asked for again on the file's current
//! text, resolved when the server defers its edit, and its `WorkspaceEdit` turned into the new
//! text of each file it changes. Creating, renaming and deleting files is refused; so is an
//! edit outside the text it was computed for. Nothing is written here: the tool writes
//! through the workspace layer, with its checks.

use std::path::{Path, PathBuf};

use lsp_types::TextEdit;
use serde_json::Value;

use super::error::LspError;
use super::uri;

/// One file the action changes.
#[derive(Debug, Clone, PartialEq)]
pub struct FileChange {
    pub path: PathBuf,
    pub old_text: String,
    pub new_text: String,
}

/// What applying the action does.
#[derive(Debug, Clone, PartialEq)]
pub struct PlannedAction {
    pub title: String,
    pub changes: Vec<FileChange>,
    /// A command the server wants run after the edit.
    pub command: Option<Value>,
}

/// The action titled `title` among `actions`, exactly, else the only one containing it.
pub fn pick<'a>(actions: &'a [Value], title: &str) -> Result<&'a Value, LspError> {
    let offered: Vec<&Value> =
        actions.iter().filter(|action| action["disabled"].is_null() && action["title"].is_string()).collect();
    if let Some(exact) = offered.iter().find(|action| action["title"] == title) {
        return Ok(exact);
    }
    let wanted = title.to_lowercase();
    let near: Vec<&&Value> = offered
        .iter()
        .filter(|action| action["title"].as_str().is_some_and(|offered| offered.to_lowercase().contains(&wanted)))
        .collect();
    match near.as_slice() {
        [one] => Ok(one),
        _ => {
            let offered = offered.iter().filter_map(|action| action["title"].as_str()).map(str::to_owned).collect();
            Err(LspError::NoSuchAction { title: title.to_owned(), offered })
        }
    }
}

/// The changes a `WorkspaceEdit` makes, each file read from disk as it is now.
pub async fn changes(edit: &Value) -> Result<Vec<FileChange>, LspError> {
    let unappliable = LspError::Unappliable;
    let mut per_file: Vec<(PathBuf, Vec<TextEdit>)> = Vec::new();
    if let Some(document_changes) = edit["documentChanges"].as_array() {
        for change in document_changes {
            if let Some(kind) = change["kind"].as_str() {
                return Err(unappliable(format!(
                    "The action would {kind} a file; only edits to existing files are applied."
                )));
            }
            let address = change["textDocument"]["uri"]
                .as_str()
                .ok_or_else(|| unappliable("an edit names no document".to_owned()))?;
            let edits: Vec<TextEdit> = serde_json::from_value(change["edits"].clone())
                .map_err(|error| unappliable(format!("an edit is malformed: {error}")))?;
            let path = uri::to_path(address).ok_or_else(|| unappliable(format!("`{address}` is not a file")))?;
            per_file.push((path, edits));
        }
    } else if let Some(changes) = edit["changes"].as_object() {
        for (address, edits) in changes {
            let edits: Vec<TextEdit> = serde_json::from_value(edits.clone())
                .map_err(|error| unappliable(format!("an edit is malformed: {error}")))?;
            let path = uri::to_path(address).ok_or_else(|| unappliable(format!("`{address}` is not a file")))?;
            per_file.push((path, edits));
        }
    }
    let mut changes = Vec::new();
    for (path, edits) in per_file {
        let old_text = match tokio::fs::read_to_string(&path).await {
            Ok(text) => text,
            Err(error) => return Err(LspError::Unreadable { path, reason: error.to_string() }),
        };
        let new_text = apply(&old_text, &edits).map_err(unappliable)?;
        changes.push(FileChange { path, old_text, new_text });
    }
    Ok(changes)
}

/// `edits` applied to `text`. Positions count UTF-16 code units, as LSP says. The error says
/// why they do not fit the text.
fn apply(text: &str, edits: &[TextEdit]) -> Result<String, String> {
    let mut spans: Vec<(usize, usize, &str)> = edits
        .iter()
        .map(|edit| {
            Ok((
                offset(text, edit.range.start.line, edit.range.start.character)?,
                offset(text, edit.range.end.line, edit.range.end.character)?,
                edit.new_text.as_str(),
            ))
        })
        .collect::<Result<_, String>>()?;
    spans.sort_by_key(|(start, end, _)| (*start, *end));
    if spans.windows(2).any(|pair| pair[0].1 > pair[1].0) || spans.iter().any(|(start, end, _)| start > end) {
        return Err("the action's edits overlap".into());
    }
    let mut out = text.to_owned();
    for (start, end, new_text) in spans.into_iter().rev() {
        out.replace_range(start..end, new_text);
    }
    Ok(out)
}

/// The byte offset of a 0-based line and UTF-16 column (a column past the line's end is its end).
fn offset(text: &str, line: u32, character: u32) -> Result<usize, String> {
    let mut start = 0;
    for _ in 0..line {
        match text[start..].find('\n') {
            Some(end) => start += end + 1,
            None => return Err(format!("the action points past the end of the file (line {})", line + 1)),
        }
    }
    let rest = &text[start..];
    let line_text = rest.split('\n').next().unwrap_or_default();
    let mut units = 0;
    for (index, c) in line_text.char_indices() {
        if units >= character {
            return Ok(start + index);
        }
        units += u32::try_from(c.len_utf16()).unwrap_or(1);
    }
    Ok(start + line_text.len())
}

pub fn shown(path: &Path, project: &Path) -> String {
    path.strip_prefix(project).unwrap_or(path).display().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use lsp_types::{Position, Range};

    fn edit(line: u32, from: u32, to_line: u32, to: u32, text: &str) -> TextEdit {
        TextEdit { range: Range::new(Position::new(line, from), Position::new(to_line, to)), new_text: text.into() }
    }

    #[test]
    fn edits_apply_by_utf16_columns_from_the_end_and_overlaps_are_refused() {
        let text = "let café = 1;\nlet b = café;\n";
        // `é` is one UTF-16 unit; the emoji below two.
        let renamed = apply(text, &[edit(0, 4, 0, 8, "tea"), edit(1, 8, 1, 12, "tea")]).unwrap();
        assert_eq!(renamed, "let tea = 1;\nlet b = tea;\n");
        assert_eq!(apply("a😀b\n", &[edit(0, 3, 0, 4, "c")]).unwrap(), "a😀c\n");
        assert_eq!(apply(text, &[edit(0, 0, 0, 0, "import x;\n")]).unwrap(), format!("import x;\n{text}"));
        assert_eq!(apply(text, &[edit(2, 0, 2, 0, "// end\n")]).unwrap(), format!("{text}// end\n"), "at the very end");
        assert!(apply(text, &[edit(0, 0, 0, 5, "x"), edit(0, 3, 0, 6, "y")]).is_err());
        assert!(apply(text, &[edit(9, 0, 9, 0, "x")]).is_err());
    }

    #[test]
    fn an_action_is_picked_by_its_exact_title_or_the_one_that_contains_it() {
        let actions = vec![
            serde_json::json!({"title": "Add import from \"./math\""}),
            serde_json::json!({"title": "Add all missing imports"}),
            serde_json::json!({"title": "Disabled", "disabled": {"reason": "no"}}),
        ];
        assert_eq!(pick(&actions, "Add import from \"./math\"").unwrap()["title"], "Add import from \"./math\"");
        assert_eq!(pick(&actions, "all missing").unwrap()["title"], "Add all missing imports");
        let error = pick(&actions, "Add").unwrap_err().to_string();
        assert!(error.contains("offered: Add import from \"./math\"; Add all missing imports"), "{error}");
        assert!(pick(&actions, "Disabled").is_err());
    }
}
