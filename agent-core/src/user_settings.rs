//! The user's own settings file as `larik config` and `/config` read and change it: the keys
//! they know, each value checked before anything is written, the rest of the file kept as it was
//! (other keys and their order), and the file replaced atomically. Only the user's file is
//! changed: a project's settings are the project's.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use crate::config;
use crate::permission::Mode;

/// A setting `larik config` knows: the name users type, where it lives in the file, and what
/// it accepts.
pub struct Key {
    pub name: &'static str,
    /// The JSON path in the settings file, e.g. `["sandbox", "network"]`.
    path: &'static [&'static str],
    kind: Kind,
    pub about: &'static str,
}

enum Kind {
    Text,
    Bool,
    /// One of these words (stored as written here).
    OneOf(&'static [&'static str]),
    Mode,
}

/// Every key, in the order `larik config get` lists them.
pub const KEYS: &[Key] = &[
    Key {
        name: "model",
        path: &["model"],
        kind: Kind::Text,
        about: "the model new sessions use (`claude-sonnet-4-5`, `openai:gpt-4.1`)",
    },
    Key {
        name: "provider",
        path: &["provider"],
        kind: Kind::OneOf(&["anthropic", "openai"]),
        about: "anthropic or openai (an OpenAI-compatible server)",
    },
    Key {
        name: "mode",
        path: &["permissions", "defaultMode"],
        kind: Kind::Mode,
        about: "the mode sessions start in: default, accept-edits, plan or yolo",
    },
    Key {
        name: "thoughtLevel",
        path: &["thoughtLevel"],
        kind: Kind::OneOf(&["off", "low", "medium", "high"]),
        about: "how hard the model thinks: off, low, medium or high",
    },
    Key {
        name: "tokenSaver",
        path: &["tokenSaver"],
        kind: Kind::Bool,
        about: "true filters known successful commands' output before the model sees it",
    },
    Key {
        name: "sandbox.network",
        path: &["sandbox", "network"],
        kind: Kind::Bool,
        about: "true lets sandboxed commands use the network directly; false gives them the proxy, which asks per domain",
    },
];

/// Why a setting was not read or written, in words for the user.
#[derive(Debug, thiserror::Error)]
pub enum ConfigEditError {
    #[error("`{0}` is not a setting `larik config` knows; it knows {known}", known = known_names())]
    UnknownKey(String),
    #[error("{key}: `{value}` is not {expected}")]
    BadValue { key: &'static str, value: String, expected: String },
    #[error("no home directory: set HOME or XDG_CONFIG_HOME")]
    NoConfigDir,
    #[error("{path}: {message}")]
    File { path: PathBuf, message: String },
}

fn known_names() -> String {
    KEYS.iter().map(|key| key.name).collect::<Vec<_>>().join(", ")
}

pub fn key(name: &str) -> Result<&'static Key, ConfigEditError> {
    KEYS.iter()
        .find(|key| key.name.eq_ignore_ascii_case(name))
        .ok_or_else(|| ConfigEditError::UnknownKey(name.to_owned()))
}

impl Key {
    /// The value as stored, from what the user typed.
    fn parse(&self, typed: &str) -> Result<Value, ConfigEditError> {
        let typed = typed.trim();
        let bad = |expected: String| ConfigEditError::BadValue { key: self.name, value: typed.to_owned(), expected };
        match &self.kind {
            Kind::Text if typed.is_empty() => Err(bad("a name".into())),
            Kind::Text => Ok(Value::String(typed.to_owned())),
            Kind::Bool => match typed.to_ascii_lowercase().as_str() {
                "true" | "on" | "yes" => Ok(Value::Bool(true)),
                "false" | "off" | "no" => Ok(Value::Bool(false)),
                _ => Err(bad("true or false".into())),
            },
            Kind::OneOf(words) => words
                .iter()
                .find(|word| word.eq_ignore_ascii_case(typed))
                .map(|word| Value::String((*word).to_owned()))
                .ok_or_else(|| bad(format!("one of {}", words.join(", ")))),
            // Stored in Claude Code's spelling, which both read.
            Kind::Mode => Mode::from_setting(typed)
                .map(|mode| Value::String(mode.setting_name().to_owned()))
                .ok_or_else(|| bad("one of default, accept-edits, plan, yolo".into())),
        }
    }

    fn read<'a>(&self, settings: &'a Value) -> Option<&'a Value> {
        self.path.iter().try_fold(settings, |value, part| value.get(part))
    }
}

/// The user's settings file (`~/.config/larik/settings.json`), through a symlink to where it
/// really is (a dotfiles checkout), so a write replaces the file and not the link.
pub fn settings_path(env: &HashMap<String, String>) -> Result<PathBuf, ConfigEditError> {
    let path = config::user_config_dir(env).ok_or(ConfigEditError::NoConfigDir)?.join("settings.json");
    Ok(std::fs::canonicalize(&path).unwrap_or(path))
}

fn read_file(path: &Path) -> Result<Value, ConfigEditError> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(Value::Object(Map::new())),
        Err(error) => return Err(ConfigEditError::File { path: path.to_path_buf(), message: error.to_string() }),
    };
    // A malformed file is never overwritten: what the user wrote there would be lost.
    let value: Value = serde_json::from_str(&text).map_err(|error| ConfigEditError::File {
        path: path.to_path_buf(),
        message: format!("{error}; fix it by hand, nothing was changed"),
    })?;
    if value.is_object() {
        Ok(value)
    } else {
        Err(ConfigEditError::File {
            path: path.to_path_buf(),
            message: "is not a JSON object; nothing was changed".into(),
        })
    }
}

/// The value of `name` in the user's file (`None` when unset), as JSON text.
pub fn get(name: &str, env: &HashMap<String, String>) -> Result<Option<String>, ConfigEditError> {
    let key = key(name)?;
    let settings = read_file(&settings_path(env)?)?;
    Ok(key.read(&settings).map(Value::to_string))
}

/// Every known key with its value in the user's file, for listing.
pub fn all(env: &HashMap<String, String>) -> Result<Vec<(&'static Key, Option<String>)>, ConfigEditError> {
    let settings = read_file(&settings_path(env)?)?;
    Ok(KEYS.iter().map(|key| (key, key.read(&settings).map(Value::to_string))).collect())
}

/// Sets `name` to `typed` (checked first) in the user's file; returns the stored value.
pub fn set(name: &str, typed: &str, env: &HashMap<String, String>) -> Result<String, ConfigEditError> {
    let key = key(name)?;
    let value = key.parse(typed)?;
    let stored = value.to_string();
    edit(key, env, |parent, leaf| {
        parent.insert(leaf.to_owned(), value);
    })?;
    Ok(stored)
}

/// Removes `name` from the user's file; nothing happens when it was not set.
pub fn unset(name: &str, env: &HashMap<String, String>) -> Result<(), ConfigEditError> {
    let key = key(name)?;
    edit(key, env, |parent, leaf| {
        parent.remove(leaf);
    })
}

/// Sets the value at `path` (`["enabledPlugins", "fmt@tools"]`) in the user's file, for what
/// `larik config` has no key of its own for; parts of the path that are missing are made.
pub fn set_value(path: &[&str], value: Value, env: &HashMap<String, String>) -> Result<(), ConfigEditError> {
    edit_at(path, env, |parent, leaf| {
        parent.insert(leaf.to_owned(), value);
    })
}

fn edit(
    key: &Key,
    env: &HashMap<String, String>,
    change: impl FnOnce(&mut Map<String, Value>, &str),
) -> Result<(), ConfigEditError> {
    edit_at(key.path, env, change)
}

fn edit_at(
    key_path: &[&str],
    env: &HashMap<String, String>,
    change: impl FnOnce(&mut Map<String, Value>, &str),
) -> Result<(), ConfigEditError> {
    let path = settings_path(env)?;
    let mut settings = read_file(&path)?;
    let (leaf, parents) = key_path.split_last().ok_or_else(|| ConfigEditError::UnknownKey(key_path.join(".")))?;
    let mut object = settings
        .as_object_mut()
        .ok_or_else(|| ConfigEditError::File { path: path.clone(), message: "is not a JSON object".into() })?;
    for part in parents {
        let entry = object.entry((*part).to_owned()).or_insert_with(|| Value::Object(Map::new()));
        if !entry.is_object() {
            return Err(ConfigEditError::File {
                path: path.clone(),
                message: format!("`{part}` is not an object; nothing was changed"),
            });
        }
        object = entry.as_object_mut().ok_or_else(|| ConfigEditError::File {
            path: path.clone(),
            message: format!("`{part}` is not an object"),
        })?;
    }
    change(object, leaf);
    let mut text = serde_json::to_string_pretty(&settings)
        .map_err(|error| ConfigEditError::File { path: path.clone(), message: error.to_string() })?;
    text.push('\n');
    crate::workspace::write_file_atomic(&path, text.as_bytes())
        .map_err(|error| ConfigEditError::File { path: path.clone(), message: error.to_string() })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(home: &Path) -> HashMap<String, String> {
        HashMap::from([("XDG_CONFIG_HOME".to_owned(), home.display().to_string())])
    }

    #[test]
    fn a_set_keeps_the_other_keys_and_their_order_and_checks_the_value_first() {
        let home = tempfile::tempdir().unwrap();
        let file = home.path().join("larik/settings.json");
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(&file, r#"{"zed": 1, "permissions": {"allow": ["Bash(ls*)"]}, "model": "old"}"#).unwrap();
        let env = env(home.path());
        assert_eq!(set("model", "claude-opus-4-1", &env).unwrap(), "\"claude-opus-4-1\"");
        assert_eq!(set("mode", "accept-edits", &env).unwrap(), "\"acceptEdits\"");
        assert_eq!(set("sandbox.network", "on", &env).unwrap(), "true");
        let written: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
        assert_eq!(written["permissions"], serde_json::json!({"allow": ["Bash(ls*)"], "defaultMode": "acceptEdits"}));
        let keys: Vec<&String> = written.as_object().unwrap().keys().collect();
        assert_eq!(keys, ["zed", "permissions", "model", "sandbox"]);
        // The agent reads what was written.
        let settings = config::load_settings(home.path(), &env).unwrap();
        assert_eq!(settings.model.as_deref(), Some("claude-opus-4-1"));
        assert!(settings.sandbox.unwrap().network.full);
        let before = std::fs::read_to_string(&file).unwrap();
        assert!(matches!(set("mode", "turbo", &env), Err(ConfigEditError::BadValue { .. })));
        assert!(matches!(set("tokenSaver", "maybe", &env), Err(ConfigEditError::BadValue { .. })));
        assert!(matches!(set("apiKey", "sk-x", &env), Err(ConfigEditError::UnknownKey(_))));
        assert_eq!(std::fs::read_to_string(&file).unwrap(), before, "a refused value changes nothing");
        unset("model", &env).unwrap();
        assert_eq!(get("model", &env).unwrap(), None);
        assert_eq!(get("mode", &env).unwrap().as_deref(), Some("\"acceptEdits\""));
    }

    #[test]
    fn a_malformed_file_is_never_overwritten_and_a_symlinked_one_stays_a_symlink() {
        let home = tempfile::tempdir().unwrap();
        let dotfiles = tempfile::tempdir().unwrap();
        let env = env(home.path());
        std::fs::create_dir_all(home.path().join("larik")).unwrap();
        let target = dotfiles.path().join("larik.json");
        std::fs::write(&target, "{\"model\": \"a\",}").unwrap();
        std::os::unix::fs::symlink(&target, home.path().join("larik/settings.json")).unwrap();
        assert!(matches!(set("model", "b", &env), Err(ConfigEditError::File { .. })));
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "{\"model\": \"a\",}");
        std::fs::write(&target, "{\"model\": \"a\"}").unwrap();
        set("tokenSaver", "true", &env).unwrap();
        assert!(home.path().join("larik/settings.json").symlink_metadata().unwrap().file_type().is_symlink());
        assert_eq!(get("tokenSaver", &env).unwrap().as_deref(), Some("true"));
        assert_eq!(get("model", &env).unwrap().as_deref(), Some("\"a\""));
    }
}
