//! Where MCP servers are configured, read as Claude Code writes them: `.mcp.json` at the project
//! root and `mcpServers` in Larik's settings (`{name: {command, args, env} | {type: "http" |
//! "sse", url, headers}}`, with `${VAR}` and `${VAR:-default}` expanded from the environment),
//! plus the servers an ACP client passes in `session/new`. Each server carries its scope: a
//! project's own servers connect only once the user approved them.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::config::SettingsFiles;

/// Who chose a server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ServerScope {
    /// The user's own settings.
    User,
    /// A file in the project (`.mcp.json`, `.larik/settings*.json`): needs the user's approval.
    Project,
    /// The editor passed it in `session/new`: the user or their editor chose it.
    Client,
    /// The organisation's `managed-mcp.json`: when it exists, the only servers that run.
    Managed,
}

/// How to reach a server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Transport {
    Stdio {
        command: String,
        args: Vec<String>,
        env: BTreeMap<String, String>,
    },
    /// Streamable HTTP.
    Http {
        url: String,
        headers: BTreeMap<String, String>,
    },
    /// The older HTTP + server-sent events transport.
    Sse {
        url: String,
        headers: BTreeMap<String, String>,
    },
}

/// One configured server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct McpServerConfig {
    pub name: String,
    pub transport: Transport,
    pub scope: ServerScope,
    /// Where it was defined, for messages.
    pub source: String,
    /// How to log in, for HTTP and SSE servers that ask for OAuth.
    pub oauth: OAuthSettings,
}

impl McpServerConfig {
    /// Why the organisation's managed policy keeps this server from running, if it does: by
    /// its name, its command line or its URL.
    pub fn refused_by(&self, policy: &crate::config::managed::McpPolicy) -> Option<String> {
        if policy.exclusive && self.scope != ServerScope::Managed {
            return Some(format!(
                "the MCP server `{}` is not in your organisation's managed-mcp.json, which decides the servers that run",
                self.name
            ));
        }
        let (command, url) = match &self.transport {
            Transport::Stdio { command, args, .. } => {
                (Some([std::slice::from_ref(command), args.as_slice()].concat()), None)
            }
            Transport::Http { url, .. } | Transport::Sse { url, .. } => (None, Some(url.as_str())),
        };
        policy.refuses(&self.name, command.as_deref(), url)
    }
}

/// A server's `oauth` settings, as Claude Code writes them (`clientId`, `callbackPort`, `scopes`,
/// `authServerMetadataUrl`), plus `clientMetadataUrl`: a client-id metadata document to use as
/// the client id where the authorization server supports them. With none of them set, Larik
/// discovers the authorization server and registers itself.
#[derive(Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OAuthSettings {
    /// A client registered with the authorization server beforehand.
    pub client_id: Option<String>,
    /// Its secret, when it has one; never written in settings (`MCP_CLIENT_SECRET`).
    #[serde(skip)]
    pub client_secret: Option<String>,
    /// The port of the redirect listener (`http://localhost:PORT/callback`), for a pre-registered
    /// client whose redirect URI names one; otherwise any free port.
    pub callback_port: Option<u16>,
    /// The scopes to ask for, space-separated; otherwise those the server's challenge or
    /// metadata name.
    pub scopes: Option<String>,
    /// The authorization server's metadata, where discovery would not find it.
    pub auth_server_metadata_url: Option<String>,
    pub client_metadata_url: Option<String>,
}

impl OAuthSettings {
    /// Everything but the secret's value: what the approval fingerprint and logs see.
    fn canonical(&self) -> String {
        format!(
            "client {:?} secret {} port {:?} scopes {:?} metadata {:?} document {:?}",
            self.client_id,
            self.client_secret.is_some(),
            self.callback_port,
            self.scopes,
            self.auth_server_metadata_url,
            self.client_metadata_url
        )
    }
}

impl std::fmt::Debug for OAuthSettings {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str(&self.canonical())
    }
}

impl McpServerConfig {
    /// What the user approves: the command line or URL, as it will run.
    pub fn describe(&self) -> String {
        match &self.transport {
            Transport::Stdio { command, args, env } => {
                let env: Vec<String> = env.keys().map(|key| format!("{key}=…")).collect();
                let line = std::iter::once(command.clone()).chain(args.iter().cloned()).collect::<Vec<_>>().join(" ");
                if env.is_empty() {
                    format!("MCP server `{}`: {line}", self.name)
                } else {
                    format!("MCP server `{}`: {} {line}", self.name, env.join(" "))
                }
            }
            Transport::Http { url, .. } => format!("MCP server `{}`: {url}", self.name),
            Transport::Sse { url, .. } => format!("MCP server `{}`: {url} (SSE)", self.name),
        }
    }

    /// The definition as the approval fingerprint sees it: the command, its arguments, the names
    /// (not the values: secrets change without changing what runs) of its environment, the URL,
    /// the names of its headers and its OAuth settings.
    pub fn canonical(&self) -> String {
        match &self.transport {
            Transport::Stdio { command, args, env } => {
                format!("stdio {} {command} {:?} {:?}", self.name, args, env.keys().collect::<Vec<_>>())
            }
            Transport::Http { url, headers } => {
                format!("http {} {url} {:?} {}", self.name, headers.keys().collect::<Vec<_>>(), self.oauth.canonical())
            }
            Transport::Sse { url, headers } => {
                format!("sse {} {url} {:?} {}", self.name, headers.keys().collect::<Vec<_>>(), self.oauth.canonical())
            }
        }
    }
}

/// A settings file's failure, naming the file.
#[derive(Debug, thiserror::Error)]
#[error("{path}: {message}")]
pub struct McpConfigError {
    pub path: PathBuf,
    pub message: String,
}

#[derive(Deserialize)]
struct File {
    #[serde(default, rename = "mcpServers")]
    mcp_servers: BTreeMap<String, RawServer>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawServer {
    #[serde(rename = "type")]
    kind: Option<String>,
    command: Option<String>,
    #[serde(default)]
    args: Vec<String>,
    #[serde(default)]
    env: BTreeMap<String, String>,
    url: Option<String>,
    #[serde(default)]
    headers: BTreeMap<String, String>,
    enabled: Option<bool>,
    #[serde(default)]
    oauth: OAuthSettings,
}

/// A file that defines servers, who chose them, and the servers as written.
struct Source {
    path: PathBuf,
    scope: ServerScope,
    servers: BTreeMap<String, RawServer>,
}

/// Every server the settings files define, lowest precedence first: the user's (Claude Code's
/// `~/.claude.json`, Larik's settings), the project's (`.larik/settings*.json`, `.mcp.json`),
/// then the user's own for this project (`~/.claude.json`'s `projects` entry, Claude Code's
/// local scope); a later definition of a name replaces an earlier one. Where the
/// organisation's `managed-mcp.json` exists, its servers are the only ones. Servers with
/// `enabled: false` are left out, and so are the `.mcp.json` servers Claude Code's
/// `disabledMcpjsonServers` names. Returns the servers and what the user should hear (a
/// definition that could not be used).
pub fn load(
    files: &SettingsFiles,
    project: &Path,
    env: &HashMap<String, String>,
) -> Result<(Vec<McpServerConfig>, Vec<String>), McpConfigError> {
    let mut servers: BTreeMap<String, McpServerConfig> = BTreeMap::new();
    let mut problems = Vec::new();
    if let Some(managed) = managed_source(files, env)? {
        add_servers(managed, env, &Default::default(), &mut servers, &mut problems);
        return Ok((servers.into_values().collect(), problems));
    }
    let approved = crate::config::approved_mcpjson_servers(files, env);
    let disabled = crate::config::disabled_mcpjson_servers(files, project, env);
    for mut source in sources(files, project, env)? {
        if source.path.ends_with(".mcp.json") {
            // Turned off in Claude Code's settings: as if `.mcp.json` did not name them.
            source.servers.retain(|name, _| !disabled.contains(name));
        }
        add_servers(source, env, &approved, &mut servers, &mut problems);
    }
    plugin_servers(files, project, env, &mut servers, &mut problems);
    Ok((servers.into_values().collect(), problems))
}

/// The source's servers into `servers`; a project's `.mcp.json` server the user approved in
/// their own settings takes the user's scope.
fn add_servers(
    source: Source,
    env: &HashMap<String, String>,
    approved: &crate::config::McpjsonApproval,
    servers: &mut BTreeMap<String, McpServerConfig>,
    problems: &mut Vec<String>,
) {
    let from_mcp_json = source.path.ends_with(".mcp.json");
    for (name, raw) in source.servers {
        if raw.enabled == Some(false) {
            servers.remove(&name);
            continue;
        }
        let mut oauth = raw.oauth.clone();
        oauth.client_secret = env.get("MCP_CLIENT_SECRET").filter(|secret| !secret.is_empty()).cloned();
        let scope = if from_mcp_json && approved.approves(&name) { ServerScope::User } else { source.scope };
        match server(&name, raw, env) {
            Ok(transport) => {
                let source = source.path.display().to_string();
                servers.insert(name.clone(), McpServerConfig { name, transport, scope, source, oauth });
            }
            Err(problem) => {
                problems.push(format!("{}: MCP server `{name}` {problem}; it is left out", source.path.display()))
            }
        }
    }
}

/// The files that define servers, lowest precedence first (see [`load`]).
fn sources(
    files: &SettingsFiles,
    project: &Path,
    env: &HashMap<String, String>,
) -> Result<Vec<Source>, McpConfigError> {
    let read = |path: PathBuf, scope: ServerScope| -> Result<Option<Source>, McpConfigError> {
        let Some(text) = files.text(&path) else { return Ok(None) };
        let file: File = serde_json::from_str(&text)
            .map_err(|error| McpConfigError { path: path.clone(), message: error.to_string() })?;
        Ok(Some(Source { path, scope, servers: file.mcp_servers }))
    };
    let (user, local) = claude_json(files, project, env)?;
    let mut sources: Vec<Source> = user.into_iter().collect();
    if let Some(dir) = larik_settings::paths::user_config_dir(env) {
        sources.extend(read(dir.join("settings.json"), ServerScope::User)?);
    }
    for name in [".larik/settings.json", ".larik/settings.local.json", ".mcp.json"] {
        sources.extend(read(project.join(name), ServerScope::Project)?);
    }
    sources.extend(local);
    Ok(sources)
}

/// Claude Code's `~/.claude.json`: its `mcpServers` (the user's, everywhere) and those of its
/// `projects` entry for this project (the user's, here). The file holds much else, not read.
fn claude_json(
    files: &SettingsFiles,
    project: &Path,
    env: &HashMap<String, String>,
) -> Result<(Option<Source>, Option<Source>), McpConfigError> {
    #[derive(Deserialize)]
    struct ClaudeJson {
        #[serde(default, rename = "mcpServers")]
        mcp_servers: BTreeMap<String, RawServer>,
        #[serde(default)]
        projects: BTreeMap<String, File>,
    }
    let Some(home) = env.get("HOME").filter(|home| !home.is_empty()) else { return Ok((None, None)) };
    let path = Path::new(home).join(".claude.json");
    let Some(text) = files.text(&path) else { return Ok((None, None)) };
    let mut file: ClaudeJson = serde_json::from_str(&text)
        .map_err(|error| McpConfigError { path: path.clone(), message: error.to_string() })?;
    let here = std::fs::canonicalize(project).unwrap_or_else(|_| project.to_path_buf());
    let local = file
        .projects
        .iter()
        .find(|(dir, _)| std::fs::canonicalize(dir).is_ok_and(|dir| dir == here))
        .map(|(dir, _)| dir.clone())
        .and_then(|dir| file.projects.remove(&dir));
    let user = Source { path: path.clone(), scope: ServerScope::User, servers: file.mcp_servers };
    let local = local.map(|local| Source { path, scope: ServerScope::User, servers: local.mcp_servers });
    Ok((Some(user), local))
}

/// The organisation's `managed-mcp.json`, when it exists. One that cannot be read is an error:
/// the session does not open with servers the organisation did not choose.
fn managed_source(files: &SettingsFiles, env: &HashMap<String, String>) -> Result<Option<Source>, McpConfigError> {
    let path = crate::config::managed::mcp_file(env);
    let text = match files.read(&path) {
        Ok(Some(text)) => text,
        Ok(None) => return Ok(None),
        Err(error) => return Err(McpConfigError { path, message: error.to_string() }),
    };
    let file: File = serde_json::from_str(&text)
        .map_err(|error| McpConfigError { path: path.clone(), message: error.to_string() })?;
    Ok(Some(Source { path, scope: ServerScope::Managed, servers: file.mcp_servers }))
}

/// The enabled plugins' servers, named as Claude Code names them (`plugin_<plugin>_<server>`,
/// so their tools are `mcp__plugin_<plugin>_<server>__<tool>`), with `${CLAUDE_PLUGIN_ROOT}`
/// and `${CLAUDE_PLUGIN_DATA}` expanded and set for a stdio server. A plugin a project alone
/// enabled has the project's scope: its servers wait for the user's approval.
fn plugin_servers(
    files: &SettingsFiles,
    project: &Path,
    env: &HashMap<String, String>,
    servers: &mut BTreeMap<String, McpServerConfig>,
    problems: &mut Vec<String>,
) {
    // The hooks' loader reports the plugins that could not be loaded; not said twice.
    let (plugins, _) = crate::config::plugins::enabled(files, project, env);
    for plugin in plugins {
        let scope = if plugin.from_project { ServerScope::Project } else { ServerScope::User };
        let mut env = env.clone();
        env.extend(plugin.dirs.env().map(|(key, value)| (key.to_owned(), value)));
        let (parts, part_problems) = plugin.mcp_servers();
        problems.extend(part_problems);
        for part in parts {
            let file: File = match serde_json::from_value(part.value) {
                Ok(file) => file,
                Err(error) => {
                    problems.push(format!(
                        "{}: plugin `{}`: {error}; its servers are left out",
                        part.path.display(),
                        plugin.id
                    ));
                    continue;
                }
            };
            for (name, raw) in file.mcp_servers {
                if raw.enabled == Some(false) {
                    continue;
                }
                let oauth = raw.oauth.clone();
                let name = format!("plugin_{}_{name}", plugin.name);
                match server(&name, raw, &env) {
                    Ok(mut transport) => {
                        if let Transport::Stdio { env: server_env, .. } = &mut transport {
                            for (key, value) in plugin.dirs.env() {
                                server_env.entry(key.to_owned()).or_insert(value);
                            }
                        }
                        let source = format!("plugin {} ({})", plugin.id, part.path.display());
                        // Lowest precedence, as in Claude Code: a settings file's server of the
                        // same name stays.
                        servers.entry(name.clone()).or_insert(McpServerConfig {
                            name,
                            transport,
                            scope,
                            source,
                            oauth,
                        });
                    }
                    Err(problem) => problems.push(format!(
                        "{}: MCP server `{name}` of plugin `{}` {problem}; it is left out",
                        part.path.display(),
                        plugin.id
                    )),
                }
            }
        }
    }
}

fn server(name: &str, raw: RawServer, env: &HashMap<String, String>) -> Result<Transport, String> {
    let expand = |text: &str| expand(text, env);
    let headers = || raw.headers.iter().map(|(key, value)| (key.clone(), expand(value))).collect();
    match (raw.kind.as_deref(), &raw.command, &raw.url) {
        (None | Some("stdio"), Some(command), _) => Ok(Transport::Stdio {
            command: expand(command),
            args: raw.args.iter().map(|arg| expand(arg)).collect(),
            env: raw.env.iter().map(|(key, value)| (key.clone(), expand(value))).collect(),
        }),
        (Some("http" | "streamable-http" | "streamableHttp"), _, Some(url)) | (None, None, Some(url)) => {
            Ok(Transport::Http { url: expand(url), headers: headers() })
        }
        (Some("sse"), _, Some(url)) => Ok(Transport::Sse { url: expand(url), headers: headers() }),
        (Some(kind), _, _) => {
            Err(format!("has type `{kind}` without what it needs (a `command` for stdio, a `url` for http and sse)"))
        }
        (None, None, None) => Err(format!("`{name}` has neither a `command` nor a `url`")),
    }
}

/// `${VAR}` and `${VAR:-default}` from `env`; an unset variable without a default becomes empty.
pub fn expand(text: &str, env: &HashMap<String, String>) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let Some(end) = rest[start..].find('}') else {
            out.push_str(&rest[start..]);
            return out;
        };
        let inner = &rest[start + 2..start + end];
        let (name, default) = match inner.split_once(":-") {
            Some((name, default)) => (name, Some(default)),
            None => (inner, None),
        };
        match env.get(name).filter(|value| !value.is_empty()) {
            Some(value) => out.push_str(value),
            None => out.push_str(default.unwrap_or_default()),
        }
        rest = &rest[start + end + 1..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &[(&str, &str)]) -> HashMap<String, String> {
        pairs.iter().map(|(key, value)| ((*key).to_owned(), (*value).to_owned())).collect()
    }

    #[test]
    fn variables_expand_with_defaults() {
        let env = env(&[("TOKEN", "t0k"), ("EMPTY", "")]);
        assert_eq!(expand("Bearer ${TOKEN}", &env), "Bearer t0k");
        assert_eq!(expand("${MISSING:-http://127.0.0.1:3001}/mcp", &env), "http://127.0.0.1:3001/mcp");
        assert_eq!(expand("${EMPTY:-fallback}", &env), "fallback");
        assert_eq!(expand("${MISSING}x", &env), "x");
        assert_eq!(expand("no ${ end", &env), "no ${ end");
    }

    #[test]
    fn a_claude_code_mcp_json_reads_as_written() {
        let project = tempfile::tempdir().unwrap();
        let home = tempfile::tempdir().unwrap();
        std::fs::write(
            project.path().join(".mcp.json"),
            r#"{"mcpServers": {
                "everything": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-everything"], "env": {"API_KEY": "${KEY:-none}"}},
                "remote": {"type": "http", "url": "${BASE:-http://127.0.0.1:3001}/mcp", "headers": {"Authorization": "Bearer ${TOKEN}"}, "oauth": {"clientId": "larik-app", "callbackPort": 8765, "scopes": "repo read:org"}},
                "legacy": {"type": "sse", "url": "http://127.0.0.1:3002/sse"},
                "off": {"command": "nothing", "enabled": false},
                "broken": {"type": "http"}
            }}"#,
        )
        .unwrap();
        let env = env(&[
            ("XDG_CONFIG_HOME", home.path().to_str().unwrap()),
            ("TOKEN", "abc"),
            ("MCP_CLIENT_SECRET", "s3cret"),
        ]);
        let (servers, problems) = load(&SettingsFiles::default(), project.path(), &env).unwrap();
        let names: Vec<&str> = servers.iter().map(|server| server.name.as_str()).collect();
        assert_eq!(names, ["everything", "legacy", "remote"]);
        assert!(servers.iter().all(|server| server.scope == ServerScope::Project));
        assert_eq!(
            servers[0].transport,
            Transport::Stdio {
                command: "npx".into(),
                args: vec!["-y".into(), "@modelcontextprotocol/server-everything".into()],
                env: [("API_KEY".to_owned(), "none".to_owned())].into()
            }
        );
        assert_eq!(
            servers[2].transport,
            Transport::Http {
                url: "http://127.0.0.1:3001/mcp".into(),
                headers: [("Authorization".to_owned(), "Bearer abc".to_owned())].into()
            }
        );
        assert!(matches!(&servers[1].transport, Transport::Sse { url, .. } if url == "http://127.0.0.1:3002/sse"));
        let oauth = &servers[2].oauth;
        assert_eq!(
            (oauth.client_id.as_deref(), oauth.callback_port, oauth.scopes.as_deref()),
            (Some("larik-app"), Some(8765), Some("repo read:org"))
        );
        assert_eq!(
            oauth.client_secret.as_deref(),
            Some("s3cret"),
            "the secret comes from MCP_CLIENT_SECRET, never the file"
        );
        // The OAuth settings are part of what the user approves.
        let mut changed = servers[2].clone();
        changed.oauth.client_id = Some("someone-else".into());
        assert_ne!(changed.canonical(), servers[2].canonical());
        assert!(
            !format!("{:?} {}", servers[2], servers[2].canonical()).contains("s3cret"),
            "the secret is never shown"
        );
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert!(problems[0].contains("`broken`"));
        std::fs::write(project.path().join(".mcp.json"), "{oops").unwrap();
        assert!(
            load(&SettingsFiles::default(), project.path(), &env).is_err(),
            "a malformed file is an error naming it"
        );
    }

    #[test]
    fn the_fingerprint_follows_what_runs_not_secret_values() {
        let server = |args: &[&str], secret: &str| McpServerConfig {
            name: "s".into(),
            transport: Transport::Stdio {
                command: "node".into(),
                args: args.iter().map(|arg| (*arg).to_owned()).collect(),
                env: [("KEY".to_owned(), secret.to_owned())].into(),
            },
            scope: ServerScope::Project,
            source: ".mcp.json".into(),
            oauth: OAuthSettings::default(),
        };
        assert_eq!(server(&["a.js"], "one").canonical(), server(&["a.js"], "two").canonical());
        assert_ne!(server(&["a.js"], "one").canonical(), server(&["b.js"], "one").canonical());
        assert!(!server(&["a.js"], "one").describe().contains("one"), "secrets are not shown");
    }

    #[test]
    fn the_fingerprint_of_a_remote_server_follows_its_oauth_settings() {
        let remote =
            |transport: fn(String, BTreeMap<String, String>) -> Transport, oauth: OAuthSettings| McpServerConfig {
                name: "s".into(),
                transport: transport(
                    "https://mcp.example.com/mcp".into(),
                    [("Authorization".to_owned(), "Bearer one".to_owned())].into(),
                ),
                scope: ServerScope::Project,
                source: ".mcp.json".into(),
                oauth,
            };
        let http = |url, headers| Transport::Http { url, headers };
        let sse = |url, headers| Transport::Sse { url, headers };
        let base = OAuthSettings { client_id: Some("larik".into()), ..OAuthSettings::default() };
        let changes: [(&str, OAuthSettings); 7] = [
            ("no oauth", OAuthSettings::default()),
            ("client id", OAuthSettings { client_id: Some("someone-else".into()), ..base.clone() }),
            ("a secret", OAuthSettings { client_secret: Some("s3cret".into()), ..base.clone() }),
            ("callback port", OAuthSettings { callback_port: Some(8765), ..base.clone() }),
            ("scopes", OAuthSettings { scopes: Some("repo".into()), ..base.clone() }),
            (
                "metadata",
                OAuthSettings { auth_server_metadata_url: Some("https://as.example.com/meta".into()), ..base.clone() },
            ),
            (
                "document",
                OAuthSettings { client_metadata_url: Some("https://larik.dev/client.json".into()), ..base.clone() },
            ),
        ];
        for transport in [http, sse] {
            let approved = remote(transport, base.clone()).canonical();
            for (what, oauth) in &changes {
                assert_ne!(remote(transport, oauth.clone()).canonical(), approved, "{what} asks again");
            }
            // What the secret is, and what the headers hold, change without asking again.
            let with_secret = |secret: &str| OAuthSettings { client_secret: Some(secret.into()), ..base.clone() };
            assert_eq!(
                remote(transport, with_secret("one")).canonical(),
                remote(transport, with_secret("two")).canonical()
            );
            let mut other_header = remote(transport, base.clone());
            if let Transport::Http { headers, .. } | Transport::Sse { headers, .. } = &mut other_header.transport {
                headers.insert("Authorization".into(), "Bearer two".into());
            }
            assert_eq!(other_header.canonical(), approved);
            assert!(!approved.contains("Bearer one"), "{approved}");
        }
    }
}
