//! Installing plugins and turning them on and off, for `larik plugin` and `/plugin`. A plugin is
//! installed from a directory or a git repository holding either the plugin itself or a
//! marketplace (`.claude-plugin/marketplace.json`, whose entries name their plugins' folders or
//! git URLs); `name@marketplace` installs from a marketplace added before (Larik's, or one
//! Claude Code knows). The plugin is copied into Larik's data directory
//! (`plugins/cache/<marketplace>/<name>/<version>`, replaced whole) and named in Larik's
//! registry, which has Claude Code's shape.
//!
//! Installing runs nothing the plugin holds: files are copied (a symbolic link only when it
//! leads to a file inside the plugin), repositories are cloned with libgit2, which runs no hook
//! and no filter program. A plugin's hooks and servers run only once the user enabled it
//! ([`set_enabled`] writes `enabledPlugins` in the user's own settings).

mod marketplace;

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::config::SettingsFiles;
use crate::config::plugins::{self as registry, Installed};
use crate::user_settings::ConfigEditError;

/// Why a plugin was not installed, enabled or disabled, in words for the user.
#[derive(Debug, thiserror::Error)]
pub enum PluginError {
    #[error("no home directory: set HOME or XDG_DATA_HOME")]
    NoDataDir,
    #[error("{0}: no such directory, and not a git URL or a plugin@marketplace that is known")]
    NoSource(String),
    #[error("could not clone {url}: {message}")]
    Clone { url: String, message: String },
    #[error(
        "{0} holds neither a plugin (.claude-plugin/plugin.json, or commands/, agents/, skills/, hooks/) nor a marketplace (.claude-plugin/marketplace.json)"
    )]
    NotAPlugin(PathBuf),
    #[error("the marketplace `{marketplace}` has several plugins ({names}): name the one to install")]
    WhichPlugin { marketplace: String, names: String },
    #[error("the marketplace `{marketplace}` has no plugin `{name}`; it has {names}")]
    NoSuchPlugin { marketplace: String, name: String, names: String },
    #[error(
        "plugin `{name}` comes from a `{kind}` source, which Larik does not fetch; clone it and install it from its directory"
    )]
    UnsupportedSource { name: String, kind: String },
    #[error("`{0}` is not installed; `larik plugin list` shows what is")]
    NotInstalled(String),
    #[error(transparent)]
    Settings(#[from] ConfigEditError),
    #[error("{path}: {message}")]
    File { path: PathBuf, message: String },
}

fn file_error(path: &Path) -> impl Fn(std::io::Error) -> PluginError + '_ {
    move |error| PluginError::File { path: path.to_owned(), message: error.to_string() }
}

/// What `larik plugin` and `/plugin` are asked to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PluginAction {
    List,
    /// A directory, git URL or `plugin@marketplace`, and which of a marketplace's plugins.
    Install {
        source: String,
        plugin: Option<String>,
    },
    Enable(String),
    Disable(String),
    /// Not one of the above, as typed: say how it is used.
    Usage(String),
}

impl PluginAction {
    /// `/plugin`'s arguments.
    pub fn parse(argument: &str) -> Self {
        let words: Vec<&str> = argument.split_whitespace().collect();
        match words.as_slice() {
            [] | ["list"] => PluginAction::List,
            ["install", source] => PluginAction::Install { source: (*source).to_owned(), plugin: None },
            ["install", source, plugin] => {
                PluginAction::Install { source: (*source).to_owned(), plugin: Some((*plugin).to_owned()) }
            }
            ["enable", id] => PluginAction::Enable((*id).to_owned()),
            ["disable", id] => PluginAction::Disable((*id).to_owned()),
            _ => PluginAction::Usage(argument.to_owned()),
        }
    }
}

/// What a plugin action did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PluginOutcome {
    Listed(Vec<Installed>),
    Installed(Installed),
    Enabled(String),
    Disabled(String),
    Usage(String),
}

/// Does `action` for the project at `project`.
pub fn run(action: PluginAction, project: &Path, env: &HashMap<String, String>) -> Result<PluginOutcome, PluginError> {
    Ok(match action {
        PluginAction::List => PluginOutcome::Listed(registry::installed(&SettingsFiles::default(), project, env).0),
        PluginAction::Install { source, plugin } => {
            PluginOutcome::Installed(install(&source, plugin.as_deref(), project, env)?)
        }
        PluginAction::Enable(id) => {
            set_enabled(&id, true, project, env)?;
            PluginOutcome::Enabled(id)
        }
        PluginAction::Disable(id) => {
            set_enabled(&id, false, project, env)?;
            PluginOutcome::Disabled(id)
        }
        PluginAction::Usage(typed) => PluginOutcome::Usage(typed),
    })
}

impl std::fmt::Display for PluginOutcome {
    fn fmt(&self, out: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PluginOutcome::Listed(plugins) if plugins.is_empty() => out.write_str(
                "No plugins are installed. Install one with `larik plugin install PATH_OR_GIT_URL [PLUGIN]`.",
            ),
            PluginOutcome::Listed(plugins) => {
                let lines: Vec<String> = plugins
                    .iter()
                    .map(|plugin| {
                        let state = match plugin.state {
                            registry::State::Enabled => "enabled",
                            registry::State::EnabledByProject => {
                                "enabled by this project (its hooks and servers wait for your approval)"
                            }
                            registry::State::Disabled => "disabled",
                        };
                        let version = plugin.version.as_deref().unwrap_or("unknown");
                        format!("{}  {version}  {state}  {}", plugin.id, plugin.root.display())
                    })
                    .collect();
                out.write_str(&lines.join("\n"))
            }
            PluginOutcome::Installed(plugin) => write!(
                out,
                "Installed {} {} in {}. Nothing of it runs until you enable it: `larik plugin enable {}`.",
                plugin.id,
                plugin.version.as_deref().unwrap_or("unknown"),
                plugin.root.display(),
                plugin.id
            ),
            PluginOutcome::Enabled(id) => write!(out, "Enabled {id} in your settings; new sessions load it."),
            PluginOutcome::Disabled(id) => write!(out, "Disabled {id} in your settings; new sessions leave it out."),
            PluginOutcome::Usage(typed) => write!(
                out,
                "`{typed}`: use list, install PATH_OR_GIT_URL [PLUGIN], install PLUGIN@MARKETPLACE, enable ID or disable ID."
            ),
        }
    }
}

/// Larik's plugin directory (`<data>/plugins`).
fn plugins_dir(env: &HashMap<String, String>) -> Result<PathBuf, PluginError> {
    larik_settings::paths::user_data_dir(env).map(|data| data.join("plugins")).ok_or(PluginError::NoDataDir)
}

/// Installs the plugin `source` names (`plugin` picks one of a marketplace's) for the user, not
/// enabled; returns it as the registry now has it.
pub fn install(
    source: &str,
    plugin: Option<&str>,
    project: &Path,
    env: &HashMap<String, String>,
) -> Result<Installed, PluginError> {
    let dir = plugins_dir(env)?;
    let (found, wanted) = marketplace::locate(source, plugin, &dir, env)?;
    let chosen = marketplace::choose(&found, wanted.as_deref(), &dir)?;
    let manifest = registry::manifest(&chosen.root);
    let name = manifest.get("name").and_then(Value::as_str).unwrap_or(&chosen.name).to_owned();
    let version = manifest.get("version").and_then(Value::as_str).or(chosen.version.as_deref()).unwrap_or("unknown");
    let id = format!("{name}@{}", found.name);
    let target = dir.join("cache").join(&found.name).join(&name).join(version);
    copy_whole(&chosen.root, &target)?;
    write_registry_entry(&registry::larik_registry(dir.parent().unwrap_or(&dir)), &id, &target, version)?;
    let (installed, _) = registry::installed(&SettingsFiles::default(), project, env);
    installed.into_iter().find(|plugin| plugin.id == id).ok_or(PluginError::NotInstalled(id))
}

/// Turns `id` on or off in the user's own settings. Only an installed plugin is turned on.
pub fn set_enabled(id: &str, enabled: bool, project: &Path, env: &HashMap<String, String>) -> Result<(), PluginError> {
    let (installed, _) = registry::installed(&SettingsFiles::default(), project, env);
    if enabled && !installed.iter().any(|plugin| plugin.id == id) {
        return Err(PluginError::NotInstalled(id.to_owned()));
    }
    crate::user_settings::set_value(&["enabledPlugins", id], Value::Bool(enabled), env)?;
    Ok(())
}

/// Whether `dir` is laid out as a plugin.
fn is_plugin(dir: &Path) -> bool {
    dir.join(registry::MANIFEST).is_file()
        || ["commands", "agents", "skills", "hooks"].iter().any(|part| dir.join(part).is_dir())
}

/// Copies `from` into `to`, replacing what was there only once the copy is whole.
fn copy_whole(from: &Path, to: &Path) -> Result<(), PluginError> {
    let parent = to.parent().ok_or_else(|| PluginError::NoSource(to.display().to_string()))?;
    std::fs::create_dir_all(parent).map_err(file_error(parent))?;
    let staging = tempfile::tempdir_in(parent).map_err(file_error(parent))?;
    let root = std::fs::canonicalize(from).map_err(file_error(from))?;
    copy_tree(&root, &root, staging.path())?;
    if to.exists() {
        std::fs::remove_dir_all(to).map_err(file_error(to))?;
    }
    let staged = staging.keep();
    std::fs::rename(&staged, to).map_err(file_error(to))
}

/// The files below `dir` into `into`; `.git` is left behind, and so is a symbolic link that
/// does not lead to a file inside `root`.
fn copy_tree(root: &Path, dir: &Path, into: &Path) -> Result<(), PluginError> {
    for entry in std::fs::read_dir(dir).map_err(file_error(dir))? {
        let entry = entry.map_err(file_error(dir))?;
        let path = entry.path();
        let target = into.join(entry.file_name());
        let kind = entry.file_type().map_err(file_error(&path))?;
        if entry.file_name() == ".git" {
            continue;
        }
        if kind.is_dir() {
            std::fs::create_dir_all(&target).map_err(file_error(&target))?;
            copy_tree(root, &path, &target)?;
        } else if kind.is_file() {
            std::fs::copy(&path, &target).map_err(file_error(&path))?;
        } else if kind.is_symlink()
            && let Ok(real) = std::fs::canonicalize(&path)
            && real.starts_with(root)
            && real.is_file()
        {
            std::fs::copy(&real, &target).map_err(file_error(&path))?;
        }
    }
    Ok(())
}

/// Names `id` at `root` in the registry at `path`, Claude Code's version 2 shape, replacing an
/// earlier install of it; the file is replaced atomically.
fn write_registry_entry(path: &Path, id: &str, root: &Path, version: &str) -> Result<(), PluginError> {
    let mut file = match std::fs::read_to_string(path) {
        Ok(text) => serde_json::from_str::<Value>(&text).map_err(|error| PluginError::File {
            path: path.to_owned(),
            message: format!("{error}; fix it by hand, nothing was changed"),
        })?,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => json!({}),
        Err(error) => return Err(file_error(path)(error)),
    };
    let Some(object) = file.as_object_mut() else {
        return Err(PluginError::File { path: path.to_owned(), message: "is not a JSON object".into() });
    };
    object.insert("version".into(), json!(2));
    let plugins = object.entry("plugins").or_insert_with(|| json!({}));
    if let Some(plugins) = plugins.as_object_mut() {
        plugins.insert(id.to_owned(), json!([{"scope": "user", "installPath": root, "version": version}]));
    }
    let mut text = serde_json::to_string_pretty(&file).unwrap_or_default();
    text.push('\n');
    crate::workspace::write_file_atomic(path, text.as_bytes()).map_err(file_error(path))
}

#[cfg(test)]
mod tests;
