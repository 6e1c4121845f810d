//! The ACP agent: method handlers over the core's sessions. A prompt's turn runs in the request's
//! own task; its events are forwarded as `session/update`s, and the response goes out only after
//! every update of the turn was queued, so none arrives after it.

use std::collections::HashMap;
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex};

use larik_core::Mode;
use larik_core::session::store::SessionStore;
use larik_core::session::{ModelSettings, Session, StopReason, TurnError};
use larik_core::{Part, ProviderError, ThoughtLevel};
use larik_protocol::acp;
use larik_protocol::extensions::{
    AgentExtensions, CHECKPOINTS_METHOD, CheckpointsRequest, CheckpointsResponse, ClientExtensions,
    EDITOR_CONTEXT_METHOD, EditorContext, META_KEY, SANDBOX_METHOD, STEERING_METHOD, SandboxNotification,
    SteeringRequest, SteeringResponse, UNDO_METHOD, UndoRequest,
};
use serde::de::DeserializeOwned;
use serde_json::Value;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::connection::{Handler, Peer, RpcError};
use super::forward::{ClientView, forward_events};
use super::from_proto::prompt_parts;
use super::{commands, editor_context, modes};
use crate::side_by_side::side_by_side;

/// How long SessionEnd hooks may take when the editor goes away.
const SESSION_END_BUDGET: std::time::Duration = std::time::Duration::from_secs(5);

/// A session and what the connection keeps beside it.
pub(super) struct SessionEntry {
    pub(super) session: Arc<Session>,
    /// The latest editor context pushed by the client, consumed by the next prompt.
    pub(super) editor_context: Mutex<Option<EditorContext>>,
}

pub struct AcpAgent {
    pub(super) env: HashMap<String, String>,
    pub(super) sessions: Mutex<HashMap<String, Arc<SessionEntry>>>,
    pub(super) client: Mutex<acp::ClientCapabilities>,
    pub(super) next_session: AtomicU64,
    /// Where sessions are saved; `None` when there is no home or data directory.
    pub(super) store: Option<SessionStore>,
    /// After `logout`, no session uses the configured credentials until `authenticate`.
    pub(super) signed_out: std::sync::atomic::AtomicBool,
}

impl AcpAgent {
    pub fn new(env: HashMap<String, String>) -> Self {
        let store = SessionStore::from_env(&env);
        Self {
            env,
            sessions: Mutex::new(HashMap::new()),
            client: Mutex::new(acp::ClientCapabilities::default()),
            next_session: AtomicU64::new(1),
            store,
            signed_out: std::sync::atomic::AtomicBool::new(false),
        }
    }

    /// Removes, off the event loop, the sessions older than the user's `cleanupPeriodDays`; with
    /// no such setting no thread is started.
    pub fn remove_expired_sessions(&self) {
        let (Some(store), Some(days)) = (self.store.clone(), larik_core::config::cleanup_period_days(&self.env)) else {
            return;
        };
        tokio::task::spawn_blocking(move || store.remove_older_than(days));
    }

    /// Ends every session: their SessionEnd hooks run (for at most a few seconds, as the editor
    /// is going away), running turns are cancelled and their children killed.
    pub async fn shutdown(&self) {
        let entries: Vec<Arc<SessionEntry>> = self
            .sessions
            .lock()
            .map(|mut sessions| sessions.drain().map(|(_, entry)| entry).collect())
            .unwrap_or_default();
        for entry in &entries {
            // Turns stop first: the editor will not see what they would still do.
            entry.session.cancel_turn();
        }
        let ends = futures::future::join_all(entries.iter().map(|entry| entry.session.end("prompt_input_exit")));
        if tokio::time::timeout(SESSION_END_BUDGET, ends).await.is_err() {
            tracing::warn!("SessionEnd hooks ran out of time");
        }
        for entry in entries {
            entry.session.shutdown();
        }
    }

    pub(super) fn entry(&self, id: &acp::SessionId) -> Result<Arc<SessionEntry>, RpcError> {
        self.sessions.lock().ok().and_then(|sessions| sessions.get(&*id.0).cloned()).ok_or_else(|| RpcError {
            code: RpcError::RESOURCE_NOT_FOUND,
            message: format!("Session not found: {}", id.0),
            data: Some(serde_json::json!({"sessionId": id.0})),
        })
    }

    pub(super) fn client_capabilities(&self) -> acp::ClientCapabilities {
        self.client.lock().map(|client| client.clone()).unwrap_or_default()
    }

    pub(super) fn client_extensions(&self) -> ClientExtensions {
        let client = self.client_capabilities();
        client
            .meta
            .as_ref()
            .and_then(|meta| meta.get(META_KEY))
            .and_then(|value| serde_json::from_value(value.clone()).ok())
            .unwrap_or_default()
    }

    /// What this client shows beyond plain ACP, for a session in `cwd`.
    pub(super) fn client_view(&self, cwd: &std::path::Path) -> ClientView {
        let capabilities = self.client_capabilities();
        ClientView {
            hunk_review: self.client_extensions().hunk_review,
            notices: capabilities.session.as_ref().is_some_and(|session| session.notices.is_some()),
            terminal_stream: ClientView::terminal_stream(&capabilities),
            cwd: cwd.to_path_buf(),
            subagents: capabilities.subagents.is_some(),
            compaction: capabilities.session.as_ref().is_some_and(|session| session.compaction.is_some()),
        }
    }

    fn initialize(&self, request: acp::InitializeRequest) -> acp::InitializeResponse {
        tracing::info!(client = ?request.client_info.as_ref().map(|info| &info.name), "initialize");
        if let Ok(mut client) = self.client.lock() {
            *client = request.client_capabilities;
        }
        let mut meta = acp::Meta::new();
        meta.insert(META_KEY.into(), serde_json::to_value(AgentExtensions::default()).unwrap_or_default());
        let mut capabilities = acp::AgentCapabilities::new()
            .prompt_capabilities(acp::PromptCapabilities::new().image(true).embedded_context(true))
            .auth(acp::AgentAuthCapabilities::new().logout(acp::LogoutCapabilities::new()))
            .mcp_capabilities(acp::McpCapabilities::new().http(true).sse(true))
            .meta(meta);
        // More than one root per session, on every request that opens one.
        let mut sessions = acp::SessionCapabilities::new()
            .additional_directories(acp::SessionAdditionalDirectoriesCapabilities::new());
        // Sessions persist only where there is somewhere to keep them.
        if self.store.is_some() {
            capabilities = capabilities.load_session(true);
            sessions = sessions
                .list(acp::SessionListCapabilities::new())
                .resume(acp::SessionResumeCapabilities::new())
                .close(acp::SessionCloseCapabilities::new())
                .fork(acp::SessionForkCapabilities::new())
                .delete(acp::SessionDeleteCapabilities::new());
        }
        capabilities = capabilities.session_capabilities(sessions);
        // One protocol version exists: v1. Older or newer clients get our latest to decide on.
        let mut result_meta = acp::Meta::new();
        // The de-facto steering extension, advertised where other agents advertise it.
        result_meta.insert("steering".into(), serde_json::json!({"supported": true}));
        let api_key = acp::AuthMethodAgent::new("api-key", "API key")
            .description("Reads ANTHROPIC_API_KEY or OPENAI_API_KEY (or OPENAI_BASE_URL for a local server) from the environment or the settings files".to_owned());
        acp::InitializeResponse::new(acp::ProtocolVersion::V1)
            .agent_capabilities(capabilities)
            .auth_methods(vec![acp::AuthMethod::Agent(api_key)])
            .meta(result_meta)
            .agent_info(acp::Implementation::new("larik", env!("CARGO_PKG_VERSION")).title("Larik".to_owned()))
    }

    pub(super) fn options(&self, session: &Session) -> Vec<acp::SessionConfigOption> {
        let models = session.model_config().map(|model| model.models).unwrap_or_default();
        modes::config_options(
            session.permissions().mode(),
            &session.permissions().modes(),
            &session.model(),
            &models,
            session.thought_level(),
        )
    }

    pub(super) async fn set_mode(
        &self,
        peer: &Peer,
        session_id: &acp::SessionId,
        mode_id: &str,
    ) -> Result<(), RpcError> {
        let entry = self.entry(session_id)?;
        let mode = Mode::from_id(mode_id).ok_or_else(|| {
            RpcError::new(RpcError::INVALID_PARAMS, format!("Invalid params: unknown mode `{mode_id}`"))
        })?;
        entry
            .session
            .permissions()
            .set_mode(mode)
            .map_err(|refused| RpcError::new(RpcError::INVALID_PARAMS, format!("Invalid params: {refused}")))?;
        // Clients follow one of the two; keep both in sync.
        let update = acp::SessionUpdate::CurrentModeUpdate(acp::CurrentModeUpdate::new(mode.id()));
        notify(peer, session_id, update).await;
        let options = self.options(&entry.session);
        notify(peer, session_id, acp::SessionUpdate::ConfigOptionUpdate(acp::ConfigOptionUpdate::new(options))).await;
        Ok(())
    }

    pub(super) async fn set_config_option(
        &self,
        peer: &Peer,
        request: acp::SetSessionConfigOptionRequest,
    ) -> Result<acp::SetSessionConfigOptionResponse, RpcError> {
        let entry = self.entry(&request.session_id)?;
        let value = request.value.as_value_id().map(|value| value.0.to_string()).ok_or_else(|| {
            RpcError::new(
                RpcError::INVALID_PARAMS,
                format!("Invalid params: `{}` takes one of its listed values", request.config_id.0),
            )
        })?;
        match &*request.config_id.0 {
            modes::MODE_OPTION => {
                let mode = Mode::from_id(&value).ok_or_else(|| {
                    RpcError::new(RpcError::INVALID_PARAMS, format!("Invalid params: unknown mode `{value}`"))
                })?;
                entry
                    .session
                    .permissions()
                    .set_mode(mode)
                    .map_err(|refused| RpcError::new(RpcError::INVALID_PARAMS, format!("Invalid params: {refused}")))?;
                notify(
                    peer,
                    &request.session_id,
                    acp::SessionUpdate::CurrentModeUpdate(acp::CurrentModeUpdate::new(mode.id())),
                )
                .await;
            }
            modes::MODEL_OPTION => {
                let Some(model) = entry.session.model_config() else {
                    return Err(RpcError::new(
                        RpcError::AUTH_REQUIRED,
                        "Authentication required: no model is configured",
                    ));
                };
                if !model.models.contains(&value) {
                    return Err(RpcError::new(
                        RpcError::INVALID_PARAMS,
                        format!("Invalid params: `{value}` is not one of the configured models"),
                    ));
                }
                entry.session.switch_model(&model.with_model(&value, &self.env));
            }
            modes::THOUGHT_OPTION => {
                let level = ThoughtLevel::from_id(&value).ok_or_else(|| {
                    RpcError::new(RpcError::INVALID_PARAMS, format!("Invalid params: unknown thought level `{value}`"))
                })?;
                entry.session.set_thought_level(level);
            }
            other => {
                return Err(RpcError::new(
                    RpcError::INVALID_PARAMS,
                    format!("Invalid params: unknown config option `{other}`"),
                ));
            }
        }
        Ok(acp::SetSessionConfigOptionResponse::new(self.options(&entry.session)))
    }

    /// The only method is an API key from the environment or settings: it succeeds when one is there.
    fn authenticate(&self, request: acp::AuthenticateRequest) -> Result<acp::AuthenticateResponse, RpcError> {
        if &*request.method_id.0 != "api-key" {
            return Err(RpcError::new(
                RpcError::INVALID_PARAMS,
                format!("Invalid params: unknown auth method `{}`", request.method_id.0),
            ));
        }
        let cwd = std::env::current_dir().unwrap_or_default();
        let settings = larik_core::config::load_settings(&cwd, &self.env)
            .map_err(|error| RpcError::new(RpcError::AUTH_REQUIRED, error.to_string()))?;
        let model = larik_core::config::resolve_model(&settings, &self.env)
            .map_err(|error| RpcError::new(RpcError::AUTH_REQUIRED, format!("Authentication required: {error}")))?;
        model
            .build_provider()
            .map_err(|error| RpcError::new(RpcError::AUTH_REQUIRED, format!("Authentication required: {error}")))?;
        // Signed back in: every open session gets its model back.
        if self.signed_out.swap(false, std::sync::atomic::Ordering::Relaxed) {
            self.for_each_session(|entry| {
                if let Some(model) = entry.session.model_config() {
                    entry.session.switch_model(&model);
                }
            });
        }
        Ok(acp::AuthenticateResponse::new())
    }

    /// Stops using the configured credentials in this connection until `authenticate`: open
    /// sessions answer prompts with "authentication required". Keys stay where the user put them.
    fn logout(&self) -> acp::LogoutResponse {
        self.signed_out.store(true, std::sync::atomic::Ordering::Relaxed);
        self.for_each_session(|entry| {
            let signed_out = Err(ProviderError::Auth { message: "signed out; authenticate to continue".into() });
            let settings = entry.session.model_config().as_ref().map(ModelSettings::from);
            if let Some(settings) = settings {
                entry.session.set_model(signed_out, settings);
            }
        });
        acp::LogoutResponse::new()
    }

    fn for_each_session(&self, mut action: impl FnMut(&SessionEntry)) {
        let entries: Vec<Arc<SessionEntry>> =
            self.sessions.lock().map(|sessions| sessions.values().cloned().collect()).unwrap_or_default();
        for entry in &entries {
            action(entry);
        }
    }

    async fn prompt(
        &self,
        peer: &Peer,
        request: acp::PromptRequest,
        cancel: CancellationToken,
    ) -> Result<acp::PromptResponse, RpcError> {
        let entry = self.entry(&request.session_id)?;
        if let Some(stop) = self.slash_command(peer, &request, &entry, &cancel).await? {
            return Ok(acp::PromptResponse::new(stop));
        }
        let mut prompt = request.prompt;
        // An MCP server's prompt, a skill or a custom command run as `/name args`: its text
        // becomes the prompt, and an MCP prompt that cannot be had ends the request before any
        // model call.
        if let [acp::ContentBlock::Text(text)] = prompt.as_slice()
            && let Some(expanded) = entry
                .session
                .expand_command(&text.text)
                .await
                .map_err(|error| RpcError::new(RpcError::INVALID_PARAMS, error.to_string()))?
        {
            prompt = vec![acp::ContentBlock::Text(acp::TextContent::new(expanded))];
        }
        let mut parts = Vec::new();
        if let Some(context) = entry.editor_context.lock().ok().and_then(|mut context| context.take())
            && let Some(note) = editor_context::render(&context)
        {
            parts.push(Part::Note(note));
        }
        let session = &entry.session;
        parts.extend(prompt_parts(prompt, |path| session.permissions().read_denied(path, session.cwd())));
        let (events_tx, events_rx) = mpsc::channel(256);
        let turn_cancel = cancel.child_token();
        let client = self.client_view(session.cwd());
        let forward = forward_events(peer, &request.session_id, events_rx, client, &turn_cancel);
        let turn = entry.session.prompt(parts, events_tx, turn_cancel.clone());
        // The turn ends by dropping its sender, so the forwarder drains every event before we answer.
        let outcome = side_by_side(turn, forward).await;
        Ok(acp::PromptResponse::new(stop_reason(outcome.map_err(turn_error)?)))
    }
}

/// For a client that opted into `backgroundTurns`: whenever a background task finishes while the
/// session is idle, the agent starts a turn of its own with the results, sent as ordinary
/// updates outside any prompt. Ends with the session or the connection.
pub(super) async fn background_turns(
    session: Arc<Session>,
    peer: Peer,
    session_id: acp::SessionId,
    client: ClientView,
) {
    let mut changes = session.background_changes();
    let stop = peer.shutdown_token();
    loop {
        tokio::select! {
            changed = changes.changed() => if changed.is_err() { return },
            () = session.closed() => return,
            () = stop.cancelled() => return,
        }
        let (events_tx, events_rx) = mpsc::channel(256);
        let cancel = stop.child_token();
        let forward = forward_events(&peer, &session_id, events_rx, client.clone(), &cancel);
        let (delivered, ()) = tokio::join!(session.deliver_background(events_tx, cancel.clone()), forward);
        if let Some(Err(error)) = delivered {
            tracing::warn!(%error, "the turn with background results failed");
        }
    }
}

/// For a client that shows subagents as child sessions: the background ones' announcements,
/// updates and prompts, whether a turn runs or not. Ends with the session or the connection.
pub(super) async fn background_children(
    session: Arc<Session>,
    peer: Peer,
    session_id: acp::SessionId,
    client: ClientView,
    events: mpsc::Receiver<larik_core::event::AgentEvent>,
) {
    let shutdown = peer.shutdown_token();
    let stop = shutdown.child_token();
    let forward = forward_events(&peer, &session_id, events, client, &stop);
    tokio::select! {
        () = forward => {}
        () = session.closed() => stop.cancel(),
        () = shutdown.cancelled() => {}
    }
}

pub(super) fn stop_reason(stop: StopReason) -> acp::StopReason {
    match stop {
        StopReason::EndTurn => acp::StopReason::EndTurn,
        // ACP has no reason of its own for a spent budget; a token limit is the nearest, and a
        // notice before it says which.
        StopReason::MaxTokens | StopReason::BudgetExhausted => acp::StopReason::MaxTokens,
        StopReason::MaxTurnRequests => acp::StopReason::MaxTurnRequests,
        StopReason::Refusal => acp::StopReason::Refusal,
        StopReason::Cancelled => acp::StopReason::Cancelled,
    }
}

#[async_trait::async_trait]
impl Handler for AcpAgent {
    async fn request(
        self: Arc<Self>,
        peer: Peer,
        method: String,
        params: Value,
        cancel: CancellationToken,
    ) -> Result<Value, RpcError> {
        match method.as_str() {
            "initialize" => {
                // The sandbox check takes a few milliseconds: it runs on the event loop, and only
                // a session's first prompt waits for it.
                if let Ok(helper) = std::env::current_exe() {
                    larik_core::sandbox::probe::start(&helper);
                }
                respond(self.initialize(parse(params)?))
            }
            "session/new" => respond(self.new_session(parse(params)?, &peer)?),
            "session/load" => respond(self.load_session(parse(params)?, &peer).await?),
            "session/resume" => respond(self.resume_session(parse(params)?, &peer)?),
            "session/fork" => respond(self.fork_session(parse(params)?, &peer)?),
            "session/list" => respond(self.list_sessions(parse(params)?)?),
            "session/close" => respond(self.close_session(parse(params)?).await?),
            "session/delete" => respond(self.delete_session(parse(params)?).await?),
            "session/prompt" => respond(self.prompt(&peer, parse(params)?, cancel).await?),
            "session/set_mode" => {
                let request: acp::SetSessionModeRequest = parse(params)?;
                self.set_mode(&peer, &request.session_id, &request.mode_id.0).await?;
                respond(acp::SetSessionModeResponse::new())
            }
            "session/set_config_option" => respond(self.set_config_option(&peer, parse(params)?).await?),
            "authenticate" => respond(self.authenticate(parse(params)?)?),
            "logout" => respond(self.logout()),
            STEERING_METHOD => {
                let steering: SteeringRequest = parse(params)?;
                let entry = self.entry(&acp::SessionId::new(steering.session_id.clone()))?;
                let outcome = if entry.session.steer(steering.text()) { "injected" } else { "promptRequired" };
                respond(SteeringResponse { outcome: outcome.into() })
            }
            CHECKPOINTS_METHOD => {
                let request: CheckpointsRequest = parse(params)?;
                let entry = self.entry(&acp::SessionId::new(request.session_id))?;
                respond(CheckpointsResponse {
                    checkpoints: entry.session.checkpoints().iter().map(super::checkpoints::info).collect(),
                })
            }
            UNDO_METHOD => {
                let request: UndoRequest = parse(params)?;
                let entry = self.entry(&acp::SessionId::new(request.session_id))?;
                let undone = entry
                    .session
                    .undo(request.checkpoint_id)
                    .await
                    .map_err(|error| RpcError::new(RpcError::INVALID_PARAMS, error.to_string()))?;
                respond(super::checkpoints::undo_response(&undone))
            }
            _ => Err(RpcError::method_not_found(&method)),
        }
    }

    async fn after_response(self: Arc<Self>, peer: Peer, method: String, session_id: Option<String>, result: Value) {
        // A session's commands are announced once the client knows the session: a new one, or
        // one loaded or resumed (whose skills were read again).
        let id = match method.as_str() {
            "session/new" | "session/fork" => result["sessionId"].as_str().map(str::to_owned),
            "session/load" | "session/resume" => session_id,
            _ => None,
        };
        let Some(id) = id else { return };
        let session_id = acp::SessionId::new(id);
        let Ok(entry) = self.entry(&session_id) else { return };
        let skills = entry.session.skill_commands();
        notify(&peer, &session_id, commands::available(&[], &skills)).await;
        // The sandbox's state once its check answered, which opening the session did not wait for.
        entry.session.sandbox_checked().await;
        let sandbox = super::to_proto::sandbox_state(entry.session.sandbox_state());
        peer.notify(SANDBOX_METHOD, SandboxNotification { session_id: session_id.0.to_string(), sandbox }).await;
        // The MCP servers' prompts join once the servers are in.
        let prompts = entry.session.mcp_commands().await;
        if !prompts.is_empty() {
            notify(&peer, &session_id, commands::available(&prompts, &skills)).await;
        }
    }

    async fn notification(self: Arc<Self>, _peer: Peer, method: String, params: Value) {
        match method.as_str() {
            "session/cancel" => match parse::<acp::CancelNotification>(params) {
                Ok(cancel) => match self.entry(&cancel.session_id) {
                    Ok(entry) => entry.session.cancel_turn(),
                    // A subagent's child session: that child stops, its parent goes on.
                    Err(_) => match super::forward::child_cancels()
                        .lock()
                        .ok()
                        .and_then(|children| children.get(cancel.session_id.0.as_ref()).cloned())
                    {
                        Some(child) => child.cancel(),
                        None => tracing::warn!(session = %cancel.session_id.0, "cancel for an unknown session"),
                    },
                },
                Err(error) => tracing::warn!(message = %error.message, "malformed session/cancel"),
            },
            EDITOR_CONTEXT_METHOD => match parse::<EditorContext>(params) {
                Ok(context) => match self.entry(&acp::SessionId::new(context.session_id.clone())) {
                    Ok(entry) => {
                        if let Ok(mut slot) = entry.editor_context.lock() {
                            *slot = Some(context);
                        }
                    }
                    Err(_) => tracing::warn!(session = %context.session_id, "editor context for an unknown session"),
                },
                Err(error) => tracing::warn!(message = %error.message, "malformed editor context"),
            },
            _ => tracing::debug!(%method, "ignored notification"),
        }
    }
}

pub(super) async fn notify(peer: &Peer, session_id: &acp::SessionId, update: acp::SessionUpdate) {
    let notification = acp::SessionNotification::new(session_id.clone(), update);
    match &notification.update {
        // The schema leaves a pending call's status out, as its default. Clients that draw a
        // call's approve and reject buttons only for a status they read (avante.nvim) need it
        // written out.
        acp::SessionUpdate::ToolCall(call) if call.status == acp::ToolCallStatus::Pending => {
            match serde_json::to_value(&notification) {
                Ok(mut value) => {
                    value["update"]["status"] = Value::from("pending");
                    peer.notify("session/update", value).await;
                }
                Err(error) => tracing::warn!(%error, "a tool call could not be serialized"),
            }
        }
        _ => peer.notify("session/update", &notification).await,
    }
}

pub(super) fn turn_error(error: TurnError) -> RpcError {
    match error {
        TurnError::Provider(ProviderError::Auth { message }) => RpcError {
            code: RpcError::AUTH_REQUIRED,
            message: format!("Authentication required: {message}"),
            data: None,
        },
        TurnError::Provider(error) => {
            let kind = match &error {
                ProviderError::Auth { .. } => "auth",
                ProviderError::RateLimited { .. } => "rate_limited",
                ProviderError::Overloaded { .. } => "overloaded",
                ProviderError::ContextOverflow { .. } => "context_overflow",
                ProviderError::BadRequest { .. } => "bad_request",
                ProviderError::Network { .. } => "network",
                ProviderError::StreamBroken { .. } => "stream_broken",
                ProviderError::Stalled { .. } => "stream_stalled",
            };
            RpcError {
                code: RpcError::INTERNAL_ERROR,
                message: format!("Model error: {error}"),
                data: Some(serde_json::json!({"kind": kind})),
            }
        }
    }
}

/// Decodes params, naming the offending field on failure.
pub(super) fn parse<T: DeserializeOwned>(params: Value) -> Result<T, RpcError> {
    serde_path_to_error::deserialize(params).map_err(|error| {
        let path = error.path().to_string();
        let message = if path == "." {
            format!("Invalid params: {}", error.inner())
        } else {
            format!("Invalid params: {path}: {}", error.inner())
        };
        RpcError::new(RpcError::INVALID_PARAMS, message)
    })
}

fn respond<T: serde::Serialize>(value: T) -> Result<Value, RpcError> {
    serde_json::to_value(value).map_err(|error| RpcError::new(RpcError::INTERNAL_ERROR, error.to_string()))
}

/// Distinguishes sessions across restarts of the binary without a random-number crate.
pub(super) fn unique_suffix() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|elapsed| elapsed.as_nanos())
        .unwrap_or(0);
    format!("{:x}{:x}", nanos & 0xffff_ffff_ffff, std::process::id())
}
