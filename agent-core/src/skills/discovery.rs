//! Finding skills and commands on disk, as Claude Code and the Agent Skills format lay them out:
//! `<root>/<name>/SKILL.md` for a skill (bundled files beside it), `<root>/<name>.md` for a
//! command (a folder in between makes `dir:name`). Command roots come first and skill roots
//! after, each list from the user's own to the project's from the repository root down to the
//! working directory; a later one replaces an earlier one of the same name, so a skill overrides
//! a command.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::{Kind, Skill};
use crate::config::SettingsFiles;
use crate::config::plugins::PluginDirs;

/// How deep command folders nest (`a:b:name`), at most.
const MAX_COMMAND_DEPTH: usize = 3;

/// One directory to look in, and what it holds.
struct Root {
    dir: PathBuf,
    kind: RootKind,
    /// The plugin that brought it: its names are `plugin:name`.
    plugin: Option<(String, PluginDirs)>,
}

#[derive(Clone, Copy)]
enum RootKind {
    Skills,
    Commands,
}

/// The directories, lowest precedence first.
fn roots(files: &SettingsFiles, cwd: &Path, env: &HashMap<String, String>) -> Vec<Root> {
    let home = env.get("HOME").map(PathBuf::from);
    let config = larik_settings::paths::user_config_dir(env);
    let repository = cwd.ancestors().find(|dir| dir.join(".git").exists()).unwrap_or(cwd);
    let mut chain: Vec<&Path> = cwd.ancestors().take_while(|dir| dir.starts_with(repository)).collect();
    chain.reverse();
    let mut roots = Vec::new();
    // The plugins' first, the lowest precedence; their names are scoped, so they only clash
    // among themselves.
    let (plugins, _) = crate::config::plugins::enabled(files, cwd, env);
    for plugin in plugins {
        let scope = || Some((plugin.name.clone(), plugin.dirs.clone()));
        for dir in plugin.command_paths() {
            roots.push(Root { dir, kind: RootKind::Commands, plugin: scope() });
        }
        for dir in plugin.skill_paths() {
            roots.push(Root { dir, kind: RootKind::Skills, plugin: scope() });
        }
    }
    let mut push = |dir: PathBuf, kind: RootKind| roots.push(Root { dir, kind, plugin: None });
    if let Some(home) = &home {
        push(home.join(".claude/commands"), RootKind::Commands);
    }
    if let Some(config) = &config {
        push(config.join("commands"), RootKind::Commands);
    }
    for dir in &chain {
        push(dir.join(".claude/commands"), RootKind::Commands);
        push(dir.join(".larik/commands"), RootKind::Commands);
    }
    if let Some(home) = &home {
        push(home.join(".claude/skills"), RootKind::Skills);
    }
    if let Some(config) = &config {
        push(config.join("skills"), RootKind::Skills);
    }
    if let Some(home) = &home {
        push(home.join(".agents/skills"), RootKind::Skills);
    }
    for dir in &chain {
        push(dir.join(".agents/skills"), RootKind::Skills);
        push(dir.join(".claude/skills"), RootKind::Skills);
        push(dir.join(".larik/skills"), RootKind::Skills);
    }
    roots
}

/// Every skill and command for `cwd`, by name, and what the user should hear (a file left out).
pub fn discover(
    files: &SettingsFiles,
    cwd: &Path,
    env: &HashMap<String, String>,
) -> (BTreeMap<String, Skill>, Vec<String>) {
    let mut found = BTreeMap::new();
    let mut problems = Vec::new();
    for root in roots(files, cwd, env) {
        let files = match root.kind {
            RootKind::Skills => skill_files(&root.dir),
            RootKind::Commands if root.dir.is_file() => {
                let stem = root.dir.file_stem().and_then(|stem| stem.to_str()).unwrap_or_default();
                vec![(stem.to_owned(), root.dir.clone())]
            }
            RootKind::Commands => {
                let mut files = Vec::new();
                command_files(&root.dir, &mut Vec::new(), &mut files);
                files
            }
        };
        for (name, path) in files {
            let name = match &root.plugin {
                Some((plugin, _)) => format!("{plugin}:{name}"),
                None => name,
            };
            let Ok(text) = std::fs::read_to_string(&path) else { continue };
            let kind = match root.kind {
                RootKind::Skills => Kind::Skill { dir: path.parent().map(Path::to_path_buf).unwrap_or_default() },
                RootKind::Commands => Kind::Command,
            };
            match parse(name, kind, &path, &text) {
                Ok(mut skill) => {
                    skill.plugin = root.plugin.as_ref().map(|(_, dirs)| dirs.clone());
                    found.insert(skill.name.clone(), skill);
                }
                Err(problem) => problems.push(format!("{}: left out: {problem}", path.display())),
            }
        }
    }
    (found, problems)
}

/// `<dir>/<name>/SKILL.md`, sorted by name.
fn skill_files(dir: &Path) -> Vec<(String, PathBuf)> {
    let Ok(entries) = std::fs::read_dir(dir) else { return Vec::new() };
    let mut files: Vec<(String, PathBuf)> = entries
        .filter_map(Result::ok)
        .filter_map(|entry| {
            let name = entry.file_name().to_str()?.to_owned();
            let file = entry.path().join("SKILL.md");
            file.is_file().then_some((name, file))
        })
        .collect();
    files.sort();
    files
}

/// `<dir>/**/<name>.md`, named `a:b:name` by the folders on the way.
fn command_files(dir: &Path, folders: &mut Vec<String>, files: &mut Vec<(String, PathBuf)>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    let mut paths: Vec<PathBuf> = entries.filter_map(Result::ok).map(|entry| entry.path()).collect();
    paths.sort();
    for path in paths {
        let Some(stem) = path.file_stem().and_then(|stem| stem.to_str()).map(str::to_owned) else { continue };
        if path.is_dir() && folders.len() < MAX_COMMAND_DEPTH {
            folders.push(stem);
            command_files(&path, folders, files);
            folders.pop();
        } else if path.extension().is_some_and(|ext| ext == "md") && path.is_file() {
            let name = folders.iter().cloned().chain([stem]).collect::<Vec<_>>().join(":");
            files.push((name, path));
        }
    }
}

/// Reads one file. Frontmatter is optional for commands and required for skills.
pub(crate) fn parse(name: String, kind: Kind, path: &Path, text: &str) -> Result<Skill, String> {
    if name.is_empty() || !name.chars().all(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | ':' | '.')) {
        return Err(format!("`{name}` is not a usable name (letters, digits, `-`, `_`, `.`)"));
    }
    let (front, body) = match crate::frontmatter::split(text) {
        Some((front, body)) => (Some(front), body),
        None if matches!(kind, Kind::Command) => (None, text),
        None => return Err("SKILL.md has no YAML frontmatter between `---` lines".into()),
    };
    let (fields, argument_hint) = match front {
        Some(front) => fields(front)?,
        None => (BTreeMap::new(), None),
    };
    let text_field = |key: &str| {
        fields.get(key).and_then(Value::as_str).map(str::trim).filter(|value| !value.is_empty()).map(str::to_owned)
    };
    let body = body.trim().to_owned();
    let described = text_field("description");
    // A command without a description shows its first line, but the model is not offered it.
    let description = described
        .clone()
        .or_else(|| {
            body.lines()
                .map(str::trim)
                .find(|line| !line.is_empty())
                .map(|line| line.trim_start_matches('#').trim().to_owned())
        })
        .unwrap_or_default();
    let model_invocable = !flag(fields.get("disable-model-invocation")).unwrap_or(false)
        && (matches!(kind, Kind::Skill { .. }) || described.is_some());
    Ok(Skill {
        name,
        description,
        body,
        argument_hint,
        model_invocable,
        user_invocable: flag(fields.get("user-invocable")).unwrap_or(true),
        license: text_field("license"),
        compatibility: text_field("compatibility"),
        metadata: fields.get("metadata").cloned(),
        kind,
        path: path.to_path_buf(),
        plugin: None,
    })
}

/// The frontmatter's fields, with `argument-hint` taken as the raw rest of its line: Claude
/// Code's `argument-hint: [file] [focus]` is not valid YAML.
fn fields(front: &str) -> Result<(BTreeMap<String, Value>, Option<String>), String> {
    let mut hint = None;
    let mut rest = String::new();
    for line in front.lines() {
        match line.strip_prefix("argument-hint:") {
            Some(value) => {
                let value = value.trim().trim_matches(|c| c == '"' || c == '\'');
                hint = (!value.is_empty()).then(|| value.to_owned());
            }
            None => {
                rest.push_str(line);
                rest.push('\n');
            }
        }
    }
    if rest.trim().is_empty() {
        return Ok((BTreeMap::new(), hint));
    }
    let fields: BTreeMap<String, Value> =
        serde_saphyr::from_str(&rest).map_err(|error| format!("its frontmatter is not valid YAML: {error}"))?;
    Ok((fields, hint))
}

/// A boolean as Claude Code reads one: `true`/`false`, `yes`/`no`, `on`/`off`, `1`/`0`.
fn flag(value: Option<&Value>) -> Option<bool> {
    match value? {
        Value::Bool(flag) => Some(*flag),
        Value::Number(number) => number.as_i64().map(|number| number != 0),
        Value::String(text) => match text.trim().to_ascii_lowercase().as_str() {
            "true" | "yes" | "on" | "1" => Some(true),
            "false" | "no" | "off" | "0" => Some(false),
            _ => None,
        },
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::test_files::write;

    #[test]
    fn roots_override_from_the_user_to_the_nested_cwd_and_skills_override_commands() {
        let home = tempfile::tempdir().unwrap();
        let repo = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(repo.path().join(".git")).unwrap();
        let cwd = repo.path().join("services/api");
        let h = home.path();
        write(
            &h.join(".claude/skills/review/SKILL.md"),
            "---\nname: review\ndescription: the user's review\n---\nUser body",
        );
        write(
            &repo.path().join(".claude/skills/review/SKILL.md"),
            "---\ndescription: the repository's review\n---\nRepo body",
        );
        write(&cwd.join(".larik/skills/review/SKILL.md"), "---\ndescription: the service's review\n---\nService body");
        write(
            &repo.path().join(".agents/skills/lint/SKILL.md"),
            "---\ndescription: portable lint\nlicense: MIT\ncompatibility: needs ruff\nmetadata:\n  author: team\n---\nLint.",
        );
        write(&h.join(".claude/commands/lint.md"), "---\ndescription: the command lint\n---\nlint command");
        write(
            &repo.path().join(".claude/commands/git/commit.md"),
            "---\nallowed-tools: Bash(git add:*), Bash(git commit:*)\nargument-hint: [message] [--amend]\ndescription: Create a git commit\n---\nCommit: $ARGUMENTS",
        );
        write(
            &repo.path().join(".claude/commands/fixup.md"),
            "# Fix the last failing test\n\nRun the tests and fix the first failure.",
        );
        write(&repo.path().join(".claude/skills/broken/SKILL.md"), "---\ndescription: [unclosed\n---\nbody");
        write(&repo.path().join(".claude/skills/bare/SKILL.md"), "no frontmatter");
        write(
            &repo.path().join(".claude/skills/quiet/SKILL.md"),
            "---\ndescription: only when asked\ndisable-model-invocation: yes\nuser-invocable: off\n---\nbody",
        );
        let env: HashMap<String, String> = [
            ("HOME".to_owned(), h.display().to_string()),
            ("XDG_CONFIG_HOME".to_owned(), h.join(".config").display().to_string()),
        ]
        .into();
        let (found, problems) = discover(&SettingsFiles::default(), &cwd, &env);

        assert_eq!(found["review"].description, "the service's review", "the nested cwd wins");
        assert_eq!(found["review"].body, "Service body");
        assert!(matches!(&found["review"].kind, Kind::Skill { dir } if dir.ends_with(".larik/skills/review")));
        let lint = &found["lint"];
        assert_eq!(lint.description, "portable lint", "a skill overrides a command of the same name");
        assert_eq!((lint.license.as_deref(), lint.compatibility.as_deref()), (Some("MIT"), Some("needs ruff")));
        assert_eq!(lint.metadata.as_ref().unwrap()["author"], "team");
        let commit = &found["git:commit"];
        assert_eq!(commit.argument_hint.as_deref(), Some("[message] [--amend]"), "Claude Code's raw argument-hint");
        assert!(commit.model_invocable && commit.user_invocable && matches!(commit.kind, Kind::Command));
        let fixup = &found["fixup"];
        assert_eq!(fixup.description, "Fix the last failing test", "the first line stands in");
        assert!(!fixup.model_invocable, "a command without a description is the user's only");
        let quiet = &found["quiet"];
        assert!(!quiet.model_invocable && !quiet.user_invocable);
        assert_eq!(problems.len(), 2, "{problems:?}");
        assert!(
            problems.iter().any(|problem| problem.contains("broken/SKILL.md") && problem.contains("not valid YAML")),
            "{problems:?}"
        );
        assert!(
            problems.iter().any(|problem| problem.contains("bare/SKILL.md") && problem.contains("no YAML frontmatter")),
            "{problems:?}"
        );
    }
}
