//! Larik's tool layer: the one interface every tool implements and the per-session registry
//! (`tools`), the built-in tools, what a session tells its front end (`event`), and the
//! mechanisms tools stand on, which know nothing of tools themselves: the language servers
//! (`lsp`), the browser (`browser`) and the token saver (`token_saver`).
//!
//! It may import the settings, the providers (`larik-llm`), the host (`larik-host`), the sandbox
//! and the settings loader (`larik-config`); never the permission decision, the hooks, the
//! mechanisms above it (MCP, skills, subagents) or the session, which live in `larik-core`. So a
//! tool cannot reach what decides its own approval.

#[cfg(feature = "browser")]
pub mod browser;
pub mod event;
pub mod lsp;
pub mod token_saver;
pub mod tools;

// The layers below, under the names the modules use.
use larik_config as config;
use larik_host::{checkpoints, child_process, shell, workspace};
use larik_llm as llm;
use larik_llm::http;
use larik_sandbox as sandbox;
