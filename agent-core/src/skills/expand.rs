//! A skill or command run as the prompt (`/name args`): its body with the arguments put in, each
//! `` !`cmd` `` replaced by the command's output and each `@file` attached. The commands and
//! files go through the session's permission decision like the model's own calls, and only what
//! it allows without asking is taken; the rest is left out with a note. A file in a cloned
//! repository must not be a way to run what would otherwise need the user's approval.

use std::path::Path;
use std::sync::Arc;

use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::{Kind, Skill};
use crate::environment::SessionEnv;
use crate::permission::Decision;
use crate::tools::{ToolContext, ToolOutput};

/// Inline commands and attached files a prompt takes, at most.
const MAX_INLINE: usize = 20;

/// The prompt `/name args` stands for.
pub async fn expand(skill: &Skill, args: &str, env: &Arc<SessionEnv>, cancel: &CancellationToken) -> String {
    let text = substitute(skill, args, env);
    let text = inline_commands(&text, env, cancel).await;
    let attached = attachments(&text, env, cancel).await;
    if attached.is_empty() { text } else { format!("{text}\n\n{}", attached.join("\n\n")) }
}

/// The body with `$ARGUMENTS` (as typed), `$ARGUMENTS[N]` and `$N` (the Nth word, from 0,
/// split as a shell would; a missing one stays as written) and Claude Code's `${CLAUDE_*}`
/// variables put in. Arguments the body never mentions are appended, so none are lost.
pub fn substitute(skill: &Skill, args: &str, env: &SessionEnv) -> String {
    let args = args.trim();
    let words = shlex::split(args).unwrap_or_else(|| args.split_whitespace().map(str::to_owned).collect());
    let skill_dir = match &skill.kind {
        Kind::Skill { dir } => dir.display().to_string(),
        Kind::Command => skill.path.parent().map(|dir| dir.display().to_string()).unwrap_or_default(),
    };
    let body = skill
        .body
        .replace("${CLAUDE_SKILL_DIR}", &skill_dir)
        .replace("${CLAUDE_PROJECT_DIR}", &env.workspace.root().display().to_string())
        .replace("${CLAUDE_SESSION_ID}", &env.session_id);
    let mut out = String::with_capacity(body.len() + args.len());
    let mut mentioned = false;
    let mut rest = body.as_str();
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        let (replacement, used) = if let Some(indexed) = after.strip_prefix("ARGUMENTS[") {
            let digits: String = indexed.chars().take_while(char::is_ascii_digit).collect();
            match (indexed[digits.len()..].starts_with(']'), digits.parse::<usize>()) {
                (true, Ok(n)) => (words.get(n).cloned(), "ARGUMENTS[".len() + digits.len() + 1),
                _ => (None, 0),
            }
        } else if after.starts_with("ARGUMENTS") {
            (Some(args.to_owned()), "ARGUMENTS".len())
        } else {
            let digits: String = after.chars().take_while(char::is_ascii_digit).collect();
            match digits.parse::<usize>() {
                Ok(n) => (words.get(n).cloned(), digits.len()),
                Err(_) => (None, 0),
            }
        };
        mentioned |= replacement.is_some();
        match replacement {
            Some(value) => out.push_str(&value),
            None => out.push_str(&rest[at..at + 1 + used]),
        }
        rest = &after[used..];
    }
    out.push_str(rest);
    if !mentioned && !args.is_empty() {
        out.push_str(&format!("\n\nARGUMENTS: {args}"));
    }
    out
}

/// Each `` !`cmd` `` replaced by what the bash tool prints for it, when the permission
/// decision allows it without asking; otherwise by a note saying it was left out.
async fn inline_commands(text: &str, env: &Arc<SessionEnv>, cancel: &CancellationToken) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    let mut ran = 0;
    while let Some(at) = rest.find("!`") {
        let Some(len) = rest[at + 2..].find('`') else { break };
        let command = rest[at + 2..at + 2 + len].trim();
        out.push_str(&rest[..at]);
        rest = &rest[at + 2 + len + 1..];
        if command.is_empty() {
            continue;
        }
        ran += 1;
        let input = json!({"command": command, "description": "a command in the prompt"});
        let result = if ran > MAX_INLINE { Err(format!("a prompt runs at most {MAX_INLINE} commands")) } else { run_unasked(env, "bash", input, cancel).await };
        match result {
            Ok(output) => out.push_str(output.text_content().trim_end()),
            Err(why) => out.push_str(&format!("[`{command}` was left out: {why}. Run it yourself if it is needed.]")),
        }
    }
    out.push_str(rest);
    out
}

/// The files `@path` names, read with the read tool when the permission decision allows it
/// without asking (deny rules apply; a file outside the project asks, so it is left out).
async fn attachments(text: &str, env: &Arc<SessionEnv>, cancel: &CancellationToken) -> Vec<String> {
    let mut seen: Vec<String> = Vec::new();
    let mut attached = Vec::new();
    for word in text.split_whitespace() {
        let Some(path) = word.strip_prefix('@') else { continue };
        let path = path.trim_end_matches(['.', ',', ';', ':', ')', '"', '\'', '`']);
        if path.is_empty() || seen.iter().any(|known| known == path) || seen.len() >= MAX_INLINE {
            continue;
        }
        let absolute = env.workspace.absolute(path);
        // `@user` in prose is no file: only what exists (as a file) is attached.
        if !Path::new(&absolute).is_file() {
            continue;
        }
        seen.push(path.to_owned());
        match run_unasked(env, "read", json!({"path": path}), cancel).await {
            Ok(output) if !output.is_error => attached.push(format!("<file path=\"{path}\">\n{}\n</file>", output.text_content().trim_end())),
            Ok(output) => attached.push(format!("[@{path} was not attached: {}]", output.text_content().trim())),
            Err(why) => attached.push(format!("[@{path} was not attached: {why}]")),
        }
    }
    attached
}

/// Runs the tool `name` with `input` if the session's permission decision allows it as it
/// stands, without asking anyone; `Err` says why not.
async fn run_unasked(env: &Arc<SessionEnv>, name: &str, input: Value, cancel: &CancellationToken) -> Result<ToolOutput, String> {
    let tool = env.registry.get(name).ok_or_else(|| format!("there is no `{name}` tool here"))?;
    let ctx = ToolContext { env: Arc::clone(env), cancel: cancel.clone(), progress: None, call_id: String::new() };
    let call = tool.describe(&input, &ctx)?;
    match env.permissions.decide(tool.as_ref(), &call, &env.workspace, None) {
        Decision::Allow => Ok(tool.run(input, &ctx).await),
        Decision::Ask { reason } => Err(format!("it would need your approval ({reason})")),
        Decision::Deny { reason } => Err(format!("it is denied ({reason})")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn command(body: &str) -> Skill {
        Skill {
            name: "c".into(),
            description: "d".into(),
            body: body.into(),
            argument_hint: None,
            model_invocable: true,
            user_invocable: true,
            license: None,
            compatibility: None,
            metadata: None,
            kind: Kind::Command,
            path: "/home/u/.claude/commands/c.md".into(),
        }
    }

    #[test]
    fn arguments_go_where_the_body_says() {
        let dir = tempfile::tempdir().unwrap();
        let env = SessionEnv::standalone(Arc::new(crate::workspace::Workspace::new(dir.path())));
        let said = |body: &str, args: &str| substitute(&command(body), args, &env);
        assert_eq!(said("Review $ARGUMENTS now", "src/a.rs  \"the tests\""), "Review src/a.rs  \"the tests\" now");
        assert_eq!(said("file $0, focus $ARGUMENTS[1], missing $2", "src/a.rs \"the tests\""), "file src/a.rs, focus the tests, missing $2");
        assert_eq!(said("costs $5.00 and $HOME", ""), "costs $5.00 and $HOME", "nothing to put in");
        assert_eq!(said("Fix the build.", "on linux"), "Fix the build.\n\nARGUMENTS: on linux", "unmentioned arguments are kept");
        assert_eq!(said("in ${CLAUDE_SKILL_DIR}", ""), "in /home/u/.claude/commands");
    }
}
