//! Asking the user about a call the rules do not settle: PermissionRequest hooks may answer
//! first, Notification hooks hear that the agent waits, and the answer lets the call run, runs
//! only the hunks the user accepted, or becomes the reason the model reads.

use serde_json::{Value, json};
use tokio::sync::oneshot;

use super::{CANCELLED, Dispatch, PartialChange, hook_points};
use crate::event::{AgentEvent, Display, PermissionAnswer, PermissionRequest, ToolCallView};
use crate::hooks::{HookEvent, PermissionDecision};
use crate::permission::suggested_rule;
use crate::tools::{DynTool, PreparedCall, ToolContext, ToolNames, ToolOutput};

impl Dispatch<'_> {
    /// Asks the user, unless a PermissionRequest hook answers first; Notification hooks hear
    /// that the agent waits.
    pub(super) async fn ask(
        &self,
        tool: &dyn DynTool,
        prepared: &dyn PreparedCall,
        view: &ToolCallView,
        input: &Value,
        reason: String,
        ctx: &ToolContext,
    ) -> Result<Option<PartialChange>, ToolOutput> {
        let names = tool.names();
        let rule = suggested_rule(tool, prepared.description());
        if self.permission_hooks(names, input, view, &rule).await? {
            return Ok(None);
        }
        let (reply, answer) = oneshot::channel();
        let preview = prepared.preview(ctx).await;
        let change = match &preview {
            Some(Display::Diff { path, old_text, new_text }) => {
                Some((path.clone(), old_text.clone().unwrap_or_default(), new_text.clone()))
            }
            _ => None,
        };
        self.emit(AgentEvent::PermissionRequested(Box::new(PermissionRequest {
            tool_call: view.clone(),
            reason,
            preview,
            suggested_rule: rule.clone(),
            reply,
        })))
        .await;
        let mut note = serde_json::Map::new();
        note.insert(
            "message".into(),
            json!(format!("Larik needs your permission to use {}", names.claude_code_name())),
        );
        note.insert("notification_type".into(), json!("permission_prompt"));
        let point = self.point();
        let notified = self.env.hooks.run(HookEvent::Notification, &["permission_prompt"], note, &point);
        let waited = async {
            tokio::select! {
                answer = answer => answer.unwrap_or(PermissionAnswer::Cancelled),
                () = self.cancel.cancelled() => PermissionAnswer::Cancelled,
            }
        };
        let (_, answer) = tokio::join!(notified, waited);
        self.take_answer(answer, &rule, change).await
    }

    /// The PermissionRequest hooks' word on a call the rules would ask about: `Ok(true)` when a
    /// hook allowed it, an error when one denied it, `Ok(false)` to ask the user.
    async fn permission_hooks(
        &self,
        names: ToolNames<'_>,
        input: &Value,
        view: &ToolCallView,
        rule: &str,
    ) -> Result<bool, ToolOutput> {
        let answered = self
            .tool_hooks(HookEvent::PermissionRequest, names, || {
                let mut fields = hook_points::tool_fields(names, input, &view.id);
                fields.insert(
                    "permission_suggestions".into(),
                    json!([{"type": "addRules", "rules": [rule], "behavior": "allow", "destination": "localSettings"}]),
                );
                fields
            })
            .await;
        match answered.permission.map(|permission| (permission.decision, permission.reason)) {
            Some((PermissionDecision::Allow, _)) => return Ok(true),
            Some((PermissionDecision::Deny, reason)) => {
                return Err(ToolOutput::error(format!(
                    "Denied by a hook: {}",
                    reason.unwrap_or_else(|| "no reason given".into())
                )));
            }
            _ => {}
        }
        match answered.block {
            Some(reason) => Err(ToolOutput::error(format!("Denied by a hook: {reason}"))),
            None => Ok(false),
        }
    }

    /// What the user's answer lets run: the call, the hunks they accepted of its change, or
    /// nothing with the reason the model reads.
    async fn take_answer(
        &self,
        answer: PermissionAnswer,
        rule: &str,
        change: Option<(std::path::PathBuf, String, String)>,
    ) -> Result<Option<PartialChange>, ToolOutput> {
        match answer {
            PermissionAnswer::AllowOnce => Ok(None),
            PermissionAnswer::AllowAlways => {
                if let Err(error) = self.env.permissions.allow_always(rule) {
                    self.emit(AgentEvent::Notice(format!("`{rule}` is allowed for this session but was not saved: {error}"))).await;
                }
                Ok(None)
            }
            // What the user reviewed is what gets written, even when it is all of it: an editor
            // may already hold the accepted hunks in its buffer.
            PermissionAnswer::AllowHunks(accepted) => match change {
                _ if accepted.is_empty() => Err(ToolOutput::error("The user rejected every hunk of this change; nothing was written.")),
                Some((path, old_text, new_text)) => Ok(Some(PartialChange { path, old_text, new_text, accepted })),
                None => Ok(None),
            },
            PermissionAnswer::Reject { feedback } => Err(ToolOutput::error(match feedback.filter(|text| !text.trim().is_empty()) {
                Some(feedback) => format!("The user rejected this tool call and said: {feedback}"),
                None => "The user rejected this tool call. Do not retry it unchanged; ask what they want instead if unsure.".into(),
            })),
            PermissionAnswer::Cancelled if self.cancel.is_cancelled() => Err(ToolOutput::error(CANCELLED)),
            PermissionAnswer::Cancelled => Err(ToolOutput::error("The user dismissed the permission prompt; the call did not run.")),
        }
    }
}
