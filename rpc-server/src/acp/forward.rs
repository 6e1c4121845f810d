//! A turn's events as `session/update`s, sent as they come (streamed text arrives already paced
//! by the turn, see `larik_core`'s `PacedText`). A permission request becomes a
//! `session/request_permission` round trip whose answer goes back to the waiting turn. A command's
//! output streams into an agent-owned terminal for clients that advertise one
//! (`_meta.terminal_output` as Zed does, or `_meta.terminal_output_delta`).

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;

use larik_core::event::{AgentEvent, CompactionState, Display, StopReason, ToolStatus};
use larik_protocol::acp;
use larik_protocol::extensions::{
    META_KEY, SpentTokens, TERMINAL_EXIT_KEY, TERMINAL_INFO_KEY, TERMINAL_OUTPUT_DELTA_KEY, TERMINAL_OUTPUT_KEY,
    TerminalExit, TerminalInfo, TerminalOutputChunk, UsageMeta,
};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::agent::notify;
use super::connection::Peer;
use super::{permission, to_proto};

/// What the client can show beyond plain ACP v1.
#[derive(Clone, Default)]
pub(super) struct ClientView {
    pub hunk_review: bool,
    pub notices: bool,
    /// The `_meta` key that carries command output to an agent-owned terminal, if any.
    pub terminal_stream: Option<&'static str>,
    /// The session's directory, shown with agent-owned terminals.
    pub cwd: PathBuf,
    /// The client shows subagents as child sessions (`subagent_update`).
    pub subagents: bool,
    /// The client shows compactions (`compaction_update`).
    pub compaction: bool,
}

/// Subagents' tokens by their session id, for `session/cancel` of a child session.
pub(super) fn child_cancels() -> &'static std::sync::Mutex<std::collections::HashMap<String, CancellationToken>> {
    static CHILDREN: std::sync::OnceLock<std::sync::Mutex<std::collections::HashMap<String, CancellationToken>>> =
        std::sync::OnceLock::new();
    CHILDREN.get_or_init(Default::default)
}

/// A child session's own forwarder: its events go out under its session id.
struct ChildStream {
    events: mpsc::Sender<AgentEvent>,
    forwarder: tokio::task::JoinHandle<()>,
}

impl ClientView {
    /// The agent-owned terminal convention a client advertises in `clientCapabilities._meta`;
    /// the appending one wins when both are.
    pub fn terminal_stream(client: &acp::ClientCapabilities) -> Option<&'static str> {
        let advertised = |key: &str| {
            client.meta.as_ref().and_then(|meta| meta.get(key)).is_some_and(|value| value.as_bool() == Some(true))
        };
        [TERMINAL_OUTPUT_DELTA_KEY, TERMINAL_OUTPUT_KEY].into_iter().find(|key| advertised(key))
    }
}

/// Sends a turn's events to the client until the turn drops its sender. Boxed: a subagent's
/// child session gets a forwarder of its own, started from here.
pub(super) fn forward_events<'a>(
    peer: &'a Peer,
    session_id: &'a acp::SessionId,
    events: mpsc::Receiver<AgentEvent>,
    client: ClientView,
    cancel: &'a CancellationToken,
) -> futures::future::BoxFuture<'a, ()> {
    Box::pin(forward(peer, session_id, events, client, cancel))
}

async fn forward(
    peer: &Peer,
    session_id: &acp::SessionId,
    mut events: mpsc::Receiver<AgentEvent>,
    client: ClientView,
    cancel: &CancellationToken,
) {
    let mut forwarder = Forwarder {
        peer,
        session_id,
        client,
        cancel,
        terminals: HashSet::new(),
        report_only: HashSet::new(),
        children: HashMap::new(),
    };
    // `held` is the event that ended a run of merged command output, handled next.
    let mut held: Option<AgentEvent> = None;
    loop {
        let event = match held.take() {
            Some(event) => event,
            None => match events.recv().await {
                Some(event) => event,
                None => break,
            },
        };
        if let Some(update) = forwarder.update(event, &mut events, &mut held).await {
            notify(peer, session_id, update).await;
        }
    }
    // The turn is over: children still shown finish their updates first.
    for (_, child) in forwarder.children.drain() {
        drop(child.events);
        let _ = child.forwarder.await;
    }
}

/// One turn's forwarding: where updates go, and the calls and children shown so far.
struct Forwarder<'a> {
    peer: &'a Peer,
    session_id: &'a acp::SessionId,
    client: ClientView,
    cancel: &'a CancellationToken,
    /// Calls shown as agent-owned terminals, until they finish.
    terminals: HashSet<String>,
    /// Calls whose report (the plan) is shown instead of the call.
    report_only: HashSet<String>,
    /// Subagents shown as child sessions, while they run.
    children: HashMap<String, ChildStream>,
}

impl Forwarder<'_> {
    /// The update an event becomes, if the client sees one. Command output merges the output
    /// queued behind it; the event that ends the run goes into `held`.
    async fn update(
        &mut self,
        event: AgentEvent,
        events: &mut mpsc::Receiver<AgentEvent>,
        held: &mut Option<AgentEvent>,
    ) -> Option<acp::SessionUpdate> {
        match event {
            AgentEvent::ChildStarted { session, call, label, cwd, cancel } => {
                self.child_started(session, call, label, cwd, cancel)
            }
            AgentEvent::Child { session, call, label, event } => {
                if let Some(child) = self.children.get(&session) {
                    let _ = child.events.send(*event).await;
                } else if !self.client.subagents {
                    *held = larik_core::subagents::labelled(*event, &call, &label);
                }
                None
            }
            AgentEvent::ChildEnded { session, stop } => self.child_ended(session, stop).await,
            AgentEvent::TextDelta(text) => Some(acp::SessionUpdate::AgentMessageChunk(to_proto::text_chunk(text))),
            AgentEvent::ThinkingDelta(text) => Some(acp::SessionUpdate::AgentThoughtChunk(to_proto::text_chunk(text))),
            AgentEvent::ToolCallStarted(view) if view.report_only => {
                self.report_only.insert(view.id);
                None
            }
            AgentEvent::ToolCallStarted(view) => Some(self.tool_started(view)),
            AgentEvent::ToolOutput { id, mut text } => {
                let key = self.client.terminal_stream.filter(|_| self.terminals.contains(&id))?;
                *held = drain_same(&mut text, events, |event| match event {
                    AgentEvent::ToolOutput { id: same, text } if *same == id => Some(text),
                    _ => None,
                });
                let update = acp::ToolCallUpdate::new(id.clone(), acp::ToolCallUpdateFields::new());
                Some(acp::SessionUpdate::ToolCallUpdate(
                    update.meta(meta(key, TerminalOutputChunk { terminal_id: id, data: text })),
                ))
            }
            AgentEvent::ToolProgressNote { id, text } => {
                let fields = acp::ToolCallUpdateFields::new().content(vec![to_proto::text(text)]);
                Some(acp::SessionUpdate::ToolCallUpdate(acp::ToolCallUpdate::new(id, fields)))
            }
            AgentEvent::ToolTerminal { id, terminal_id } => {
                let fields = acp::ToolCallUpdateFields::new().content(vec![to_proto::terminal(terminal_id)]);
                Some(acp::SessionUpdate::ToolCallUpdate(acp::ToolCallUpdate::new(id, fields)))
            }
            AgentEvent::ToolCallUpdated { id, status, output, display, locations } => {
                self.tool_updated(id, status, output, display, locations).await
            }
            AgentEvent::PermissionRequested(request) => {
                permission::ask(self.peer, self.session_id, *request, self.client.hunk_review, self.cancel).await;
                None
            }
            AgentEvent::Usage { usage, context_window, session_cost_usd, spent, .. } => {
                // Tokens now in the context: what was sent plus what came back.
                let used =
                    usage.input_tokens + usage.cache_read_tokens + usage.cache_write_tokens + usage.output_tokens;
                Some(usage_update(used, context_window, session_cost_usd, &spent))
            }
            AgentEvent::Compaction { id, trigger, state } => compaction_update(&self.client, id, trigger, state),
            AgentEvent::TitleChanged(title) => Some(acp::SessionUpdate::SessionInfoUpdate(
                acp::SessionInfoUpdate::new()
                    .title(title)
                    .updated_at(larik_core::clock::iso8601(larik_core::clock::now_secs())),
            )),
            AgentEvent::Notice(message) => Some(self.notice(message)),
            AgentEvent::CommandsChanged { mcp, skills } => Some(super::commands::available(&mcp, &skills)),
        }
    }

    /// A subagent starting, shown as a child session of its own with its own forwarder, when
    /// the client shows them.
    fn child_started(
        &mut self,
        session: String,
        call: String,
        label: String,
        cwd: PathBuf,
        child_cancel: CancellationToken,
    ) -> Option<acp::SessionUpdate> {
        if !self.client.subagents {
            return None;
        }
        if let Ok(mut cancels) = child_cancels().lock() {
            cancels.insert(session.clone(), child_cancel);
        }
        let (child_events, received) = mpsc::channel(256);
        let (peer, child_id, view, cancel) =
            (self.peer.clone(), acp::SessionId::new(session.clone()), self.client.clone(), self.cancel.clone());
        let forwarder = tokio::spawn(super::connection::within_this_request(async move {
            forward_events(&peer, &child_id, received, view, &cancel).await
        }));
        self.children.insert(session.clone(), ChildStream { events: child_events, forwarder });
        let capabilities = acp::SubagentSessionCapabilities::new().cancel(acp::SessionCancelCapabilities::new());
        // ACP does not say which call made a child; `_meta.larik.toolCallId` does, so a client
        // can show the child under its `task` call.
        let announced = acp::SubagentUpdate::new(session)
            .title(label)
            .cwd(cwd)
            .capabilities(capabilities)
            .meta(meta("larik", serde_json::json!({"toolCallId": call})));
        Some(acp::SessionUpdate::SubagentUpdate(
            announced.state(acp::StateUpdate::Running(acp::RunningStateUpdate::new())),
        ))
    }

    /// A subagent ended: its child session, once everything it said went out, shown idle.
    async fn child_ended(&mut self, session: String, stop: Option<StopReason>) -> Option<acp::SessionUpdate> {
        if let Ok(mut cancels) = child_cancels().lock() {
            cancels.remove(&session);
        }
        let child = self.children.remove(&session)?;
        drop(child.events);
        let _ = child.forwarder.await;
        let reason = match stop {
            Some(StopReason::EndTurn) => acp::IdleStopReason::EndTurn,
            Some(StopReason::MaxTokens | StopReason::BudgetExhausted) => acp::IdleStopReason::MaxTokens,
            Some(StopReason::MaxTurnRequests) => acp::IdleStopReason::MaxTurnRequests,
            Some(StopReason::Refusal) => acp::IdleStopReason::Refusal,
            Some(StopReason::Cancelled) | None => acp::IdleStopReason::Cancelled,
        };
        Some(acp::SessionUpdate::SubagentUpdate(
            acp::SubagentUpdate::new(session)
                .state(acp::StateUpdate::Idle(acp::IdleStateUpdate::new().stop_reason(reason))),
        ))
    }

    /// A call starting; a command's output goes to an agent-owned terminal where the client has one.
    fn tool_started(&mut self, view: larik_core::event::ToolCallView) -> acp::SessionUpdate {
        let mut call = to_proto::tool_call(&view);
        if self.client.terminal_stream.is_some() && view.streams_output {
            call = call.content(vec![to_proto::terminal(view.id.clone())]).meta(meta(
                TERMINAL_INFO_KEY,
                TerminalInfo { terminal_id: view.id.clone(), cwd: self.client.cwd.clone() },
            ));
            self.terminals.insert(view.id);
        }
        acp::SessionUpdate::ToolCall(call)
    }

    /// A call's progress or end; a plan goes out as ACP's plan, and a report-only call shows
    /// nothing else.
    async fn tool_updated(
        &mut self,
        id: String,
        status: ToolStatus,
        output: Option<String>,
        display: Option<Display>,
        locations: Option<Vec<larik_core::event::Location>>,
    ) -> Option<acp::SessionUpdate> {
        if let Some(Display::Plan(entries)) = &display {
            notify(self.peer, self.session_id, acp::SessionUpdate::Plan(to_proto::plan(entries))).await;
        }
        let finished = matches!(status, ToolStatus::Completed | ToolStatus::Failed);
        if self.report_only.contains(&id) {
            if finished {
                self.report_only.remove(&id);
            }
            return None;
        }
        let mut update = to_proto::tool_call_update(&id, status, display.as_ref(), output.as_deref());
        if let Some(locations) = locations {
            update.fields.locations = Some(to_proto::locations(&locations));
        }
        if finished && self.terminals.remove(&id) {
            update = end_terminal(update, &id, display.as_ref());
        }
        Some(acp::SessionUpdate::ToolCallUpdate(update))
    }

    fn notice(&self, message: String) -> acp::SessionUpdate {
        tracing::info!(%message, "notice");
        if self.client.notices {
            acp::SessionUpdate::Notice(acp::Notice::new(acp::NoticeSeverity::Warning, message))
        } else {
            // Clients without notices still see it, set apart from the answer.
            acp::SessionUpdate::AgentMessageChunk(to_proto::text_chunk(format!("\n> {message}\n\n")))
        }
    }
}

/// The tokens in the context, and ACP's cost: the session's total so far.
fn usage_update(
    used: u64,
    context_window: u64,
    session_cost_usd: Option<f64>,
    spent: &larik_core::Usage,
) -> acp::SessionUpdate {
    let spent = SpentTokens {
        input_tokens: spent.input_tokens,
        cache_read_tokens: spent.cache_read_tokens,
        cache_write_tokens: spent.cache_write_tokens,
        output_tokens: spent.output_tokens,
    };
    let meta = serde_json::to_value(UsageMeta { spent }).unwrap_or_default();
    let mut update =
        acp::UsageUpdate::new(used, context_window).meta(serde_json::Map::from_iter([(META_KEY.to_owned(), meta)]));
    if let Some(amount) = session_cost_usd {
        update = update.cost(acp::Cost::new(amount, "USD"));
    }
    acp::SessionUpdate::UsageUpdate(update)
}

/// A compaction as the client can show it: `compaction_update` where it opted in; elsewhere the
/// end of one in words (and a summary asked for by hand, as text).
fn compaction_update(
    client: &ClientView,
    id: String,
    trigger: larik_core::session::Trigger,
    state: CompactionState,
) -> Option<acp::SessionUpdate> {
    if client.compaction {
        let update = match state {
            CompactionState::Started => acp::CompactionUpdate::new(id, acp::CompactionStatus::InProgress),
            CompactionState::Completed { summary } => acp::CompactionUpdate::new(id, acp::CompactionStatus::Completed)
                .summary(vec![acp::ContentBlock::Text(acp::TextContent::new(summary))]),
            CompactionState::Failed { error } => {
                acp::CompactionUpdate::new(id, acp::CompactionStatus::Failed).error(error)
            }
            CompactionState::Cancelled => acp::CompactionUpdate::new(id, acp::CompactionStatus::Cancelled),
        };
        return Some(acp::SessionUpdate::CompactionUpdate(update));
    }
    let text = match (state, trigger) {
        (CompactionState::Completed { summary }, larik_core::session::Trigger::Manual) => {
            format!("Compacted the conversation. It goes on from this summary:\n\n{summary}\n")
        }
        (
            CompactionState::Completed { .. },
            larik_core::session::Trigger::Auto | larik_core::session::Trigger::Overflow,
        ) => "\n> The conversation neared the model's window and was compacted: older messages are now a summary.\n\n"
            .to_owned(),
        _ => return None,
    };
    Some(acp::SessionUpdate::AgentMessageChunk(to_proto::text_chunk(text)))
}

/// The last update of a call shown as an agent-owned terminal: the terminal ends with the
/// command's exit code and stays as the call's content; a call that never ran shows why instead.
fn end_terminal(update: acp::ToolCallUpdate, id: &str, display: Option<&Display>) -> acp::ToolCallUpdate {
    let exit_code = match display {
        Some(Display::Command { exit_code, .. }) => exit_code.and_then(|code| u32::try_from(code).ok()),
        _ => None,
    };
    let mut update =
        update.meta(meta(TERMINAL_EXIT_KEY, TerminalExit { terminal_id: id.to_owned(), exit_code, signal: None }));
    if matches!(display, Some(Display::Command { .. })) {
        update.fields.content = Some(vec![to_proto::terminal(id.to_owned())]);
    }
    update
}

fn meta(key: &str, value: impl serde::Serialize) -> acp::Meta {
    let mut meta = acp::Meta::new();
    meta.insert(key.to_owned(), serde_json::to_value(value).unwrap_or_default());
    meta
}

/// Appends the deltas `same` accepts that are already waiting in the queue to `text`; returns the
/// first event it does not accept, which the caller handles next.
fn drain_same(
    text: &mut String,
    events: &mut mpsc::Receiver<AgentEvent>,
    same: impl Fn(&AgentEvent) -> Option<&str>,
) -> Option<AgentEvent> {
    while let Ok(next) = events.try_recv() {
        match same(&next) {
            Some(more) => text.push_str(more),
            None => return Some(next),
        }
    }
    None
}
