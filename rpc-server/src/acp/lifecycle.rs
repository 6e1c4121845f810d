//! Session lifecycle over ACP: `session/new`, `load` (the whole history replayed as updates before
//! the answer), `resume` (no replay), `fork` (a copy with a future of its own), `list` (most
//! recent first, cursor-paged), `close` and `delete`. Sessions live in append-only files, so they outlive the process.

use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};

use larik_core::session::store::{Record, StoredSession, ToolRecord};
use larik_core::session::{Session, SessionConfig};
use larik_core::{Note, Part, Role};
use larik_protocol::acp;

use super::agent::{AcpAgent, SessionEntry, notify, unique_suffix};
use super::connection::{Peer, RpcError};
use super::editor_files::ClientFiles;
use super::elicitation::{FormQuestions, LoginPages};
use super::terminals::ClientTerminals;
use super::{modes, to_proto};

/// What a response that opens a session reports.
struct Opened {
    modes: acp::SessionModeState,
    options: Vec<acp::SessionConfigOption>,
}

/// Where a session opens, as the request that opens it says: its working directory, the
/// editor's MCP servers and the other directories it works in.
struct Place<'a> {
    cwd: &'a std::path::Path,
    servers: &'a [acp::McpServer],
    additional: &'a [std::path::PathBuf],
}

/// Sessions per page of `session/list`.
const PAGE_SIZE: usize = 50;

impl AcpAgent {
    /// Settings, model, editor file access and sandbox for a session in `cwd`.
    fn session_config(&self, place: &Place<'_>, peer: &Peer, id: &acp::SessionId) -> Result<SessionConfig, RpcError> {
        let cwd = place.cwd;
        for (what, dir) in std::iter::once(("cwd", cwd))
            .chain(place.additional.iter().map(|dir| ("additionalDirectories", dir.as_path())))
        {
            if !dir.is_absolute() || !dir.is_dir() {
                return Err(RpcError::new(
                    RpcError::INVALID_PARAMS,
                    format!("Invalid params: {what} must be absolute paths to directories, got {}", dir.display()),
                ));
            }
        }
        let (mut config, _) = SessionConfig::from_settings(cwd.to_path_buf(), &self.env, std::env::current_exe().ok())
            .map_err(|error| RpcError::new(RpcError::INVALID_PARAMS, error.to_string()))?;
        config.id = id.0.to_string();
        // The editor's roots join the settings' (the user chose them in the editor).
        config.additional_directories.extend(place.additional.iter().cloned());
        // The editor's servers join the settings' (a name given twice: the editor's wins).
        let given = super::from_proto::mcp_servers(place.servers);
        config.mcp_servers.retain(|server| !given.iter().any(|other| other.name == server.name));
        config.mcp_servers.extend(given);
        if self.signed_out.load(std::sync::atomic::Ordering::Relaxed) {
            config.provider =
                Err(larik_core::ProviderError::Auth { message: "signed out; authenticate to continue".into() });
        }
        let client = self.client_capabilities();
        if client.elicitation.as_ref().is_some_and(|elicitation| elicitation.form.is_some()) {
            config.services.ask_user = Some(Arc::new(FormQuestions { peer: peer.clone(), session_id: id.clone() }));
        }
        let url_mode = client.elicitation.as_ref().is_some_and(|elicitation| elicitation.url.is_some());
        config.services.browser = Some(Arc::new(LoginPages { peer: peer.clone(), session_id: id.clone(), url_mode }));
        // Commands stream into an agent-owned terminal where the client has one; otherwise they
        // run in the client's own terminals, where it offers them.
        if client.terminal && super::forward::ClientView::terminal_stream(&client).is_none() {
            config.services.terminals = Some(Arc::new(ClientTerminals { peer: peer.clone(), session_id: id.clone() }));
        }
        if self.client_extensions().diagnostics {
            config.services.diagnostics = Some(Arc::new(super::editor_diagnostics::ClientDiagnostics {
                peer: peer.clone(),
                session_id: id.clone(),
            }));
        }
        if client.fs.read_text_file || client.fs.write_text_file {
            config.editor = Some(Arc::new(ClientFiles {
                peer: peer.clone(),
                session_id: id.clone(),
                read: client.fs.read_text_file,
                write: client.fs.write_text_file,
            }));
        }
        Ok(config)
    }

    /// Opens the session and keeps it; returns the mode and options to answer with.
    fn open(&self, id: &acp::SessionId, config: SessionConfig, peer: &Peer) -> Opened {
        let session = Arc::new(Session::new(config, &peer.shutdown_token()));
        let state = Opened {
            modes: modes::mode_state(session.permissions().mode(), &session.permissions().modes()),
            options: self.options(&session),
        };
        let client = self.client_view(session.cwd());
        if client.subagents {
            // Background subagents are child sessions too, shown while they run, turn or not.
            let (events, received) = tokio::sync::mpsc::channel(256);
            session.watch_background(events);
            tokio::spawn(super::agent::background_children(
                Arc::clone(&session),
                peer.clone(),
                id.clone(),
                client,
                received,
            ));
        }
        if self.client_extensions().background_turns {
            tokio::spawn(super::agent::background_turns(
                Arc::clone(&session),
                peer.clone(),
                id.clone(),
                self.client_view(session.cwd()),
            ));
        }
        let entry = SessionEntry { session, editor_context: Mutex::new(None) };
        if let Ok(mut sessions) = self.sessions.lock()
            && let Some(previous) = sessions.insert(id.0.to_string(), Arc::new(entry))
        {
            previous.session.shutdown();
        }
        state
    }

    pub(super) fn new_session(
        &self,
        request: acp::NewSessionRequest,
        peer: &Peer,
    ) -> Result<acp::NewSessionResponse, RpcError> {
        let number = self.next_session.fetch_add(1, Ordering::Relaxed);
        let id = acp::SessionId::new(format!("sess_{}_{number}", unique_suffix()));
        let place =
            Place { cwd: &request.cwd, servers: &request.mcp_servers, additional: &request.additional_directories };
        let mut config = self.session_config(&place, peer, &id)?;
        if let Some(store) = &self.store {
            match store.create(&id.0, &request.cwd) {
                Ok(log) => config.log = Some(Arc::new(log)),
                Err(error) => {
                    tracing::warn!(%error, "the session will not be saved");
                    let said = format!("This session cannot be saved ({error}); it goes on in memory.");
                    config.notice =
                        Some(config.notice.take().map_or(said.clone(), |earlier| format!("{earlier}\n{said}")));
                }
            }
        }
        tracing::info!(session = %id.0, cwd = %request.cwd.display(), mcp_servers = request.mcp_servers.len(), "session created");
        let opened = self.open(&id, config, peer);
        Ok(acp::NewSessionResponse::new(id).modes(opened.modes).config_options(opened.options))
    }

    /// Reads a saved session and opens it with its history; the stored record is returned for replay.
    fn reopen(&self, id: &acp::SessionId, place: &Place<'_>, peer: &Peer) -> Result<(StoredSession, Opened), RpcError> {
        let store = self.store.as_ref().ok_or_else(|| RpcError::method_not_found("session/load"))?;
        let stored = store.load(&id.0).map_err(|_| not_found(id))?;
        let mut config = self.session_config(place, peer, id)?;
        config.history = stored.messages();
        config.title = stored.title.clone();
        config.log = store.reopen(&id.0).ok().map(Arc::new);
        let opened = self.open(id, config, peer);
        Ok((stored, opened))
    }

    pub(super) async fn load_session(
        &self,
        request: acp::LoadSessionRequest,
        peer: &Peer,
    ) -> Result<acp::LoadSessionResponse, RpcError> {
        let place =
            Place { cwd: &request.cwd, servers: &request.mcp_servers, additional: &request.additional_directories };
        let (stored, opened) = self.reopen(&request.session_id, &place, peer)?;
        let compaction = self.client_view(&request.cwd).compaction;
        replay(peer, &request.session_id, &stored, compaction).await;
        Ok(acp::LoadSessionResponse::new().modes(opened.modes).config_options(opened.options))
    }

    /// `session/fork` (unstable in ACP): a new session with the source's history up to now and
    /// its own future; the source goes on untouched. The client has the history on screen
    /// already, so nothing is replayed.
    pub(super) fn fork_session(
        &self,
        request: acp::ForkSessionRequest,
        peer: &Peer,
    ) -> Result<acp::ForkSessionResponse, RpcError> {
        let store = self.store.as_ref().ok_or_else(|| RpcError::method_not_found("session/fork"))?;
        let number = self.next_session.fetch_add(1, Ordering::Relaxed);
        let id = acp::SessionId::new(format!("sess_{}_{number}", unique_suffix()));
        store.fork(&request.session_id.0, &id.0, &request.cwd).map_err(|error| match error {
            larik_core::session::store::StoreError::NotFound(_) => not_found(&request.session_id),
            other => RpcError::new(RpcError::INTERNAL_ERROR, other.to_string()),
        })?;
        let place =
            Place { cwd: &request.cwd, servers: &request.mcp_servers, additional: &request.additional_directories };
        let (_, opened) = self.reopen(&id, &place, peer)?;
        tracing::info!(from = %request.session_id.0, session = %id.0, "session forked");
        Ok(acp::ForkSessionResponse::new(id).modes(opened.modes).config_options(opened.options))
    }

    pub(super) fn resume_session(
        &self,
        request: acp::ResumeSessionRequest,
        peer: &Peer,
    ) -> Result<acp::ResumeSessionResponse, RpcError> {
        let place =
            Place { cwd: &request.cwd, servers: &request.mcp_servers, additional: &request.additional_directories };
        let (_, opened) = self.reopen(&request.session_id, &place, peer)?;
        Ok(acp::ResumeSessionResponse::new().modes(opened.modes).config_options(opened.options))
    }

    pub(super) fn list_sessions(
        &self,
        request: acp::ListSessionsRequest,
    ) -> Result<acp::ListSessionsResponse, RpcError> {
        let Some(store) = &self.store else { return Ok(acp::ListSessionsResponse::new(Vec::new())) };
        let start = match &request.cursor {
            Some(cursor) => cursor.parse::<usize>().map_err(|_| {
                RpcError::new(
                    RpcError::INVALID_PARAMS,
                    format!("Invalid params: cursor `{cursor}` is not one this agent gave out"),
                )
            })?,
            None => 0,
        };
        let all = store.list(request.cwd.as_deref());
        let page: Vec<acp::SessionInfo> = all
            .iter()
            .skip(start)
            .take(PAGE_SIZE)
            .map(|summary| {
                acp::SessionInfo::new(summary.id.clone(), summary.cwd.clone())
                    .title(summary.title.clone())
                    .updated_at(larik_core::clock::iso8601(summary.updated_at))
            })
            .collect();
        let next = (start + PAGE_SIZE < all.len()).then(|| (start + PAGE_SIZE).to_string());
        Ok(acp::ListSessionsResponse::new(page).next_cursor(next))
    }

    pub(super) async fn close_session(
        &self,
        request: acp::CloseSessionRequest,
    ) -> Result<acp::CloseSessionResponse, RpcError> {
        let entry = self
            .sessions
            .lock()
            .ok()
            .and_then(|mut sessions| sessions.remove(&*request.session_id.0))
            .ok_or_else(|| not_found(&request.session_id))?;
        entry.session.cancel_turn();
        entry.session.end("other").await;
        Ok(acp::CloseSessionResponse::new())
    }

    pub(super) async fn delete_session(
        &self,
        request: acp::DeleteSessionRequest,
    ) -> Result<acp::DeleteSessionResponse, RpcError> {
        let entry = self.sessions.lock().ok().and_then(|mut sessions| sessions.remove(&*request.session_id.0));
        if let Some(entry) = entry {
            entry.session.cancel_turn();
            entry.session.end("other").await;
        }
        if let Some(store) = &self.store {
            store
                .delete(&request.session_id.0)
                .map_err(|error| RpcError::new(RpcError::INTERNAL_ERROR, error.to_string()))?;
        }
        Ok(acp::DeleteSessionResponse::new())
    }
}

fn not_found(id: &acp::SessionId) -> RpcError {
    RpcError {
        code: RpcError::RESOURCE_NOT_FOUND,
        message: format!("Session not found: {}", id.0),
        data: Some(serde_json::json!({"sessionId": id.0})),
    }
}

/// Sends the stored conversation as the updates the client would have seen: user and agent
/// text, thoughts, and each tool call with its (bounded) output or diff.
async fn replay(peer: &Peer, id: &acp::SessionId, stored: &StoredSession, compaction: bool) {
    if let Some(title) = &stored.title {
        notify(peer, id, acp::SessionUpdate::SessionInfoUpdate(acp::SessionInfoUpdate::new().title(title.clone())))
            .await;
    }
    for record in &stored.records {
        match record {
            Record::Message { message } => {
                for part in &message.content {
                    let update = match (message.role, part) {
                        (Role::User, Part::Text { text }) => acp::SessionUpdate::UserMessageChunk(
                            acp::ContentChunk::new(acp::ContentBlock::Text(acp::TextContent::new(text))),
                        ),
                        (Role::User, Part::Note(note)) => match user_block(note) {
                            Some(block) => acp::SessionUpdate::UserMessageChunk(acp::ContentChunk::new(block)),
                            None => continue,
                        },
                        (Role::Assistant, Part::Text { text }) => {
                            acp::SessionUpdate::AgentMessageChunk(to_proto::text_chunk(text.clone()))
                        }
                        (Role::Assistant, Part::Thinking { text, .. }) => {
                            acp::SessionUpdate::AgentThoughtChunk(to_proto::text_chunk(text.clone()))
                        }
                        _ => continue,
                    };
                    notify(peer, id, update).await;
                }
            }
            Record::Tool(tool) => notify(peer, id, acp::SessionUpdate::ToolCall(replayed_tool_call(tool))).await,
            // The conversation before stays visible; a client that shows compactions sees where.
            Record::Compaction { id: compaction_id, summary, .. } if compaction => {
                let update = acp::CompactionUpdate::new(compaction_id.clone(), acp::CompactionStatus::Completed)
                    .summary(vec![acp::ContentBlock::Text(acp::TextContent::new(summary.clone()))]);
                notify(peer, id, acp::SessionUpdate::CompactionUpdate(update)).await;
            }
            Record::Meta { .. } | Record::Title { .. } | Record::Rewind { .. } | Record::Compaction { .. } => {}
        }
    }
}

fn replayed_tool_call(tool: &ToolRecord) -> acp::ToolCall {
    let status = if tool.failed { acp::ToolCallStatus::Failed } else { acp::ToolCallStatus::Completed };
    let content = match &tool.diff {
        Some(diff) => vec![acp::ToolCallContent::Diff(
            acp::Diff::new(diff.path.clone(), diff.new_text.clone()).old_text(diff.old_text.clone()),
        )],
        None if tool.output.is_empty() => Vec::new(),
        None => vec![acp::ToolCallContent::Content(acp::Content::new(acp::ContentBlock::Text(acp::TextContent::new(
            tool.output.clone(),
        ))))],
    };
    let locations =
        tool.locations.iter().map(|(path, line)| acp::ToolCallLocation::new(path.clone()).line(*line)).collect();
    let mut call = acp::ToolCall::new(tool.id.clone(), tool.title.clone())
        .kind(super::to_proto::tool_kind(tool.kind))
        .status(status)
        .content(content)
        .locations(locations);
    if let Some(input) = &tool.input {
        call = call.raw_input(input.clone());
    }
    call
}

/// What the user sent that a note holds, as the client sent it: files they attached come back as
/// resources, what they said during a turn as text. The notes Larik, the editor, hooks and tasks
/// added for the model are not what the user typed: `None`.
fn user_block(note: &Note) -> Option<acp::ContentBlock> {
    match note {
        Note::Attachment { uri, text } => Some(acp::ContentBlock::Resource(acp::EmbeddedResource::new(
            acp::EmbeddedResourceResource::TextResourceContents(acp::TextResourceContents::new(text, uri)),
        ))),
        Note::Interjection { text } => Some(acp::ContentBlock::Text(acp::TextContent::new(text))),
        Note::EditorContext { .. }
        | Note::SystemNote { .. }
        | Note::McpResource { .. }
        | Note::Hook { .. }
        | Note::TaskNotification { .. } => None,
    }
}
