//! The slash command menu, announced with `available_commands_update`: the built-in commands
//! (parsed and run by the core, [`larik_core::commands`]), the MCP servers' prompts, the skills
//! and custom commands.

use larik_core::commands::{BUILT_IN, is_built_in};
use larik_protocol::acp;

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
    let mut commands: Vec<acp::AvailableCommand> =
        BUILT_IN.iter().map(|built_in| command(built_in.name, built_in.description, built_in.hint)).collect();
    commands.extend(mcp.iter().map(|prompt| command(&prompt.name, &prompt.description, prompt.hint.as_deref())));
    commands.extend(
        skills
            .iter()
            .filter(|skill| !is_built_in(&skill.name))
            .map(|skill| command(&skill.name, &skill.description, skill.hint.as_deref())),
    );
    acp::SessionUpdate::AvailableCommandsUpdate(acp::AvailableCommandsUpdate::new(commands))
}
