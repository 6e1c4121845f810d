//! Why a front end's service could not do what the core asked: the editor's files, terminals,
//! questions, diagnostics and login pages all answer with [`EditorError`], so the core treats an
//! editor that refused, went quiet or answered nonsense the same way whichever service it was.

use std::path::PathBuf;

/// What went wrong between the core and the editor. The message is written for the log and, where
/// a tool reports it, for the model.
#[derive(Debug, thiserror::Error)]
pub enum EditorError {
    /// The editor answered the request with an error: the text names the request and what the
    /// editor said. Retrying the same request gets the same answer.
    #[error("{0}")]
    Refused(String),
    /// The editor gave no answer within the time it was given: go on without it.
    #[error("the editor did not answer in time")]
    NoAnswer,
    /// The answer does not have the shape the protocol gives it (a bug on one side).
    #[error("{0}")]
    Malformed(String),
    /// The turn was cancelled while the editor still had it to do; the text says what was left.
    #[error("{0}")]
    Cancelled(String),
    /// The user said no to what the editor showed.
    #[error("you declined {0}")]
    Declined(&'static str),
    /// The front end does this itself where the editor does not offer it, and the file system
    /// refused.
    #[error("{path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
}

impl EditorError {
    /// A request that could not even be encoded: the same kind of bug as a malformed answer.
    pub fn encoding(error: impl std::fmt::Display) -> Self {
        Self::Malformed(error.to_string())
    }
}
