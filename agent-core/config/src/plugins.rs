//! Claude Code's plugins as it installs them, and the ones Larik installs in the same shape: the
//! registries (`~/.claude/plugins/installed_plugins.json` and Larik's own under its data
//! directory, version 2: `{"plugins": {"name@marketplace": [{scope, installPath, projectPath?,
//! version}]}}`, version 1's single entry read too), which of them `enabledPlugins` turns on, and
//! where each enabled plugin keeps its commands, agents, skills, hooks and MCP servers (the
//! default folders, plus the paths its `.claude-plugin/plugin.json` names). The mechanisms read
//! those parts with their own loaders.
//!
//! Who may turn a plugin on: the organisation's managed settings decide first; then a project's
//! settings saying `false` (a repository may narrow); then the user's own (Larik's file over
//! `~/.claude/settings.json`); a project's `true` last, and a plugin it alone enabled is marked
//! [`Plugin::from_project`]: its hooks and MCP servers wait for the user's approval of the
//! project, like the project's own. Only the user installs plugins: a repository cannot name a
//! directory to load one from.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use crate::SettingsFiles;

/// One installed plugin, enabled or not.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Installed {
    /// `name@marketplace`, as the registry and `enabledPlugins` write it.
    pub id: String,
    pub root: PathBuf,
    pub version: Option<String>,
    /// The registry that names it.
    pub registry: PathBuf,
    pub state: State,
}

/// Whether an installed plugin loads, and on whose word.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum State {
    /// Turned on by the organisation's or the user's settings.
    Enabled,
    /// Turned on by the project's settings alone: its hooks and MCP servers wait for approval.
    EnabledByProject,
    /// Turned off, or never turned on.
    Disabled,
}

/// An enabled plugin, and where its parts are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plugin {
    pub id: String,
    /// What its commands, skills, agents and MCP servers are scoped by: the manifest's `name`,
    /// else the id's.
    pub name: String,
    pub dirs: PluginDirs,
    /// Enabled by a project's settings alone.
    pub from_project: bool,
    manifest: Map<String, Value>,
}

/// Where a plugin is, as its hooks, servers and skills see it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct PluginDirs {
    /// `${CLAUDE_PLUGIN_ROOT}`: where it is installed.
    pub root: PathBuf,
    /// `${CLAUDE_PLUGIN_DATA}`: a directory of its own that outlives updates.
    pub data: PathBuf,
}

impl PluginDirs {
    /// `${CLAUDE_PLUGIN_ROOT}` and `${CLAUDE_PLUGIN_DATA}` replaced in `text`.
    pub fn expand(&self, text: &str) -> String {
        text.replace("${CLAUDE_PLUGIN_ROOT}", &self.root.display().to_string())
            .replace("${CLAUDE_PLUGIN_DATA}", &self.data.display().to_string())
    }

    /// The variables its hooks and servers get, as Claude Code sets them.
    pub fn env(&self) -> [(&'static str, String); 2] {
        [
            ("CLAUDE_PLUGIN_ROOT", self.root.display().to_string()),
            ("CLAUDE_PLUGIN_DATA", self.data.display().to_string()),
        ]
    }
}

/// Hooks or servers a plugin defines, in a file of their own or inline in its manifest.
#[derive(Debug, Clone, PartialEq)]
pub struct PluginPart {
    /// The file, or the manifest for an inline definition.
    pub path: PathBuf,
    pub value: Value,
}

impl Plugin {
    /// Folders and files of commands (`commands/`, and the manifest's `commands`).
    pub fn command_paths(&self) -> Vec<PathBuf> {
        self.paths("commands", "commands")
    }

    /// Folders of skills (`skills/<name>/SKILL.md`).
    pub fn skill_paths(&self) -> Vec<PathBuf> {
        self.paths("skills", "skills")
    }

    /// Folders and files of subagent definitions.
    pub fn agent_paths(&self) -> Vec<PathBuf> {
        self.paths("agents", "agents")
    }

    /// Its hooks, each in a settings file's shape (`{"hooks": {...}}`): `hooks/hooks.json` and
    /// what the manifest's `hooks` names or holds. A file that cannot be read is a problem.
    pub fn hooks(&self) -> (Vec<PluginPart>, Vec<String>) {
        self.parts("hooks", "hooks/hooks.json")
    }

    /// Its MCP servers in `.mcp.json`'s shape (`{"mcpServers": {...}}`): `.mcp.json` and what
    /// the manifest's `mcpServers` names or holds.
    pub fn mcp_servers(&self) -> (Vec<PluginPart>, Vec<String>) {
        self.parts("mcpServers", ".mcp.json")
    }

    /// The default folder if it exists, then each path the manifest's `key` names (a string or a
    /// list), kept inside the plugin.
    fn paths(&self, default: &str, key: &str) -> Vec<PathBuf> {
        let mut paths = Vec::new();
        let folder = self.dirs.root.join(default);
        if folder.exists() {
            paths.push(folder);
        }
        let named: Vec<&str> = match self.manifest.get(key) {
            Some(Value::String(path)) => vec![path.as_str()],
            Some(Value::Array(list)) => list.iter().filter_map(Value::as_str).collect(),
            _ => Vec::new(),
        };
        for path in named {
            if let Some(inside) = self.inside(path)
                && !paths.contains(&inside)
            {
                paths.push(inside);
            }
        }
        paths
    }

    /// `relative` under the plugin's root, unless it leads out of it.
    fn inside(&self, relative: &str) -> Option<PathBuf> {
        let path = self.dirs.root.join(relative.trim_start_matches("./"));
        let real = std::fs::canonicalize(&path).ok()?;
        let root = std::fs::canonicalize(&self.dirs.root).ok()?;
        real.starts_with(root).then_some(real)
    }

    /// The file at `default` and what the manifest's `key` names or holds, each wrapped as
    /// `{key: ...}` where it is not already (a manifest's inline hooks are the events themselves).
    fn parts(&self, key: &str, default: &str) -> (Vec<PluginPart>, Vec<String>) {
        let shape = |value: Value| {
            if value.get(key).is_some() { value } else { Value::Object(Map::from_iter([(key.to_owned(), value)])) }
        };
        let mut parts = Vec::new();
        let mut problems = Vec::new();
        let mut read = |path: PathBuf| match std::fs::read_to_string(&path) {
            Ok(text) => match serde_json::from_str::<Value>(&text) {
                Ok(value) => parts.push(PluginPart { value: shape(value), path }),
                Err(error) => {
                    problems.push(format!("{}: not JSON ({error}); plugin `{}` part left out", path.display(), self.id))
                }
            },
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {}
            Err(error) => problems.push(format!("{}: {error}", path.display())),
        };
        read(self.dirs.root.join(default));
        let manifest = self.dirs.root.join(MANIFEST);
        match self.manifest.get(key) {
            Some(Value::String(path)) => match self.inside(path) {
                Some(path) if !path.ends_with(default) => read(path),
                Some(_) => {}
                None => problems.push(format!(
                    "{}: `{key}` names {path}, which is not a file inside the plugin; left out",
                    manifest.display()
                )),
            },
            Some(inline @ Value::Object(_)) => parts.push(PluginPart { path: manifest, value: shape(inline.clone()) }),
            _ => {}
        }
        (parts, problems)
    }
}

/// Where a plugin's manifest is, under its root.
pub const MANIFEST: &str = ".claude-plugin/plugin.json";

/// Every registry, Claude Code's first: a later one's entry for an id replaces an earlier one's.
pub fn registries(env: &HashMap<String, String>) -> Vec<PathBuf> {
    let mut files = Vec::new();
    if let Some(home) = env.get("HOME").filter(|home| !home.is_empty()) {
        files.push(Path::new(home).join(".claude/plugins/installed_plugins.json"));
    }
    if let Some(data) = larik_settings::paths::user_data_dir(env) {
        files.push(larik_registry(&data));
    }
    files
}

/// Larik's own registry under its data directory.
pub fn larik_registry(data_dir: &Path) -> PathBuf {
    data_dir.join("plugins").join("installed_plugins.json")
}

/// Every plugin installed for `project` (user-wide, or for this project), by id, with whether it
/// is enabled; and what the user should hear (a registry or settings file that cannot be read).
pub fn installed(
    files: &SettingsFiles,
    project: &Path,
    env: &HashMap<String, String>,
) -> (Vec<Installed>, Vec<String>) {
    let mut problems = Vec::new();
    let mut found: BTreeMap<String, Installed> = BTreeMap::new();
    for registry in registries(env) {
        let home = env.get("HOME").filter(|home| !home.is_empty()).map(Path::new);
        let Some(entries) = read_registry(files, &registry, project, home, &mut problems) else { continue };
        for (id, root, version) in entries {
            found.insert(
                id.clone(),
                Installed { id, root, version, registry: registry.clone(), state: State::Disabled },
            );
        }
    }
    // No plugin installed (most sessions): no settings file needs reading for `enabledPlugins`.
    if found.is_empty() {
        return (Vec::new(), problems);
    }
    let choices = Choices::read(files, project, env, &mut problems);
    for plugin in found.values_mut() {
        plugin.state = choices.state(&plugin.id);
    }
    (found.into_values().collect(), problems)
}

/// The enabled plugins for `project`, sorted by id, and what the user should hear.
pub fn enabled(files: &SettingsFiles, project: &Path, env: &HashMap<String, String>) -> (Vec<Plugin>, Vec<String>) {
    let (installed, mut problems) = installed(files, project, env);
    let mut plugins = Vec::new();
    for plugin in installed {
        if plugin.state == State::Disabled {
            continue;
        }
        if !plugin.root.is_dir() {
            problems.push(format!(
                "plugin `{}` is enabled but {} is not there; it is left out (install it again)",
                plugin.id,
                plugin.root.display()
            ));
            continue;
        }
        let manifest = match read_manifest(files, &plugin.root) {
            Ok(manifest) => manifest,
            Err(problem) => {
                problems.push(format!("plugin `{}`: {problem}; it is left out", plugin.id));
                continue;
            }
        };
        let id_name = plugin.id.split_once('@').map_or(plugin.id.as_str(), |(name, _)| name);
        let name = manifest.get("name").and_then(Value::as_str).filter(|name| usable_name(name)).unwrap_or(id_name);
        let data = data_dir(&plugin, env);
        plugins.push(Plugin {
            id: plugin.id.clone(),
            name: name.to_owned(),
            dirs: PluginDirs { root: plugin.root, data },
            from_project: plugin.state == State::EnabledByProject,
            manifest,
        });
    }
    (plugins, problems)
}

/// A name commands and tool names can carry: letters, digits, `-`, `_`, `.`.
pub fn usable_name(name: &str) -> bool {
    !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

/// `${CLAUDE_PLUGIN_DATA}`: beside Claude Code's registry for its plugins, beside Larik's for
/// Larik's, named by the id with anything but letters, digits, `-` and `_` replaced.
fn data_dir(plugin: &Installed, env: &HashMap<String, String>) -> PathBuf {
    let name: String =
        plugin.id.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' { c } else { '-' }).collect();
    let base = plugin.registry.parent().map(Path::to_path_buf).or_else(|| larik_settings::paths::user_data_dir(env));
    base.unwrap_or_default().join("data").join(name)
}

/// The manifest as far as it can be read: empty where there is none or it is unreadable (loading
/// the plugin reports that).
pub fn manifest(root: &Path) -> Map<String, Value> {
    read_manifest(&SettingsFiles::default(), root).unwrap_or_default()
}

/// The manifest, if the plugin has one (it is optional); one that is not a JSON object is an error.
fn read_manifest(files: &SettingsFiles, root: &Path) -> Result<Map<String, Value>, String> {
    let path = root.join(MANIFEST);
    let text = match files.read(&path) {
        Ok(Some(text)) => text,
        Ok(None) => return Ok(Map::new()),
        Err(error) => return Err(format!("{}: {error}", path.display())),
    };
    match serde_json::from_str(&text) {
        Ok(Value::Object(manifest)) => Ok(manifest),
        Ok(_) => Err(format!("{} is not a JSON object", path.display())),
        Err(error) => Err(format!("{}: {error}", path.display())),
    }
}

/// The registry's entries that apply to `project`: id, install path (absolute, `~/…`, or
/// relative to the registry's folder), version. Of several installs of one id, a project's or
/// local one for this project wins over the user's.
fn read_registry(
    files: &SettingsFiles,
    path: &Path,
    project: &Path,
    home: Option<&Path>,
    problems: &mut Vec<String>,
) -> Option<Vec<(String, PathBuf, Option<String>)>> {
    let text = match files.read(path) {
        Ok(Some(text)) => text,
        Ok(None) => return None,
        Err(error) => {
            problems.push(format!("{}: {error}; its plugins are left out", path.display()));
            return None;
        }
    };
    let plugins = match serde_json::from_str::<Value>(&text) {
        Ok(Value::Object(mut file)) => match file.remove("plugins") {
            Some(Value::Object(plugins)) => plugins,
            _ => Map::new(),
        },
        _ => {
            problems.push(format!("{}: not a plugin registry (JSON object); its plugins are left out", path.display()));
            return None;
        }
    };
    let here = std::fs::canonicalize(project).unwrap_or_else(|_| project.to_owned());
    let base = path.parent().unwrap_or(Path::new("/"));
    let mut entries = Vec::new();
    for (id, installs) in plugins {
        // Version 1 held one install; version 2 a list, one per scope.
        let installs = match installs {
            Value::Array(list) => list,
            single @ Value::Object(_) => vec![single],
            _ => continue,
        };
        let applies = |install: &Value| match install.get("scope").and_then(Value::as_str) {
            Some("project" | "local") => install
                .get("projectPath")
                .and_then(Value::as_str)
                .and_then(|dir| std::fs::canonicalize(dir).ok())
                .is_some_and(|dir| dir == here),
            _ => true,
        };
        let specific =
            |install: &&&Value| install.get("scope").and_then(Value::as_str).is_some_and(|scope| scope != "user");
        let applying: Vec<&Value> = installs.iter().filter(|install| applies(install)).collect();
        let Some(install) = applying.iter().find(specific).or(applying.first()) else { continue };
        let Some(root) = install.get("installPath").and_then(Value::as_str) else { continue };
        let root = match (root.strip_prefix("~/"), home) {
            (Some(rest), Some(home)) => home.join(rest),
            _ => base.join(root),
        };
        let version = install.get("version").and_then(Value::as_str).map(str::to_owned);
        entries.push((id, root, version));
    }
    Some(entries)
}

/// What the settings files say about plugins, by id.
#[derive(Default)]
struct Choices {
    managed: HashMap<String, bool>,
    user: HashMap<String, bool>,
    project: HashMap<String, bool>,
}

impl Choices {
    fn read(files: &SettingsFiles, project: &Path, env: &HashMap<String, String>, problems: &mut Vec<String>) -> Self {
        let mut choices = Choices::default();
        for path in crate::managed::files(files, env) {
            read_enabled(files, &path, &mut choices.managed, problems);
        }
        // Claude Code's file first, so Larik's own (where `larik plugin` writes) wins.
        if let Some(home) = env.get("HOME").filter(|home| !home.is_empty()) {
            read_enabled(files, &Path::new(home).join(".claude/settings.json"), &mut choices.user, problems);
        }
        if let Some(dir) = larik_settings::paths::user_config_dir(env) {
            read_enabled(files, &dir.join("settings.json"), &mut choices.user, problems);
        }
        for file in [
            ".claude/settings.json",
            ".larik/settings.json",
            ".claude/settings.local.json",
            ".larik/settings.local.json",
        ] {
            read_enabled(files, &project.join(file), &mut choices.project, problems);
        }
        choices
    }

    fn state(&self, id: &str) -> State {
        let on = |enabled: bool| if enabled { State::Enabled } else { State::Disabled };
        if let Some(&enabled) = self.managed.get(id) {
            return on(enabled);
        }
        if self.project.get(id) == Some(&false) {
            return State::Disabled;
        }
        if let Some(&enabled) = self.user.get(id) {
            return on(enabled);
        }
        if self.project.get(id) == Some(&true) { State::EnabledByProject } else { State::Disabled }
    }
}

/// `enabledPlugins` of one settings file into `into` (a later file's word wins).
fn read_enabled(files: &SettingsFiles, path: &Path, into: &mut HashMap<String, bool>, problems: &mut Vec<String>) {
    let Some(text) = files.text(path) else { return };
    let Ok(Value::Object(keys)) = serde_json::from_str::<Value>(&text) else {
        // The settings loader reports a malformed file; plugins it would enable stay off.
        return;
    };
    match keys.get("enabledPlugins") {
        None | Some(Value::Null) => {}
        Some(Value::Object(listed)) => {
            for (id, enabled) in listed {
                match enabled {
                    Value::Bool(enabled) => {
                        into.insert(id.clone(), *enabled);
                    }
                    _ => problems.push(format!("{}: enabledPlugins.{id} must be true or false", path.display())),
                }
            }
        }
        Some(_) => {
            problems.push(format!("{}: `enabledPlugins` must be an object of ids and true or false", path.display()))
        }
    }
}

#[cfg(test)]
mod tests;
