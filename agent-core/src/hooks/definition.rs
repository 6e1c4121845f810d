//! Hook definitions: reading the `hooks` section of every settings file, in Claude Code's shape,
//! into one [`Hooks`] set, and choosing the handlers an event runs.
//!
//! ```json
//! {"hooks": {"PreToolUse": [{"matcher": "Edit|Write",
//!     "hooks": [{"type": "command", "command": "\"$CLAUDE_PROJECT_DIR\"/.claude/hooks/check.sh", "timeout": 60}]}]}}
//! ```
//!
//! Files, in order: the organisation's managed settings (`config::managed`), whose hooks run
//! without approval and whatever the other files say; user `<user_config_dir>/settings.json`
//! and `~/.claude/settings.json`; project `.larik/settings.json`, `.larik/settings.local.json`,
//! `.claude/settings.json`, `.claude/settings.local.json`. A file read as a user file is not read
//! again as a project file (a session started in the home directory), so the user's own hooks
//! never wait for approval. The managed `allowManagedHooksOnly` reads only its own files,
//! `disableAllHooks` there turns every hook off, and elsewhere all but the managed ones.
//!
//! A file whose hooks cannot be read is an error naming it: a hook that denies something must
//! never be silently dropped. What is well-formed but not run by Larik (other events, `http`,
//! `mcp_tool` and `agent` handlers, a PowerShell hook) is left out and reported in
//! [`Hooks::problems`], as are fields Larik does not honour (`if`, `async`).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Map, Value};

use crate::config::SettingsFiles;

use super::matcher::Matcher;
use super::{DEFAULT_COMMAND_TIMEOUT, DEFAULT_PROMPT_TIMEOUT, HandlerKind, HookEvent, HookHandler, Scope};

#[derive(Debug, thiserror::Error)]
pub enum HookConfigError {
    /// The file exists but could not be read or is not JSON.
    #[error("{}: {message}", path.display())]
    Unreadable { path: PathBuf, message: String },
    /// The file is JSON but its `hooks` section does not have Claude Code's shape.
    #[error("{}: hooks: {message}", path.display())]
    Invalid { path: PathBuf, message: String },
}

/// Every hook handler from every settings file.
#[derive(Debug, Clone, Default)]
pub struct Hooks {
    entries: Vec<Entry>,
    problems: Vec<String>,
}

#[derive(Debug, Clone)]
struct Entry {
    handler: HookHandler,
    matcher: Matcher,
}

/// The settings files that may hold hooks, in reading order, with their scope.
fn settings_files(project: &Path, env: &HashMap<String, String>) -> Vec<(PathBuf, Scope)> {
    let mut files = Vec::new();
    if let Some(dir) = larik_settings::paths::user_config_dir(env) {
        files.push((dir.join("settings.json"), Scope::User));
    }
    if let Some(home) = env.get("HOME").filter(|home| !home.is_empty()) {
        files.push((Path::new(home).join(".claude").join("settings.json"), Scope::User));
    }
    for dir in [".larik", ".claude"] {
        for name in ["settings.json", "settings.local.json"] {
            files.push((project.join(dir).join(name), Scope::Project));
        }
    }
    files
}

/// The settings file at `path` as JSON, unless it does not exist or was read already (under
/// another name). One that cannot be read is an error.
fn read_once(files: &SettingsFiles, path: &Path, read: &mut Vec<PathBuf>) -> Result<Option<Value>, HookConfigError> {
    let text = match files.read(path) {
        Ok(Some(text)) => text,
        Ok(None) => return Ok(None),
        Err(error) => return Err(HookConfigError::Unreadable { path: path.to_owned(), message: error.to_string() }),
    };
    let identity = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_owned());
    if read.contains(&identity) {
        return Ok(None);
    }
    read.push(identity);
    serde_json::from_str(&text)
        .map(Some)
        .map_err(|error| HookConfigError::Unreadable { path: path.to_owned(), message: error.to_string() })
}

impl Hooks {
    /// Reads `hooks` from every settings file, merged (see the module doc for the files).
    pub fn load(
        files: &SettingsFiles,
        project: &Path,
        env: &HashMap<String, String>,
    ) -> Result<Hooks, HookConfigError> {
        let policy = crate::config::managed::ManagedPolicy::load(files, env).map_err(|error| {
            HookConfigError::Unreadable { path: PathBuf::from("managed settings"), message: error.to_string() }
        })?;
        let mut hooks = Hooks::default();
        if policy.all_hooks_disabled {
            return Ok(hooks);
        }
        let mut read = Vec::new();
        // The organisation's hooks first: they run whatever the other files say.
        for path in &policy.files {
            if let Some(settings) = read_once(files, path, &mut read)? {
                hooks.read_settings(path, Scope::User, &settings)?;
            }
        }
        if policy.hooks_only {
            return Ok(hooks);
        }
        let from_policy = hooks.entries.len();
        let mut others_disabled = false;
        for (path, scope) in settings_files(project, env) {
            let Some(settings) = read_once(files, &path, &mut read)? else { continue };
            // `disableAllHooks` in the user's or the project's files turns off all but the
            // organisation's (a project may: it only narrows).
            others_disabled |= settings.get("disableAllHooks").and_then(Value::as_bool) == Some(true);
            hooks.read_settings(&path, scope, &settings)?;
        }
        hooks.read_plugins(files, project, env);
        if others_disabled {
            hooks.entries.truncate(from_policy);
        }
        Ok(hooks)
    }

    /// The enabled plugins' hooks, after the settings files'. A plugin's file that cannot be
    /// read as hooks leaves that plugin's hooks out with a problem: the plugin is the user's
    /// add-on, not their policy, and the session still opens. A plugin a project alone enabled
    /// has the project's scope: its hooks wait for the user's approval.
    fn read_plugins(&mut self, files: &SettingsFiles, project: &Path, env: &HashMap<String, String>) {
        let (plugins, problems) = crate::config::plugins::enabled(files, project, env);
        self.problems.extend(problems);
        for plugin in plugins {
            let scope = if plugin.from_project { Scope::Project } else { Scope::User };
            let (parts, problems) = plugin.hooks();
            self.problems.extend(problems);
            for part in parts {
                let before = self.entries.len();
                if let Err(error) = self.read_settings(&part.path, scope, &part.value) {
                    self.entries.truncate(before);
                    self.problems.push(format!("plugin `{}`: {error}; its hooks there are left out", plugin.id));
                    continue;
                }
                for entry in &mut self.entries[before..] {
                    if let HandlerKind::Command { command } = &mut entry.handler.kind {
                        *command = plugin.dirs.expand(command);
                    }
                    entry.handler.plugin = Some(plugin.dirs.clone());
                }
            }
        }
    }

    /// Reads one settings file's `hooks` section.
    pub(crate) fn read_settings(&mut self, path: &Path, scope: Scope, settings: &Value) -> Result<(), HookConfigError> {
        let invalid = |message: String| HookConfigError::Invalid { path: path.to_owned(), message };
        let Value::Object(settings) = settings else {
            return Err(invalid("the settings file is not a JSON object".into()));
        };
        let events = match settings.get("hooks") {
            None | Some(Value::Null) => return Ok(()),
            Some(Value::Object(events)) => events,
            Some(_) => return Err(invalid("`hooks` must be an object keyed by event name".into())),
        };
        for (name, groups) in events {
            let Some(event) = HookEvent::from_name(name) else {
                self.problems.push(format!(
                    "{}: hook event `{name}` is not one Larik runs; its hooks are ignored",
                    path.display()
                ));
                continue;
            };
            let Value::Array(groups) = groups else {
                return Err(invalid(format!("`{name}` must be a list of matcher groups")));
            };
            for (index, group) in groups.iter().enumerate() {
                let place = format!("{name}[{index}]");
                let Value::Object(group) = group else {
                    return Err(invalid(format!("{place} must be an object with `matcher` and `hooks`")));
                };
                let matcher = match group.get("matcher") {
                    None | Some(Value::Null) => None,
                    Some(Value::String(matcher)) => Some(matcher.clone()),
                    Some(_) => return Err(invalid(format!("{place}: `matcher` must be a string"))),
                };
                let compiled = Matcher::parse(matcher.as_deref()).map_err(|error| {
                    invalid(format!(
                        "{place}: matcher `{}` is not a valid regular expression: {error}",
                        matcher.as_deref().unwrap_or_default()
                    ))
                })?;
                let Some(Value::Array(handlers)) = group.get("hooks") else {
                    return Err(invalid(format!("{place}: `hooks` must be a list of handlers")));
                };
                for (number, handler) in handlers.iter().enumerate() {
                    let place = format!("{place}.hooks[{number}]");
                    let Value::Object(handler) = handler else {
                        return Err(invalid(format!("{place} must be an object")));
                    };
                    let Some((kind, timeout)) = self.read_handler(path, &place, handler).map_err(invalid)? else {
                        continue;
                    };
                    let handler = HookHandler {
                        event,
                        matcher: matcher.clone(),
                        kind,
                        timeout,
                        scope,
                        source: path.to_owned(),
                        plugin: None,
                    };
                    self.entries.push(Entry { handler, matcher: compiled.clone() });
                }
            }
        }
        Ok(())
    }

    /// One handler: `Ok(None)` when it is well-formed but not something Larik runs (reported).
    fn read_handler(
        &mut self,
        path: &Path,
        place: &str,
        handler: &Map<String, Value>,
    ) -> Result<Option<(HandlerKind, Duration)>, String> {
        let text = |field: &str| match handler.get(field) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(text)) => Ok(Some(text.clone())),
            Some(_) => Err(format!("{place}: `{field}` must be a string")),
        };
        let mut problem = |what: String| self.problems.push(format!("{}: {place}: {what}", path.display()));
        let (kind, default_timeout) = match handler.get("type").and_then(Value::as_str) {
            Some("command") => {
                let Some(command) = text("command")?.filter(|command| !command.trim().is_empty()) else {
                    return Err(format!("{place}: a command hook needs a `command`"));
                };
                if let Some(shell) = text("shell")?.filter(|shell| shell != "bash") {
                    problem(format!(
                        "shell `{shell}` is not supported (Larik runs hooks with bash); this hook is ignored"
                    ));
                    return Ok(None);
                }
                let command = match handler.get("args") {
                    None | Some(Value::Null) => command,
                    Some(Value::Array(args)) => {
                        exec_form(&command, args).ok_or_else(|| format!("{place}: `args` must be a list of strings"))?
                    }
                    Some(_) => return Err(format!("{place}: `args` must be a list of strings")),
                };
                (HandlerKind::Command { command }, DEFAULT_COMMAND_TIMEOUT)
            }
            Some("prompt") => {
                let Some(prompt) = text("prompt")?.filter(|prompt| !prompt.trim().is_empty()) else {
                    return Err(format!("{place}: a prompt hook needs a `prompt`"));
                };
                (HandlerKind::Prompt { prompt, model: text("model")? }, DEFAULT_PROMPT_TIMEOUT)
            }
            Some(other @ ("http" | "mcp_tool" | "agent")) => {
                problem(format!("`{other}` hooks are not supported by Larik; this hook is ignored"));
                return Ok(None);
            }
            Some(other) => {
                problem(format!("hook type `{other}` is unknown; this hook is ignored"));
                return Ok(None);
            }
            None => return Err(format!("{place}: `type` must be a string such as \"command\"")),
        };
        if handler.get("if").is_some_and(|condition| !condition.is_null()) {
            problem("the `if` condition is not supported; the hook runs for every event its matcher accepts".into());
        }
        if ["async", "asyncRewake"].iter().any(|field| handler.get(*field) == Some(&Value::Bool(true))) {
            problem("`async` is not supported; the hook runs to completion before the session goes on".into());
        }
        let timeout = match handler.get("timeout") {
            None | Some(Value::Null) => default_timeout,
            Some(Value::Number(seconds)) => seconds
                .as_f64()
                .filter(|seconds| *seconds > 0.0)
                .and_then(|seconds| Duration::try_from_secs_f64(seconds).ok())
                .ok_or_else(|| format!("{place}: `timeout` must be a positive number of seconds"))?,
            Some(_) => return Err(format!("{place}: `timeout` must be a number of seconds")),
        };
        Ok(Some((kind, timeout)))
    }

    /// What the user should hear about these definitions: parts Larik does not run.
    pub fn problems(&self) -> &[String] {
        &self.problems
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Handlers of `event` whose matcher accepts any of `targets` (for tool events both Larik's
    /// and Claude Code's tool name, e.g. `["bash", "Bash"]`; for SessionStart the source; for
    /// PreCompact the trigger; for Notification the type). Events without matchers
    /// (UserPromptSubmit, Stop) run every handler. Identical handlers from different files
    /// appear once, the first read kept.
    /// Whether any handler listens to `event`, whatever its matcher.
    pub fn listens(&self, event: HookEvent) -> bool {
        self.entries.iter().any(|entry| entry.handler.event == event)
    }

    pub fn matching(&self, event: HookEvent, targets: &[&str]) -> Vec<HookHandler> {
        let mut chosen: Vec<HookHandler> = Vec::new();
        for entry in self.entries.iter().filter(|entry| entry.handler.event == event) {
            if !event.ignores_matcher() && !entry.matcher.accepts_any(targets) {
                continue;
            }
            if !chosen.iter().any(|handler| handler.same_action(&entry.handler)) {
                chosen.push(entry.handler.clone());
            }
        }
        chosen
    }

    pub fn project_handlers(&self) -> Vec<HookHandler> {
        self.entries
            .iter()
            .filter(|entry| entry.handler.scope == Scope::Project)
            .map(|entry| entry.handler.clone())
            .collect()
    }

    /// A SHA-256 (hex) of every project handler's definition, `None` when there are none. It
    /// pins the user's approval: any change to what would run gives another fingerprint. It does
    /// not depend on the order of definitions or on which project file holds them, since neither
    /// changes what runs.
    pub fn project_fingerprint(&self) -> Option<String> {
        let mut definitions: Vec<String> = self
            .entries
            .iter()
            .filter(|entry| entry.handler.scope == Scope::Project)
            .map(|entry| canonical(&entry.handler))
            .collect();
        if definitions.is_empty() {
            return None;
        }
        definitions.sort();
        definitions.dedup();
        let text = format!("larik-hooks-v1\n{}", definitions.join("\n"));
        let digest = ring::digest::digest(&ring::digest::SHA256, text.as_bytes());
        Some(digest.as_ref().iter().map(|byte| format!("{byte:02x}")).collect())
    }

    /// The same set without project handlers, for a project whose hooks are not approved.
    pub fn user_only(&self) -> Hooks {
        Hooks {
            entries: self.entries.iter().filter(|entry| entry.handler.scope == Scope::User).cloned().collect(),
            problems: self.problems.clone(),
        }
    }
}

/// One line per definition; JSON escaping keeps the fields apart whatever they contain.
fn canonical(handler: &HookHandler) -> String {
    let (kind, text, model) = match &handler.kind {
        HandlerKind::Command { command } => ("command", command.as_str(), None),
        HandlerKind::Prompt { prompt, model } => ("prompt", prompt.as_str(), model.as_deref()),
    };
    serde_json::json!([
        handler.event.name(),
        handler.matcher,
        kind,
        text,
        model,
        handler.timeout.as_millis().to_string()
    ])
    .to_string()
}

/// Claude Code's exec form (`command` plus `args`, no shell) as one bash command line: every
/// word single-quoted, so the shell passes them through unchanged.
fn exec_form(command: &str, args: &[Value]) -> Option<String> {
    let quote = |word: &str| format!("'{}'", word.replace('\'', r"'\''"));
    let mut line = quote(command);
    for arg in args {
        line.push(' ');
        line.push_str(&quote(arg.as_str()?));
    }
    Some(line)
}

#[cfg(test)]
#[path = "definition_tests.rs"]
mod tests;
