//! The trust boundary of settings: what a settings file inside the project (a repository the
//! user cloned, and so wrote by someone else) may decide. Such a file is parsed into
//! [`ProjectSettings`] (`larik-settings`), a type that holds only what a repository may set;
//! everything else in it is reported once here and has no effect. So a new setting is user-only
//! until someone adds it to that type, on purpose: the boundary is a type, not a list of keys to
//! strip.
//!
//! Three kinds of key (the table in `protocol-spec/spec/settings.md` gives each one's reason):
//! - applied at once, because they only narrow or cannot reach outside the machine or run
//!   code: a lower budget, output limit and request count, `sandbox.network: false` and its
//!   `deniedDomains`, deny and
//!   ask rules, protected paths, a default mode of `default` or `plan`, sandboxed commands that
//!   ask (`sandbox.autoAllowBashIfSandboxed: false`), the thought level, the
//!   compaction and context window, the stall timeout;
//! - applied once the user approved the project's settings (the same one approval as its hooks,
//!   allow rules and MCP servers, pinned to their fingerprint): `provider`, `model`, `models`
//!   and `roles`, which choose what the user pays for, and `sandbox.network.allowedDomains`,
//!   which lets commands reach those domains without asking;
//! - never: whatever names a program, a URL that receives the user's data or a secret's name
//!   (`baseUrl`, `apiKeyEnv`, `webSearch`, `lsp`, `browser`, `sandbox.writablePaths`...), what
//!   widens the sandbox, and the token saver.

use std::path::Path;

use larik_settings::{Budget, NetworkShape, ProjectSettings, Settings};
use serde_json::Value;

use super::ConfigError;
use larik_llm::ThoughtLevel;

/// The project's settings file at `path`, applied over `settings` as far as a repository may
/// decide; what waits for approval is kept in `settings.project_choices`, what it may not
/// decide is reported in `settings.problems`.
pub(super) fn apply(settings: &mut Settings, path: &Path, text: &str) -> Result<(), ConfigError> {
    let layer: ProjectSettings = serde_json::from_str(text)
        .map_err(|error| ConfigError::Unreadable { path: path.to_path_buf(), message: error.to_string() })?;
    let place = path.display();
    let lower = |user: Option<u32>, default: u32, project: Option<u32>| match project {
        Some(project) => Some(project.min(user.unwrap_or(default))),
        None => user,
    };
    settings.max_tokens = lower(settings.max_tokens, super::DEFAULT_MAX_TOKENS, layer.max_tokens);
    settings.max_turn_requests =
        lower(settings.max_turn_requests, super::DEFAULT_MAX_TURN_REQUESTS, layer.max_turn_requests);
    match layer.thought_level.as_deref() {
        Some(level) if ThoughtLevel::from_id(level).is_none() => settings
            .problems
            .push(format!("{place}: thoughtLevel `{level}` is not one of off, low, medium, high; it is ignored")),
        Some(level) => settings.thought_level = Some(level.to_owned()),
        None => {}
    }
    settings.budget = Budget::tighter(settings.budget, layer.budget);
    settings.context_window = layer.context_window.or(settings.context_window);
    settings.compaction = layer.compaction.or(settings.compaction);
    settings.stream_idle_timeout_ms = layer.stream_idle_timeout_ms.or(settings.stream_idle_timeout_ms);
    let mut ignored = layer.unread_keys();
    if let Some(sandbox) = &layer.sandbox {
        match &sandbox.network {
            Some(NetworkShape::Flag(false)) => {
                settings.sandbox.get_or_insert_with(Default::default).network.full = false
            }
            Some(NetworkShape::Flag(true)) => ignored.push("sandbox.network: true".into()),
            Some(shape @ NetworkShape::Lists(lists)) => {
                let network = &mut settings.sandbox.get_or_insert_with(Default::default).network;
                // Lists in place of `true` mean the proxy: that only narrows.
                network.full = false;
                network.denied_domains.extend(lists.denied_domains.iter().cloned());
                settings.project_choices.allowed_domains.extend(lists.allowed_domains.iter().cloned());
                ignored.extend(shape.unknown_keys());
                let widening = [
                    ("allowUnixSockets", !lists.allow_unix_sockets.is_empty()),
                    ("allowAllUnixSockets", lists.allow_all_unix_sockets),
                    ("allowLocalBinding", lists.allow_local_binding),
                ];
                ignored
                    .extend(widening.iter().filter(|(_, set)| *set).map(|(key, _)| format!("sandbox.network.{key}")));
            }
            None => {}
        }
        match sandbox.auto_allow_bash_if_sandboxed {
            Some(false) => {
                settings.sandbox.get_or_insert_with(Default::default).auto_allow_bash_if_sandboxed = Some(false)
            }
            Some(true) => ignored.push("sandbox.autoAllowBashIfSandboxed: true".into()),
            None => {}
        }
        match sandbox.allow_unsandboxed_commands {
            Some(false) => {
                settings.sandbox.get_or_insert_with(Default::default).allow_unsandboxed_commands = Some(false)
            }
            Some(true) => ignored.push("sandbox.allowUnsandboxedCommands: true".into()),
            None => {}
        }
        match sandbox.fail_if_unavailable {
            Some(true) => settings.sandbox.get_or_insert_with(Default::default).fail_if_unavailable = Some(true),
            Some(false) => ignored.push("sandbox.failIfUnavailable: false".into()),
            None => {}
        }
        if let Some(filesystem) = &sandbox.filesystem {
            let own = &mut settings.sandbox.get_or_insert_with(Default::default).filesystem;
            own.deny_write.extend(filesystem.deny_write.iter().cloned());
            own.deny_read.extend(filesystem.deny_read.iter().cloned());
        }
    }
    settings.project_choices.add(&layer);
    for key in ignored {
        let known = key.contains('.') || is_user_setting(&key);
        settings.problems.push(if known {
            format!("{place}: `{key}` is ignored: a project's settings may not choose it (it names a program, a server that receives your data or a secret, or widens what runs without asking); set it in your own settings, ~/.config/larik/settings.json")
        } else {
            format!("{place}: `{key}` is not a Larik setting and is ignored")
        });
    }
    Ok(())
}

/// Whether `key` is one of the user's settings (which a project may not set), rather than no
/// setting at all: read off the settings type, so the two cannot drift.
fn is_user_setting(key: &str) -> bool {
    static KEYS: std::sync::OnceLock<Vec<String>> = std::sync::OnceLock::new();
    KEYS.get_or_init(|| {
        let schema = schemars::schema_for!(Settings);
        schema
            .get("properties")
            .and_then(Value::as_object)
            .map(|properties| properties.keys().cloned().collect())
            .unwrap_or_default()
    })
    .iter()
    .any(|known| known == key)
}
