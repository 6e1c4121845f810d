//! Slash commands typed as an ACP prompt. Mode, model and settings are announced to the client
//! as config options too, so `/mode`, `/model` and `/config` go through the same handlers as
//! `session/set_config_option`; every other command the session runs and answers.

use larik_core::commands::{Command, Reply};
use larik_protocol::acp;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::agent::{AcpAgent, SessionEntry, notify, stop_reason, turn_error};
use super::connection::{Peer, RpcError};
use super::forward::forward_events;
use super::{commands, modes, to_proto};
use crate::side_by_side::side_by_side;

impl AcpAgent {
    /// Runs a slash command typed as the prompt; `None` when the prompt is not one.
    pub(super) async fn slash_command(
        &self,
        peer: &Peer,
        request: &acp::PromptRequest,
        entry: &SessionEntry,
        cancel: &CancellationToken,
    ) -> Result<Option<acp::StopReason>, RpcError> {
        let [acp::ContentBlock::Text(text)] = request.prompt.as_slice() else { return Ok(None) };
        let Some(command) = larik_core::commands::parse(&text.text) else { return Ok(None) };
        let session_id = &request.session_id;
        let say = |text: String| acp::SessionUpdate::AgentMessageChunk(to_proto::text_chunk(text));
        // Mode, model and settings are announced to the client as config options too: those
        // three are ours; the rest the session runs.
        let said = match command {
            Command::Mode(Some(mode), _) if !entry.session.permissions().modes().contains(&mode) => {
                Reply::ModeRefused(larik_core::ModeRefused(mode)).to_string()
            }
            Command::Mode(Some(mode), _) => {
                self.set_mode(peer, session_id, mode.id()).await?;
                Reply::ModeSet(mode).to_string()
            }
            Command::Model(name) => match self.switch_model(peer, session_id, &name).await {
                Ok(()) => format!("Model: {name}."),
                Err(error) => error.message,
            },
            Command::Config(key, value) => self.config_command(peer, session_id, key, value).await,
            command => {
                let (events_tx, events_rx) = mpsc::channel(256);
                let turn_cancel = cancel.child_token();
                let client = self.client_view(entry.session.cwd());
                let forward = forward_events(peer, session_id, events_rx, client, &turn_cancel);
                let reply = side_by_side(entry.session.run_command(command, events_tx, turn_cancel.clone()), forward)
                    .await
                    .map_err(turn_error)?;
                match reply {
                    Reply::Compacted(stop) => return Ok(Some(stop_reason(stop))),
                    Reply::Cleared => {
                        // The skills were read again: the menu follows.
                        let prompts = entry.session.mcp_commands().await;
                        notify(peer, session_id, commands::available(&prompts, &entry.session.skill_commands())).await;
                    }
                    _ => {}
                }
                reply.to_string()
            }
        };
        notify(peer, session_id, say(said)).await;
        Ok(Some(acp::StopReason::EndTurn))
    }
}

impl AcpAgent {
    /// `/config`: lists the user's settings, shows one, or saves one; a saved model or mode
    /// applies to this session too, as the user who typed it expects.
    async fn config_command(
        &self,
        peer: &Peer,
        session_id: &acp::SessionId,
        key: Option<String>,
        value: Option<String>,
    ) -> String {
        use larik_core::user_settings;
        let (key, value) = match (key, value) {
            (None, _) => {
                return match user_settings::all(&self.env) {
                    Ok(keys) => format!(
                        "Your settings:\n```\n{}\n```\n`/config KEY VALUE` changes one.",
                        crate::config_cli::listing(&keys)
                    ),
                    Err(error) => error.to_string(),
                };
            }
            (Some(key), None) => {
                return match user_settings::get(&key, &self.env) {
                    Ok(value) => format!("{key} = {}", value.unwrap_or_else(|| "(not set)".into())),
                    Err(error) => error.to_string(),
                };
            }
            (Some(key), Some(value)) => (key, value),
        };
        let stored = match user_settings::set(&key, &value, &self.env) {
            Ok(stored) => stored,
            Err(error) => return format!("Nothing was changed: {error}."),
        };
        let saved = format!("Saved {key} = {stored} in your settings; new sessions start with it.");
        let now = match user_settings::key(&key).map(|known| known.name) {
            Ok("mode") => match larik_core::Mode::from_setting(value.trim()) {
                Some(mode) => self
                    .set_mode(peer, session_id, mode.id())
                    .await
                    .map(|()| format!(" This session is in {} now.", mode.id()))
                    .unwrap_or_default(),
                None => String::new(),
            },
            Ok("model") => match self.switch_model(peer, session_id, value.trim()).await {
                Ok(()) => format!(" This session uses {} now.", value.trim()),
                Err(error) => format!(" This session keeps its model: {}", error.message),
            },
            _ => String::new(),
        };
        saved + &now
    }

    /// Switches the session's model as `session/set_config_option` would, and tells the
    /// editor the options that follow (for `/model` and `/config model`).
    async fn switch_model(&self, peer: &Peer, session_id: &acp::SessionId, name: &str) -> Result<(), RpcError> {
        let request = acp::SetSessionConfigOptionRequest::new(
            session_id.clone(),
            modes::MODEL_OPTION,
            acp::SessionConfigOptionValue::value_id(name.to_owned()),
        );
        let response = self.set_config_option(peer, request).await?;
        notify(
            peer,
            session_id,
            acp::SessionUpdate::ConfigOptionUpdate(acp::ConfigOptionUpdate::new(response.config_options)),
        )
        .await;
        Ok(())
    }
}
