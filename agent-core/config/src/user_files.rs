//! What the user's own files say that is read apart from the merged settings: before the
//! process starts threads (`env`), at startup (`cleanupPeriodDays`), or by a mechanism's own
//! loader (the `.mcp.json` servers they approve). The files are Claude Code's
//! `~/.claude/settings.json`, then Larik's own (which wins where both set a key); a project's
//! files never count here.

use std::collections::HashMap;
use std::path::PathBuf;

use serde_json::Value;

use super::{SettingsFiles, claude_code, managed, user_config_dir, users_claude_settings};

/// The user's own settings files, Claude Code's first.
pub(crate) fn paths(env: &HashMap<String, String>) -> Vec<PathBuf> {
    users_claude_settings(env).into_iter().chain(user_config_dir(env).map(|dir| dir.join("settings.json"))).collect()
}

/// The user's instruction files, the memory files their settings leave out (`claudeMdExcludes`)
/// and the attribution their settings ask for: `attribution`
/// (`commit`, `pr`; Larik's file wins per field), where `includeCoAuthoredBy: false` is what
/// Larik does anyway.
pub fn user_instructions(env: &HashMap<String, String>) -> larik_settings::paths::UserInstructions {
    let mut instructions = larik_settings::paths::user_instructions(env);
    for path in paths(env) {
        let Ok(text) = std::fs::read_to_string(&path) else { continue };
        let Ok(Value::Object(keys)) = serde_json::from_str::<Value>(&text) else { continue };
        if let Some(Value::Array(globs)) = keys.get("claudeMdExcludes") {
            instructions.claude_md_excludes.extend(globs.iter().filter_map(Value::as_str).map(str::to_owned));
        }
        let Some(attribution) = keys.get("attribution") else { continue };
        let Ok(attribution) = serde_json::from_value::<larik_settings::paths::Attribution>(attribution.clone()) else {
            continue;
        };
        let current = &mut instructions.attribution;
        current.commit = attribution.commit.or(current.commit.take());
        current.pr = attribution.pr.or(current.pr.take());
    }
    instructions
}

/// `cleanupPeriodDays`: sessions not written to for this many days are removed at startup. The
/// managed policy's wins; a value below 1 is passed over (loading the settings reports it).
pub fn cleanup_period_days(env: &HashMap<String, String>) -> Option<u32> {
    let mut days = None;
    let files = SettingsFiles::default();
    for path in paths(env).into_iter().chain(managed::files(&files, env)) {
        let Some(text) = files.text(&path) else { continue };
        let Ok(Value::Object(keys)) = serde_json::from_str::<Value>(&text) else { continue };
        if let Some(value) = keys.get("cleanupPeriodDays").and_then(Value::as_u64) {
            days = u32::try_from(value).ok().filter(|days| *days >= 1).or(days);
        }
    }
    days
}

/// The project's `.mcp.json` servers the user approved in their own settings, for every
/// project: `enableAllProjectMcpServers` (all of them) or `enabledMcpjsonServers` (by name), in
/// `~/.claude/settings.json` or Larik's own file. A project's files cannot approve its servers.
pub fn approved_mcpjson_servers(files: &SettingsFiles, env: &HashMap<String, String>) -> McpjsonApproval {
    let (names, all) = claude_code::listed(files, &paths(env), "enabledMcpjsonServers", "enableAllProjectMcpServers");
    McpjsonApproval { all, names }
}

/// Which of a project's `.mcp.json` servers the user's own settings approved.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct McpjsonApproval {
    pub all: bool,
    pub names: Vec<String>,
}

impl McpjsonApproval {
    pub fn approves(&self, name: &str) -> bool {
        self.all || self.names.iter().any(|approved| approved == name)
    }
}

/// The user's `env` settings: Claude Code's `~/.claude/settings.json`, then Larik's own file
/// (which wins for a name both set). A project's files never set the environment: a variable
/// can name a server that receives the user's data. Values that are not strings, numbers or
/// booleans, and files that do not parse, are passed over (loading the settings reports them).
pub fn user_env(env: &HashMap<String, String>) -> Vec<(String, String)> {
    let mut merged = std::collections::BTreeMap::new();
    for path in paths(env) {
        let Ok(text) = std::fs::read_to_string(&path) else { continue };
        let Ok(serde_json::Value::Object(keys)) = serde_json::from_str::<serde_json::Value>(&text) else { continue };
        let Some(serde_json::Value::Object(vars)) = keys.get("env") else { continue };
        for (name, value) in vars {
            let value = match value {
                serde_json::Value::String(text) => text.clone(),
                serde_json::Value::Number(number) => number.to_string(),
                serde_json::Value::Bool(flag) => flag.to_string(),
                _ => continue,
            };
            merged.insert(name.clone(), value);
        }
    }
    merged.into_iter().collect()
}
