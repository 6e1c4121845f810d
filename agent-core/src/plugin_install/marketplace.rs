//! Where a plugin to install is: a directory, a git repository cloned into Larik's plugin
//! directory, or a marketplace added before; and, in a marketplace, which of its entries and
//! where that entry's plugin is (a folder inside the marketplace, or a git URL).

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::{PluginError, file_error, is_plugin};
use crate::config::plugins::usable_name;

const MARKETPLACE: &str = ".claude-plugin/marketplace.json";

/// The place plugins are installed from.
pub(super) struct Found {
    /// The marketplace's name, or `local` for a plugin on its own.
    pub name: String,
    dir: PathBuf,
    /// `metadata.pluginRoot`: where relative plugin sources start.
    plugin_root: PathBuf,
    /// The marketplace's entries; none for a plugin on its own.
    entries: Vec<Value>,
}

/// The plugin to copy.
pub(super) struct Chosen {
    /// The entry's name, or the folder's for a plugin on its own.
    pub name: String,
    pub root: PathBuf,
    pub version: Option<String>,
}

fn is_git_url(source: &str) -> bool {
    source.contains("://") || source.starts_with("git@") || source.ends_with(".git")
}

/// What `source` names, and the plugin wanted from it (`plugin`, or the name before `@`).
pub(super) fn locate(
    source: &str,
    plugin: Option<&str>,
    plugins_dir: &Path,
    env: &HashMap<String, String>,
) -> Result<(Found, Option<String>), PluginError> {
    let wanted = plugin.map(str::to_owned);
    let (dir, origin, wanted) = if is_git_url(source) {
        let name = repository_name(source);
        let dir = clone(source, &plugins_dir.join("marketplaces").join(&name))?;
        (dir, json!({"source": "git", "url": source}), wanted)
    } else if Path::new(source).is_dir() {
        let dir = std::fs::canonicalize(source).map_err(file_error(Path::new(source)))?;
        (dir.clone(), json!({"source": "directory", "path": dir}), wanted)
    } else if let Some((name, marketplace)) = source.split_once('@').filter(|_| !source.contains('/')) {
        let dir =
            known_marketplace(marketplace, plugins_dir, env).ok_or_else(|| PluginError::NoSource(source.into()))?;
        (dir, Value::Null, Some(name.to_owned()))
    } else {
        return Err(PluginError::NoSource(source.into()));
    };
    let manifest = dir.join(MARKETPLACE);
    if manifest.is_file() {
        let text = std::fs::read_to_string(&manifest).map_err(file_error(&manifest))?;
        let unreadable = |message: String| PluginError::File { path: manifest.clone(), message };
        let parsed: Value = serde_json::from_str(&text).map_err(|error| unreadable(error.to_string()))?;
        let name = parsed.get("name").and_then(Value::as_str).filter(|name| usable_name(name));
        let name =
            name.ok_or_else(|| unreadable("`name` must be a plugin-style name (letters, digits, -, _)".into()))?;
        let entries = parsed.get("plugins").and_then(Value::as_array).cloned().unwrap_or_default();
        let root = parsed.pointer("/metadata/pluginRoot").and_then(Value::as_str).unwrap_or(".");
        if !origin.is_null() {
            remember(plugins_dir, name, &origin, &dir)?;
        }
        let plugin_root = dir.join(root.trim_start_matches("./"));
        return Ok((Found { name: name.to_owned(), dir, plugin_root, entries }, wanted));
    }
    if is_plugin(&dir) {
        return Ok((Found { name: "local".into(), plugin_root: dir.clone(), dir, entries: Vec::new() }, wanted));
    }
    Err(PluginError::NotAPlugin(dir))
}

/// The entry `wanted` names (or the only one) and where its plugin is.
pub(super) fn choose(found: &Found, wanted: Option<&str>, plugins_dir: &Path) -> Result<Chosen, PluginError> {
    if found.entries.is_empty() {
        let name = found.dir.file_name().and_then(|name| name.to_str()).unwrap_or("plugin").to_owned();
        return Ok(Chosen { name, root: found.dir.clone(), version: None });
    }
    let name_of = |entry: &Value| entry.get("name").and_then(Value::as_str).unwrap_or_default().to_owned();
    let names = || found.entries.iter().map(name_of).collect::<Vec<_>>().join(", ");
    let entry = match wanted {
        Some(wanted) => found.entries.iter().find(|entry| name_of(entry) == wanted).ok_or_else(|| {
            PluginError::NoSuchPlugin { marketplace: found.name.clone(), name: wanted.to_owned(), names: names() }
        })?,
        None if found.entries.len() == 1 => &found.entries[0],
        None => return Err(PluginError::WhichPlugin { marketplace: found.name.clone(), names: names() }),
    };
    let name = name_of(entry);
    if !usable_name(&name) {
        return Err(PluginError::NoSuchPlugin { marketplace: found.name.clone(), name, names: names() });
    }
    let version = entry.get("version").and_then(Value::as_str).map(str::to_owned);
    let root = match entry.get("source") {
        Some(Value::String(relative)) => {
            let path = found.plugin_root.join(relative.trim_start_matches("./"));
            // An entry cannot name a folder outside its marketplace.
            std::fs::canonicalize(&path)
                .ok()
                .filter(|real| real.starts_with(&found.dir) && real.is_dir())
                .ok_or_else(|| PluginError::NotAPlugin(path.clone()))?
        }
        Some(Value::Object(source)) => match (source.get("source").and_then(Value::as_str), source.get("url")) {
            (Some("url" | "git"), Some(Value::String(url))) => {
                let dir = plugins_dir.join("sources").join(format!("{}-{name}", found.name));
                clone(url, &dir)?
            }
            (kind, _) => {
                return Err(PluginError::UnsupportedSource { name, kind: kind.unwrap_or("unknown").to_owned() });
            }
        },
        _ => return Err(PluginError::UnsupportedSource { name, kind: "missing".into() }),
    };
    if !is_plugin(&root) {
        return Err(PluginError::NotAPlugin(root));
    }
    Ok(Chosen { name, root, version })
}

/// The last part of a repository's URL, without `.git`.
fn repository_name(url: &str) -> String {
    let last = url.trim_end_matches('/').rsplit(['/', ':']).next().unwrap_or("repository");
    let name: String = last
        .trim_end_matches(".git")
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' { c } else { '-' })
        .collect();
    if name.is_empty() { "repository".into() } else { name }
}

/// Clones `url` into `into`, replacing an earlier clone once the new one is whole. libgit2
/// runs no hook and no filter program of the repository's.
fn clone(url: &str, into: &Path) -> Result<PathBuf, PluginError> {
    let parent = into.parent().unwrap_or(into);
    std::fs::create_dir_all(parent).map_err(file_error(parent))?;
    let staging = tempfile::tempdir_in(parent).map_err(file_error(parent))?;
    let checkout = staging.path().join("checkout");
    git2::build::RepoBuilder::new()
        .clone(url, &checkout)
        .map_err(|error| PluginError::Clone { url: url.to_owned(), message: error.message().to_owned() })?;
    if into.exists() {
        std::fs::remove_dir_all(into).map_err(file_error(into))?;
    }
    std::fs::rename(&checkout, into).map_err(file_error(into))?;
    std::fs::canonicalize(into).map_err(file_error(into))
}

/// Where the marketplace `name` is: one added with Larik, else one Claude Code knows.
fn known_marketplace(name: &str, plugins_dir: &Path, env: &HashMap<String, String>) -> Option<PathBuf> {
    let mut files = vec![plugins_dir.join("known_marketplaces.json")];
    if let Some(home) = env.get("HOME").filter(|home| !home.is_empty()) {
        files.push(Path::new(home).join(".claude/plugins/known_marketplaces.json"));
    }
    files.iter().find_map(|file| {
        let known: Value = serde_json::from_str(&std::fs::read_to_string(file).ok()?).ok()?;
        let location = known.get(name)?.get("installLocation")?.as_str()?;
        Some(PathBuf::from(location)).filter(|dir| dir.is_dir())
    })
}

/// Adds the marketplace to Larik's `known_marketplaces.json` (Claude Code's shape), so its
/// plugins install as `name@marketplace` later.
fn remember(plugins_dir: &Path, name: &str, origin: &Value, dir: &Path) -> Result<(), PluginError> {
    let path = plugins_dir.join("known_marketplaces.json");
    let mut known: serde_json::Map<String, Value> =
        std::fs::read_to_string(&path).ok().and_then(|text| serde_json::from_str(&text).ok()).unwrap_or_default();
    known.insert(name.to_owned(), json!({"source": origin, "installLocation": dir}));
    let mut text = serde_json::to_string_pretty(&known).unwrap_or_default();
    text.push('\n');
    crate::workspace::write_file_atomic(&path, text.as_bytes()).map_err(file_error(&path))
}
