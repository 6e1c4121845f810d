//! Claude Code's own settings files, read as far as Larik honours them: the user's
//! `~/.claude/settings.json`, trusted like Larik's own user file, and a project's
//! `.claude/settings*.json`, a repository's, which may only narrow (its allow rules and hooks
//! wait for the user's approval). Permission rules and hooks are read by their own loaders from
//! every settings file; this module maps the sandbox keys Larik honours and reports every key it
//! does not honour, so a policy the user believes holds is never silently dropped.
//! `protocol-spec/spec/settings.md` gives each key's row.

use std::path::Path;

use larik_settings::{SandboxSettings, Settings};
use serde_json::{Map, Value};

/// What Larik honours of the user's own Claude Code settings, as dotted keys: the rows of
/// `protocol-spec/spec/settings.md` marked "honoured" or "mapped", checked by a test.
pub(crate) const HONOURED_FROM_USER: &[&str] = &[
    "$schema",
    "apiKeyHelper",
    "attribution.commit",
    "attribution.pr",
    "claudeMdExcludes",
    "cleanupPeriodDays",
    "disabledMcpjsonServers",
    "enableAllProjectMcpServers",
    "enabledMcpjsonServers",
    "enabledPlugins",
    "env",
    "hooks",
    "includeCoAuthoredBy",
    "model",
    "disableAllHooks",
    "permissions.allow",
    "permissions.additionalDirectories",
    "permissions.ask",
    "permissions.deny",
    "permissions.defaultMode",
    "permissions.disableBypassPermissionsMode",
    "sandbox.enabled",
    "sandbox.autoAllowBashIfSandboxed",
    "sandbox.allowUnsandboxedCommands",
    "sandbox.excludedCommands",
    "sandbox.failIfUnavailable",
    "sandbox.filesystem.allowRead",
    "sandbox.filesystem.allowWrite",
    "sandbox.filesystem.denyRead",
    "sandbox.filesystem.denyWrite",
    "sandbox.network.allowAllUnixSockets",
    "sandbox.network.allowLocalBinding",
    "sandbox.network.allowUnixSockets",
    "sandbox.network.allowedDomains",
    "sandbox.network.deniedDomains",
];

/// What of the user's honoured keys a project's Claude Code settings may not set: the rest only
/// narrows, or waits for the user's approval (allow rules, hooks).
const USER_ONLY: &[&str] = &[
    "apiKeyHelper",
    "attribution.commit",
    "attribution.pr",
    "claudeMdExcludes",
    "cleanupPeriodDays",
    "enableAllProjectMcpServers",
    "enabledMcpjsonServers",
    "env",
    "permissions.additionalDirectories",
    "sandbox.enabled",
    "sandbox.excludedCommands",
    "sandbox.filesystem.allowRead",
    "sandbox.filesystem.allowWrite",
    "sandbox.network.allowAllUnixSockets",
    "sandbox.network.allowLocalBinding",
    "sandbox.network.allowUnixSockets",
];

/// Keys about Claude Code's own terminal: the editor draws Larik's, so they are not reported.
/// The rows of `protocol-spec/spec/settings.md` marked "not applicable", checked by a test.
pub(crate) const NOT_APPLICABLE: &[&str] = &[
    "autoScrollEnabled",
    "awaySummaryEnabled",
    "axScreenReader",
    "editorMode",
    "emojiCompletionEnabled",
    "feedbackSurveyRate",
    "fileSuggestion",
    "footerLinksRegexes",
    "prUrlTemplate",
    "preferredNotifChannel",
    "prefersReducedMotion",
    "promptSuggestionEnabled",
    "respectGitignore",
    "respondToBashCommands",
    "showClearContextOnPlanAccept",
    "showThinkingSummaries",
    "showTurnDuration",
    "spinnerTipsEnabled",
    "spinnerTipsOverride",
    "spinnerVerbs",
    "statusLine",
    "subagentStatusLine",
    "syntaxHighlightingDisabled",
    "teammateMode",
    "terminalProgressBarEnabled",
    "theme",
    "tui",
    "verbose",
    "viewMode",
    "vimInsertModeRemaps",
    "voice",
    "voiceEnabled",
    "wheelScrollAccelerationEnabled",
];

/// The user's own `~/.claude/settings.json` applied under Larik's own user file: its sandbox
/// keys count where Larik's file says nothing, and `autoAllowBashIfSandboxed: false` always
/// counts, being the stricter choice. Keys Larik does not honour are reported.
pub(super) fn apply_user_file(settings: &mut Settings, path: &Path, text: &str) {
    let Some(keys) = parse(path, text, &mut settings.problems) else { return };
    let sandbox = settings.sandbox.get_or_insert_with(SandboxSettings::default);
    if let Some(enabled) = keys.get("sandbox").and_then(|sandbox| sandbox.get("enabled")).and_then(Value::as_bool) {
        sandbox.enabled = sandbox.enabled.or(Some(enabled));
    }
    narrow_sandbox(sandbox, &keys);
    widen_sandbox(sandbox, &keys);
    if let Some(model) = model_of(path, &keys, &mut settings.problems) {
        settings.model = settings.model.take().or(Some(model));
    }
    if let Some(helper) = keys.get("apiKeyHelper").and_then(Value::as_str) {
        settings.api_key_helper = settings.api_key_helper.take().or_else(|| Some(helper.to_owned()));
    }
    report(path, &keys, HONOURED_FROM_USER, "", &mut settings.problems);
}

/// A project's `.claude/settings*.json`: only `autoAllowBashIfSandboxed: false` applies here
/// (rules and hooks have their own loaders); the rest is reported.
pub(super) fn apply_project_file(settings: &mut Settings, path: &Path, text: &str) {
    let Some(keys) = parse(path, text, &mut settings.problems) else { return };
    narrow_sandbox(settings.sandbox.get_or_insert_with(SandboxSettings::default), &keys);
    // Domains the repository's commands would reach without asking: once the user approves.
    let mut reachable = SandboxSettings::default();
    widen_sandbox(&mut reachable, &keys);
    settings.project_choices.allowed_domains.extend(reachable.network.allowed_domains);
    // Chosen by the repository: it applies once the user approves the project, as its own
    // settings' model does (Larik's `.larik/settings.json` first).
    if let Some(model) = model_of(path, &keys, &mut settings.problems) {
        let choices = &mut settings.project_choices;
        choices.model = choices.model.take().or(Some(model));
    }
    let honoured: Vec<&str> = HONOURED_FROM_USER.iter().copied().filter(|key| !USER_ONLY.contains(key)).collect();
    report(
        path,
        &keys,
        &honoured,
        " (a project's file may only narrow; its allow rules and hooks apply once you approve the project)",
        &mut settings.problems,
    );
}

/// Every name the `key` lists (`disabledMcpjsonServers`, `enabledMcpjsonServers`) in `files`,
/// and whether any sets `flag` (`enableAllProjectMcpServers`) to true. Files that do not parse
/// name none here; loading the settings reports them.
pub fn listed(
    snapshot: &crate::SettingsFiles,
    files: &[std::path::PathBuf],
    key: &str,
    flag: &str,
) -> (Vec<String>, bool) {
    let mut names = Vec::new();
    let mut set = false;
    for path in files {
        let Some(text) = snapshot.text(path) else { continue };
        let Ok(Value::Object(keys)) = serde_json::from_str::<Value>(&text) else { continue };
        if let Some(Value::Array(listed)) = keys.get(key) {
            names.extend(listed.iter().filter_map(Value::as_str).map(str::to_owned));
        }
        set |= keys.get(flag).and_then(Value::as_bool) == Some(true);
    }
    (names, set)
}

/// The file's `model`, when it names one. Claude Code's aliases (`sonnet`, `opus`, `opusplan`,
/// `default`) name whatever Claude Code's release maps them to, so Larik does not guess: such a
/// value is reported, and the model stays as the other settings choose.
fn model_of(path: &Path, keys: &Map<String, Value>, problems: &mut Vec<String>) -> Option<String> {
    let model = keys.get("model")?.as_str()?.trim();
    if model.contains('-') || model.contains(':') {
        return Some(model.to_owned());
    }
    problems.push(format!(
        "{}: `model: {model}` is a Claude Code alias Larik does not resolve; write the model's full name (claude-sonnet-4-5) to choose it",
        path.display()
    ));
    None
}

/// What widens the sandbox's reach, read from the user's and the managed policy's files only:
/// `excludedCommands`, `filesystem.allowWrite`, `filesystem.allowRead`, and the network's
/// `allowedDomains`, `allowUnixSockets`, `allowAllUnixSockets`, `allowLocalBinding`.
pub(crate) fn widen_sandbox(sandbox: &mut SandboxSettings, keys: &Map<String, Value>) {
    let list = |path: &[&str]| -> Vec<String> {
        let value = path.iter().try_fold(keys.get("sandbox"), |value, key| Some(value?.get(key)));
        let items = value.flatten().and_then(Value::as_array).cloned().unwrap_or_default();
        items.iter().filter_map(Value::as_str).map(str::to_owned).collect()
    };
    sandbox.excluded_commands.extend(list(&["excludedCommands"]));
    sandbox.filesystem.allow_write.extend(list(&["filesystem", "allowWrite"]));
    sandbox.filesystem.allow_read.extend(list(&["filesystem", "allowRead"]));
    sandbox.network.allowed_domains.extend(list(&["network", "allowedDomains"]));
    sandbox.network.allow_unix_sockets.extend(list(&["network", "allowUnixSockets"]));
    let network = keys.get("sandbox").and_then(|sandbox| sandbox.get("network"));
    let flag = |name: &str| network.and_then(|network| network.get(name)).and_then(Value::as_bool) == Some(true);
    sandbox.network.allow_all_unix_sockets |= flag("allowAllUnixSockets");
    sandbox.network.allow_local_binding |= flag("allowLocalBinding");
}

/// What only narrows the sandbox's reach: `autoAllowBashIfSandboxed: false` (sandboxed commands
/// ask like any other), `allowUnsandboxedCommands: false` (no call runs outside but the excluded
/// commands), `failIfUnavailable: true` (no command runs where the sandbox cannot hold),
/// `filesystem.denyWrite`, `filesystem.denyRead` and `network.deniedDomains`.
pub(crate) fn narrow_sandbox(sandbox: &mut SandboxSettings, keys: &Map<String, Value>) {
    let flag = |name: &str| keys.get("sandbox").and_then(|sandbox| sandbox.get(name)).and_then(Value::as_bool);
    if flag("autoAllowBashIfSandboxed") == Some(false) {
        sandbox.auto_allow_bash_if_sandboxed = Some(false);
    }
    if flag("allowUnsandboxedCommands") == Some(false) {
        sandbox.allow_unsandboxed_commands = Some(false);
    }
    if flag("failIfUnavailable") == Some(true) {
        sandbox.fail_if_unavailable = Some(true);
    }
    let filesystem = keys.get("sandbox").and_then(|sandbox| sandbox.get("filesystem"));
    let list = |name: &str| -> Vec<String> {
        let items = filesystem.and_then(|filesystem| filesystem.get(name)).and_then(Value::as_array);
        items.into_iter().flatten().filter_map(Value::as_str).map(str::to_owned).collect()
    };
    sandbox.filesystem.deny_write.extend(list("denyWrite"));
    sandbox.filesystem.deny_read.extend(list("denyRead"));
    let network = keys.get("sandbox").and_then(|sandbox| sandbox.get("network"));
    let denied = network.and_then(|network| network.get("deniedDomains")).and_then(Value::as_array);
    sandbox.network.denied_domains.extend(denied.into_iter().flatten().filter_map(Value::as_str).map(str::to_owned));
}

/// The file's top-level object; a file that is not one is reported (the permission loader
/// refuses it outright, so no rule is lost quietly).
fn parse(path: &Path, text: &str, problems: &mut Vec<String>) -> Option<Map<String, Value>> {
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(keys)) => Some(keys),
        _ => {
            problems.push(format!("{}: not a JSON object; Larik read nothing from it", path.display()));
            None
        }
    }
}

/// One problem naming every key of the file Larik does not honour, if any.
fn report(path: &Path, keys: &Map<String, Value>, honoured: &[&str], why: &str, problems: &mut Vec<String>) {
    let mut unhonoured = Vec::new();
    unhonoured_keys(keys, "", honoured, &mut unhonoured);
    // `includeCoAuthoredBy: false` asks for what Larik does anyway, no attribution of its own;
    // `true` asks for one Larik does not add.
    if keys.get("includeCoAuthoredBy") == Some(&Value::Bool(true)) {
        unhonoured.push("includeCoAuthoredBy".into());
    }
    unhonoured.sort();
    if unhonoured.is_empty() {
        return;
    }
    let names: Vec<String> = unhonoured.iter().map(|key| format!("`{key}`")).collect();
    let verb = if names.len() == 1 { "is" } else { "are" };
    problems.push(format!("{}: {} {verb} not honoured by Larik{why}", path.display(), names.join(", ")));
}

/// The dotted keys below `prefix` that neither are honoured nor lead to one that is.
pub(super) fn unhonoured_keys(keys: &Map<String, Value>, prefix: &str, honoured: &[&str], out: &mut Vec<String>) {
    for (key, value) in keys {
        let dotted = format!("{prefix}{key}");
        if honoured.contains(&dotted.as_str()) || (prefix.is_empty() && NOT_APPLICABLE.contains(&key.as_str())) {
            continue;
        }
        let below = format!("{dotted}.");
        match value {
            Value::Object(inner) if honoured.iter().any(|known| known.starts_with(&below)) => {
                unhonoured_keys(inner, &below, honoured, out)
            }
            _ => out.push(dotted),
        }
    }
}

#[cfg(test)]
mod tests;
