//! Which language servers a session may start: the built-in ones whose binary is on PATH, then
//! those settings add (`lsp.servers`), minus any turned off (`enabled: false`, or `lsp.enabled:
//! false` for all). Each says which files it serves and how to find a file's project root.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use larik_settings::LspSettings;
use serde_json::Value;

/// One server Larik knows how to start.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerSpec {
    pub name: String,
    /// The binary, as found on PATH (or as settings wrote it).
    pub command: String,
    pub args: Vec<String>,
    /// File extensions it serves, and the language id of each.
    pub filetypes: Vec<(String, String)>,
    /// Files whose directory is a project root for it (`pyproject.toml`, `go.mod`).
    pub root_markers: Vec<String>,
    pub initialization_options: Option<Value>,
    /// Variables set for the server beside the session's environment.
    pub env: Vec<(String, String)>,
}

/// (name, binaries in order of preference, args, filetypes as `ext:language`, root markers)
type BuiltIn =
    (&'static str, &'static [&'static str], &'static [&'static str], &'static [&'static str], &'static [&'static str]);

const BUILT_IN: &[BuiltIn] = &[
    (
        "pyright",
        &["pyright-langserver", "basedpyright-langserver"],
        &["--stdio"],
        &["py:python", "pyi:python"],
        &["pyproject.toml", "pyrightconfig.json", "setup.py", "setup.cfg", "requirements.txt"],
    ),
    (
        "typescript",
        &["typescript-language-server"],
        &["--stdio"],
        &[
            "ts:typescript",
            "tsx:typescriptreact",
            "js:javascript",
            "jsx:javascriptreact",
            "mjs:javascript",
            "cjs:javascript",
            "mts:typescript",
            "cts:typescript",
        ],
        &["tsconfig.json", "jsconfig.json", "package.json"],
    ),
    ("gopls", &["gopls"], &[], &["go:go"], &["go.work", "go.mod"]),
    (
        "clangd",
        &["clangd"],
        &[],
        &["c:c", "h:c", "cc:cpp", "cpp:cpp", "cxx:cpp", "hpp:cpp", "hh:cpp"],
        &["compile_commands.json", "compile_flags.txt", ".clangd"],
    ),
    ("rust-analyzer", &["rust-analyzer"], &[], &["rs:rust"], &["Cargo.toml"]),
];

impl ServerSpec {
    /// The names of the servers Larik knows without settings, whether on PATH or not.
    pub fn built_in_names() -> impl Iterator<Item = &'static str> {
        BUILT_IN.iter().map(|(name, ..)| *name)
    }

    /// The servers this session may use, given its environment (PATH) and settings.
    pub fn available(env: &HashMap<String, String>, settings: &LspSettings) -> Vec<ServerSpec> {
        if settings.enabled == Some(false) {
            return Vec::new();
        }
        let mut specs: Vec<ServerSpec> = BUILT_IN
            .iter()
            .filter_map(|(name, binaries, args, filetypes, markers)| {
                let command = binaries.iter().find_map(|binary| on_path(binary, env))?;
                Some(ServerSpec {
                    name: (*name).to_owned(),
                    command: command.display().to_string(),
                    args: args.iter().map(|arg| (*arg).to_owned()).collect(),
                    filetypes: filetypes.iter().map(|pair| filetype(pair)).collect(),
                    root_markers: markers.iter().map(|marker| (*marker).to_owned()).collect(),
                    initialization_options: safe_options(name),
                    env: safe_env(name),
                })
            })
            .collect();
        let mut names: Vec<&String> = settings.servers.keys().collect();
        names.sort();
        for name in names {
            let configured = &settings.servers[name];
            let existing = specs.iter().position(|spec| &spec.name == name);
            if configured.enabled == Some(false) {
                if let Some(index) = existing {
                    specs.remove(index);
                }
                continue;
            }
            let mut spec = match existing {
                Some(index) => specs.remove(index),
                None => ServerSpec {
                    name: name.clone(),
                    command: String::new(),
                    args: Vec::new(),
                    filetypes: Vec::new(),
                    root_markers: Vec::new(),
                    initialization_options: None,
                    env: Vec::new(),
                },
            };
            if let Some(command) = &configured.command {
                spec.command = command.clone();
            }
            if let Some(args) = &configured.args {
                spec.args = args.clone();
            }
            if let Some(filetypes) = &configured.filetypes {
                spec.filetypes = filetypes.iter().map(|pair| filetype(pair)).collect();
            }
            if let Some(markers) = &configured.root_markers {
                spec.root_markers = markers.clone();
            }
            if configured.initialization_options.is_some() {
                spec.initialization_options = configured.initialization_options.clone();
            }
            if spec.command.is_empty() || spec.filetypes.is_empty() {
                tracing::warn!(server = %name, "lsp.servers needs a command and filetypes; left out");
                continue;
            }
            // Servers from settings come first: the user's choice wins for their files.
            specs.insert(0, spec);
        }
        specs
    }

    pub fn serves(&self, path: &Path) -> bool {
        self.language(path).is_some()
    }

    fn language(&self, path: &Path) -> Option<&str> {
        let extension = path.extension()?.to_str()?;
        self.filetypes.iter().find(|(known, _)| known == extension).map(|(_, language)| language.as_str())
    }

    /// The language id of a file it serves.
    pub fn language_id(&self, path: &Path) -> &str {
        self.language(path).unwrap_or("plaintext")
    }

    /// The nearest directory above `path`, within `project`, that holds a root marker; else
    /// the project.
    pub fn root_for(&self, path: &Path, project: &Path) -> PathBuf {
        path.ancestors()
            .skip(1)
            .take_while(|dir| dir.starts_with(project))
            .find(|dir| self.root_markers.iter().any(|marker| dir.join(marker).exists()))
            .unwrap_or(project)
            .to_path_buf()
    }
}

/// What a built-in server is started with so that it does not run the project's code: the
/// servers run before anyone looked at the repository. rust-analyzer would build and run its
/// build scripts and proc macros.
fn safe_options(name: &str) -> Option<Value> {
    (name == "rust-analyzer").then(|| serde_json::json!({"cargo": {"buildScripts": {"enable": false}}, "procMacro": {"enable": false}, "checkOnSave": false}))
}

/// The same for the environment: the go command would fetch and run the toolchain a
/// repository's `go.mod` names.
fn safe_env(name: &str) -> Vec<(String, String)> {
    if name == "gopls" { vec![("GOTOOLCHAIN".into(), "local".into())] } else { Vec::new() }
}

/// `ext:language`, or `ext` alone for a language named like it.
fn filetype(pair: &str) -> (String, String) {
    match pair.split_once(':') {
        Some((extension, language)) => (extension.trim_start_matches('.').to_owned(), language.to_owned()),
        None => (pair.trim_start_matches('.').to_owned(), pair.trim_start_matches('.').to_owned()),
    }
}

/// The first executable `binary` in the environment's PATH.
fn on_path(binary: &str, env: &HashMap<String, String>) -> Option<PathBuf> {
    larik_host::child_process::on_path(binary, env.get("PATH")?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn built_ins_on_path_settings_add_change_and_turn_off() {
        let bin = tempfile::tempdir().unwrap();
        for name in ["pyright-langserver", "gopls"] {
            let file = bin.path().join(name);
            std::fs::write(&file, "#!/bin/sh\n").unwrap();
            std::fs::set_permissions(&file, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
        }
        let env: HashMap<String, String> = [("PATH".to_owned(), bin.path().display().to_string())].into();
        let names = |specs: &[ServerSpec]| specs.iter().map(|spec| spec.name.clone()).collect::<Vec<_>>();
        let specs = ServerSpec::available(&env, &LspSettings::default());
        assert_eq!(names(&specs), ["pyright", "gopls"], "only what is on PATH");
        assert_eq!(specs[0].language_id(Path::new("/p/a.py")), "python");
        let settings: LspSettings = serde_json::from_value(serde_json::json!({"servers": {
            "gopls": {"enabled": false},
            "zls": {"command": "zls", "filetypes": ["zig"], "rootMarkers": ["build.zig"]},
            "pyright": {"args": ["--stdio", "--verbose"]}
        }}))
        .unwrap();
        let specs = ServerSpec::available(&env, &settings);
        assert_eq!(names(&specs), ["zls", "pyright"]);
        assert_eq!(specs[1].args, ["--stdio", "--verbose"]);
        assert!(specs[0].serves(Path::new("/p/main.zig")));
        let off: LspSettings = serde_json::from_value(serde_json::json!({"enabled": false})).unwrap();
        assert!(ServerSpec::available(&env, &off).is_empty());
    }

    #[test]
    fn the_root_is_the_nearest_marker_within_the_project() {
        let project = tempfile::tempdir().unwrap();
        let service = project.path().join("services/api");
        std::fs::create_dir_all(service.join("src")).unwrap();
        std::fs::write(service.join("pyproject.toml"), "").unwrap();
        let spec = &ServerSpec::available(&HashMap::new(), &serde_json::from_value(serde_json::json!({"servers": {"py": {"command": "x", "filetypes": ["py"], "rootMarkers": ["pyproject.toml"]}}})).unwrap())[0];
        assert_eq!(spec.root_for(&service.join("src/app.py"), project.path()), service);
        assert_eq!(spec.root_for(&project.path().join("tool.py"), project.path()), project.path());
    }
}
