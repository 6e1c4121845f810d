//! Where the user's own files are: Larik's config and data directories (XDG first, then the
//! home directory) and the instruction files every session reads. The environment is passed in
//! as a map, so tests never change the process's.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// The user's own instructions, read into every session's prompt.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UserInstructions {
    /// Claude Code's `~/.claude/CLAUDE.md` and Larik's `~/.config/larik/AGENTS.md`, when they
    /// exist (`~/.claude/rules/` is found under `home`).
    pub files: Vec<PathBuf>,
    /// The home directory, for `~/` in imports and the user's rules.
    pub home: Option<PathBuf>,
    /// What the user's settings ask the agent to end its commit messages and pull request
    /// descriptions with (Claude Code's `attribution`).
    pub attribution: Attribution,
    /// Globs of memory files never to read (Claude Code's `claudeMdExcludes`, from the user's
    /// own settings), matched against their absolute paths.
    pub claude_md_excludes: Vec<String>,
}

/// `attribution.commit` and `attribution.pr`: text the agent ends a commit message or a pull
/// request description with; `None` adds nothing (Larik adds no attribution of its own).
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Deserialize, schemars::JsonSchema)]
#[serde(default)]
pub struct Attribution {
    pub commit: Option<String>,
    pub pr: Option<String>,
}

/// The user's own instructions as the environment places them.
pub fn user_instructions(env: &HashMap<String, String>) -> UserInstructions {
    let home = env.get("HOME").filter(|home| !home.is_empty()).map(PathBuf::from);
    let claude = home.as_ref().map(|home| home.join(".claude").join("CLAUDE.md"));
    let larik = user_config_dir(env).map(|dir| dir.join("AGENTS.md"));
    UserInstructions { files: claude.into_iter().chain(larik).collect(), home, ..UserInstructions::default() }
}

/// The user's config directory for Larik (`$XDG_CONFIG_HOME/larik` or `~/.config/larik`).
pub fn user_config_dir(env: &HashMap<String, String>) -> Option<PathBuf> {
    if let Some(xdg) = env.get("XDG_CONFIG_HOME").filter(|dir| !dir.is_empty()) {
        return Some(PathBuf::from(xdg).join("larik"));
    }
    env.get("HOME").map(|home| PathBuf::from(home).join(".config").join("larik"))
}

/// The user's data directory for Larik (`$XDG_DATA_HOME/larik` or `~/.local/share/larik`):
/// sessions, MCP logins.
pub fn user_data_dir(env: &HashMap<String, String>) -> Option<PathBuf> {
    if let Some(xdg) = env.get("XDG_DATA_HOME").filter(|dir| !dir.is_empty()) {
        return Some(PathBuf::from(xdg).join("larik"));
    }
    env.get("HOME").map(|home| PathBuf::from(home).join(".local").join("share").join("larik"))
}

/// The private settings file for a project: `<config>/projects/<path with / as ->/settings.json`.
pub fn private_settings_path(config_dir: &Path, project: &Path) -> PathBuf {
    let name: String =
        project.display().to_string().trim_start_matches('/').chars().map(|c| if c == '/' { '-' } else { c }).collect();
    config_dir.join("projects").join(name).join("settings.json")
}
