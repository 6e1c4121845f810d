//! Hooks at the points of the loop: the session start, a prompt, each tool call before and after
//! it runs, a permission prompt, the end of a turn, a compaction, the session end. This module
//! turns a point into Claude Code's payload (`session_id`, `transcript_path`, `cwd`,
//! `hook_event_name`, `permission_mode` and the event's own fields, with Claude Code's tool and
//! field names), runs the matching hooks through [`crate::hooks`], tells the user what the hooks
//! said, and wraps what they add to the conversation so the model can tell it from the user.
//!
//! Trust: hooks are code, and allow rules widen permissions. Those a project defines (a cloned
//! repository's `.claude/settings.json`) take effect only after the user approved them, once
//! per project, pinned to the fingerprint of their definitions: a changed hook or rule asks
//! again. The question goes through the editor as a permission request naming each command and
//! rule, at the start of the first turn (or before the first hook would run). Where nobody can
//! answer (headless), the project's hooks are skipped and its allow rules ignored, and the user
//! is told which. Hooks and rules from the user's own settings need no approval.

use std::path::PathBuf;
use std::sync::Arc;

use serde_json::{Map, Value, json};
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;

use super::environment::SessionEnv;
use crate::event::{AgentEvent, Display, PermissionAnswer, PermissionRequest, ToolCallView, ToolKind, ToolStatus};
use crate::hooks::{
    HookEvent, HookHandler, HookOutcome, HookRunEnv, HookText, Hooks, PromptEvaluator, Scope, run_hooks,
};
use crate::llm::{HookPurpose, Message, ModelRequest, Note, Provider, ProviderError, StreamEvent, catalog};

/// The session's hooks and what the user said about the project's settings.
pub struct HookPoints {
    hooks: Hooks,
    /// Allow rules the project's settings bring, as written.
    project_allow: Vec<String>,
    /// The project's own MCP servers: what each runs, and its definition.
    project_servers: Vec<(String, String)>,
    /// What the project's settings choose that the user pays for (model, provider, roles).
    project_choices: Vec<String>,
    /// The fingerprint of the project's hooks and allow rules, when it has any.
    fingerprint: Option<String>,
    /// Where the approval is kept (the project's private settings).
    trust_file: Option<PathBuf>,
    trust: tokio::sync::Mutex<Trust>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Trust {
    /// Not asked yet this session (and not approved before).
    Unknown,
    Approved,
    Refused,
}

/// What a point of the loop runs hooks with.
pub struct Point<'a> {
    pub env: &'a Arc<SessionEnv>,
    pub events: &'a mpsc::Sender<AgentEvent>,
    pub cancel: &'a CancellationToken,
}

impl HookPoints {
    pub fn new(
        hooks: Hooks,
        project_allow: Vec<String>,
        project_servers: Vec<(String, String)>,
        project_choices: Vec<String>,
        trust_file: Option<PathBuf>,
    ) -> Self {
        let fingerprint = fingerprint(&hooks, &project_allow, &project_servers, &project_choices);
        let approved = match (&fingerprint, &trust_file) {
            (None, _) => true,
            (Some(fingerprint), Some(file)) => {
                crate::permission::approved_project(file).as_deref() == Some(fingerprint.as_str())
            }
            (Some(_), None) => false,
        };
        let trust = if approved { Trust::Approved } else { Trust::Unknown };
        Self {
            hooks,
            project_allow,
            project_servers,
            project_choices,
            fingerprint,
            trust_file,
            trust: tokio::sync::Mutex::new(trust),
        }
    }

    /// No hooks at all.
    #[cfg(test)]
    pub fn none() -> Self {
        Self::new(Hooks::default(), Vec::new(), Vec::new(), Vec::new(), None)
    }

    /// Whether the project's settings were approved before (their fingerprint unchanged); a
    /// project with no hooks or allow rules needs no approval.
    pub fn project_approved(&self) -> bool {
        self.trust.try_lock().is_ok_and(|trust| *trust == Trust::Approved)
    }

    /// At the start of a turn: asks about the project's settings if they wait for approval, so
    /// its allow rules count (or not) from the first call on.
    pub async fn settle(&self, point: &Point<'_>) {
        if self.fingerprint.is_some() {
            self.project_trusted(point).await;
        }
    }

    /// `/mcp approve`: asks for the project's settings now, again if they were refused earlier
    /// in this session. Whether they apply.
    pub async fn ask_again(&self, point: &Point<'_>) -> bool {
        if self.fingerprint.is_none() {
            return true;
        }
        {
            let mut trust = self.trust.lock().await;
            if *trust == Trust::Refused {
                *trust = Trust::Unknown;
            }
        }
        self.project_trusted(point).await
    }

    /// Whether any hook listens to `event`: a point with none skips building its payload.
    pub fn listens(&self, event: HookEvent) -> bool {
        self.hooks.listens(event)
    }

    /// Runs the hooks of `event` that match `targets`, with `fields` added to the common payload.
    pub async fn run(
        &self,
        event: HookEvent,
        targets: &[&str],
        fields: Map<String, Value>,
        point: &Point<'_>,
    ) -> HookOutcome {
        let mut handlers = self.hooks.matching(event, targets);
        if handlers.is_empty() {
            return HookOutcome::default();
        }
        if handlers.iter().any(|handler| handler.scope == Scope::Project) && !self.project_trusted(point).await {
            handlers.retain(|handler| handler.scope == Scope::User);
        }
        if handlers.is_empty() {
            return HookOutcome::default();
        }
        let payload = payload(event, fields, point.env);
        let evaluator = ModelEvaluator { env: point.env };
        let run_env = HookRunEnv {
            project_dir: point.env.tools.workspace.root(),
            cancel: point.cancel,
            evaluator: Some(&evaluator),
        };
        let outcome = run_hooks(&handlers, &payload, &run_env).await;
        for message in &outcome.messages {
            let _ = point.events.send(AgentEvent::Notice(message.clone())).await;
        }
        outcome
    }

    /// Whether the project's settings may take effect: approved before (same fingerprint), or
    /// approved now. An approval lets its allow rules count too.
    async fn project_trusted(&self, point: &Point<'_>) -> bool {
        let mut trust = self.trust.lock().await;
        if *trust == Trust::Unknown {
            *trust = self.ask_for_approval(point).await;
            if *trust == Trust::Approved {
                point.env.project_approved();
            }
        }
        *trust == Trust::Approved
    }

    async fn ask_for_approval(&self, point: &Point<'_>) -> Trust {
        let handlers = self.hooks.project_handlers();
        let mut listed: Vec<String> = handlers.iter().map(describe).collect();
        listed.extend(self.project_allow.iter().map(|rule| format!("allowed without asking: {rule}")));
        listed.extend(self.project_servers.iter().map(|(described, _)| described.clone()));
        listed.extend(self.project_choices.iter().map(|choice| format!("chosen for you: {choice}")));
        let view = ToolCallView {
            id: format!("project-settings-{}", point.env.tools.session_id),
            name: "project_settings".into(),
            title: "Use the hooks, permission rules, MCP servers and model choices this project's settings define"
                .into(),
            kind: ToolKind::Execute,
            input: json!({
                "hooks": handlers.iter().map(describe).collect::<Vec<_>>(),
                "allow": self.project_allow,
                "mcpServers": self.project_servers.iter().map(|(described, _)| described).collect::<Vec<_>>(),
                "choices": self.project_choices,
            }),
            locations: Vec::new(),
            streams_output: false,
            report_only: false,
        };
        let _ = point.events.send(AgentEvent::ToolCallStarted(view.clone())).await;
        let (reply, answer) = oneshot::channel();
        let request = PermissionRequest {
            tool_call: view.clone(),
            reason: "hooks and MCP servers run commands on your machine, outside the sandbox, allow rules let calls run without asking, and the project's model choices decide what you pay for".into(),
            preview: Some(Display::command(listed.join("\n"), String::new(), None, None)),
            suggested_rule: "these project settings".into(),
            reply,
        };
        let _ = point.events.send(AgentEvent::PermissionRequested(Box::new(request))).await;
        let answer = tokio::select! {
            answer = answer => answer.unwrap_or(PermissionAnswer::Cancelled),
            () = point.cancel.cancelled() => PermissionAnswer::Cancelled,
        };
        let (trust, said) = match answer {
            PermissionAnswer::AllowOnce | PermissionAnswer::AllowHunks(_) => {
                (Trust::Approved, "The project's hooks and rules apply for this session.".to_owned())
            }
            PermissionAnswer::AllowAlways => {
                let saved = match (&self.trust_file, &self.fingerprint) {
                    (Some(file), Some(fingerprint)) => crate::permission::approve_project(file, fingerprint),
                    _ => Err(crate::permission::NotSaved::NowhereToSave),
                };
                match saved {
                    Ok(()) => (
                        Trust::Approved,
                        "The project's hooks and rules are approved as they are now; a change to them asks again."
                            .to_owned(),
                    ),
                    Err(error) => (
                        Trust::Approved,
                        format!(
                            "The project's hooks and rules apply for this session, but the approval was not saved: {error}"
                        ),
                    ),
                }
            }
            PermissionAnswer::Reject { .. } | PermissionAnswer::Cancelled => {
                (Trust::Refused, format!("Skipped the project's hooks and rules (not approved): {}", listed.join("; ")))
            }
        };
        let status = if trust == Trust::Approved { ToolStatus::Completed } else { ToolStatus::Failed };
        let _ = point
            .events
            .send(AgentEvent::ToolCallUpdated {
                id: view.id,
                status,
                output: Some(said.clone()),
                display: None,
                locations: None,
            })
            .await;
        let _ = point.events.send(AgentEvent::Notice(said)).await;
        trust
    }
}

/// The fingerprint of what a project's settings would make happen: its hooks, allow rules, MCP
/// servers and model choices. A project without choices keeps the fingerprint it had before
/// choices were part of it, so earlier approvals stand.
fn fingerprint(
    hooks: &Hooks,
    project_allow: &[String],
    project_servers: &[(String, String)],
    project_choices: &[String],
) -> Option<String> {
    let hooks = hooks.project_fingerprint();
    if hooks.is_none() && project_allow.is_empty() && project_servers.is_empty() && project_choices.is_empty() {
        return None;
    }
    let mut rules = project_allow.to_vec();
    rules.sort();
    rules.dedup();
    let mut servers: Vec<&str> = project_servers.iter().map(|(_, canonical)| canonical.as_str()).collect();
    servers.sort();
    let mut text = format!(
        "larik-project-settings-v1\nhooks {}\nallow {}\nmcp {}",
        hooks.unwrap_or_default(),
        rules.join("\n"),
        servers.join("\n")
    );
    if !project_choices.is_empty() {
        text.push_str(&format!("\nchoices {}", project_choices.join("\n")));
    }
    let digest = ring::digest::digest(&ring::digest::SHA256, text.as_bytes());
    Some(digest.as_ref().iter().map(|byte| format!("{byte:02x}")).collect())
}

/// One line naming a hook for the user: when it runs and what it runs.
fn describe(handler: &HookHandler) -> String {
    let matcher = handler
        .matcher
        .as_deref()
        .filter(|matcher| !matcher.is_empty())
        .map(|matcher| format!(" [{matcher}]"))
        .unwrap_or_default();
    match &handler.kind {
        crate::hooks::HandlerKind::Command { command } => format!("{}{matcher}: {command}", handler.event.name()),
        crate::hooks::HandlerKind::Prompt { prompt, .. } => {
            format!("{}{matcher}: prompt \"{}\"", handler.event.name(), prompt.chars().take(80).collect::<String>())
        }
    }
}

/// The stdin JSON of a hook: Claude Code's common fields, then the event's own.
fn payload(event: HookEvent, fields: Map<String, Value>, env: &SessionEnv) -> Value {
    let mut payload = Map::new();
    payload.insert("session_id".into(), json!(env.tools.session_id));
    payload.insert(
        "transcript_path".into(),
        json!(env.log.as_ref().map(|log| log.path().display().to_string()).unwrap_or_default()),
    );
    payload.insert("cwd".into(), json!(env.tools.workspace.root().display().to_string()));
    payload.insert("hook_event_name".into(), json!(event.name()));
    payload.insert(
        "permission_mode".into(),
        json!(crate::claude_code::claude_permission_mode(env.permissions.mode().id())),
    );
    payload.extend(fields);
    Value::Object(payload)
}

/// The fields a tool event's payload carries, in Claude Code's names.
pub fn tool_fields(tool: crate::tools::ToolNames<'_>, input: &Value, id: &str) -> Map<String, Value> {
    let mut fields = Map::new();
    fields.insert("tool_name".into(), json!(tool.claude_code_name()));
    fields.insert("tool_input".into(), tool.to_claude_code_input(input));
    fields.insert("tool_use_id".into(), json!(id));
    fields
}

/// What hooks add to the conversation, as notes the model tells from the user's words.
pub fn notes(purpose: HookPurpose, texts: &[HookText]) -> Vec<Note> {
    texts.iter().map(|text| Note::Hook { purpose, source: text.source.clone(), text: text.text.clone() }).collect()
}

/// The same, as text for a tool's result, which carries no notes.
pub fn rendered(purpose: HookPurpose, texts: &[HookText]) -> Vec<String> {
    notes(purpose, texts).iter().map(Note::render).collect()
}

/// Prompt hooks ask the model the hook names, else the explore role's (a quick check is the
/// kind of work that role is mapped to a cheaper model for), else the session's; the spend counts
/// toward the session's usage like any request.
struct ModelEvaluator<'a> {
    env: &'a SessionEnv,
}

impl ModelEvaluator<'_> {
    /// The provider and model a prompt hook's question goes to: the one the hook names, chosen
    /// as a subagent's is (a Claude Code alias such as `haiku`, a `provider:` prefix, or a role's
    /// name), else the explore role's as a child in that role would get it, the session's where
    /// the role names none.
    fn model(&self, named: Option<&str>) -> Result<(Arc<dyn Provider>, String), ProviderError> {
        let settings = self.env.settings.as_deref();
        let roles = settings.and_then(|settings| settings.load().roles).unwrap_or_default();
        let env = settings.map(|settings| settings.env.clone()).unwrap_or_default();
        let chosen = crate::agents::roles::choose(Some(named.unwrap_or("explore")), &roles, &self.env.models, &env);
        Ok((chosen.provider?, chosen.settings.model))
    }
}

const EVALUATOR_SYSTEM: &str = "You check a condition for an automated hook in a coding agent. Read the request and answer with only a JSON object: {\"ok\": true} when the condition holds, or {\"ok\": false, \"reason\": \"what is wrong, in one sentence\"}.";

#[async_trait::async_trait]
impl PromptEvaluator for ModelEvaluator<'_> {
    async fn evaluate(&self, model: Option<&str>, prompt: &str) -> Result<String, ProviderError> {
        use futures::StreamExt;
        let (provider, model) = self.model(model)?;
        let messages = [Message::user_text(prompt)];
        let request = ModelRequest {
            model: &model,
            system: EVALUATOR_SYSTEM,
            messages: &messages,
            tools: &[],
            max_tokens: 1024,
            thought_level: None,
            cache_key: Some(&self.env.tools.session_id),
            long_cache: self.env.limits.long_cache,
        };
        let mut stream = provider.stream(&request).await?;
        let mut reply = String::new();
        while let Some(event) = stream.next().await {
            match event? {
                StreamEvent::TextDelta(text) => reply.push_str(&text),
                // Counted in the session's spending, not shown as the conversation's context: the
                // next response's usage carries the total.
                StreamEvent::Usage(usage) => self.env.usage.add(&usage, catalog::cost_usd(&model, &usage)),
                StreamEvent::Stop(_) => break,
                _ => {}
            }
        }
        Ok(reply)
    }
}
