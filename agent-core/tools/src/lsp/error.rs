//! Why a language server gave no answer, or why a code action cannot be applied: the lsp and
//! apply_code_action tools report it to the model, which may ask again or do without.

use std::path::PathBuf;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LspError {
    /// None is configured or on PATH for the file, or it failed to start.
    #[error("No language server is running for {}.", kind_of(.path))]
    NoServer { path: PathBuf },
    #[error("{} cannot be read: {reason}", .path.display())]
    Unreadable { path: PathBuf, reason: String },
    /// The server failed the request: an error answer, no answer in time, or it went away.
    #[error("{0}")]
    Request(String),
    #[error("No code action titled `{title}` here; offered: {}.", offered_list(.offered))]
    NoSuchAction { title: String, offered: Vec<String> },
    /// The action's edit is one only the editor could make (a file created, renamed or deleted),
    /// or one that does not fit the file.
    #[error("{0}")]
    Unappliable(String),
}

/// How the message names the file: `.rs files (none is configured ...)`, or the path when it has
/// no extension.
fn kind_of(path: &std::path::Path) -> String {
    match path.extension().and_then(|extension| extension.to_str()) {
        Some(extension) => {
            format!(".{extension} files (none is configured or on PATH, or it failed to start)")
        }
        None => format!("{} (none is configured or on PATH, or it failed to start)", path.display()),
    }
}

fn offered_list(offered: &[String]) -> String {
    if offered.is_empty() { "none".to_owned() } else { offered.join("; ") }
}
