//! What the front end offers the core beyond the editor's files: questions to the user,
//! terminals, a browser for logins, its language servers' diagnostics. Each is optional.

use std::sync::Arc;

/// What the editor offers tools beyond its files, when the front end has it.
#[derive(Clone, Default)]
pub struct EditorServices {
    /// Puts questions to the user.
    pub ask_user: Option<Arc<dyn super::ask_user::AskUser>>,
    /// Hosts commands in terminals shown in the chat.
    pub terminals: Option<Arc<dyn super::terminal::EditorTerminals>>,
    /// Opens an MCP server's login page for the user.
    pub browser: Option<Arc<dyn LoginBrowser>>,
    /// The editor's own language servers' diagnostics.
    pub diagnostics: Option<Arc<dyn crate::lsp::EditorDiagnostics>>,
}

/// How the user gets to a server's authorization page.
#[async_trait::async_trait]
pub trait LoginBrowser: Send + Sync {
    /// Has `url`, the authorization page of the MCP server `server`, opened: shown in the editor
    /// for the user, or visited directly where no one is there. `Err` when it could not be, or
    /// the user declined.
    async fn open(&self, server: &str, url: &str) -> Result<(), larik_host::editor::EditorError>;

    /// The login is over, either way (the editor may close what it showed).
    async fn finished(&self, _server: &str) {}
}
