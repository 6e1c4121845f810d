//! The words of a question for the user, in each place Helix can show them: the choices (as
//! code actions or popup buttons), a one-line form for a diagnostic or a popup, and a block for
//! the chat file that says exactly what will run and where to answer.

use larik_core::event::PermissionRequest;

/// `text` without Markdown's code-span backticks: Helix shows a chat file as it is written, so
/// what the bridge writes there must read well as plain text.
pub fn plain(text: &str) -> String {
    text.replace('`', "")
}

/// Said of every command that would run outside the sandbox.
pub const OUTSIDE_SANDBOX: &str = "outside the sandbox: full write and network access";

pub struct Question {
    /// The tool call asked about.
    pub tool_id: String,
    pub title: String,
    /// The command a shell call would run, verbatim.
    pub command: Option<String>,
    pub outside_sandbox: bool,
    pub reason: String,
    /// `(option id, name)`, in the order offered: allow once first.
    pub options: Vec<(&'static str, String)>,
}

impl Question {
    pub fn from_request(request: &PermissionRequest) -> Self {
        let input = &request.tool_call.input;
        let command = input["command"]
            .as_str()
            .filter(|_| request.tool_call.kind == larik_core::event::ToolKind::Execute)
            .map(str::to_owned);
        let title = match (&command, input["description"].as_str().filter(|text| !text.trim().is_empty())) {
            (Some(_), Some(description)) => description.trim().to_owned(),
            (Some(_), None) => "Run a command".to_owned(),
            (None, _) => request.tool_call.title.clone(),
        };
        Self {
            tool_id: request.tool_call.id.clone(),
            title,
            outside_sandbox: command.is_some() && input["sandbox"] == false,
            command,
            reason: request.reason.clone(),
            options: vec![
                ("allow_once", "Allow once".to_owned()),
                ("allow_always", format!("Always allow `{}` in this project", request.suggested_rule)),
                ("reject_once", "Reject".to_owned()),
            ],
        }
    }

    /// For a diagnostic or a popup: what, the exact command, the warning, why.
    pub fn one_line(&self) -> String {
        let mut line = self.title.clone();
        if let Some(command) = &self.command {
            line.push_str(&format!(": `{}`", command.lines().collect::<Vec<_>>().join(" ⏎ ")));
        }
        if self.outside_sandbox {
            line.push_str(&format!(" (⚠ {OUTSIDE_SANDBOX})"));
        }
        line.push_str(&format!(" ({})", self.reason));
        line
    }

    /// For the chat file, while the turn waits, as plain text: what will run, and how to answer
    /// (`answer_where`).
    pub fn chat_block(&self, answer_where: &str) -> String {
        let mut block = format!("- ⚑ Waiting for you: {}", self.title);
        if let Some(command) = &self.command {
            for line in command.lines() {
                block.push_str(&format!("\n    $ {line}"));
            }
        }
        if self.outside_sandbox {
            block.push_str(&format!("\n  ⚠ Runs {OUTSIDE_SANDBOX}."));
        }
        let choices: Vec<String> = self.options.iter().map(|(_, name)| plain(name)).collect();
        block.push_str(&format!("\n  {answer_where}: {}", choices.join(" · ")));
        block
    }

    /// For the status line while the turn waits: what for, and where to answer.
    pub fn status(&self, answer_where: &str) -> String {
        let outside = if self.outside_sandbox { " (outside the sandbox)" } else { "" };
        format!("waiting for you: {}{outside} · {answer_where}", self.title)
    }

    /// How the chat names the answer `option`, once given.
    pub fn answered(&self, option: &str) -> String {
        match option {
            "allow_once" => "allowed once".to_owned(),
            "allow_always" => {
                let rule = self
                    .options
                    .iter()
                    .find(|(id, _)| *id == "allow_always")
                    .map(|(_, name)| name.trim_start_matches("Always allow ").to_owned());
                format!("always allowed {}", plain(&rule.unwrap_or_default()))
            }
            "cancelled" => "dismissed".to_owned(),
            _ => "rejected".to_owned(),
        }
    }
}

/// The chat's block for an edit under review in `file`.
pub fn review_block(title: &str, file: &str, hunks: usize) -> String {
    let hunks = if hunks == 1 { "1 proposed hunk".to_owned() } else { format!("{hunks} proposed hunks") };
    format!(
        "- ⚑ Waiting for you in {file}: {title}\n  Apply or reject the {hunks} with space a on each in {file} (space l y / space l n: all at once)."
    )
}

#[cfg(test)]
mod tests {
    use larik_core::event::{ToolCallView, ToolKind};
    use serde_json::json;

    use super::*;

    fn bash(input: serde_json::Value) -> Question {
        let (reply, _answer) = tokio::sync::oneshot::channel();
        let tool_call = ToolCallView {
            id: "t1".into(),
            name: "bash".into(),
            title: "Run the tests (`python3 -m".into(),
            kind: ToolKind::Execute,
            input,
            locations: Vec::new(),
            streams_output: false,
            report_only: false,
        };
        let request = PermissionRequest {
            tool_call,
            reason: "bash needs your approval".into(),
            preview: None,
            suggested_rule: "bash(python3 -m unittest*)".into(),
            reply,
        };
        Question::from_request(&request)
    }

    #[test]
    fn a_command_outside_the_sandbox_is_shown_whole_with_the_warning() {
        let question = bash(
            json!({"command": "python3 -m unittest -v 2>&1 | tail -n 20", "description": "Run the tests", "sandbox": false}),
        );
        assert_eq!(
            question.chat_block("Answer with space a"),
            "- ⚑ Waiting for you: Run the tests\n    $ python3 -m unittest -v 2>&1 | tail -n 20\n  ⚠ Runs outside the sandbox: full write and network access.\n  Answer with space a: Allow once · Always allow bash(python3 -m unittest*) in this project · Reject"
        );
        assert_eq!(
            question.one_line(),
            "Run the tests: `python3 -m unittest -v 2>&1 | tail -n 20` (⚠ outside the sandbox: full write and network access) (bash needs your approval)"
        );
        assert_eq!(question.answered("allow_always"), "always allowed bash(python3 -m unittest*) in this project");
        assert_eq!(
            question.status("space a to answer"),
            "waiting for you: Run the tests (outside the sandbox) · space a to answer"
        );
    }

    #[test]
    fn a_sandboxed_command_has_no_warning() {
        let question = bash(json!({"command": "ls"}));
        assert!(!question.outside_sandbox);
        assert!(!question.chat_block("Answer").contains("sandbox"));
        assert!(question.chat_block("Answer").starts_with("- ⚑ Waiting for you: Run a command\n"));
        assert_eq!(question.status("space a to answer"), "waiting for you: Run a command · space a to answer");
    }
}
