//! Larik's agent core: everything an agent does, editor-agnostic.
//!
//! This file is the core's one public face, as a server crate sees it: sessions and their
//! configuration ([`session`], [`config`]), the stream of events a session emits ([`event`]),
//! the services a front end implements for the core ([`services`]: editor files, terminals,
//! questions to the user), and the few value types those speak in. Everything else (providers,
//! tools, the dispatch pipeline, permissions, hooks, the workspace layer) is private: the ACP
//! server, the Helix bridge and headless runs all go through this face. [`replay`] and
//! [`bench`] serve the demo, the tests' mock model and the benchmarks.
//!
//! The core never sees JSON-RPC, ACP or editors; `rpc-server` translates.

mod agents;
pub use larik_host::checkpoints;
use larik_host::child_process;
#[cfg(feature = "browser")]
use larik_tools::browser;
mod claude_code;
pub mod commands;
pub use larik_config as config;
pub use larik_host::clock;
pub mod doctor;

pub use larik_tools::event;
mod frontmatter;
#[doc(hidden)]
pub mod fuzzing;
mod hooks;
use larik_llm as llm;
use larik_llm::http;
use larik_tools::lsp;
mod mcp;
mod models;
mod permission;
pub mod plugin_install;
mod prompt;
pub use larik_host::protected_names;
use larik_host::review;
pub use larik_sandbox as sandbox;
pub mod session;
mod spending;
use larik_host::shell;
mod skills;
#[cfg(test)]
mod test_files;
use larik_tools::token_saver;
use larik_tools::tools;
pub mod user_settings;
use larik_host::workspace;

pub use llm::{HookPurpose, Note, Part, ProviderError, Role, ThoughtLevel, Usage};
/// `file://` URIs for paths and back, as language servers and the Helix bridge speak them.
pub use lsp::uri as file_uri;
pub use mcp::{
    McpCommand, McpError, McpReport, McpServerConfig, ServerScope as McpServerScope, Transport as McpTransport,
};
pub use permission::{Mode, ModeRefused};
pub use review::{Hunk, apply_accepted, hunks};
pub use skills::SlashCommand;

/// What a front end implements for the core: the editor's files, its terminals, questions to
/// the user, opening an MCP server's login page. Each is optional; the core works without them.
pub mod services {
    pub use crate::lsp::EditorDiagnostics;
    pub use crate::tools::ask_user::{AskUser, FormAnswer};
    pub use crate::tools::terminal::{EditorTerminal, EditorTerminals, TerminalCommand, TerminalExit, TerminalOutput};
    pub use crate::tools::{EditorServices, LoginBrowser};
    pub use crate::workspace::{EditorFiles, write_file_atomic};
    pub use larik_host::editor::EditorError;
}

/// Recorded sessions played as the model's side: the offline demo and the tests' mock model.
pub mod replay {
    pub use crate::llm::ModelStop;
    pub use crate::llm::replay::{RecordedResponse, RecordedToolCall, Recording, ReplayProvider};
}

/// How a subagent's events look to a front end without child sessions: labelled under the
/// parent's `task` call.
pub mod subagents {
    pub use crate::agents::relay::{flattened, labelled};
}

/// Larik's MCP client as the official conformance suite drives it. Not for front ends.
pub mod mcp_conformance {
    pub use crate::mcp::conformance::run_scenario;
}

/// Tools driven directly, outside any session, to measure them. Not for front ends.
pub mod bench {
    pub use crate::tools::{Registry, ToolContext, run_now};
    pub use crate::workspace::Workspace;
}
