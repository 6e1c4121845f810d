//! The built-in slash commands (`/compact`, `/undo`, `/mcp`...): parsed here once, for every
//! front end, from a prompt typed as `/name args`; run by the session
//! (`Session::run_command`), which answers with a [`Reply`] as data. A front
//! end shows the reply its own way; [`Reply`]'s `Display` is the plain text the chats print.
//!
//! `/model` and `/config` are parsed here too but act on what the front end owns (the models it
//! offers, the user's settings file and how it announces them), so the session hands them back.

mod reply;
mod sandbox_report;

pub use reply::Reply;
pub use sandbox_report::SandboxReport;

use crate::permission::Mode;

/// A built-in command's entry in the editor's command menu.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BuiltIn {
    pub name: &'static str,
    pub description: &'static str,
    /// What goes after the name, for a menu that shows it.
    pub hint: Option<&'static str>,
}

/// Every built-in command, in menu order. A skill or custom command of the same name is not
/// offered: the built-in wins.
pub const BUILT_IN: &[BuiltIn] = &[
    BuiltIn {
        name: "compact",
        description: "Summarize the conversation so far to free context",
        hint: Some("[what the summary should keep]"),
    },
    BuiltIn { name: "clear", description: "Start over with an empty conversation", hint: None },
    BuiltIn { name: "mode", description: "Switch mode", hint: Some("default, accept-edits, plan or yolo") },
    BuiltIn { name: "model", description: "Switch to another configured model", hint: Some("model name") },
    BuiltIn {
        name: "mcp",
        description: "List the MCP servers and their state; login, reconnect or approve one",
        hint: Some("[login|reconnect|approve] [server]"),
    },
    BuiltIn {
        name: "plugin",
        description: "List the installed plugins; install, enable or disable one",
        hint: Some("[install PATH_OR_GIT_URL [PLUGIN] | enable ID | disable ID]"),
    },
    BuiltIn { name: "tasks", description: "List the background tasks; stop one", hint: Some("[stop bg-N]") },
    BuiltIn { name: "budget", description: "Show what the session has spent against its budget", hint: None },
    BuiltIn {
        name: "undo",
        description: "Put the files back as they were before the last turn (or a checkpoint), what commands did included, and rewind the conversation",
        hint: Some("[checkpoint id]"),
    },
    BuiltIn { name: "checkpoints", description: "List the checkpoints /undo can go back to", hint: None },
    BuiltIn {
        name: "sandbox",
        description: "Show what the shell sandbox enforces and which domains this session's commands reached",
        hint: None,
    },
    BuiltIn {
        name: "config",
        description: "Show your settings, or change one in ~/.config/larik/settings.json",
        hint: Some("[key [value]]: model, mode, thoughtLevel, tokenSaver, sandbox.network"),
    },
];

/// Whether `name` is a built-in command's.
pub fn is_built_in(name: &str) -> bool {
    BUILT_IN.iter().any(|command| command.name == name)
}

/// A built-in command parsed from a prompt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    /// `/compact [instructions]`.
    Compact(String),
    Budget,
    /// `/undo [checkpoint id]`.
    Undo(Option<String>),
    Checkpoints,
    /// `/sandbox`.
    Sandbox,
    Clear,
    /// `/mode <mode>`: the mode, or `None` with what was typed when it names none.
    Mode(Option<Mode>, String),
    Model(String),
    Mcp(McpAction),
    Plugin(crate::plugin_install::PluginAction),
    /// `/tasks`, or `/tasks stop <id>` with the id.
    Tasks(Option<String>),
    /// `/config`, `/config <key>` or `/config <key> <value>`.
    Config(Option<String>, Option<String>),
}

/// What `/mcp` was asked to do.
#[derive(Debug, Clone, PartialEq, Eq)]
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

/// The built-in command a prompt's text is, if it is one; other slash text (a skill, a custom
/// command, an MCP prompt) is not.
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
        "sandbox" => Some(Command::Sandbox),
        "clear" => Some(Command::Clear),
        "mode" => Some(Command::Mode(Mode::from_id(argument), argument.to_owned())),
        "model" => Some(Command::Model(argument.to_owned())),
        "mcp" => Some(Command::Mcp(mcp_action(argument))),
        "plugin" => Some(Command::Plugin(crate::plugin_install::PluginAction::parse(argument))),
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
        use crate::plugin_install::PluginAction;
        assert_eq!(parse("/plugin"), Some(Command::Plugin(PluginAction::List)));
        assert_eq!(
            parse("/plugin install ./market guard"),
            Some(Command::Plugin(PluginAction::Install { source: "./market".into(), plugin: Some("guard".into()) }))
        );
        assert_eq!(parse("/plugin enable a@b"), Some(Command::Plugin(PluginAction::Enable("a@b".into()))));
        assert_eq!(parse("/plugin frob"), Some(Command::Plugin(PluginAction::Usage("frob".into()))));
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

    #[test]
    fn every_parsed_command_is_in_the_menu() {
        for typed in [
            "compact",
            "clear",
            "mode",
            "model",
            "mcp",
            "plugin",
            "tasks",
            "budget",
            "undo",
            "checkpoints",
            "sandbox",
            "config",
        ] {
            assert!(parse(&format!("/{typed}")).is_some(), "{typed}");
            assert!(is_built_in(typed), "{typed}");
        }
        assert_eq!(BUILT_IN.len(), 12);
    }
}
