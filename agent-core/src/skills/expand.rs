//! A skill or command run as the prompt (`/name args`): its body with the arguments put in, each
//! `` !`cmd` `` replaced by the command's output and each `@file` attached. This module only
//! reads the body: which commands and files it asks for, and the prompt once their results are
//! in. Running them is the session's, through the one dispatch pipeline every call takes
//! (PreToolUse hooks, the permission decision, the checkpoint, the record, the editor's events),
//! where a call that would ask is left out with a note: a file in a cloned repository must not
//! be a way to run what would otherwise need the user's approval.

use std::path::Path;

use super::{Kind, Skill};
use crate::tools::ToolEnv;

/// Inline commands and attached files a prompt takes, at most.
pub const MAX_INLINE: usize = 20;

/// A skill's body with its arguments in, cut where its inline commands stand.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Expansion {
    pieces: Vec<Piece>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Piece {
    Text(String),
    Command(String),
}

/// What running an inline command or reading an attached file gave: its output, or why it
/// was left out.
pub(crate) type Outcome = Result<String, String>;

impl Expansion {
    /// `skill` run with `args`: the arguments put in, the inline commands found.
    pub fn new(skill: &Skill, args: &str, env: &ToolEnv) -> Self {
        let text = substitute(skill, args, env);
        let mut pieces = Vec::new();
        let mut rest = text.as_str();
        while let Some(at) = rest.find("!`") {
            let Some(len) = rest[at + 2..].find('`') else { break };
            let command = rest[at + 2..at + 2 + len].trim();
            pieces.push(Piece::Text(rest[..at].to_owned()));
            if !command.is_empty() {
                pieces.push(Piece::Command(command.to_owned()));
            }
            rest = &rest[at + 2 + len + 1..];
        }
        pieces.push(Piece::Text(rest.to_owned()));
        Self { pieces }
    }

    /// The inline commands, in order.
    pub fn commands(&self) -> Vec<&str> {
        self.pieces
            .iter()
            .filter_map(|piece| match piece {
                Piece::Command(command) => Some(command.as_str()),
                Piece::Text(_) => None,
            })
            .collect()
    }

    /// The body's own text, without its commands: where `@file`s are looked for (a command's
    /// output or a note about it attaches nothing).
    pub fn body(&self) -> String {
        self.pieces
            .iter()
            .filter_map(|piece| match piece {
                Piece::Text(text) => Some(text.as_str()),
                Piece::Command(_) => None,
            })
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// The prompt with each command's outcome where it stood (one outcome per command, in
    /// order; a command beyond [`MAX_INLINE`] or without an outcome is left out with a note).
    pub fn with_outputs(self, outcomes: Vec<Outcome>) -> String {
        let mut outcomes = outcomes.into_iter();
        let mut out = String::new();
        for piece in self.pieces {
            match piece {
                Piece::Text(text) => out.push_str(&text),
                Piece::Command(command) => {
                    match outcomes.next().unwrap_or_else(|| Err(format!("a prompt runs at most {MAX_INLINE} commands")))
                    {
                        Ok(output) => out.push_str(output.trim_end()),
                        Err(why) => out
                            .push_str(&format!("[`{command}` was left out: {why}. Run it yourself if it is needed.]")),
                    }
                }
            }
        }
        out
    }
}

/// The files `@path` in `text` names that exist (as files) in the project, at most
/// [`MAX_INLINE`]: `@user` in prose is no file.
pub fn attachments(text: &str, env: &ToolEnv) -> Vec<String> {
    let mut seen: Vec<String> = Vec::new();
    for word in text.split_whitespace() {
        let Some(path) = word.strip_prefix('@') else { continue };
        let path = path.trim_end_matches(['.', ',', ';', ':', ')', '"', '\'', '`']);
        if path.is_empty() || seen.iter().any(|known| known == path) || seen.len() >= MAX_INLINE {
            continue;
        }
        if Path::new(&env.workspace.absolute(path)).is_file() {
            seen.push(path.to_owned());
        }
    }
    seen
}

/// The prompt `text` with the attached files' outcomes after it.
pub fn with_attachments(text: String, files: &[String], outcomes: Vec<Outcome>) -> String {
    let attached: Vec<String> = files
        .iter()
        .zip(outcomes)
        .map(|(path, outcome)| match outcome {
            Ok(content) => format!("<file path=\"{path}\">\n{}\n</file>", content.trim_end()),
            Err(why) => format!("[@{path} was not attached: {}]", why.trim()),
        })
        .collect();
    if attached.is_empty() { text } else { format!("{text}\n\n{}", attached.join("\n\n")) }
}

/// The body with `$ARGUMENTS` (as typed), `$ARGUMENTS[N]` and `$N` (the Nth word, from 0,
/// split as a shell would; a missing one stays as written) and Claude Code's `${CLAUDE_*}`
/// variables put in. Arguments the body never mentions are appended, so none are lost.
pub fn substitute(skill: &Skill, args: &str, env: &ToolEnv) -> String {
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
    let body = match &skill.plugin {
        Some(plugin) => plugin.expand(&body),
        None => body,
    };
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

#[cfg(test)]
mod tests {
    use std::sync::Arc;

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
            plugin: None,
        }
    }

    #[test]
    fn arguments_go_where_the_body_says() {
        let dir = tempfile::tempdir().unwrap();
        let env = ToolEnv::standalone(Arc::new(crate::workspace::Workspace::new(dir.path())));
        let said = |body: &str, args: &str| substitute(&command(body), args, &env);
        assert_eq!(said("Review $ARGUMENTS now", "src/a.rs  \"the tests\""), "Review src/a.rs  \"the tests\" now");
        assert_eq!(
            said("file $0, focus $ARGUMENTS[1], missing $2", "src/a.rs \"the tests\""),
            "file src/a.rs, focus the tests, missing $2"
        );
        assert_eq!(said("costs $5.00 and $HOME", ""), "costs $5.00 and $HOME", "nothing to put in");
        assert_eq!(
            said("Fix the build.", "on linux"),
            "Fix the build.\n\nARGUMENTS: on linux",
            "unmentioned arguments are kept"
        );
        assert_eq!(said("in ${CLAUDE_SKILL_DIR}", ""), "in /home/u/.claude/commands");
    }

    #[test]
    fn inline_commands_are_found_and_their_outcomes_put_in_place() {
        let dir = tempfile::tempdir().unwrap();
        let env = ToolEnv::standalone(Arc::new(crate::workspace::Workspace::new(dir.path())));
        let expansion = Expansion::new(
            &command("Branch: !`git branch --show-current`, status !` `, log !`git log -1`; tail"),
            "",
            &env,
        );
        assert_eq!(expansion.commands(), ["git branch --show-current", "git log -1"]);
        let text = expansion.with_outputs(vec![Ok("main\n".into()), Err("Blocked by a hook: no".into())]);
        assert_eq!(
            text,
            "Branch: main, status , log [`git log -1` was left out: Blocked by a hook: no. Run it yourself if it is needed.]; tail"
        );
    }
}
