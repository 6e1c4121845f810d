//! MCP servers a session uses: their tools join the session's registry as `mcp__<server>__<tool>`
//! and take the one dispatch pipeline like any tool. Servers connect in the background when the
//! session starts, so opening it is not slower; the first prompt waits for those still
//! connecting, bounded by the connect timeout. A project's own servers (`.mcp.json`) connect
//! only once the user approved the project's settings. A server that fails or drops is reported
//! once and reconnected with backoff; servers stop with the session.

pub mod auth;
mod client_handler;
pub mod config;
pub mod conformance;
mod connection;
mod content;
mod keep_alive;
mod names;
mod report;
mod resources;
mod sse;
mod tool;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio_util::sync::CancellationToken;

pub use config::{McpServerConfig, ServerScope, Transport};
use connection::{CONNECT_TIMEOUT, Server};
pub use report::{McpError, McpReport, ServerState};

use crate::tools::{LoginBrowser, Registry};

/// Where a server is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Status {
    /// Not started: a project server waiting for the user's approval.
    NotStarted,
    Connecting,
    Connected {
        tools: usize,
    },
    /// The server asks for a login (OAuth), which the user starts: `/mcp login <server>`.
    NeedsLogin,
    Failed(String),
    Stopped,
}

pub use crate::event::Notices;

/// A server's prompt is offered as the slash command `/mcp__<server>__<prompt>`.
pub use crate::event::SlashCommand as McpCommand;

/// What the servers need from the session beyond their definitions: where logins are kept and
/// how the user is reached (an authorization page to open, a server's question to answer).
#[derive(Default, Clone)]
pub struct McpSupport {
    /// The user's data directory (logins go in its `mcp-auth/`); without one, no login is kept.
    pub data_dir: Option<std::path::PathBuf>,
    pub browser: Option<Arc<dyn LoginBrowser>>,
    pub ask_user: Option<Arc<dyn crate::tools::ask_user::AskUser>>,
    pub timeouts: McpTimeouts,
}

/// How long a server may take to connect and a tool call to answer: Claude Code's
/// `MCP_TIMEOUT` and `MCP_TOOL_TIMEOUT` (milliseconds), from the environment or the user's
/// `env` settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct McpTimeouts {
    /// One connection attempt, `initialize` and the tool list included.
    pub connect: Duration,
    /// One tool call; `None` waits until the call ends or the user cancels it.
    pub tool_call: Option<Duration>,
}

impl Default for McpTimeouts {
    fn default() -> Self {
        Self { connect: connection::ATTEMPT_TIMEOUT, tool_call: None }
    }
}

impl McpTimeouts {
    /// The timeouts `env` sets; a value that is not a positive number of milliseconds keeps the
    /// default, and is returned as a problem to tell the user.
    pub fn from_env(env: &std::collections::HashMap<String, String>) -> (Self, Vec<String>) {
        let mut problems = Vec::new();
        let mut millis = |name: &str| {
            let value = env.get(name)?;
            match value.trim().parse::<u64>() {
                Ok(millis) if millis > 0 => Some(Duration::from_millis(millis)),
                _ => {
                    problems.push(format!("{name}={value} is not a number of milliseconds above 0; it is not used"));
                    None
                }
            }
        };
        let defaults = Self::default();
        let timeouts = Self {
            connect: millis("MCP_TIMEOUT").unwrap_or(defaults.connect),
            tool_call: millis("MCP_TOOL_TIMEOUT").or(defaults.tool_call),
        };
        (timeouts, problems)
    }
}

/// The session's MCP servers.
pub struct McpServers {
    servers: Arc<[Arc<Server>]>,
    registry: Arc<Registry>,
    notices: Arc<Notices>,
    support: McpSupport,
    cancel: CancellationToken,
    started: Mutex<Vec<bool>>,
    tasks: Mutex<Vec<tokio::task::JoinHandle<()>>>,
}

impl McpServers {
    pub fn new(
        configs: Vec<McpServerConfig>,
        support: McpSupport,
        registry: Arc<Registry>,
        notices: Arc<Notices>,
        cancel: CancellationToken,
    ) -> Self {
        let started = Mutex::new(vec![false; configs.len()]);
        let servers: Arc<[Arc<Server>]> = configs
            .into_iter()
            .map(|config| {
                let (data_dir, browser) = (support.data_dir.as_deref(), support.browser.clone());
                Arc::new(Server::new(config, data_dir, browser, support.timeouts.tool_call))
            })
            .collect();
        Self { servers, registry, notices, support, cancel, started, tasks: Mutex::new(Vec::new()) }
    }

    #[cfg(test)]
    pub fn none() -> Self {
        Self::new(
            Vec::new(),
            McpSupport::default(),
            Arc::new(Registry::default()),
            Arc::default(),
            CancellationToken::new(),
        )
    }

    fn named(&self, name: &str) -> Result<&Arc<Server>, McpError> {
        self.servers
            .iter()
            .find(|server| server.config.name == name)
            .ok_or_else(|| McpError::NoSuchServer(name.to_owned()))
    }

    /// `/mcp login <server>`: logs in to an HTTP or SSE server with the user there (the editor
    /// opens the authorization page), then connects it with the new login.
    pub async fn login(&self, name: &str, cancel: &CancellationToken) -> Result<(), McpError> {
        let server = self.named(name)?;
        let login = server.login().ok_or_else(|| McpError::NoLogin(name.to_owned()))?;
        let browser = self.support.browser.as_ref().ok_or(McpError::NoLoginPage)?;
        let challenge = server.challenge.lock().ok().and_then(|challenge| challenge.clone());
        auth::log_in(&login.target(name), challenge.as_deref(), browser.as_ref(), cancel)
            .await
            .map_err(|error| McpError::LoginFailed { server: name.to_owned(), reason: error.to_string() })?;
        self.reconnect(name)
    }

    /// `/mcp reconnect <server>`: connects again at once (a failed server stops waiting out its
    /// backoff; one waiting for a login tries the saved one).
    pub fn reconnect(&self, name: &str) -> Result<(), McpError> {
        let server = self.named(name)?;
        if server.status() == Status::NotStarted {
            return Err(McpError::AwaitingApproval(name.to_owned()));
        }
        if let Some(tokens) = &server.tokens {
            tokens.reload();
        }
        // Connecting from now on, so whoever waits for the servers to settle waits for this one.
        server.set_status(Status::Connecting);
        server.wake.notify_one();
        Ok(())
    }

    /// Starts connecting every server not started yet; the project's own only with
    /// `with_project` (once the user approved them).
    pub fn start(&self, with_project: bool) {
        let (Ok(mut started), Ok(mut tasks)) = (self.started.lock(), self.tasks.lock()) else { return };
        for (server, started) in self.servers.iter().zip(started.iter_mut()) {
            if *started || (server.config.scope == ServerScope::Project && !with_project) {
                continue;
            }
            *started = true;
            // Connecting from now on, so a prompt right after this waits for it.
            server.set_status(Status::Connecting);
            let task = keep_alive::Keeper {
                server: Arc::clone(server),
                all: Arc::clone(&self.servers),
                registry: Arc::clone(&self.registry),
                notices: Arc::clone(&self.notices),
                ask_user: self.support.ask_user.clone(),
                attempt_timeout: self.support.timeouts.connect,
                cancel: self.cancel.child_token(),
            }
            .run();
            tasks.push(tokio::spawn(task));
        }
    }

    /// The project's own servers, for the user to approve: what each runs, and its definition as
    /// the approval's fingerprint sees it.
    pub fn project_servers(&self) -> Vec<(String, String)> {
        self.servers
            .iter()
            .filter(|server| server.config.scope == ServerScope::Project)
            .map(|server| (server.config.describe(), server.config.canonical()))
            .collect()
    }

    /// Waits until no started server is still connecting, for at most `limit`; says which are
    /// not ready.
    pub async fn settle(&self, limit: Duration) -> Vec<String> {
        let deadline = tokio::time::Instant::now() + limit;
        for server in self.servers.iter() {
            let mut changed = server.changed.subscribe();
            while server.status() == Status::Connecting {
                if tokio::time::timeout_at(deadline, changed.changed()).await.is_err() {
                    break;
                }
            }
        }
        self.servers
            .iter()
            .filter_map(|server| match server.status() {
                Status::Connecting => Some(format!(
                    "The MCP server `{}` is still connecting; its tools come when it is ready.",
                    server.config.name
                )),
                _ => None,
            })
            .collect()
    }

    /// The contents of the resources a prompt mentions as `@server:uri` (a server that is not
    /// connected, or a mention that is not of a server, stays prose), each wrapped with its URI.
    pub async fn mentioned_resources(&self, text: &str) -> Vec<crate::llm::Note> {
        let mut attached = Vec::new();
        for word in text.split_whitespace() {
            let Some((name, uri)) = word.strip_prefix('@').and_then(|mention| mention.split_once(':')) else {
                continue;
            };
            let uri = uri.trim_end_matches([',', '.', ')', ';']);
            if uri.is_empty()
                || !self.servers.iter().any(|server| server.config.name == name && server.link.peer().is_some())
            {
                continue;
            }
            match resources::read(&self.servers, name, uri).await {
                Ok(contents) => attached.push(crate::llm::Note::McpResource {
                    server: name.to_owned(),
                    uri: uri.to_owned(),
                    text: contents,
                }),
                Err(error) => self.notices.push(format!("@{name}:{uri} was not attached: {error}")),
            }
        }
        attached
    }

    /// The prompts of the connected servers, as slash commands.
    pub fn commands(&self) -> Vec<McpCommand> {
        let mut commands = Vec::new();
        for server in self.servers.iter() {
            let prompts = server.prompts.lock().map(|prompts| prompts.clone()).unwrap_or_default();
            for prompt in prompts {
                let name = prompt["name"].as_str().unwrap_or_default();
                let arguments: Vec<String> = prompt["arguments"]
                    .as_array()
                    .map(Vec::as_slice)
                    .unwrap_or_default()
                    .iter()
                    .filter_map(|argument| argument["name"].as_str().map(str::to_owned))
                    .collect();
                commands.push(McpCommand {
                    name: format!("mcp__{}__{}", names::sanitise(&server.config.name), names::sanitise(name)),
                    description: prompt["description"]
                        .as_str()
                        .map(str::to_owned)
                        .unwrap_or_else(|| format!("The `{name}` prompt of the MCP server `{}`", server.config.name)),
                    hint: (!arguments.is_empty()).then(|| arguments.join(" ")),
                });
            }
        }
        commands
    }

    /// Expands `/mcp__<server>__<prompt> args`: the words fill the prompt's arguments in order,
    /// the last one taking the rest. Returns the prompt's text, or why it could not be had.
    pub async fn expand(&self, command: &str, args: &str) -> Result<String, McpError> {
        for server in self.servers.iter() {
            let prefix = format!("mcp__{}__", names::sanitise(&server.config.name));
            let Some(wanted) = command.strip_prefix(&prefix) else { continue };
            let prompts = server.prompts.lock().map(|prompts| prompts.clone()).unwrap_or_default();
            let Some(prompt) =
                prompts.iter().find(|prompt| names::sanitise(prompt["name"].as_str().unwrap_or_default()) == wanted)
            else {
                continue;
            };
            let names: Vec<&str> = prompt["arguments"]
                .as_array()
                .map(Vec::as_slice)
                .unwrap_or_default()
                .iter()
                .filter_map(|argument| argument["name"].as_str())
                .collect();
            let mut arguments = serde_json::Map::new();
            let mut rest = args.trim();
            for (index, name) in names.iter().enumerate() {
                if rest.is_empty() {
                    break;
                }
                let value = if index + 1 == names.len() {
                    std::mem::take(&mut rest)
                } else {
                    let (word, after) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
                    rest = after.trim_start();
                    word
                };
                arguments.insert((*name).to_owned(), serde_json::Value::String(value.to_owned()));
            }
            let peer = server.link.peer().ok_or_else(|| McpError::NotConnected(server.config.name.clone()))?;
            let mut request = rmcp::model::GetPromptRequestParams::new(prompt["name"].as_str().unwrap_or_default());
            request.arguments = Some(arguments);
            let result = peer.get_prompt(request).await.map_err(|error| McpError::PromptFailed {
                server: server.config.name.clone(),
                reason: error.to_string(),
            })?;
            let result = serde_json::to_value(result).unwrap_or_default();
            let texts: Vec<String> = result["messages"]
                .as_array()
                .map(Vec::as_slice)
                .unwrap_or_default()
                .iter()
                .map(|message| {
                    let content = &message["content"];
                    match content["type"].as_str() {
                        Some("text") => content["text"].as_str().unwrap_or_default().to_owned(),
                        Some("resource") => {
                            content["resource"]["text"].as_str().map(str::to_owned).unwrap_or_else(|| {
                                format!("[resource {}]", content["resource"]["uri"].as_str().unwrap_or_default())
                            })
                        }
                        other => format!("[{} content left out]", other.unwrap_or("unknown")),
                    }
                })
                .collect();
            return Ok(texts.join("\n\n"));
        }
        Err(McpError::NoSuchPrompt(command.to_owned()))
    }

    /// Where each server is, for `/mcp`, `larik mcp list` and the doctor.
    pub fn report(&self) -> McpReport {
        let servers = self
            .servers
            .iter()
            .map(|server| ServerState {
                name: server.config.name.clone(),
                description: server.config.describe(),
                scope: server.config.scope,
                status: server.status(),
            })
            .collect();
        McpReport { servers }
    }

    /// How long the first prompt waits for servers still connecting.
    pub fn connect_timeout() -> Duration {
        CONNECT_TIMEOUT
    }
}

impl Drop for McpServers {
    fn drop(&mut self) {
        // The connections end with the session; each closes its server (and its process group).
        self.cancel.cancel();
    }
}
