//! The user's say on where a sandboxed command may connect: the proxy's [`NetworkAuthority`]
//! for one command. It reads the permission rules through [`DomainRules`] (the one view of the
//! permissions a tool has) and asks through the editor's permission prompt while the command
//! waits: allow once (this command), always (saved as a `web_fetch(domain:...)` rule, as "always
//! allow" saves any rule), or deny. Where no one listens, it denies.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use serde_json::json;
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

use super::ToolProgress;
use crate::event::{AgentEvent, PermissionAnswer, PermissionRequest, ToolCallView, ToolKind, ToolStatus};
use crate::sandbox::network::{Answer, NetworkAuthority, RuleWord};

/// What the session's permission rules say of a domain, and where the user's "always" goes.
pub trait DomainRules: Send + Sync {
    fn word(&self, host: &str) -> RuleWord;

    /// Saves the user's "always" for `host`; the error says why it holds for this session only.
    fn remember(&self, host: &str) -> Result<(), NotRemembered>;
}

/// Why the user's "always" holds for this session only (the rule could not be saved).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{reason}")]
pub struct NotRemembered {
    pub reason: String,
}

/// The rule an "always" answer saves for `host`.
pub fn domain_rule(host: &str) -> String {
    format!("web_fetch(domain:{host})")
}

/// One command's authority.
pub struct CommandNetwork {
    pub rules: Option<Arc<dyn DomainRules>>,
    /// Where the prompt goes; `None` when no one listens (a background command).
    pub progress: Option<ToolProgress>,
    pub cancel: CancellationToken,
    pub command: String,
}

impl NetworkAuthority for CommandNetwork {
    fn rules(&self, host: &str) -> RuleWord {
        match &self.rules {
            Some(rules) => rules.word(host),
            None => RuleWord::default(),
        }
    }

    fn ask<'a>(&'a self, host: &'a str, port: u16) -> Pin<Box<dyn Future<Output = Answer> + Send + 'a>> {
        Box::pin(self.prompt(host, port))
    }
}

impl CommandNetwork {
    async fn prompt(&self, host: &str, port: u16) -> Answer {
        let Some(progress) = &self.progress else { return Answer::Deny };
        let program = self.command.split_whitespace().take(2).collect::<Vec<_>>().join(" ");
        let view = ToolCallView {
            id: format!("{}-network-{host}", progress.call_id),
            name: "network".into(),
            title: format!("`{program}` wants to reach {host}:{port}"),
            kind: ToolKind::Fetch,
            input: json!({"host": host, "port": port, "command": self.command}),
            locations: Vec::new(),
            streams_output: false,
            report_only: false,
        };
        let events = &progress.events;
        let _ = events.send(AgentEvent::ToolCallStarted(view.clone())).await;
        let (reply, answer) = oneshot::channel();
        let request = PermissionRequest {
            tool_call: view.clone(),
            reason: format!(
                "{host} is on no list of sandbox.network; the sandboxed command waits for your answer (\"always\" allows it for this project)"
            ),
            preview: None,
            suggested_rule: domain_rule(host),
            reply,
        };
        let _ = events.send(AgentEvent::PermissionRequested(Box::new(request))).await;
        let answer = tokio::select! {
            answer = answer => answer.unwrap_or(PermissionAnswer::Cancelled),
            () = self.cancel.cancelled() => PermissionAnswer::Cancelled,
        };
        let (decided, said) = match answer {
            PermissionAnswer::AllowOnce | PermissionAnswer::AllowHunks(_) => {
                (Answer::Once, format!("{host} allowed for this command"))
            }
            PermissionAnswer::AllowAlways => {
                let saved = self
                    .rules
                    .as_ref()
                    .map_or(Err(NotRemembered { reason: "no permission rules to save it in".into() }), |rules| {
                        rules.remember(host)
                    });
                let said = match saved {
                    Ok(()) => format!("{host} allowed from now on (`{}`)", domain_rule(host)),
                    Err(error) => format!("{host} allowed for this session (not saved: {error})"),
                };
                (Answer::Always, said)
            }
            PermissionAnswer::Reject { .. } | PermissionAnswer::Cancelled => (Answer::Deny, format!("{host} refused")),
        };
        let status = if decided == Answer::Deny { ToolStatus::Failed } else { ToolStatus::Completed };
        let _ = events
            .send(AgentEvent::ToolCallUpdated {
                id: view.id,
                status,
                output: Some(said),
                display: None,
                locations: None,
            })
            .await;
        decided
    }
}
