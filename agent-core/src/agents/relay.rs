//! A child's events on their way to the editor: its tool calls, their output and its permission
//! prompts, labelled with the task (`explore: find auth — Read src/auth.rs`) and with ids of
//! their own under the parent's `task` call, so an editor without subagent support shows them
//! nested and apart. Its streamed text stays out: only the final report reaches the parent.

use tokio::sync::mpsc;

use crate::event::AgentEvent;

/// Forwards `events` to `parent` until the child's sender is dropped. The parent's channel is
/// held weakly: a turn ends when its senders are gone, and a background child must not keep it
/// open. Once it is gone (or without one) the events are dropped, and a permission prompt with
/// them, which counts as a refusal.
pub async fn relay(mut events: mpsc::Receiver<AgentEvent>, parent: Option<mpsc::WeakSender<AgentEvent>>, label: &str, task_call: &str) {
    let id = |child: &str| format!("{task_call}/{child}");
    while let Some(event) = events.recv().await {
        let Some(parent) = parent.as_ref().and_then(mpsc::WeakSender::upgrade) else { continue };
        let relabelled = match event {
            AgentEvent::ToolCallStarted(mut view) => {
                view.id = id(&view.id);
                view.title = format!("{label} — {}", view.title);
                AgentEvent::ToolCallStarted(view)
            }
            AgentEvent::ToolCallUpdated { id: child, status, output, display, locations } => AgentEvent::ToolCallUpdated { id: id(&child), status, output, display, locations },
            AgentEvent::ToolOutput { id: child, text } => AgentEvent::ToolOutput { id: id(&child), text },
            AgentEvent::ToolProgressNote { id: child, text } => AgentEvent::ToolProgressNote { id: id(&child), text },
            AgentEvent::ToolTerminal { id: child, terminal_id } => AgentEvent::ToolTerminal { id: id(&child), terminal_id },
            AgentEvent::PermissionRequested(mut request) => {
                request.tool_call.id = id(&request.tool_call.id);
                request.tool_call.title = format!("{label} — {}", request.tool_call.title);
                AgentEvent::PermissionRequested(request)
            }
            AgentEvent::Notice(text) => AgentEvent::Notice(format!("{label}: {text}")),
            // The child's own words and bookkeeping: the parent gets its report; the usage is
            // already in the shared totals.
            AgentEvent::TextDelta(_) | AgentEvent::ThinkingDelta(_) | AgentEvent::Usage { .. } | AgentEvent::TitleChanged(_) => continue,
        };
        // A send to a turn that ended fails: the event is dropped, the relay goes on draining.
        let _ = parent.send(relabelled).await;
    }
}
