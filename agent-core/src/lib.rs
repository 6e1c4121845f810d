//! Larik's agent core: everything an agent does, editor-agnostic.
//!
//! The core exposes [`session::Session`]: a conversation that takes prompts and emits a stream of
//! [`event::AgentEvent`]s. It never sees JSON-RPC, ACP or editors; `rpc-server` translates.

pub mod clock;
pub mod config;
pub mod environment;
pub mod event;
pub mod hooks;
mod http;
pub mod llm;
pub mod permission;
pub mod prompt;
pub mod review;
pub mod sandbox;
pub mod session;
pub mod tools;
pub mod workspace;
