//! Larik's MCP client driven by the official conformance suite
//! (`@modelcontextprotocol/conformance`): the suite starts a mock server (and, for the auth
//! scenarios, a mock authorization server), runs the driver with its URL, and judges from what
//! arrived. The driver connects with the same connection and login code a session uses, lists
//! the tools, calls the one the scenario (`MCP_CONFORMANCE_SCENARIO`) is about, and, since no one
//! is there, answers questions with the schema's defaults and visits authorization pages itself.

use std::sync::Arc;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use super::auth::{self, MAX_AUTHORIZATIONS};
use super::client_handler::{Handler, Questions};
use super::config::{McpServerConfig, OAuthSettings, ServerScope, Transport};
use super::connection::{ConnectError, Server, connect};
use crate::services::EditorError;
use crate::tools::LoginBrowser;
use crate::tools::Registry;

/// The suite kills a client after 30 s; this one gives up first, so it always exits by itself.
const SCENARIO_LIMIT: Duration = Duration::from_secs(25);
/// The client-id metadata document the suite's authorization server accepts: the driver's
/// identity where the server supports such documents (`auth/basic-cimd`).
const CLIENT_METADATA_URL: &str = "https://conformance-test.local/client-metadata.json";

/// Why a scenario failed, in words for the suite's log: the driver's caller only reports it.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct ScenarioFailed(String);

/// Runs one scenario against `url`; `context` is the suite's JSON for the scenario (a
/// pre-registered client's id and secret).
pub async fn run_scenario(url: &str, scenario: &str, context: Option<&str>) -> Result<(), ScenarioFailed> {
    tokio::time::timeout(SCENARIO_LIMIT, drive(url, scenario, context))
        .await
        .unwrap_or_else(|_| Err(format!("the scenario did not finish within {} s", SCENARIO_LIMIT.as_secs())))
        .map_err(ScenarioFailed)
}

/// Visits the authorization page without a person: the suite's authorization server answers at
/// once with a redirect to the login's listener, which the visit follows like a browser would.
struct Headless;

#[async_trait::async_trait]
impl LoginBrowser for Headless {
    async fn open(&self, _server: &str, url: &str) -> Result<(), EditorError> {
        let client = crate::http::client_builder()
            .build()
            .map_err(|error| EditorError::Refused(format!("no HTTP client to visit the page: {error}")))?;
        let url = url.to_owned();
        // In the background: the redirect lands on the listener, which is read after this returns.
        tokio::spawn(async move {
            if let Err(error) = client.get(&url).send().await {
                tracing::warn!(%error, "the authorization page could not be visited");
            }
        });
        Ok(())
    }
}

fn oauth_settings(context: Option<&str>) -> OAuthSettings {
    let context: serde_json::Value = context.and_then(|text| serde_json::from_str(text).ok()).unwrap_or_default();
    let text = |key: &str| context[key].as_str().map(str::to_owned);
    OAuthSettings {
        client_id: text("client_id"),
        client_secret: text("client_secret"),
        client_metadata_url: Some(CLIENT_METADATA_URL.into()),
        ..OAuthSettings::default()
    }
}

async fn drive(url: &str, scenario: &str, context: Option<&str>) -> Result<(), String> {
    let config = McpServerConfig {
        name: "conformance".into(),
        transport: Transport::Http { url: url.to_owned(), headers: Default::default() },
        scope: ServerScope::Client,
        source: "the conformance suite".into(),
        oauth: oauth_settings(context),
    };
    // Logins are kept for this run only.
    let data_dir = tempfile::tempdir().map_err(|error| error.to_string())?;
    let server = Arc::new(Server::new(config.clone(), Some(data_dir.path()), Some(Arc::new(Headless)), None));
    let login = server.login().ok_or("no login for an HTTP server")?;
    let cancel = CancellationToken::new();
    let log_in = |challenge: String| {
        let login = &login;
        let cancel = &cancel;
        async move {
            auth::log_in(&login.target("conformance"), Some(&challenge), &Headless, cancel)
                .await
                .map_err(|error| format!("login: {error}"))
        }
    };
    let mut authorizations = 0;
    let running = loop {
        let handler = Handler {
            server: Arc::clone(&server),
            registry: Arc::new(Registry::default()),
            questions: Questions::AcceptDefaults,
        };
        match connect(&config, server.tokens.as_ref(), handler).await {
            Ok(running) => break running,
            Err(ConnectError::NeedsLogin { challenge }) if authorizations < MAX_AUTHORIZATIONS => {
                authorizations += 1;
                log_in(challenge).await?;
            }
            Err(ConnectError::NeedsLogin { challenge }) => {
                return Err(format!("still refused after {MAX_AUTHORIZATIONS} logins: {challenge}"));
            }
            Err(ConnectError::Failed(error)) => return Err(error),
        }
    };
    // A server may let `initialize` through and ask for a login from the next request on.
    let tools = loop {
        match running.peer().list_all_tools().await {
            Ok(tools) => break tools,
            Err(error) => match error.auth_challenge() {
                Some(challenge) if authorizations < MAX_AUTHORIZATIONS => {
                    authorizations += 1;
                    log_in(challenge.to_owned()).await?;
                }
                _ => return Err(format!("tools/list: {error}")),
            },
        }
    };
    let call = match scenario {
        "tools_call" => Some(("add_numbers", serde_json::json!({"a": 2, "b": 3}))),
        "elicitation-sep1034-client-defaults" => Some(("test_client_elicitation_defaults", serde_json::json!({}))),
        "sse-retry" => Some(("test_reconnection", serde_json::json!({}))),
        _ => tools.first().map(|tool| (tool.name.as_ref(), serde_json::json!({}))),
    };
    server.link.set(Some(running.peer().clone()));
    if let Some((name, arguments)) = call {
        let arguments = arguments.as_object().cloned().unwrap_or_default();
        // A refusal for want of scope logs in again with the wider one, as in a session.
        let result = server.link.call(name, arguments, &cancel, None).await.map_err(|error| error.to_string())?;
        if result["isError"].as_bool() == Some(true) {
            return Err(format!("{name} answered with an error: {result}"));
        }
    }
    running.cancel().await.map_err(|error| error.to_string())?;
    Ok(())
}
