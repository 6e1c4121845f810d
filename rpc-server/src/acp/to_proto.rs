//! Conversions from the core's events to ACP v1 wire types. Only kinds and fields a v1 client
//! knows are produced.

use larik_core::event::{Display, Location, PlanEntry, PlanPriority, PlanStatus, ToolCallView, ToolKind, ToolStatus};
use larik_protocol::acp;

pub fn text_chunk(text: String) -> acp::ContentChunk {
    acp::ContentChunk::new(acp::ContentBlock::Text(acp::TextContent::new(text)))
}

pub fn tool_kind(kind: ToolKind) -> acp::ToolKind {
    match kind {
        ToolKind::Read => acp::ToolKind::Read,
        ToolKind::Edit => acp::ToolKind::Edit,
        ToolKind::Delete => acp::ToolKind::Delete,
        ToolKind::Move => acp::ToolKind::Move,
        ToolKind::Search => acp::ToolKind::Search,
        ToolKind::Execute => acp::ToolKind::Execute,
        ToolKind::Think => acp::ToolKind::Think,
        ToolKind::Fetch => acp::ToolKind::Fetch,
        ToolKind::Other => acp::ToolKind::Other,
    }
}

pub fn tool_status(status: ToolStatus) -> acp::ToolCallStatus {
    match status {
        ToolStatus::Pending => acp::ToolCallStatus::Pending,
        ToolStatus::InProgress => acp::ToolCallStatus::InProgress,
        ToolStatus::Completed => acp::ToolCallStatus::Completed,
        ToolStatus::Failed => acp::ToolCallStatus::Failed,
    }
}

pub fn locations(locations: &[Location]) -> Vec<acp::ToolCallLocation> {
    locations.iter().map(|location| acp::ToolCallLocation::new(location.path.clone()).line(location.line)).collect()
}

pub fn tool_call(view: &ToolCallView) -> acp::ToolCall {
    acp::ToolCall::new(view.id.clone(), view.title.clone())
        .kind(tool_kind(view.kind))
        .status(acp::ToolCallStatus::Pending)
        .locations(locations(&view.locations))
        .raw_input(view.input.clone())
}

/// The content blocks that show a tool's result: a diff, a command and its output, or text.
pub fn tool_content(display: Option<&Display>, output: Option<&str>) -> Vec<acp::ToolCallContent> {
    match display {
        Some(Display::Diff { path, old_text, new_text }) => {
            vec![acp::ToolCallContent::Diff(acp::Diff::new(path.clone(), new_text.clone()).old_text(old_text.clone()))]
        }
        // The editor's terminal shows what it printed; the files it changed follow.
        Some(Display::Command { terminal: Some(terminal_id), changes, ignored, .. }) => {
            std::iter::once(terminal(terminal_id.clone())).chain(file_changes(changes, ignored.as_ref())).collect()
        }
        // The output already ends with the exit status when it is not 0.
        Some(Display::Command { command, output, changes, ignored, .. }) => {
            let text = format!("```sh\n$ {command}\n{}\n```", output.trim_end());
            std::iter::once(text_content(text)).chain(file_changes(changes, ignored.as_ref())).collect()
        }
        Some(Display::Text(text)) => vec![text_content(text.clone())],
        Some(Display::Annotated { text, note }) => vec![text_content(text.clone()), text_content(note.clone())],
        Some(Display::Media { text, images }) => std::iter::once(text_content(text.clone()))
            .chain(images.iter().map(|(media_type, data)| {
                acp::ToolCallContent::Content(acp::Content::new(acp::ContentBlock::Image(acp::ImageContent::new(
                    data.clone(),
                    media_type.clone(),
                ))))
            }))
            .collect(),
        // The plan itself goes out as a `plan` update; the call shows its summary.
        Some(Display::Plan(_)) => output.map(|text| vec![text_content(text.to_owned())]).unwrap_or_default(),
        None => {
            output.filter(|text| !text.is_empty()).map(|text| vec![text_content(text.to_owned())]).unwrap_or_default()
        }
    }
}

/// What a command changed in the project: a line naming every file the project keeps, then,
/// on a line of its own, the ignored ones counted by directory (bytecode, build output); then a
/// diff for each kept text file (a deleted one as a diff to nothing).
fn file_changes(
    changes: &[larik_core::checkpoints::FileChange],
    ignored: Option<&larik_core::checkpoints::IgnoredChanges>,
) -> Vec<acp::ToolCallContent> {
    use larik_core::checkpoints::ChangeKind;
    if changes.is_empty() && ignored.is_none() {
        return Vec::new();
    }
    let listed: Vec<String> = changes
        .iter()
        .map(|change| {
            let mark = match change.kind {
                ChangeKind::Added => "added",
                ChangeKind::Modified => "changed",
                ChangeKind::Deleted => "deleted",
            };
            format!("{mark} {}", change.path.display())
        })
        .collect();
    let mut summary = format!("Files the command changed: {}", listed.join(", "));
    if let Some(ignored) = ignored {
        summary.push_str(&format!("\nIgnored by the project: {ignored}"));
    }
    let summary = text_content(summary);
    let diffs = changes.iter().filter(|change| change.old_text.is_some() || change.new_text.is_some()).map(|change| {
        acp::ToolCallContent::Diff(
            acp::Diff::new(change.path.clone(), change.new_text.clone().unwrap_or_default())
                .old_text(change.old_text.clone()),
        )
    });
    std::iter::once(summary).chain(diffs).collect()
}

pub fn terminal(terminal_id: String) -> acp::ToolCallContent {
    acp::ToolCallContent::Terminal(acp::Terminal::new(terminal_id))
}

/// Text as a tool call's content.
pub fn text(text: String) -> acp::ToolCallContent {
    text_content(text)
}

fn text_content(text: String) -> acp::ToolCallContent {
    acp::ToolCallContent::Content(acp::Content::new(acp::ContentBlock::Text(acp::TextContent::new(text))))
}

pub fn tool_call_update(
    id: &str,
    status: ToolStatus,
    display: Option<&Display>,
    output: Option<&str>,
) -> acp::ToolCallUpdate {
    let mut fields = acp::ToolCallUpdateFields::new().status(tool_status(status));
    if output.is_some() || display.is_some() {
        fields = fields.content(tool_content(display, output));
    }
    acp::ToolCallUpdate::new(id.to_owned(), fields)
}

pub fn plan(entries: &[PlanEntry]) -> acp::Plan {
    acp::Plan::new(
        entries
            .iter()
            .map(|entry| {
                let priority = match entry.priority {
                    PlanPriority::High => acp::PlanEntryPriority::High,
                    PlanPriority::Medium => acp::PlanEntryPriority::Medium,
                    PlanPriority::Low => acp::PlanEntryPriority::Low,
                };
                let status = match entry.status {
                    PlanStatus::Pending => acp::PlanEntryStatus::Pending,
                    PlanStatus::InProgress => acp::PlanEntryStatus::InProgress,
                    PlanStatus::Completed => acp::PlanEntryStatus::Completed,
                };
                acp::PlanEntry::new(entry.content.clone(), priority, status)
            })
            .collect(),
    )
}

/// The sandbox state of a session, as `_larik/sandbox` says it.
pub fn sandbox_state(state: Result<bool, larik_core::sandbox::Unconfined>) -> larik_protocol::extensions::SandboxState {
    use larik_protocol::extensions::SandboxState;
    match state {
        Ok(network) => SandboxState { enforced: true, network, reason: None },
        Err(unconfined) => SandboxState { enforced: false, network: false, reason: Some(unconfined.reason) },
    }
}
