//! What one handler said, and how Claude Code's JSON hook output is read into it.
//!
//! A [`Reply`] holds one handler's contribution before the replies of an event are combined.
//! The JSON schema is Claude Code's: output that does not fit it is a non-blocking error, never
//! half-read, so a misspelt `permissionDecision` cannot turn into an allow.

use serde::Deserialize;
use serde_json::Value;

use super::{HookEvent, HookPermission, MAX_TEXT_CHARS, PermissionDecision};

/// One handler's contribution to an event's outcome.
#[derive(Debug, Default, Clone, PartialEq)]
pub(crate) struct Reply {
    /// The command, or "prompt hook".
    pub source: String,
    pub stop: Option<String>,
    pub block: Option<String>,
    pub permission: Option<HookPermission>,
    pub updated_input: Option<Value>,
    pub context: Vec<String>,
    pub messages: Vec<String>,
}

impl Reply {
    pub fn new(source: &str) -> Reply {
        Reply { source: source.to_owned(), ..Reply::default() }
    }

    /// The hook blocked (exit 2, `decision: "block"`, a prompt hook's `ok: false`). On PreToolUse
    /// a block is a deny, and it overrides any permission the hook's JSON gave. On events that
    /// cannot block, the reason is only shown to the user.
    pub fn block(&mut self, event: HookEvent, reason: Option<&str>) {
        let reason = reason.map(str::trim).filter(|reason| !reason.is_empty());
        let reason = cap(reason.map_or_else(|| format!("blocked by hook `{}`", short(&self.source)), str::to_owned));
        if !event.can_block() {
            self.messages.push(format!("hook `{}`: {reason}", short(&self.source)));
            return;
        }
        if event == HookEvent::PreToolUse {
            self.permission = Some(HookPermission { decision: PermissionDecision::Deny, reason: Some(reason.clone()) });
        }
        self.block = Some(reason);
    }

    /// Reads the fields of a hook's JSON output into this reply.
    pub fn apply(&mut self, event: HookEvent, output: HookJson) {
        if output.continue_ == Some(false) {
            let reason = output.stop_reason.filter(|reason| !reason.trim().is_empty());
            self.stop = Some(reason.unwrap_or_else(|| format!("hook `{}` stopped the turn", short(&self.source))));
        }
        if let Some(message) = output.system_message.filter(|message| !message.trim().is_empty()) {
            self.messages.push(message);
        }
        match output.decision {
            Some(LegacyDecision::Block) => self.block(event, output.reason.as_deref()),
            // Claude Code's older PreToolUse `approve`; on other events it means nothing.
            Some(LegacyDecision::Approve) if event == HookEvent::PreToolUse => {
                self.permission =
                    Some(HookPermission { decision: PermissionDecision::Allow, reason: output.reason.clone() });
            }
            Some(LegacyDecision::Approve) | None => {}
        }
        if let Some(specific) = output.hook_specific_output {
            self.apply_specific(event, specific);
        }
    }

    fn apply_specific(&mut self, event: HookEvent, specific: SpecificOutput) {
        if let Some(context) = specific.additional_context.filter(|context| !context.trim().is_empty()) {
            self.context.push(cap(context));
        }
        match event {
            HookEvent::PreToolUse => {
                // A block said in the same output wins: it is the stronger statement.
                if let Some(decision) = specific.permission_decision.filter(|_| self.block.is_none()) {
                    let decision = match decision {
                        JsonPermission::Allow => PermissionDecision::Allow,
                        // `defer` hands the call back to Claude Code's caller in `-p` mode; Larik
                        // has no such caller, so the user decides.
                        JsonPermission::Ask | JsonPermission::Defer => PermissionDecision::Ask,
                        JsonPermission::Deny => PermissionDecision::Deny,
                    };
                    self.permission = Some(HookPermission { decision, reason: specific.permission_decision_reason });
                }
                self.set_updated_input(specific.updated_input);
            }
            HookEvent::PermissionRequest => {
                if let Some(decision) = specific.decision {
                    let decision_kind = match decision.behavior {
                        Behavior::Allow => PermissionDecision::Allow,
                        Behavior::Deny => PermissionDecision::Deny,
                    };
                    self.permission = Some(HookPermission { decision: decision_kind, reason: decision.message });
                    self.set_updated_input(decision.updated_input);
                }
            }
            _ => {}
        }
    }

    fn set_updated_input(&mut self, input: Option<Value>) {
        match input {
            Some(input @ Value::Object(_)) => self.updated_input = Some(input),
            Some(_) => self
                .messages
                .push(format!("hook `{}`: updatedInput is not an object; the input is unchanged", short(&self.source))),
            None => {}
        }
    }
}

/// Claude Code's hook output. Unknown fields are allowed (Claude Code adds them over time);
/// known fields with the wrong type or value make the whole output invalid.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct HookJson {
    #[serde(rename = "continue")]
    pub continue_: Option<bool>,
    pub stop_reason: Option<String>,
    pub system_message: Option<String>,
    /// Read for its type only: Larik never shows hook stdout to the user anyway.
    #[allow(dead_code)]
    pub suppress_output: Option<bool>,
    pub decision: Option<LegacyDecision>,
    pub reason: Option<String>,
    pub hook_specific_output: Option<SpecificOutput>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum LegacyDecision {
    Approve,
    Block,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct SpecificOutput {
    pub permission_decision: Option<JsonPermission>,
    pub permission_decision_reason: Option<String>,
    pub updated_input: Option<Value>,
    pub additional_context: Option<String>,
    /// PermissionRequest's answer.
    pub decision: Option<RequestDecision>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum JsonPermission {
    Allow,
    Deny,
    Ask,
    Defer,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct RequestDecision {
    pub behavior: Behavior,
    pub message: Option<String>,
    pub updated_input: Option<Value>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Behavior {
    Allow,
    Deny,
}

/// Reads stdout as hook JSON. `None` when it is not JSON at all (it does not start with `{`),
/// `Some(Err)` when it is meant as JSON but does not parse or fit the schema.
pub(crate) fn parse_output(stdout: &str) -> Option<Result<HookJson, String>> {
    let text = stdout.trim();
    if !text.starts_with('{') {
        return None;
    }
    Some(serde_json::from_str::<HookJson>(text).map_err(|error| error.to_string()))
}

/// At most [`MAX_TEXT_CHARS`] characters, cut at a character boundary.
pub(crate) fn cap(text: String) -> String {
    match text.char_indices().nth(MAX_TEXT_CHARS) {
        Some((end, _)) => {
            format!("{}\n[truncated: hook output is capped at {MAX_TEXT_CHARS} characters]", &text[..end])
        }
        None => text,
    }
}

/// A command's first line, shortened, for messages: the full command is in the settings file.
pub(crate) fn short(command: &str) -> String {
    const LIMIT: usize = 80;
    let line = command.lines().next().unwrap_or_default();
    match line.char_indices().nth(LIMIT) {
        Some((end, _)) => format!("{}…", &line[..end]),
        None if line.len() < command.trim_end().len() => format!("{line}…"),
        None => line.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn apply(event: HookEvent, json: &str) -> Reply {
        let mut reply = Reply::new("check.sh");
        match parse_output(json) {
            Some(Ok(output)) => reply.apply(event, output),
            other => panic!("{json} did not parse: {other:?}"),
        }
        reply
    }

    fn permission(decision: PermissionDecision, reason: Option<&str>) -> Option<HookPermission> {
        Some(HookPermission { decision, reason: reason.map(str::to_owned) })
    }

    #[test]
    fn continue_false_stops_with_its_reason_or_a_default() {
        assert_eq!(
            apply(HookEvent::PostToolUse, r#"{"continue": false, "stopReason": "tests are red"}"#).stop.as_deref(),
            Some("tests are red")
        );
        assert_eq!(
            apply(HookEvent::Stop, r#"{"continue": false}"#).stop.as_deref(),
            Some("hook `check.sh` stopped the turn")
        );
        assert_eq!(apply(HookEvent::Stop, r#"{"continue": true, "stopReason": "unused"}"#).stop, None);
    }

    #[test]
    fn system_message_is_for_the_user() {
        assert_eq!(
            apply(HookEvent::PreToolUse, r#"{"systemMessage": "formatting..."}"#).messages,
            vec!["formatting...".to_owned()]
        );
    }

    #[test]
    fn decision_block_blocks_with_its_reason() {
        let reply = apply(HookEvent::PostToolUse, r#"{"decision": "block", "reason": "lint failed"}"#);
        assert_eq!(reply.block.as_deref(), Some("lint failed"));
        assert_eq!(reply.permission, None);
        let reply = apply(HookEvent::Stop, r#"{"decision": "block"}"#);
        assert_eq!(reply.block.as_deref(), Some("blocked by hook `check.sh`"));
    }

    #[test]
    fn legacy_decisions_on_pre_tool_use_are_permissions() {
        let reply = apply(HookEvent::PreToolUse, r#"{"decision": "block", "reason": "no rm"}"#);
        assert_eq!(reply.permission, permission(PermissionDecision::Deny, Some("no rm")));
        assert_eq!(reply.block.as_deref(), Some("no rm"));
        let reply = apply(HookEvent::PreToolUse, r#"{"decision": "approve", "reason": "safe"}"#);
        assert_eq!(reply.permission, permission(PermissionDecision::Allow, Some("safe")));
        assert_eq!(reply.block, None);
        assert_eq!(apply(HookEvent::PostToolUse, r#"{"decision": "approve"}"#), Reply::new("check.sh"));
    }

    #[test]
    fn a_block_on_an_event_that_cannot_block_is_only_shown() {
        let reply = apply(HookEvent::SessionStart, r#"{"decision": "block", "reason": "nope"}"#);
        assert_eq!(reply.block, None);
        assert_eq!(reply.messages, vec!["hook `check.sh`: nope".to_owned()]);
    }

    #[test]
    fn permission_decisions_are_read_with_their_reason() {
        for (value, decision) in [
            ("allow", PermissionDecision::Allow),
            ("ask", PermissionDecision::Ask),
            ("deny", PermissionDecision::Deny),
            ("defer", PermissionDecision::Ask),
        ] {
            let json = format!(
                r#"{{"hookSpecificOutput": {{"hookEventName": "PreToolUse", "permissionDecision": "{value}", "permissionDecisionReason": "because"}}}}"#
            );
            assert_eq!(
                apply(HookEvent::PreToolUse, &json).permission,
                permission(decision, Some("because")),
                "{value}"
            );
        }
    }

    #[test]
    fn permission_decision_beats_legacy_approve_but_not_block() {
        let reply = apply(
            HookEvent::PreToolUse,
            r#"{"decision": "approve", "hookSpecificOutput": {"permissionDecision": "ask"}}"#,
        );
        assert_eq!(reply.permission, permission(PermissionDecision::Ask, None));
        let reply = apply(
            HookEvent::PreToolUse,
            r#"{"decision": "block", "reason": "r", "hookSpecificOutput": {"permissionDecision": "allow"}}"#,
        );
        assert_eq!(reply.permission, permission(PermissionDecision::Deny, Some("r")));
    }

    #[test]
    fn permission_decision_outside_pre_tool_use_is_ignored() {
        assert_eq!(
            apply(HookEvent::PostToolUse, r#"{"hookSpecificOutput": {"permissionDecision": "deny"}}"#).permission,
            None
        );
    }

    #[test]
    fn updated_input_must_be_an_object() {
        let reply = apply(HookEvent::PreToolUse, r#"{"hookSpecificOutput": {"updatedInput": {"command": "ls -la"}}}"#);
        assert_eq!(reply.updated_input, Some(serde_json::json!({"command": "ls -la"})));
        let reply = apply(HookEvent::PreToolUse, r#"{"hookSpecificOutput": {"updatedInput": "ls"}}"#);
        assert_eq!(reply.updated_input, None);
        assert_eq!(reply.messages.len(), 1);
    }

    #[test]
    fn additional_context_is_read_on_any_event_and_capped() {
        let reply = apply(
            HookEvent::PostToolUse,
            r#"{"hookSpecificOutput": {"hookEventName": "PostToolUse", "additionalContext": "3 tests failed"}}"#,
        );
        assert_eq!(reply.context, vec!["3 tests failed".to_owned()]);
        let long = "é".repeat(MAX_TEXT_CHARS + 5);
        let reply = apply(
            HookEvent::SessionStart,
            &serde_json::json!({"hookSpecificOutput": {"additionalContext": long}}).to_string(),
        );
        assert!(reply.context[0].starts_with(&"é".repeat(MAX_TEXT_CHARS)));
        assert!(!reply.context[0].starts_with(&"é".repeat(MAX_TEXT_CHARS + 1)));
        assert!(reply.context[0].ends_with("characters]"));
    }

    #[test]
    fn permission_request_decisions_are_read() {
        let reply = apply(
            HookEvent::PermissionRequest,
            r#"{"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": {"behavior": "deny", "message": "not on main"}}}"#,
        );
        assert_eq!(reply.permission, permission(PermissionDecision::Deny, Some("not on main")));
        let reply = apply(
            HookEvent::PermissionRequest,
            r#"{"hookSpecificOutput": {"decision": {"behavior": "allow", "updatedInput": {"command": "ls"}}}}"#,
        );
        assert_eq!(reply.permission, permission(PermissionDecision::Allow, None));
        assert_eq!(reply.updated_input, Some(serde_json::json!({"command": "ls"})));
    }

    #[test]
    fn output_that_misses_the_schema_is_invalid() {
        for json in [
            r#"{"decision": "maybe"}"#,
            r#"{"continue": "no"}"#,
            r#"{"hookSpecificOutput": {"permissionDecision": "Allow"}}"#,
            "{not json",
        ] {
            assert!(matches!(parse_output(json), Some(Err(_))), "{json}");
        }
        assert!(parse_output("all good").is_none());
        assert!(parse_output("").is_none());
        assert!(matches!(parse_output(r#"  {"future": 1, "reason": null}"#), Some(Ok(_))));
    }

    #[test]
    fn short_labels_keep_the_first_line() {
        assert_eq!(short("echo hi"), "echo hi");
        assert_eq!(short("echo hi\necho there"), "echo hi…");
        assert_eq!(short(&"x".repeat(100)), format!("{}…", "x".repeat(80)));
    }
}
