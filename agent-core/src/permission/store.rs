//! The project's private settings, under the user's config directory (never in the project,
//! where they could be committed): "always allow" rules and the fingerprint of the project
//! settings (hooks, allow rules) the user approved. One JSON file per project, readable by the user only (0600).

use std::path::{Path, PathBuf};

/// Why a choice the user made for the project was not saved; what they chose still holds for
/// this session, and the user hears why it will not outlive it.
#[derive(Debug, thiserror::Error)]
pub enum NotSaved {
    #[error("`{0}` is not a rule")]
    NotARule(String),
    #[error("no user config directory to save it in")]
    NowhereToSave,
    #[error(
        "your organisation's managed settings allow only their own rules (allowManagedPermissionRulesOnly); this call was allowed once"
    )]
    ManagedRulesOnly,
    #[error("could not save to {}: {reason}", .path.display())]
    Write { path: PathBuf, reason: String },
}

pub fn add_allow_rule(path: &Path, rule: &str) -> Result<(), NotSaved> {
    update(path, |settings| {
        let allow = settings
            .entry("permissions")
            .or_insert_with(|| serde_json::json!({}))
            .as_object_mut()
            .ok_or("`permissions` is not an object")?
            .entry("allow")
            .or_insert_with(|| serde_json::json!([]));
        let list = allow.as_array_mut().ok_or("`permissions.allow` is not a list")?;
        if !list.iter().any(|existing| existing == rule) {
            list.push(serde_json::Value::String(rule.to_owned()));
        }
        Ok(())
    })
}

/// The fingerprint of the project settings (hooks, allow rules) the user approved, if any.
pub fn approved_project(path: &Path) -> Option<String> {
    let text = std::fs::read_to_string(path).ok()?;
    let settings: serde_json::Value = serde_json::from_str(&text).ok()?;
    settings.get("approvedProjectSettings")?.as_str().map(str::to_owned)
}

/// Pins the user's approval of the project's settings to their fingerprint.
pub fn approve_project(path: &Path, fingerprint: &str) -> Result<(), NotSaved> {
    update(path, |settings| {
        settings.insert("approvedProjectSettings".into(), serde_json::Value::String(fingerprint.to_owned()));
        Ok(())
    })
}

/// Reads the file (an absent one is empty), lets `edit` change it, and writes it back atomically
/// with mode 0600 in a 0700 directory.
fn update(
    path: &Path,
    edit: impl FnOnce(&mut serde_json::Map<String, serde_json::Value>) -> Result<(), &'static str>,
) -> Result<(), NotSaved> {
    let fail = |error: &dyn std::fmt::Display| NotSaved::Write { path: path.to_path_buf(), reason: error.to_string() };
    let mut settings: serde_json::Value = match std::fs::read_to_string(path) {
        Ok(text) => serde_json::from_str(&text).map_err(|error| fail(&error))?,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => serde_json::json!({}),
        Err(error) => return Err(fail(&error)),
    };
    let object = settings.as_object_mut().ok_or_else(|| fail(&"the file is not a JSON object"))?;
    edit(object).map_err(|problem| fail(&problem))?;
    let text = serde_json::to_string_pretty(&settings).map_err(|error| fail(&error))?;
    crate::workspace::write_private_file(path, text.as_bytes()).map_err(|error| fail(&error))
}
