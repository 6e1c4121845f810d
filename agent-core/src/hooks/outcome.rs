//! Combining what the hooks of one event said into one [`HookOutcome`].
//!
//! Claude Code's rules: `continue: false` from any hook stops; blocks add up (their reasons
//! joined); permission decisions combine deny > ask > allow, the reasons of the winning
//! decision joined. Replies are folded in handler order, so the result does not depend on
//! which hook finished first.

use super::reply::{Reply, short};
use super::{HookEvent, HookOutcome, HookPermission, HookText};

pub(crate) fn combine(replies: Vec<(HookEvent, Reply)>) -> HookOutcome {
    let mut outcome = HookOutcome::default();
    let mut blocks = Vec::new();
    let mut input_from = String::new();
    for (event, reply) in replies {
        let Reply { source, stop, block, permission, updated_input, context, messages } = reply;
        if outcome.stop.is_none() {
            outcome.stop = stop;
        }
        if let Some(block) = block {
            if event.block_is_feedback() {
                outcome.feedback.push(HookText { source: source.clone(), text: block.clone() });
            }
            blocks.push(block);
        }
        if let Some(permission) = permission {
            outcome.permission = Some(stronger(outcome.permission.take(), permission));
        }
        if let Some(input) = updated_input {
            match &outcome.updated_input {
                None => (outcome.updated_input, input_from) = (Some(input), source.clone()),
                Some(first) if *first == input => {}
                // Two rewrites cannot both apply; the first handler's is kept and the user told.
                Some(_) => outcome.messages.push(format!(
                    "hooks `{}` and `{}` both rewrote the input; the first rewrite is used",
                    short(&input_from),
                    short(&source)
                )),
            }
        }
        outcome.context.extend(context.into_iter().map(|text| HookText { source: source.clone(), text }));
        outcome.messages.extend(messages);
    }
    if !blocks.is_empty() {
        outcome.block = Some(blocks.join("\n"));
    }
    outcome
}

/// The combined verdict of two: the stronger decision, with the reasons of every hook that gave
/// it.
fn stronger(current: Option<HookPermission>, next: HookPermission) -> HookPermission {
    let Some(current) = current else { return next };
    match next.decision.cmp(&current.decision) {
        std::cmp::Ordering::Greater => next,
        std::cmp::Ordering::Less => current,
        std::cmp::Ordering::Equal => {
            let reason = match (current.reason, next.reason) {
                (Some(first), Some(second)) if !first.lines().any(|line| line == second) => {
                    Some(format!("{first}\n{second}"))
                }
                (first, second) => first.or(second),
            };
            HookPermission { decision: current.decision, reason }
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::hooks::PermissionDecision::{self, Allow, Ask, Deny};

    fn verdict(source: &str, decision: PermissionDecision, reason: &str) -> Reply {
        Reply { permission: Some(HookPermission { decision, reason: Some(reason.to_owned()) }), ..Reply::new(source) }
    }

    fn decision_of(replies: Vec<Reply>) -> Option<(PermissionDecision, Option<String>)> {
        let replies = replies.into_iter().map(|reply| (HookEvent::PreToolUse, reply)).collect();
        combine(replies).permission.map(|permission| (permission.decision, permission.reason))
    }

    #[test]
    fn deny_beats_ask_beats_allow_in_any_order() {
        let orders = [[Allow, Ask, Deny], [Deny, Allow, Ask], [Ask, Deny, Allow]];
        for order in orders {
            let replies = order
                .iter()
                .map(|decision| verdict(&format!("{decision:?}"), *decision, &format!("{decision:?} reason")))
                .collect();
            assert_eq!(decision_of(replies), Some((Deny, Some("Deny reason".into()))), "{order:?}");
        }
        assert_eq!(
            decision_of(vec![verdict("a", Allow, "fine"), verdict("b", Ask, "check")]),
            Some((Ask, Some("check".into())))
        );
        assert_eq!(decision_of(vec![verdict("a", Allow, "fine")]), Some((Allow, Some("fine".into()))));
        assert_eq!(decision_of(vec![Reply::new("a")]), None);
    }

    #[test]
    fn reasons_of_equal_decisions_are_joined() {
        let replies = vec![verdict("a", Deny, "no rm"), verdict("b", Deny, "not on main"), verdict("c", Deny, "no rm")];
        assert_eq!(decision_of(replies), Some((Deny, Some("no rm\nnot on main".into()))));
    }

    #[test]
    fn blocks_are_joined_and_fed_back_where_the_model_goes_on() {
        let replies = vec![
            (HookEvent::Stop, Reply { block: Some("tests fail".into()), ..Reply::new("test.sh") }),
            (HookEvent::Stop, Reply::new("quiet.sh")),
            (HookEvent::Stop, Reply { block: Some("lint fails".into()), ..Reply::new("lint.sh") }),
        ];
        let outcome = combine(replies);
        assert_eq!(outcome.block.as_deref(), Some("tests fail\nlint fails"));
        assert_eq!(
            outcome.feedback,
            vec![
                HookText { source: "test.sh".into(), text: "tests fail".into() },
                HookText { source: "lint.sh".into(), text: "lint fails".into() }
            ]
        );
        let outcome =
            combine(vec![(HookEvent::UserPromptSubmit, Reply { block: Some("no secrets".into()), ..Reply::new("a") })]);
        assert_eq!(outcome.block.as_deref(), Some("no secrets"));
        assert!(outcome.feedback.is_empty());
    }

    #[test]
    fn the_first_stop_wins() {
        let replies = vec![
            (HookEvent::PostToolUse, Reply::new("a")),
            (HookEvent::PostToolUse, Reply { stop: Some("first".into()), ..Reply::new("b") }),
            (HookEvent::PostToolUse, Reply { stop: Some("second".into()), ..Reply::new("c") }),
        ];
        assert_eq!(combine(replies).stop.as_deref(), Some("first"));
    }

    #[test]
    fn context_and_messages_keep_their_sources_and_order() {
        let replies = vec![
            (
                HookEvent::SessionStart,
                Reply { context: vec!["branch main".into()], messages: vec!["hi".into()], ..Reply::new("git.sh") },
            ),
            (HookEvent::SessionStart, Reply { context: vec!["3 todos".into()], ..Reply::new("prompt hook") }),
        ];
        let outcome = combine(replies);
        assert_eq!(
            outcome.context,
            vec![
                HookText { source: "git.sh".into(), text: "branch main".into() },
                HookText { source: "prompt hook".into(), text: "3 todos".into() }
            ]
        );
        assert_eq!(outcome.messages, vec!["hi".to_owned()]);
        assert_eq!((outcome.block, outcome.stop, outcome.permission), (None, None, None));
    }

    #[test]
    fn conflicting_rewrites_keep_the_first_and_say_so() {
        let rewrite = |source: &str, command: &str| {
            (HookEvent::PreToolUse, Reply { updated_input: Some(json!({"command": command})), ..Reply::new(source) })
        };
        let outcome = combine(vec![rewrite("a", "ls"), rewrite("b", "ls")]);
        assert_eq!((outcome.updated_input, outcome.messages.len()), (Some(json!({"command": "ls"})), 0));
        let outcome = combine(vec![rewrite("a", "ls"), rewrite("b", "ls -la")]);
        assert_eq!(outcome.updated_input, Some(json!({"command": "ls"})));
        assert_eq!(
            outcome.messages,
            vec!["hooks `a` and `b` both rewrote the input; the first rewrite is used".to_owned()]
        );
    }
}
