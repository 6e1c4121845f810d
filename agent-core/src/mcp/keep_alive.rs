//! Keeps one MCP server connected for the session: connect, bring its tools (and the resource
//! tools, for a server with resources) into the registry, and when it exits or drops say so once
//! and reconnect with backoff; a server that wants a login waits for the user to log in.

use std::sync::Arc;
use std::time::Duration;

use rmcp::service::{Peer, RoleClient, RunningService};
use tokio_util::sync::CancellationToken;

use super::client_handler::{Handler, Questions};
use super::connection::{ConnectError, MAX_BACKOFF, Server, connect};
use super::{Notices, Status};
use crate::tools::Registry;
use crate::tools::ask_user::AskUser;

/// The pause after a connection that held, or a login, before connecting again.
const FIRST_DELAY: Duration = Duration::from_secs(1);

/// Everything one server's connection works with; [`Keeper::run`] keeps it connected.
pub(super) struct Keeper {
    pub server: Arc<Server>,
    /// Every server of the session, for the resource tools a server with resources brings.
    pub all: Arc<[Arc<Server>]>,
    pub registry: Arc<Registry>,
    pub notices: Arc<Notices>,
    pub ask_user: Option<Arc<dyn AskUser>>,
    /// How long one connection attempt may take (`MCP_TIMEOUT`).
    pub attempt_timeout: Duration,
    /// The session's: the connection ends with it.
    pub cancel: CancellationToken,
}

/// How a connection that was made came to an end.
enum Served {
    /// The server exited or dropped the connection.
    Dropped,
    /// The user asked for a new connection (`/mcp reconnect`, a login).
    Reconnect,
    /// Listing its tools asked for a login.
    NeedsLogin(String),
    SessionEnded,
}

impl Keeper {
    /// Connects, and keeps connecting after every drop, until `cancel` fires.
    pub async fn run(self) {
        // Started while a session opens: let the answer to the editor go out first, so starting a
        // server's process never delays it.
        tokio::task::yield_now().await;
        let mut delay = FIRST_DELAY;
        let mut told_failure = false;
        loop {
            self.server.set_status(Status::Connecting);
            let attempt = tokio::select! {
                attempt = self.connect() => attempt,
                () = self.cancel.cancelled() => break,
            };
            let served = match attempt {
                Ok(running) => {
                    told_failure = false;
                    delay = FIRST_DELAY;
                    self.serve(running).await
                }
                Err(ConnectError::NeedsLogin { challenge }) => Served::NeedsLogin(challenge),
                Err(ConnectError::Failed(error)) => {
                    self.failed(error, &mut told_failure);
                    Served::Dropped
                }
            };
            match served {
                Served::Dropped => {}
                Served::Reconnect => {
                    delay = FIRST_DELAY;
                    continue;
                }
                Served::NeedsLogin(challenge) => {
                    if !self.wait_for_login(challenge).await {
                        break;
                    }
                    delay = FIRST_DELAY;
                    continue;
                }
                Served::SessionEnded => break,
            }
            tokio::select! {
                () = tokio::time::sleep(delay) => {}
                () = self.server.wake.notified() => delay = FIRST_DELAY,
                () = self.cancel.cancelled() => break,
            }
            delay = (delay * 2).min(MAX_BACKOFF);
        }
        self.server.set_status(Status::Stopped);
    }

    /// One connection attempt, given up after its timeout.
    async fn connect(&self) -> Result<RunningService<RoleClient, Handler>, ConnectError> {
        let questions = match &self.ask_user {
            Some(asker) => Questions::Ask(Arc::clone(asker)),
            None => Questions::Decline(Arc::clone(&self.notices)),
        };
        let handler = Handler { server: Arc::clone(&self.server), registry: Arc::clone(&self.registry), questions };
        let server = &self.server;
        tokio::time::timeout(self.attempt_timeout, connect(&server.config, server.tokens.as_ref(), handler))
            .await
            .unwrap_or_else(|_| {
                let waited = super::report::seconds(self.attempt_timeout);
                Err(ConnectError::Failed(format!("no answer within {waited} (MCP_TIMEOUT sets how long)")))
            })
    }

    /// Brings what the server offers into the session and holds the connection until it ends.
    async fn serve(&self, running: RunningService<RoleClient, Handler>) -> Served {
        let server = &self.server;
        server.link.set(Some(running.peer().clone()));
        server.read_prompts(running.peer()).await;
        let registered = server.register(running.peer(), &self.registry).await;
        self.offer_resources(running.peer());
        // Connected only once everything it brings is in the registry: a prompt waiting for the
        // server sees all of it.
        match registered {
            Ok(tools) => server.set_status(Status::Connected { tools }),
            Err(ConnectError::NeedsLogin { challenge }) => {
                running.cancellation_token().cancel();
                server.link.set(None);
                return Served::NeedsLogin(challenge);
            }
            Err(ConnectError::Failed(error)) => server.set_status(Status::Failed(error)),
        }
        let token = running.cancellation_token();
        let ended = tokio::select! {
            ended = running.waiting() => ended,
            () = server.wake.notified() => {
                // Asked to reconnect (`/mcp reconnect`, a new login): drop this one.
                token.cancel();
                server.link.set(None);
                server.set_status(Status::Connecting);
                return Served::Reconnect;
            }
            () = self.cancel.cancelled() => {
                token.cancel();
                server.link.set(None);
                return Served::SessionEnded;
            }
        };
        server.link.set(None);
        let name = &server.config.name;
        tracing::warn!(server = %name, ?ended, "MCP server connection ended");
        self.notices.push(format!("The MCP server `{name}` stopped; reconnecting. Its tools fail until it is back."));
        server.set_status(Status::Failed("stopped; reconnecting".into()));
        Served::Dropped
    }

    /// The resource tools, once, when the first server with resources connects.
    fn offer_resources(&self, peer: &Peer<RoleClient>) {
        let has_resources = peer.peer_info().is_some_and(|info| info.capabilities.resources.is_some());
        if has_resources && self.registry.get(super::resources::ListResources::NAME_STR).is_none() {
            self.registry.add_all([
                Arc::new(super::resources::ListResources { servers: Arc::clone(&self.all) })
                    as Arc<dyn crate::tools::DynTool>,
                Arc::new(super::resources::ReadResource { servers: Arc::clone(&self.all) }),
            ]);
        }
    }

    /// A failed attempt: logged each time, told to the user once until a connection holds.
    fn failed(&self, error: String, told_failure: &mut bool) {
        let name = &self.server.config.name;
        tracing::warn!(server = %name, %error, "MCP server did not connect");
        if !*told_failure {
            self.notices
                .push(format!("The MCP server `{name}` could not connect: {error}. Trying again in the background."));
            *told_failure = true;
        }
        self.server.set_status(Status::Failed(error));
    }

    /// A server asked for a login. Never a browser from the background: the user logs in when
    /// they choose to (`/mcp login`), and the connection waits for that instead of retrying.
    /// False when the session ended meanwhile.
    async fn wait_for_login(&self, challenge: String) -> bool {
        let server = &self.server;
        let name = &server.config.name;
        tracing::info!(server = %name, "MCP server asks for a login");
        if let Ok(mut last) = server.challenge.lock() {
            *last = Some(challenge);
        }
        self.notices.push(format!("The MCP server `{name}` needs you to log in: type `/mcp login {name}`."));
        server.set_status(Status::NeedsLogin);
        tokio::select! {
            () = server.wake.notified() => true,
            () = self.cancel.cancelled() => false,
        }
    }
}
