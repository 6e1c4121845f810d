//! Where the session's MCP servers are, as data: `/mcp`, `larik mcp list` and the doctor each
//! show it their own way; the plain-text form here is the one the editors' chats print.

use std::fmt;

use super::{ServerScope, Status};

/// One server: which it is, where it was configured, and where it is now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerState {
    pub name: String,
    /// What it runs or where it is reached: `MCP server `name`: command args` or its address.
    pub description: String,
    pub scope: ServerScope,
    pub status: Status,
}

impl ServerState {
    /// Every server is well when it is connected, or stopped or waiting for approval by choice.
    pub fn is_well(&self) -> bool {
        matches!(self.status, Status::Connected { .. } | Status::NotStarted | Status::Stopped)
    }
}

/// Every configured server, in configuration order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct McpReport {
    pub servers: Vec<ServerState>,
}

impl McpReport {
    /// None failed, needs a login or is still connecting.
    pub fn all_well(&self) -> bool {
        self.servers.iter().all(ServerState::is_well)
    }

    pub fn server(&self, name: &str) -> Option<&ServerState> {
        self.servers.iter().find(|server| server.name == name)
    }
}

fn scope_name(scope: ServerScope) -> &'static str {
    match scope {
        ServerScope::User => "your settings",
        ServerScope::Project => "the project",
        ServerScope::Client => "the editor",
        ServerScope::Managed => "your organisation",
    }
}

impl fmt::Display for ServerState {
    fn fmt(&self, out: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(out, "{} ({}): ", self.description, scope_name(self.scope))?;
        match &self.status {
            Status::NotStarted => out.write_str("waiting for your approval of the project's settings"),
            Status::Connecting => out.write_str("connecting"),
            Status::Connected { tools } => write!(out, "connected, {tools} tools"),
            Status::NeedsLogin => write!(out, "needs login: type `/mcp login {}`", self.name),
            Status::Failed(reason) => write!(out, "failed: {reason}"),
            Status::Stopped => out.write_str("stopped"),
        }
    }
}

/// One line per server, each `- ` first.
impl fmt::Display for McpReport {
    fn fmt(&self, out: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.servers.is_empty() {
            return out
                .write_str("No MCP servers are configured (.mcp.json, mcpServers in settings, or the editor's).");
        }
        for (index, server) in self.servers.iter().enumerate() {
            if index > 0 {
                out.write_str("\n")?;
            }
            write!(out, "- {server}")?;
        }
        Ok(())
    }
}

/// Why an MCP operation the user asked for did not happen.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum McpError {
    #[error("No MCP server is named `{0}`.")]
    NoSuchServer(String),
    #[error("The MCP server `{0}` runs as a local command; it has no login.")]
    NoLogin(String),
    #[error("This editor cannot open a login page; run `larik mcp login` in a terminal.")]
    NoLoginPage,
    #[error("Logging in to the MCP server `{server}` failed: {reason}")]
    LoginFailed { server: String, reason: String },
    #[error("The MCP server `{0}` is waiting for your approval of the project's settings.")]
    AwaitingApproval(String),
    #[error("the MCP server `{0}` is not connected right now")]
    NotConnected(String),
    #[error("the MCP server `{server}` could not expand the prompt: {reason}")]
    PromptFailed { server: String, reason: String },
    #[error("`/{0}` is not a prompt of any connected MCP server")]
    NoSuchPrompt(String),
    #[error("the MCP server `{server}` could not read {uri}: {reason}")]
    ResourceFailed { server: String, uri: String, reason: String },
    /// A tool call failed: the server's error, or no answer.
    #[error("{0}")]
    CallFailed(String),
    #[error("the MCP server `{server}` refused the call: it asks for a login ({challenge})")]
    CallNeedsLogin { server: String, challenge: String },
    #[error(
        "the MCP server `{server}` still refused the call after {} logins ({challenge})",
        super::auth::MAX_AUTHORIZATIONS
    )]
    CallStillRefused { server: String, challenge: String },
    #[error("the MCP server `{server}` needs a login, which did not succeed: {reason}")]
    CallLoginFailed { server: String, reason: String },
}
/// A timeout as the user wrote it, in seconds: "30 s", "1.5 s".
pub(super) fn seconds(duration: std::time::Duration) -> String {
    if duration.subsec_millis() == 0 {
        format!("{} s", duration.as_secs())
    } else {
        format!("{:.1} s", duration.as_secs_f64())
    }
}
