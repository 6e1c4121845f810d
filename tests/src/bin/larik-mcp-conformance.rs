//! The client the MCP conformance suite runs: `larik-mcp-conformance <server url>`, with the
//! scenario in `MCP_CONFORMANCE_SCENARIO` and what it hands the client (a pre-registered OAuth
//! client) in `MCP_CONFORMANCE_CONTEXT`. Exits 0 when the scenario's steps went through; the
//! suite judges the rest from what its mock server saw.

use std::io::Write;

fn main() -> std::process::ExitCode {
    let Some(url) = std::env::args().next_back().filter(|url| url.starts_with("http")) else {
        let _ = writeln!(std::io::stderr(), "usage: larik-mcp-conformance <server url>");
        return std::process::ExitCode::from(2);
    };
    let scenario = std::env::var("MCP_CONFORMANCE_SCENARIO").unwrap_or_else(|_| "initialize".into());
    let context = std::env::var("MCP_CONFORMANCE_CONTEXT").ok();
    let runtime = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(runtime) => runtime,
        Err(error) => {
            let _ = writeln!(std::io::stderr(), "larik-mcp-conformance: {error}");
            return std::process::ExitCode::FAILURE;
        }
    };
    match runtime.block_on(larik_core::mcp_conformance::run_scenario(&url, &scenario, context.as_deref())) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(error) => {
            let _ = writeln!(std::io::stderr(), "larik-mcp-conformance ({scenario}): {error}");
            std::process::ExitCode::FAILURE
        }
    }
}
