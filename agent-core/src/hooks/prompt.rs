//! Prompt hooks (`"type": "prompt"`): the hook's prompt, with `$ARGUMENTS` replaced by the
//! payload JSON, goes to a model through the session's [`PromptEvaluator`]; the reply is read
//! for `{"ok": bool, "reason": "..."}`.
//!
//! Models wrap JSON in prose or a code fence, so the first JSON object in the reply that has
//! `ok` (or Claude Code's older `decision: approve|block`) is the answer. `ok: false` acts as
//! exit 2. Everything else — no evaluator, an error, a timeout, a reply without an answer —
//! fails open with a message: a flaky model must not stop the user's work.

use std::time::Duration;

use serde_json::Value;

use super::reply::Reply;
use super::{HookEvent, HookRunEnv};

const SOURCE: &str = "prompt hook";

/// How a prompt hook ended.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum PromptEnd {
    Answered(Answer),
    Unreadable(String),
    Failed(String),
    NoEvaluator,
    TimedOut(Duration),
    Cancelled,
}

/// The model's verdict.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Answer {
    pub ok: bool,
    pub reason: Option<String>,
}

/// The prompt sent to the model. Claude Code appends the payload when the prompt has no
/// `$ARGUMENTS`, so that the model always sees what it judges.
pub(crate) fn expand(prompt: &str, payload: &str) -> String {
    if prompt.contains("$ARGUMENTS") { prompt.replace("$ARGUMENTS", payload) } else { format!("{prompt}\n\n{payload}") }
}

pub(crate) async fn run(
    prompt: &str,
    model: Option<&str>,
    timeout: Duration,
    payload: &str,
    env: &HookRunEnv<'_>,
) -> PromptEnd {
    let Some(evaluator) = env.evaluator else { return PromptEnd::NoEvaluator };
    let text = expand(prompt, payload);
    tokio::select! {
        reply = evaluator.evaluate(model, &text) => match reply {
            Ok(reply) => read_answer(&reply).map_or_else(|| PromptEnd::Unreadable(reply), PromptEnd::Answered),
            Err(error) => PromptEnd::Failed(error.to_string()),
        },
        () = tokio::time::sleep(timeout) => PromptEnd::TimedOut(timeout),
        () = env.cancel.cancelled() => PromptEnd::Cancelled,
    }
}

/// The first JSON object in `reply` that answers: `ok` as a boolean, or `decision` as
/// `approve`/`block`.
pub(crate) fn read_answer(reply: &str) -> Option<Answer> {
    reply.match_indices('{').find_map(|(start, _)| {
        let value = serde_json::Deserializer::from_str(&reply[start..]).into_iter::<Value>().next()?.ok()?;
        let reason = value.get("reason").and_then(Value::as_str).map(str::to_owned);
        let ok = match (value.get("ok"), value.get("decision").and_then(Value::as_str)) {
            (Some(Value::Bool(ok)), _) => *ok,
            (_, Some("approve")) => true,
            (_, Some("block")) => false,
            _ => return None,
        };
        Some(Answer { ok, reason })
    })
}

impl PromptEnd {
    pub fn reply(self, event: HookEvent) -> Reply {
        let mut reply = Reply::new(SOURCE);
        match self {
            PromptEnd::Answered(Answer { ok: true, .. }) => {}
            PromptEnd::Answered(Answer { ok: false, reason }) => reply.block(event, reason.as_deref()),
            PromptEnd::Unreadable(text) => {
                let start: String = text.trim().chars().take(120).collect();
                reply.messages.push(format!(
                    "prompt hook: the model's reply has no {{\"ok\": ...}} answer, so it was ignored: {start}"
                ));
            }
            PromptEnd::Failed(error) => reply.messages.push(format!("prompt hook failed, so it was ignored: {error}")),
            PromptEnd::NoEvaluator => {
                reply.messages.push("prompt hook skipped: no model is available to answer it".into())
            }
            PromptEnd::TimedOut(after) => {
                reply.messages.push(format!("prompt hook timed out after {} s, so it was ignored", after.as_secs_f64()))
            }
            PromptEnd::Cancelled => reply.messages.push("prompt hook was stopped: the turn was cancelled".into()),
        }
        reply
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use tokio_util::sync::CancellationToken;

    use super::*;
    use crate::hooks::PromptEvaluator;
    use crate::hooks::{HookPermission, PermissionDecision};
    use crate::llm::ProviderError;

    /// Answers every prompt with a fixed reply and records what it was asked.
    struct Scripted {
        reply: Result<String, ProviderError>,
        asked: Mutex<Vec<(Option<String>, String)>>,
    }

    impl Scripted {
        fn new(reply: Result<&str, ProviderError>) -> Scripted {
            Scripted { reply: reply.map(str::to_owned), asked: Mutex::new(Vec::new()) }
        }
    }

    #[async_trait::async_trait]
    impl PromptEvaluator for Scripted {
        async fn evaluate(&self, model: Option<&str>, prompt: &str) -> Result<String, ProviderError> {
            self.asked.lock().unwrap().push((model.map(str::to_owned), prompt.to_owned()));
            self.reply.clone()
        }
    }

    /// Never answers.
    struct Silent;

    #[async_trait::async_trait]
    impl PromptEvaluator for Silent {
        async fn evaluate(&self, _model: Option<&str>, _prompt: &str) -> Result<String, ProviderError> {
            std::future::pending().await
        }
    }

    async fn ask(evaluator: Option<&dyn PromptEvaluator>, timeout: Duration, cancel: &CancellationToken) -> PromptEnd {
        let dir = std::env::temp_dir();
        let env = HookRunEnv { project_dir: &dir, cancel, evaluator };
        run("Is this safe? $ARGUMENTS", Some("haiku"), timeout, r#"{"tool_name":"Bash"}"#, &env).await
    }

    #[test]
    fn arguments_are_replaced_or_appended() {
        assert_eq!(expand("Check $ARGUMENTS now", "{}"), "Check {} now");
        assert_eq!(expand("Check this", "{\"a\":1}"), "Check this\n\n{\"a\":1}");
    }

    #[test]
    fn answers_are_found_in_bare_fenced_prose_and_legacy_replies() {
        let cases = [
            (r#"{"ok": true}"#, Some((true, None))),
            ("```json\n{\"ok\": false, \"reason\": \"touches .env\"}\n```", Some((false, Some("touches .env")))),
            (
                "Sure. Looking at it, {\"note\": 1} and then {\"ok\": false, \"reason\": \"rm -rf\"} is my answer.",
                Some((false, Some("rm -rf"))),
            ),
            (r#"{"decision": "block", "reason": "no"}"#, Some((false, Some("no")))),
            (r#"{"decision": "approve"}"#, Some((true, None))),
            (r#"{"ok": "yes"}"#, None),
            ("I think it's fine.", None),
            ("{ broken", None),
        ];
        for (text, expected) in cases {
            let found = read_answer(text).map(|answer| (answer.ok, answer.reason));
            assert_eq!(found, expected.map(|(ok, reason)| (ok, reason.map(str::to_owned))), "{text}");
        }
    }

    #[tokio::test]
    async fn the_evaluator_gets_the_expanded_prompt_and_the_hook_model() {
        let evaluator = Scripted::new(Ok("```json\n{\"ok\": true}\n```"));
        let end = ask(Some(&evaluator), Duration::from_secs(5), &CancellationToken::new()).await;
        assert_eq!(end, PromptEnd::Answered(Answer { ok: true, reason: None }));
        let asked = evaluator.asked.lock().map(|asked| asked.clone()).unwrap_or_default();
        assert_eq!(asked, vec![(Some("haiku".to_owned()), r#"Is this safe? {"tool_name":"Bash"}"#.to_owned())]);
    }

    #[tokio::test]
    async fn ok_false_blocks_like_exit_2() {
        let evaluator = Scripted::new(Ok(r#"{"ok": false, "reason": "deletes the repo"}"#));
        let reply =
            ask(Some(&evaluator), Duration::from_secs(5), &CancellationToken::new()).await.reply(HookEvent::PreToolUse);
        assert_eq!(reply.block.as_deref(), Some("deletes the repo"));
        assert_eq!(
            reply.permission,
            Some(HookPermission { decision: PermissionDecision::Deny, reason: Some("deletes the repo".into()) })
        );
        assert_eq!(reply.source, "prompt hook");
    }

    #[tokio::test]
    async fn failures_fail_open_with_a_message() {
        let cancel = CancellationToken::new();
        let garbage = Scripted::new(Ok("Looks fine to me!"));
        let broken = Scripted::new(Err(ProviderError::RateLimited { retry_after: None, message: "slow down".into() }));
        let ends = [
            ask(Some(&garbage), Duration::from_secs(5), &cancel).await,
            ask(Some(&broken), Duration::from_secs(5), &cancel).await,
            ask(None, Duration::from_secs(5), &cancel).await,
            ask(Some(&Silent), Duration::from_millis(50), &cancel).await,
        ];
        assert!(matches!(ends[0], PromptEnd::Unreadable(_)), "{:?}", ends[0]);
        assert_eq!(ends[1], PromptEnd::Failed("rate limited: slow down".into()));
        assert_eq!(ends[2], PromptEnd::NoEvaluator);
        assert_eq!(ends[3], PromptEnd::TimedOut(Duration::from_millis(50)));
        for end in ends {
            let reply = end.reply(HookEvent::PreToolUse);
            assert_eq!((reply.block, reply.permission), (None, None));
            assert_eq!(reply.messages.len(), 1, "{:?}", reply.messages);
        }
    }

    #[tokio::test]
    async fn cancel_ends_a_pending_evaluation() {
        let cancel = CancellationToken::new();
        cancel.cancel();
        assert_eq!(ask(Some(&Silent), Duration::from_secs(30), &cancel).await, PromptEnd::Cancelled);
    }
}
