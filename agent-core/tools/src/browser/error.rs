//! Why a browser call did not do what it was asked, named for what the caller does next. The
//! message is written for the model, which reads it in the tool's result.

use chromiumoxide::error::CdpError;

#[derive(Debug, thiserror::Error)]
pub enum BrowserError {
    /// No browser could be started or reached: the text says what the user can do about it.
    #[error("{0}")]
    Unavailable(String),
    /// The call's input does not fit the page as it is now (no element with that ref, not a
    /// field, no such tab, key or history entry): the model asks again with other input.
    #[error("{0}")]
    NotOnPage(String),
    /// The page's own script threw.
    #[error("the script threw: {0}")]
    ScriptThrew(String),
    /// The browser did not carry out a step; trying again may work.
    #[error("{what}: {source}")]
    NotDone { what: &'static str, source: CdpError },
    /// A DevTools command could not be built: a bug here, not the page's doing.
    #[error("{0}")]
    Command(String),
}

impl BrowserError {
    /// Wraps a DevTools failure with what was being done, for `map_err`.
    pub fn not(what: &'static str) -> impl FnOnce(CdpError) -> Self {
        move |source| Self::NotDone { what, source }
    }
}
