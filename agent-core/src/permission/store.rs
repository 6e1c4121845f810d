//! The project's private settings, under the user's config directory (never in the project,
//! where they could be committed): "always allow" rules and the fingerprint of the project
//! settings (hooks, allow rules) the user approved. One JSON file per project, readable by the user only (0600).

use std::path::Path;

pub fn add_allow_rule(path: &Path, rule: &str) -> Result<(), String> {
    update(path, |settings, fail| {
        let allow = settings
            .entry("permissions")
            .or_insert_with(|| serde_json::json!({}))
            .as_object_mut()
            .ok_or_else(|| fail("`permissions` is not an object"))?
            .entry("allow")
            .or_insert_with(|| serde_json::json!([]));
        let list = allow.as_array_mut().ok_or_else(|| fail("`permissions.allow` is not a list"))?;
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
pub fn approve_project(path: &Path, fingerprint: &str) -> Result<(), String> {
    update(path, |settings, _| {
        settings.insert("approvedProjectSettings".into(), serde_json::Value::String(fingerprint.to_owned()));
        Ok(())
    })
}

/// Reads the file (an absent one is empty), lets `edit` change it, and writes it back atomically
/// with mode 0600 in a 0700 directory.
fn update(
    path: &Path,
    edit: impl FnOnce(&mut serde_json::Map<String, serde_json::Value>, &dyn Fn(&str) -> String) -> Result<(), String>,
) -> Result<(), String> {
    let fail = |error: &dyn std::fmt::Display| format!("could not save to {}: {error}", path.display());
    let mut settings: serde_json::Value = match std::fs::read_to_string(path) {
        Ok(text) => serde_json::from_str(&text).map_err(|error| fail(&error))?,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => serde_json::json!({}),
        Err(error) => return Err(fail(&error)),
    };
    let object = settings.as_object_mut().ok_or_else(|| fail(&"the file is not a JSON object"))?;
    edit(object, &|problem: &str| fail(&problem))?;
    let text = serde_json::to_string_pretty(&settings).map_err(|error| fail(&error))?;
    crate::workspace::write_private_file(path, text.as_bytes()).map_err(|error| fail(&error))
}
