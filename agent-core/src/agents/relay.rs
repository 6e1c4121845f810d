//! A child's events on their way to the editor, each wrapped as the child's
//! ([`AgentEvent::Child`]) between [`AgentEvent::ChildStarted`] and [`AgentEvent::ChildEnded`]:
//! the front end shows them as a child session where the client has those, or labelled under the
//! parent's `task` call (see [`labelled`]). Only the final report reaches the parent's context.

use tokio::sync::mpsc;

use crate::event::AgentEvent;

/// The child, as its events name it.
pub struct ChildIdentity<'a> {
    pub session: &'a str,
    pub call: &'a str,
    pub label: &'a str,
}

/// Forwards `events` to `parent` until the child's sender is dropped. The parent's channel is
/// held weakly: a turn ends when its senders are gone, and a background child must not keep it
/// open. Once it is gone (or without one) the events are dropped, and a permission prompt with
/// them, which counts as a refusal.
pub async fn relay(
    mut events: mpsc::Receiver<AgentEvent>,
    parent: Option<mpsc::WeakSender<AgentEvent>>,
    child: &ChildIdentity<'_>,
) {
    while let Some(event) = events.recv().await {
        // Bookkeeping stays here: the usage is in the shared totals already.
        if matches!(event, AgentEvent::Usage { .. } | AgentEvent::TitleChanged(_)) {
            continue;
        }
        let Some(parent) = parent.as_ref().and_then(mpsc::WeakSender::upgrade) else { continue };
        let wrapped = AgentEvent::Child {
            session: child.session.to_owned(),
            call: child.call.to_owned(),
            label: child.label.to_owned(),
            event: Box::new(event),
        };
        // A send to a turn that ended fails: the event is dropped, the relay goes on draining.
        let _ = parent.send(wrapped).await;
    }
}

/// A child's event as the parent's own, for an editor without child sessions: its tool calls,
/// their output and its permission prompts labelled with the task (`explore: find auth — Read
/// src/auth.rs`) and with ids of their own under the parent's call (`<call>/<child call>`), so
/// they show nested and apart. Its streamed text is left out (`None`).
pub fn labelled(event: AgentEvent, call: &str, label: &str) -> Option<AgentEvent> {
    let id = |child: &str| format!("{call}/{child}");
    Some(match event {
        AgentEvent::ToolCallStarted(mut view) => {
            view.id = id(&view.id);
            view.title = format!("{label} — {}", view.title);
            AgentEvent::ToolCallStarted(view)
        }
        AgentEvent::ToolCallUpdated { id: child, status, output, display, locations } => {
            AgentEvent::ToolCallUpdated { id: id(&child), status, output, display, locations }
        }
        AgentEvent::ToolOutput { id: child, text } => AgentEvent::ToolOutput { id: id(&child), text },
        AgentEvent::ToolProgressNote { id: child, text } => AgentEvent::ToolProgressNote { id: id(&child), text },
        AgentEvent::ToolTerminal { id: child, terminal_id } => AgentEvent::ToolTerminal { id: id(&child), terminal_id },
        AgentEvent::PermissionRequested(mut request) => {
            request.tool_call.id = id(&request.tool_call.id);
            request.tool_call.title = format!("{label} — {}", request.tool_call.title);
            AgentEvent::PermissionRequested(request)
        }
        AgentEvent::Notice(text) => AgentEvent::Notice(format!("{label}: {text}")),
        AgentEvent::TextDelta(_)
        | AgentEvent::ThinkingDelta(_)
        | AgentEvent::Usage { .. }
        | AgentEvent::TitleChanged(_)
        | AgentEvent::CommandsChanged { .. }
        | AgentEvent::Compaction { .. } => return None,
        // A grandchild cannot be: children have no task tool.
        AgentEvent::ChildStarted { .. } | AgentEvent::Child { .. } | AgentEvent::ChildEnded { .. } => return None,
    })
}

/// An event as a front end without child sessions takes it: a child's own event labelled as
/// the parent's ([`labelled`]), the child's start and end dropped, anything else as it is.
pub fn flattened(event: AgentEvent) -> Option<AgentEvent> {
    match event {
        AgentEvent::Child { call, label, event, .. } => labelled(*event, &call, &label),
        AgentEvent::ChildStarted { .. } | AgentEvent::ChildEnded { .. } => None,
        other => Some(other),
    }
}
