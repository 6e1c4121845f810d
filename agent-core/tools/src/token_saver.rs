//! The token saver, off unless the user's own settings say `"tokenSaver": true` (a project's
//! cannot turn it on). After a bash call ends, the output of a command it recognises (tests and
//! builds, git's log and status: the tables in `token_saver/filters.rs`) reaches the model
//! without the noise of success, with a note of what was cut and how to get it all back; the
//! exact output is kept in the session's private sidecar, where the `raw_output` tool reads it.
//!
//! What it keeps:
//! - Only a call that exited 0 is filtered: failures, timeouts and cancelled calls keep their
//!   output, as do unknown formats, pipelines and compounds, patches, and output a filter would
//!   not shrink by a tenth (its note counted).
//! - Output is filtered only once its exact bytes are stored: the note never points at nothing.
//! - The byte counts in the note estimate what the filter saved of the command's output; the
//!   provider's usage stays the only source of a session's tokens and cost.

mod filters;
mod format;
pub mod sidecar;

use std::path::Path;
use std::sync::Arc;

pub use sidecar::Sidecar;

/// A session's token saver: present only when it is on.
#[derive(Debug)]
pub struct TokenSaver {
    sidecar: Sidecar,
}

impl TokenSaver {
    pub fn new(sidecar: Sidecar) -> Self {
        Self { sidecar }
    }

    /// The session's token saver when its settings turn it on; `None` when they do not, or
    /// when there is nowhere private to keep the exact output (then nothing is filtered).
    pub fn for_session(
        settings: Option<&crate::config::SettingsSource>,
        data_dir: Option<&Path>,
        session_id: &str,
    ) -> Option<Arc<Self>> {
        let enabled = settings.is_some_and(|source| source.load().token_saver == Some(true));
        if !enabled {
            return None;
        }
        let Some(data_dir) = data_dir else {
            tracing::warn!("the token saver is off: there is no data directory to keep exact output in");
            return None;
        };
        match Sidecar::for_session(data_dir, session_id) {
            Ok(sidecar) => Some(Arc::new(Self::new(sidecar))),
            Err(error) => {
                tracing::warn!(%error, "the token saver is off");
                None
            }
        }
    }

    pub fn sidecar(&self) -> &Sidecar {
        &self.sidecar
    }

    /// Stores the exact output of the call `call_id`, off the async threads (it is written and
    /// synced). Whether it is stored: when not, its output must not be filtered.
    pub async fn keep(&self, call_id: &str, output: Vec<u8>) -> bool {
        let (sidecar, id) = (self.sidecar.clone(), call_id.to_owned());
        let stored = match tokio::task::spawn_blocking(move || sidecar.store(&id, &output)).await {
            Ok(stored) => stored.map_err(|error| error.to_string()),
            Err(error) => Err(error.to_string()),
        };
        if let Err(error) = &stored {
            tracing::warn!(%error, call_id, "the exact output could not be kept; it is not filtered");
        }
        stored.is_ok()
    }
}

/// What the model is shown of `output`, the output of the successful command line `command`
/// stored as `call_id`: the filtered text and its note, or `None` to show the output as it is.
pub fn shrink(command: &str, output: &str, call_id: &str) -> Option<String> {
    let format = format::recognise(command)?;
    let filtered = format.apply(output)?;
    let note = note(output.len(), &filtered, call_id);
    // Not worth the model's attention (or the note) below a tenth.
    if (filtered.len() + note.len()) * 10 > output.len() * 9 {
        return None;
    }
    tracing::debug!(format = format.source.name, before = output.len(), after = filtered.len(), "token saver");
    Some(format!("{filtered}{note}"))
}

/// How the model gets the exact output of `call_id` back.
pub fn pointer(call_id: &str) -> String {
    let id = serde_json::to_string(call_id).unwrap_or_default();
    format!("raw_output {{\"tool_call_id\": {id}}}")
}

fn note(before: usize, filtered: &str, call_id: &str) -> String {
    let newline = if filtered.is_empty() || filtered.ends_with('\n') { "" } else { "\n" };
    format!(
        "{newline}[token saver: {} → {} bytes (estimate); the exact output: {}]",
        thousands(before),
        thousands(filtered.len()),
        pointer(call_id)
    )
}

/// `12345` as `12,345`.
fn thousands(number: usize) -> String {
    let digits = number.to_string();
    let mut grouped = String::new();
    for (index, digit) in digits.chars().enumerate() {
        if index > 0 && (digits.len() - index).is_multiple_of(3) {
            grouped.push(',');
        }
        grouped.push(digit);
    }
    grouped
}

#[cfg(test)]
mod tests;
