//! Larik's MCP client driven by the official conformance suite
//! (`@modelcontextprotocol/conformance`): the suite starts a mock server, runs the driver with
//! its URL, and judges from what arrived. The driver connects with the same connection code a
//! session uses, lists the tools, calls the one the scenario (`MCP_CONFORMANCE_SCENARIO`) is
//! about, and answers questions with the schema's defaults, since no one is there to answer.

use std::sync::Arc;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use super::config::{McpServerConfig, ServerScope, Transport};
use super::connection::{Handler, Questions, Server, connect};
use crate::tools::Registry;

/// The suite kills a client after 30 s; this one gives up first, so it always exits by itself.
const SCENARIO_LIMIT: Duration = Duration::from_secs(25);

/// Runs one scenario against `url`; the error says what failed.
pub async fn run_scenario(url: &str, scenario: &str) -> Result<(), String> {
    tokio::time::timeout(SCENARIO_LIMIT, drive(url, scenario)).await.unwrap_or_else(|_| Err(format!("the scenario did not finish within {} s", SCENARIO_LIMIT.as_secs())))
}

async fn drive(url: &str, scenario: &str) -> Result<(), String> {
    let config = McpServerConfig { name: "conformance".into(), transport: Transport::Http { url: url.to_owned(), headers: Default::default() }, scope: ServerScope::Client, source: "the conformance suite".into() };
    let handler = Handler { server: Arc::new(Server::new(config.clone())), registry: Arc::new(Registry::default()), questions: Questions::AcceptDefaults };
    let running = connect(&config, handler).await?;
    let tools = running.peer().list_all_tools().await.map_err(|error| format!("tools/list: {error}"))?;
    let call = match scenario {
        "tools_call" => Some(("add_numbers", serde_json::json!({"a": 2, "b": 3}))),
        "elicitation-sep1034-client-defaults" => Some(("test_client_elicitation_defaults", serde_json::json!({}))),
        "sse-retry" => Some(("test_reconnection", serde_json::json!({}))),
        _ => tools.first().map(|tool| (tool.name.as_ref(), serde_json::json!({}))),
    };
    let link = Arc::clone(&running.service().server.link);
    link.set(Some(running.peer().clone()));
    if let Some((name, arguments)) = call {
        let arguments = arguments.as_object().cloned().unwrap_or_default();
        let result = link.call(name, arguments, &CancellationToken::new(), None).await?;
        if result["isError"].as_bool() == Some(true) {
            return Err(format!("{name} answered with an error: {result}"));
        }
    }
    running.cancel().await.map_err(|error| error.to_string())?;
    Ok(())
}
