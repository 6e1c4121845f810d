//! The ACP agent: method handlers for `initialize`, `session/new`, `session/prompt` and
//! `session/cancel`, over the core's sessions. A prompt's turn runs in the request's own task;
//! its events are forwarded as `session/update`s, and the response goes out only after every
//! update of the turn was queued, so none arrives after it.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use larik_core::config::{self, ModelConfig};
use larik_core::event::{AgentEvent, PermissionAnswer, PermissionRequest};
use larik_core::llm::ProviderError;
use larik_core::session::{ModelSettings, Session, StopReason, TurnError};
use larik_protocol::acp;
use larik_protocol::extensions::{LarikCapabilities, META_KEY};
use serde::de::DeserializeOwned;
use serde_json::Value;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::connection::{Handler, Peer, RpcError};
use super::from_proto::{ALLOW_ALWAYS, ALLOW_ONCE, REJECT_ONCE, permission_answer, prompt_parts};
use super::to_proto;

pub struct AcpAgent {
    env: HashMap<String, String>,
    sessions: Mutex<HashMap<String, Arc<Session>>>,
    next_session: AtomicU64,
}

impl AcpAgent {
    pub fn new(env: HashMap<String, String>) -> Self {
        Self { env, sessions: Mutex::new(HashMap::new()), next_session: AtomicU64::new(1) }
    }

    fn session(&self, id: &acp::SessionId) -> Result<Arc<Session>, RpcError> {
        self.sessions.lock().ok().and_then(|sessions| sessions.get(&*id.0).cloned()).ok_or_else(|| RpcError {
            code: RpcError::RESOURCE_NOT_FOUND,
            message: format!("Session not found: {}", id.0),
            data: Some(serde_json::json!({"sessionId": id.0})),
        })
    }

    fn initialize(&self, request: acp::InitializeRequest) -> acp::InitializeResponse {
        tracing::info!(client = ?request.client_info.as_ref().map(|info| &info.name), "initialize");
        let mut meta = acp::Meta::new();
        meta.insert(META_KEY.into(), serde_json::to_value(LarikCapabilities::default()).unwrap_or_default());
        let capabilities = acp::AgentCapabilities::new()
            .prompt_capabilities(acp::PromptCapabilities::new().image(true).embedded_context(true))
            .meta(meta);
        // One protocol version exists: v1. Older or newer clients get our latest to decide on.
        acp::InitializeResponse::new(acp::ProtocolVersion::V1)
            .agent_capabilities(capabilities)
            .agent_info(acp::Implementation::new("larik", env!("CARGO_PKG_VERSION")).title("Larik".to_owned()))
    }

    fn new_session(&self, request: acp::NewSessionRequest, connection: &CancellationToken) -> Result<acp::NewSessionResponse, RpcError> {
        let cwd = request.cwd;
        if !cwd.is_absolute() || !cwd.is_dir() {
            return Err(RpcError::new(RpcError::INVALID_PARAMS, format!("Invalid params: cwd must be an absolute path to a directory, got {}", cwd.display())));
        }
        let settings = config::load_settings(&cwd, &self.env).map_err(|error| RpcError::new(RpcError::INVALID_PARAMS, error.to_string()))?;
        let (provider, model) = match config::resolve_model(&settings, &self.env) {
            Ok(model) => (model.build_provider(), model_settings(&model)),
            Err(error) => (
                Err(ProviderError::Auth { message: error.to_string() }),
                ModelSettings { model: String::new(), max_tokens: 0, max_turn_requests: 0 },
            ),
        };
        let number = self.next_session.fetch_add(1, Ordering::Relaxed);
        let id = format!("sess_{}_{number}", unique_suffix());
        let session = Arc::new(Session::new(&cwd, provider, model, connection));
        tracing::info!(session = %id, cwd = %cwd.display(), mcp_servers = request.mcp_servers.len(), "session created");
        if let Ok(mut sessions) = self.sessions.lock() {
            sessions.insert(id.clone(), session);
        }
        Ok(acp::NewSessionResponse::new(id))
    }

    async fn prompt(&self, peer: &Peer, request: acp::PromptRequest, cancel: CancellationToken) -> Result<acp::PromptResponse, RpcError> {
        let session = self.session(&request.session_id)?;
        let (events_tx, events_rx) = mpsc::channel(256);
        let turn_cancel = cancel.child_token();
        let forward = forward_events(peer, &request.session_id, events_rx, &turn_cancel);
        let turn = session.prompt(prompt_parts(request.prompt), events_tx, turn_cancel.clone());
        // The turn ends by dropping its sender, so the forwarder drains every event before we answer.
        let (outcome, ()) = tokio::join!(turn, forward);
        let stop = match outcome {
            Ok(stop) => stop,
            Err(error) => return Err(turn_error(error)),
        };
        Ok(acp::PromptResponse::new(match stop {
            StopReason::EndTurn => acp::StopReason::EndTurn,
            StopReason::MaxTokens => acp::StopReason::MaxTokens,
            StopReason::MaxTurnRequests => acp::StopReason::MaxTurnRequests,
            StopReason::Refusal => acp::StopReason::Refusal,
            StopReason::Cancelled => acp::StopReason::Cancelled,
        }))
    }
}

#[async_trait::async_trait]
impl Handler for AcpAgent {
    async fn request(self: Arc<Self>, peer: Peer, method: String, params: Value, cancel: CancellationToken) -> Result<Value, RpcError> {
        match method.as_str() {
            "initialize" => respond(self.initialize(parse(params)?)),
            "session/new" => respond(self.new_session(parse(params)?, &peer.shutdown_token())?),
            "session/prompt" => respond(self.prompt(&peer, parse(params)?, cancel).await?),
            _ => Err(RpcError::method_not_found(&method)),
        }
    }

    async fn notification(self: Arc<Self>, _peer: Peer, method: String, params: Value) {
        match method.as_str() {
            "session/cancel" => match parse::<acp::CancelNotification>(params) {
                Ok(cancel) => match self.session(&cancel.session_id) {
                    Ok(session) => session.cancel_turn(),
                    Err(_) => tracing::warn!(session = %cancel.session_id.0, "cancel for an unknown session"),
                },
                Err(error) => tracing::warn!(message = %error.message, "malformed session/cancel"),
            },
            _ => tracing::debug!(%method, "ignored notification"),
        }
    }
}

/// Sends the turn's events to the client as they come. A permission request becomes a
/// `session/request_permission` round trip whose answer goes back to the waiting turn.
async fn forward_events(peer: &Peer, session_id: &acp::SessionId, mut events: mpsc::Receiver<AgentEvent>, cancel: &CancellationToken) {
    while let Some(event) = events.recv().await {
        let update = match event {
            AgentEvent::TextDelta(text) => acp::SessionUpdate::AgentMessageChunk(to_proto::text_chunk(text)),
            AgentEvent::ThinkingDelta(text) => acp::SessionUpdate::AgentThoughtChunk(to_proto::text_chunk(text)),
            AgentEvent::ToolCallStarted(view) => acp::SessionUpdate::ToolCall(to_proto::tool_call(&view)),
            AgentEvent::ToolCallUpdated { id, status, output, display, locations } => {
                let mut update = to_proto::tool_call_update(&id, status, display.as_ref(), output.as_deref());
                if let Some(locations) = locations {
                    update.fields.locations = Some(to_proto::locations(&locations));
                }
                acp::SessionUpdate::ToolCallUpdate(update)
            }
            AgentEvent::PermissionRequested(request) => {
                ask_permission(peer, session_id, request, cancel).await;
                continue;
            }
            AgentEvent::Usage(usage) => {
                tracing::debug!(?usage, "usage");
                continue;
            }
            AgentEvent::Notice(message) => {
                tracing::info!(%message, "notice");
                continue;
            }
        };
        let notification = acp::SessionNotification::new(session_id.clone(), update);
        peer.notify("session/update", serde_json::to_value(notification).unwrap_or_default()).await;
    }
}

async fn ask_permission(peer: &Peer, session_id: &acp::SessionId, request: PermissionRequest, cancel: &CancellationToken) {
    let PermissionRequest { tool_call, reason, preview, suggested_rule, reply } = request;
    let content = preview.as_ref().map(|display| to_proto::tool_content(Some(display), None));
    let fields = acp::ToolCallUpdateFields::new()
        .title(tool_call.title.clone())
        .kind(to_proto::tool_kind(tool_call.kind))
        .status(acp::ToolCallStatus::Pending)
        .locations(to_proto::locations(&tool_call.locations))
        .raw_input(tool_call.input.clone())
        .content(content);
    let options = vec![
        acp::PermissionOption::new(ALLOW_ONCE, "Allow once", acp::PermissionOptionKind::AllowOnce),
        acp::PermissionOption::new(ALLOW_ALWAYS, format!("Always allow {suggested_rule} in this session"), acp::PermissionOptionKind::AllowAlways),
        acp::PermissionOption::new(REJECT_ONCE, "Reject", acp::PermissionOptionKind::RejectOnce),
    ];
    let params = acp::RequestPermissionRequest::new(session_id.clone(), acp::ToolCallUpdate::new(tool_call.id.clone(), fields), options);
    tracing::info!(tool = %tool_call.name, %reason, "asking permission");
    let answer = tokio::select! {
        response = peer.request("session/request_permission", serde_json::to_value(params).unwrap_or_default()) => {
            permission_answer(response.map_err(|error| error.message).and_then(|value| serde_json::from_value(value).map_err(|error| error.to_string())))
        }
        // The client must answer `cancelled` after session/cancel; we do not wait on it to end the turn.
        () = cancel.cancelled() => PermissionAnswer::Cancelled,
    };
    let _ = reply.send(answer);
}

fn turn_error(error: TurnError) -> RpcError {
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
            };
            RpcError { code: RpcError::INTERNAL_ERROR, message: format!("Model error: {error}"), data: Some(serde_json::json!({"kind": kind})) }
        }
    }
}

fn model_settings(model: &ModelConfig) -> ModelSettings {
    ModelSettings { model: model.model.clone(), max_tokens: model.max_tokens, max_turn_requests: model.max_turn_requests }
}

/// Decodes params, naming the offending field on failure.
fn parse<T: DeserializeOwned>(params: Value) -> Result<T, RpcError> {
    serde_path_to_error::deserialize(params).map_err(|error| {
        let path = error.path().to_string();
        let message = if path == "." { format!("Invalid params: {}", error.inner()) } else { format!("Invalid params: {path}: {}", error.inner()) };
        RpcError::new(RpcError::INVALID_PARAMS, message)
    })
}

fn respond<T: serde::Serialize>(value: T) -> Result<Value, RpcError> {
    serde_json::to_value(value).map_err(|error| RpcError::new(RpcError::INTERNAL_ERROR, error.to_string()))
}

/// Distinguishes sessions across restarts of the binary without a random-number crate.
fn unique_suffix() -> String {
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|elapsed| elapsed.as_nanos()).unwrap_or(0);
    format!("{:x}{:x}", nanos & 0xffff_ffff_ffff, std::process::id())
}
