//! Slash commands: announced with `available_commands_update`, typed by the user as the prompt
//! (`/mode plan`). They act on the session instead of going to the model.

use larik_core::Mode;
use larik_protocol::acp;

/// The built-in commands' names: a skill or command of the same name is not offered.
const BUILT_IN: &[&str] =
    &["compact", "clear", "mode", "model", "mcp", "tasks", "budget", "undo", "checkpoints", "config"];

/// The commands every session offers, then its MCP servers' prompts, then its skills and
/// custom commands.
pub fn available(mcp: &[larik_core::SlashCommand], skills: &[larik_core::SlashCommand]) -> acp::SessionUpdate {
    let command = |name: &str, description: &str, hint: Option<&str>| {
        let mut command = acp::AvailableCommand::new(name, description);
        if let Some(hint) = hint {
            command = command.input(acp::AvailableCommandInput::Unstructured(acp::UnstructuredCommandInput::new(hint)));
        }
        command
    };
    let mut commands = vec![
        command("compact", "Summarize the conversation so far to free context", Some("[what the summary should keep]")),
        command("clear", "Start over with an empty conversation", None),
        command("mode", "Switch mode", Some("default, accept-edits, plan or yolo")),
        command("model", "Switch to another configured model", Some("model name")),
        command(
            "mcp",
            "List the MCP servers and their state; login, reconnect or approve one",
            Some("[login|reconnect|approve] [server]"),
        ),
        command("tasks", "List the background tasks; stop one", Some("[stop bg-N]")),
        command("budget", "Show what the session has spent against its budget", None),
        command(
            "undo",
            "Put the files back as they were before the last turn (or a checkpoint), what commands did included, and rewind the conversation",
            Some("[checkpoint id]"),
        ),
        command("checkpoints", "List the checkpoints /undo can go back to", None),
        command(
            "config",
            "Show your settings, or change one in ~/.config/larik/settings.json",
            Some("[key [value]]: model, mode, thoughtLevel, tokenSaver, sandbox.network"),
        ),
    ];
    commands.extend(mcp.iter().map(|prompt| command(&prompt.name, &prompt.description, prompt.hint.as_deref())));
    commands.extend(
        skills
            .iter()
            .filter(|skill| !BUILT_IN.contains(&skill.name.as_str()))
            .map(|skill| command(&skill.name, &skill.description, skill.hint.as_deref())),
    );
    acp::SessionUpdate::AvailableCommandsUpdate(acp::AvailableCommandsUpdate::new(commands))
}

/// A slash command parsed from a prompt.
#[derive(Debug, PartialEq, Eq)]
pub enum Command {
    /// `/compact [instructions]`.
    Compact(String),
    Budget,
    /// `/undo [checkpoint id]`.
    Undo(Option<String>),
    Checkpoints,
    Clear,
    Mode(Option<Mode>, String),
    Model(String),
    Mcp(McpAction),
    /// `/tasks`, or `/tasks stop <id>` with the id.
    Tasks(Option<String>),
    /// `/config`, `/config <key>` or `/config <key> <value>`.
    Config(Option<String>, Option<String>),
}

/// What `/mcp` was asked to do.
#[derive(Debug, PartialEq, Eq)]
pub enum McpAction {
    List,
    Login(String),
    Reconnect(String),
    /// Ask for the project's settings (its servers among them) now.
    Approve,
    /// Not one of the above: say how it is used.
    Usage(String),
}

fn mcp_action(argument: &str) -> McpAction {
    let mut words = argument.split_whitespace();
    match (words.next(), words.next(), words.next()) {
        (None, _, _) => McpAction::List,
        (Some("login"), Some(server), None) => McpAction::Login(server.to_owned()),
        (Some("reconnect"), Some(server), None) => McpAction::Reconnect(server.to_owned()),
        (Some("approve"), _, None) => McpAction::Approve,
        _ => McpAction::Usage(argument.to_owned()),
    }
}

/// The command a prompt's text starts with, if it is one of ours.
pub fn parse(text: &str) -> Option<Command> {
    let text = text.trim();
    let (name, argument) = text
        .strip_prefix('/')?
        .split_once(char::is_whitespace)
        .map_or((text.trim_start_matches('/'), ""), |(name, rest)| (name, rest.trim()));
    match name {
        "compact" => Some(Command::Compact(argument.to_owned())),
        "budget" => Some(Command::Budget),
        "undo" => Some(Command::Undo(Some(argument.to_owned()).filter(|id| !id.is_empty()))),
        "checkpoints" => Some(Command::Checkpoints),
        "clear" => Some(Command::Clear),
        "mode" => Some(Command::Mode(Mode::from_id(argument), argument.to_owned())),
        "model" => Some(Command::Model(argument.to_owned())),
        "mcp" => Some(Command::Mcp(mcp_action(argument))),
        "config" => {
            let (key, value) =
                argument.split_once(char::is_whitespace).map_or((argument, ""), |(key, value)| (key, value.trim()));
            Some(Command::Config(
                Some(key.to_owned()).filter(|key| !key.is_empty()),
                Some(value.to_owned()).filter(|value| !value.is_empty()),
            ))
        }
        "tasks" => Some(Command::Tasks(argument.strip_prefix("stop").map(|id| id.trim().to_owned()))),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_our_commands_only() {
        assert_eq!(parse("/compact"), Some(Command::Compact(String::new())));
        assert_eq!(parse("/compact keep the API decisions"), Some(Command::Compact("keep the API decisions".into())));
        assert_eq!(parse("/budget"), Some(Command::Budget));
        assert_eq!(parse("/undo"), Some(Command::Undo(None)));
        assert_eq!(parse("/undo cp-2"), Some(Command::Undo(Some("cp-2".into()))));
        assert_eq!(parse("/mcp"), Some(Command::Mcp(McpAction::List)));
        assert_eq!(parse("/mcp login github"), Some(Command::Mcp(McpAction::Login("github".into()))));
        assert_eq!(parse("/mcp reconnect  everything "), Some(Command::Mcp(McpAction::Reconnect("everything".into()))));
        assert_eq!(parse("/mcp approve"), Some(Command::Mcp(McpAction::Approve)));
        assert_eq!(parse("/mcp approve everything"), Some(Command::Mcp(McpAction::Approve)));
        assert_eq!(parse("/mcp login"), Some(Command::Mcp(McpAction::Usage("login".into()))));
        assert_eq!(parse("/tasks"), Some(Command::Tasks(None)));
        assert_eq!(parse("/config"), Some(Command::Config(None, None)));
        assert_eq!(parse("/config mode"), Some(Command::Config(Some("mode".into()), None)));
        assert_eq!(
            parse("/config model  claude-opus-4-1 "),
            Some(Command::Config(Some("model".into()), Some("claude-opus-4-1".into())))
        );
        assert_eq!(parse("/tasks stop bg-2"), Some(Command::Tasks(Some("bg-2".into()))));
        assert_eq!(parse("  /mode plan "), Some(Command::Mode(Some(Mode::Plan), "plan".into())));
        assert_eq!(parse("/mode nonsense"), Some(Command::Mode(None, "nonsense".into())));
        assert_eq!(parse("/model claude-x"), Some(Command::Model("claude-x".into())));
        assert_eq!(parse("/review this"), None, "other slash text goes to the model");
        assert_eq!(parse("hello"), None);
    }
}
