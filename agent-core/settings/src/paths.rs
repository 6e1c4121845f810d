//! Where the user's own files are: Larik's config and data directories (XDG first, then the
//! home directory) and the instruction files every session reads. The environment is passed in
//! as a map, so tests never change the process's.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// The user's own instruction files, read into every session's prompt when they exist: Claude
/// Code's `~/.claude/CLAUDE.md` and Larik's `~/.config/larik/AGENTS.md`.
pub fn user_instruction_files(env: &HashMap<String, String>) -> Vec<PathBuf> {
    let claude = env.get("HOME").map(|home| Path::new(home).join(".claude").join("CLAUDE.md"));
    let larik = user_config_dir(env).map(|dir| dir.join("AGENTS.md"));
    claude.into_iter().chain(larik).collect()
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
