//! The `larik` binary's library: front ends that translate between a wire format and the agent
//! core. Only this crate knows JSON-RPC and ACP; `larik-core` never does.

pub mod acp;
pub mod config_cli;
pub mod demo;
pub mod doctor;
pub mod headless;
pub mod lsp;
pub mod mcp_cli;
pub mod plugin_cli;
pub mod sandbox_check;
pub mod side_by_side;
