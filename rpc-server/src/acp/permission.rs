//! The permission round trip: a core [`PermissionRequest`] becomes `session/request_permission`,
//! and the client's answer goes back to the waiting turn. For clients that opted into hunk review
//! the request carries the change split into hunks.

use larik_core::event::{Display, PermissionAnswer, PermissionRequest};

use larik_protocol::acp;
use larik_protocol::extensions::{META_KEY, ReviewHunk, ToolCallMeta};
use tokio_util::sync::CancellationToken;

use super::connection::Peer;
use super::from_proto::{ALLOW_ALWAYS, ALLOW_ONCE, REJECT_ONCE, permission_answer};
use super::to_proto;

pub async fn ask(
    peer: &Peer,
    session_id: &acp::SessionId,
    request: PermissionRequest,
    hunk_review: bool,
    cancel: &CancellationToken,
) {
    let PermissionRequest { tool_call, reason, preview, suggested_rule, mut reply } = request;
    let content = preview.as_ref().map(|display| to_proto::tool_content(Some(display), None));
    let fields = acp::ToolCallUpdateFields::new()
        .title(tool_call.title.clone())
        .kind(to_proto::tool_kind(tool_call.kind))
        .status(acp::ToolCallStatus::Pending)
        .locations(to_proto::locations(&tool_call.locations))
        .raw_input(tool_call.input.clone())
        .content(content);
    let mut update = acp::ToolCallUpdate::new(tool_call.id.clone(), fields);
    if hunk_review && let Some(Display::Diff { old_text, new_text, .. }) = &preview {
        update = update.meta(hunk_meta(old_text.as_deref().unwrap_or(""), new_text));
    }
    let options = vec![
        acp::PermissionOption::new(ALLOW_ONCE, "Allow once", acp::PermissionOptionKind::AllowOnce),
        acp::PermissionOption::new(
            ALLOW_ALWAYS,
            format!("Always allow `{suggested_rule}` in this project"),
            acp::PermissionOptionKind::AllowAlways,
        ),
        acp::PermissionOption::new(REJECT_ONCE, "Reject", acp::PermissionOptionKind::RejectOnce),
    ];
    let params = acp::RequestPermissionRequest::new(session_id.clone(), update, options);
    tracing::info!(tool = %tool_call.name, %reason, "asking permission");
    let answer = tokio::select! {
        // First: the turn's token fires before the turn lets go of the question.
        biased;
        // The client must answer `cancelled` after session/cancel; the turn does not wait for it.
        () = cancel.cancelled() => PermissionAnswer::Cancelled,
        // The call that asked stopped waiting (its background task was stopped): the question is
        // withdrawn with `$/cancel_request`, as nothing else would close it.
        () = reply.closed() => return,
        response = peer.request_settled_by("session/request_permission", serde_json::to_value(params).unwrap_or_default(), cancel) => {
            permission_answer(response.map_err(|error| error.message).and_then(|value| serde_json::from_value(value).map_err(|error| error.to_string())))
        }
    };
    let _ = reply.send(answer);
}

fn hunk_meta(old_text: &str, new_text: &str) -> acp::Meta {
    let hunks = larik_core::hunks(old_text, new_text)
        .into_iter()
        .map(|hunk| ReviewHunk {
            index: hunk.index,
            old_start: hunk.old_start,
            old_lines: hunk.old_lines,
            new_start: hunk.new_start,
            new_lines: hunk.new_lines,
            old_text: hunk.old_text,
            new_text: hunk.new_text,
        })
        .collect();
    let mut meta = acp::Meta::new();
    meta.insert(META_KEY.into(), serde_json::to_value(ToolCallMeta { hunks }).unwrap_or_default());
    meta
}
