//! One MCP server's connection: the server as the session knows it (status, prompts, the tools it
//! registered), connecting (stdio in its own process group with stderr into the log, or
//! streamable HTTP on our TLS stack), and the link calls go through. `keep_alive.rs` keeps it
//! connected; `client_handler.rs` is Larik's side of it.

use std::collections::BTreeSet;
use std::process::Stdio;
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::service::{Peer, RoleClient, RunningService};
use serde_json::Value;
use tokio::io::AsyncBufReadExt;
use tokio_util::sync::CancellationToken;

use super::Status;
use super::auth::tokens::TokenFile;
use super::auth::{self, LoginTarget, MAX_AUTHORIZATIONS};
use super::client_handler::Handler;
use super::config::{McpServerConfig, OAuthSettings, Transport};
use super::names::tool_names;
use super::report::McpError;
use super::tool::McpTool;
use crate::tools::LoginBrowser;
use crate::tools::Registry;

/// How long the first prompt waits for servers still connecting, so their tools are in its
/// request.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// How long one connection attempt may take (a server that hangs in `initialize` is not waited
/// on forever). Longer than the first prompt's wait: a server slow to start (a first `npx`
/// download) goes on connecting behind that prompt, and its tools join when it is ready, instead
/// of being stopped and started again for ever.
pub(super) const ATTEMPT_TIMEOUT: Duration = Duration::from_secs(30);
/// The longest pause between reconnection attempts.
pub(super) const MAX_BACKOFF: Duration = Duration::from_secs(30);

/// The live side of a server that its tools call through; empty while it is away.
pub struct Link {
    server: String,
    peer: RwLock<Option<Peer<RoleClient>>>,
    /// Calls in flight that asked for progress, by progress token (the call's id).
    progress: Mutex<std::collections::HashMap<String, crate::tools::ToolProgress>>,
    /// How to log in again when a call is refused for want of a wider scope: an HTTP or SSE
    /// server's login, and the user's way to the authorization page.
    auth: Option<(Login, Arc<dyn LoginBrowser>)>,
    /// How long a call may go unanswered (`MCP_TOOL_TIMEOUT`); `None` waits for the answer or
    /// the user's cancel.
    tool_call_timeout: Option<Duration>,
}

/// What logging in to an HTTP or SSE server needs.
pub struct Login {
    pub url: String,
    pub oauth: OAuthSettings,
    pub tokens: TokenFile,
}

impl Login {
    pub fn target<'a>(&'a self, server: &'a str) -> LoginTarget<'a> {
        LoginTarget { server, url: &self.url, oauth: &self.oauth, tokens: &self.tokens }
    }
}

/// Why one call did not come back with an answer.
enum CallError {
    /// The server wants a login or a wider scope first: its `WWW-Authenticate` challenge.
    Challenge(String),
    Failed(String),
}

impl Link {
    fn new(server: &str, auth: Option<(Login, Arc<dyn LoginBrowser>)>, tool_call_timeout: Option<Duration>) -> Self {
        Self {
            server: server.to_owned(),
            peer: RwLock::new(None),
            progress: Mutex::new(std::collections::HashMap::new()),
            auth,
            tool_call_timeout,
        }
    }

    /// The live peer, while the server is connected.
    pub(super) fn peer(&self) -> Option<Peer<RoleClient>> {
        self.peer.read().ok().and_then(|peer| peer.clone())
    }

    pub(super) fn set(&self, peer: Option<Peer<RoleClient>>) {
        if let Ok(mut current) = self.peer.write() {
            *current = peer;
        }
    }

    /// Calls a tool; the result in its JSON form, or why it failed. With `progress`, the server's
    /// progress notifications for the call reach the editor while it runs.
    ///
    /// A call the server refuses for want of a login or a wider scope (step-up) sends the user to
    /// authorize with what the server's challenge asks, then goes again, at most
    /// [`MAX_AUTHORIZATIONS`] times.
    pub async fn call(
        &self,
        tool: &str,
        arguments: serde_json::Map<String, Value>,
        cancel: &CancellationToken,
        progress: Option<&crate::tools::ToolProgress>,
    ) -> Result<Value, McpError> {
        let mut authorizations = 0;
        loop {
            match self.call_once(tool, arguments.clone(), cancel, progress).await {
                Ok(result) => return Ok(result),
                Err(CallError::Failed(message)) => return Err(McpError::CallFailed(message)),
                Err(CallError::Challenge(challenge)) => {
                    let server = self.server.clone();
                    let Some((login, browser)) = &self.auth else {
                        return Err(McpError::CallNeedsLogin { server, challenge });
                    };
                    if authorizations == MAX_AUTHORIZATIONS {
                        return Err(McpError::CallStillRefused { server, challenge });
                    }
                    authorizations += 1;
                    if let Some(progress) = progress {
                        let why = if auth::wants_wider_scope(&challenge, &login.url) {
                            "asks for a wider permission for this call"
                        } else {
                            "asks you to log in"
                        };
                        progress.note(format!("The MCP server `{}` {why}; waiting for the login.", self.server)).await;
                    }
                    auth::log_in(&login.target(&self.server), Some(&challenge), browser.as_ref(), cancel)
                        .await
                        .map_err(|error| McpError::CallLoginFailed { server, reason: error.to_string() })?;
                }
            }
        }
    }

    async fn call_once(
        &self,
        tool: &str,
        arguments: serde_json::Map<String, Value>,
        cancel: &CancellationToken,
        progress: Option<&crate::tools::ToolProgress>,
    ) -> Result<Value, CallError> {
        let peer = self.peer().ok_or_else(|| {
            CallError::Failed(format!(
                "the MCP server `{}` is not connected right now (it is being reconnected); try again later",
                self.server
            ))
        })?;
        let failed = |error: &rmcp::ServiceError| match error.auth_challenge() {
            Some(challenge) => CallError::Challenge(challenge.to_owned()),
            None => CallError::Failed(format!("the MCP server `{}` failed: {error}", self.server)),
        };
        let request = rmcp::model::ClientRequest::CallToolRequest(rmcp::model::Request::new(
            CallToolRequestParams::new(tool.to_owned()).with_arguments(arguments),
        ));
        // The library gives each request its progress token; the call's progress is routed by it.
        let handle = peer
            .send_cancellable_request(request, rmcp::service::PeerRequestOptions::no_options())
            .await
            .map_err(|error| failed(&error))?;
        let token = token_text(&handle.progress_token);
        if let (Some(progress), Ok(mut waiting)) = (progress, self.progress.lock()) {
            waiting.insert(token.clone(), progress.clone());
        }
        let answer = tokio::select! {
            answer = handle.await_response() => answer.map_err(|error| failed(&error)),
            () = cancel.cancelled() => Err(CallError::Failed("The user cancelled this tool call before it finished.".into())),
            Some(limit) = self.timed_out() => Err(CallError::Failed(format!(
                "the MCP server `{}` did not answer within {} (MCP_TOOL_TIMEOUT sets how long)",
                self.server,
                super::report::seconds(limit)
            ))),
        };
        if let Ok(mut waiting) = self.progress.lock() {
            waiting.remove(&token);
        }
        match answer? {
            rmcp::model::ServerResult::CallToolResult(result) => Ok(serde_json::to_value(result).unwrap_or_default()),
            other => Err(CallError::Failed(format!(
                "the MCP server `{}` answered with something that is not a tool result: {}",
                self.server,
                serde_json::to_value(other).unwrap_or_default()
            ))),
        }
    }

    /// Ends, with the limit, once a call has run `MCP_TOOL_TIMEOUT`; `None` at once where no
    /// limit is set (the `select!` then waits on the other branches).
    async fn timed_out(&self) -> Option<Duration> {
        let limit = self.tool_call_timeout?;
        tokio::time::sleep(limit).await;
        Some(limit)
    }

    /// Where a progress notification for `token` goes, if its call still runs.
    pub(super) fn progress_for(&self, token: &rmcp::model::ProgressToken) -> Option<crate::tools::ToolProgress> {
        self.progress.lock().ok()?.get(&token_text(token)).cloned()
    }
}

fn token_text(token: &rmcp::model::ProgressToken) -> String {
    match &token.0 {
        rmcp::model::NumberOrString::String(text) => text.to_string(),
        rmcp::model::NumberOrString::Number(number) => number.to_string(),
    }
}

/// A server, what state it is in, and which names its tools have in the registry.
pub struct Server {
    pub config: McpServerConfig,
    pub status: Mutex<Status>,
    pub link: Arc<Link>,
    registered: Mutex<Vec<String>>,
    /// The server's prompts (their `prompts/list` entries), offered as slash commands.
    pub prompts: Mutex<Vec<Value>>,
    /// Bumped whenever the status changes, for whoever waits for servers to settle.
    pub changed: tokio::sync::watch::Sender<u64>,
    /// Cuts a wait between connection attempts short (after a login, or `/mcp reconnect`).
    pub wake: tokio::sync::Notify,
    /// Where an HTTP or SSE server's login is kept, when the user has a data directory.
    pub tokens: Option<TokenFile>,
    /// The challenge of the server's last refusal, for the login that answers it.
    pub challenge: Mutex<Option<String>>,
}

impl Server {
    /// A server; `auth_dir` is where logins are kept, `browser` how the user reaches an
    /// authorization page when a call needs one, `tool_call_timeout` how long a call may go
    /// unanswered.
    pub fn new(
        config: McpServerConfig,
        auth_dir: Option<&std::path::Path>,
        browser: Option<Arc<dyn LoginBrowser>>,
        tool_call_timeout: Option<Duration>,
    ) -> Self {
        let tokens = remote_url(&config).zip(auth_dir).map(|(url, dir)| TokenFile::new(dir, &config.name, url));
        let auth = login_for(&config, tokens.as_ref()).zip(browser);
        let link = Arc::new(Link::new(&config.name, auth, tool_call_timeout));
        Self {
            config,
            status: Mutex::new(Status::NotStarted),
            link,
            registered: Mutex::new(Vec::new()),
            prompts: Mutex::new(Vec::new()),
            changed: tokio::sync::watch::channel(0).0,
            wake: tokio::sync::Notify::new(),
            tokens,
            challenge: Mutex::new(None),
        }
    }

    /// What a login to this server needs, when it is one that can have one.
    pub fn login(&self) -> Option<Login> {
        login_for(&self.config, self.tokens.as_ref())
    }

    pub fn status(&self) -> Status {
        self.status.lock().map(|status| status.clone()).unwrap_or(Status::Stopped)
    }

    pub(super) fn set_status(&self, status: Status) {
        if let Ok(mut current) = self.status.lock() {
            *current = status;
        }
        self.changed.send_modify(|count| *count += 1);
    }

    /// Reads the server's prompts, when it has any.
    pub(super) async fn read_prompts(&self, peer: &Peer<RoleClient>) {
        if peer.peer_info().is_none_or(|info| info.capabilities.prompts.is_none()) {
            return;
        }
        match peer.list_all_prompts().await {
            Ok(prompts) => {
                if let Ok(mut known) = self.prompts.lock() {
                    *known = prompts.iter().map(|prompt| serde_json::to_value(prompt).unwrap_or_default()).collect();
                }
            }
            Err(error) => tracing::warn!(server = %self.config.name, %error, "could not list the prompts"),
        }
    }

    /// Lists the server's tools into the registry, replacing what it listed before.
    /// A server that lets `initialize` through may still want a login to list its tools.
    pub(super) async fn register(&self, peer: &Peer<RoleClient>, registry: &Registry) -> Result<usize, ConnectError> {
        let tools = peer.list_all_tools().await.map_err(|error| match error.auth_challenge() {
            Some(challenge) => ConnectError::NeedsLogin { challenge: challenge.to_owned() },
            None => ConnectError::Failed(format!("could not list its tools: {error}")),
        })?;
        let listed: Vec<Value> = tools.iter().map(|tool| serde_json::to_value(tool).unwrap_or_default()).collect();
        let mut registered = self.registered.lock().map_err(|_| ConnectError::Failed("state poisoned".to_owned()))?;
        for name in registered.drain(..) {
            registry.remove(&name);
        }
        let taken: BTreeSet<String> = registry.names().into_iter().collect();
        let remote: Vec<&str> = listed.iter().map(|tool| tool["name"].as_str().unwrap_or_default()).collect();
        let names = tool_names(&self.config.name, &remote, &taken);
        let tools = names.iter().zip(&listed).map(|(name, listed)| {
            Arc::new(McpTool::from_listing(name.clone(), &self.config.name, listed, Arc::clone(&self.link)))
                as Arc<dyn crate::tools::DynTool>
        });
        registry.add_all(tools);
        registered.extend(names);
        Ok(registered.len())
    }
}

/// The URL of an HTTP or SSE server (the ones that can ask for a login).
fn remote_url(config: &McpServerConfig) -> Option<&str> {
    match &config.transport {
        Transport::Http { url, .. } | Transport::Sse { url, .. } => Some(url),
        Transport::Stdio { .. } => None,
    }
}

fn login_for(config: &McpServerConfig, tokens: Option<&TokenFile>) -> Option<Login> {
    Some(Login { url: remote_url(config)?.to_owned(), oauth: config.oauth.clone(), tokens: tokens?.clone() })
}

/// Why a connection attempt failed, by what happens next.
#[derive(Debug, thiserror::Error)]
pub(super) enum ConnectError {
    /// The server wants a login (its `WWW-Authenticate` challenge): wait for the user.
    #[error("it asks for a login ({challenge})")]
    NeedsLogin { challenge: String },
    /// Anything else: try again later.
    #[error("{0}")]
    Failed(String),
}

impl From<String> for ConnectError {
    fn from(message: String) -> Self {
        Self::Failed(message)
    }
}

fn initialize_failed(error: rmcp::service::ClientInitializeError) -> ConnectError {
    match error.auth_challenge() {
        Some(challenge) => ConnectError::NeedsLogin { challenge: challenge.to_owned() },
        None => ConnectError::Failed(error.to_string()),
    }
}

pub(super) async fn connect(
    config: &McpServerConfig,
    tokens: Option<&TokenFile>,
    handler: Handler,
) -> Result<RunningService<RoleClient, Handler>, ConnectError> {
    match &config.transport {
        Transport::Stdio { command, args, env } => {
            let mut child = tokio::process::Command::new(command);
            child.args(args).envs(env).kill_on_drop(true);
            crate::child_process::dies_with_agent(&mut child);
            let mut wrapped = process_wrap::tokio::CommandWrap::from(child);
            // Its own process group, so stopping the server stops whatever it started.
            wrapped.wrap(process_wrap::tokio::ProcessGroup::leader());
            let (transport, stderr) = rmcp::transport::TokioChildProcess::builder(wrapped)
                .stderr(Stdio::piped())
                .spawn()
                .map_err(|error| format!("could not start `{command}`: {error}"))?;
            if let Some(stderr) = stderr {
                // Its stderr goes to our log: stdout and stderr belong to the editor.
                let server = config.name.clone();
                tokio::spawn(async move {
                    let mut lines = tokio::io::BufReader::new(stderr).lines();
                    while let Ok(Some(line)) = lines.next_line().await {
                        tracing::info!(server = %server, "{line}");
                    }
                });
            }
            handler.serve(transport).await.map_err(|error| ConnectError::Failed(error.to_string()))
        }
        Transport::Http { url, headers } => {
            let client = crate::http::client_builder().build().map_err(|error| error.to_string())?;
            let mut custom = std::collections::HashMap::new();
            for (key, value) in headers {
                let (Ok(key), Ok(value)) = (
                    reqwest::header::HeaderName::try_from(key.as_str()),
                    reqwest::header::HeaderValue::try_from(value.as_str()),
                ) else {
                    return Err(ConnectError::Failed(format!("the header `{key}` is not valid")));
                };
                custom.insert(key, value);
            }
            let transport_config =
                rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig::with_uri(url.as_str())
                    .custom_headers(custom);
            let Some(tokens) = tokens else {
                let transport = rmcp::transport::StreamableHttpClientTransport::with_client(client, transport_config);
                return handler.serve(transport).await.map_err(initialize_failed);
            };
            // Through the login's tokens, read on every request: a login (or a wider scope) that
            // arrives while connected is used from the next request on.
            let manager = logged_in_manager(url, tokens, &config.name).await?;
            let transport = rmcp::transport::StreamableHttpClientTransport::with_client(
                rmcp::transport::auth::AuthClient::new(client, manager),
                transport_config,
            );
            handler.serve(transport).await.map_err(initialize_failed)
        }
        Transport::Sse { url, headers } => {
            let login = match tokens {
                Some(tokens) => Some(logged_in_manager(url, tokens, &config.name).await?),
                None => None,
            };
            let transport = super::sse::connect(url, headers, login).await?;
            handler.serve(transport).await.map_err(initialize_failed)
        }
    }
}

/// The authorization manager of a remote server's login, with the saved login (if any) in
/// use: it reads the token file on every request.
async fn logged_in_manager(
    url: &str,
    tokens: &TokenFile,
    server: &str,
) -> Result<rmcp::transport::auth::AuthorizationManager, ConnectError> {
    let mut manager = auth::manager(url, tokens).await.map_err(|error| error.to_string())?;
    if tokens.exists()
        && let Err(error) = manager.initialize_from_store().await
    {
        tracing::warn!(%server, %error, "the saved MCP login could not be used");
    }
    Ok(manager)
}
