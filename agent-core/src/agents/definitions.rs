//! Subagent definitions, as Claude Code writes them: `<name>.md` with YAML frontmatter (`name`,
//! `description`, `tools`, `model`, `isolation`, and Claude Code's `disallowedTools` and
//! `maxTurns`) and a body that becomes the child's system prompt. Found, lowest to highest
//! precedence, in `~/.claude/agents`, `~/.config/larik/agents`, then `.claude/agents` and
//! `.larik/agents` in each directory from the repository root down to the working directory; a
//! later definition of a name replaces an earlier one. Two are built in: `general-purpose` (all
//! tools) and `explore` (the read-only ones).
//!
//! Tool names may be Claude Code's (`Read`, `Grep`) or Larik's (`read`); either way they name
//! Larik's tools, each of which declares the names it answers to. A definition can only narrow what the child may do: the child shares the
//! parent's permissions (Claude Code's `permissionMode` is not read: it could widen them).

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::config::SettingsFiles;
use crate::tools::ToolNames;

/// The tools no child gets: children do not start children.
pub const PARENT_ONLY: &[&str] = &["task", "task_wait", "task_stop"];

/// The tools a child working in a worktree does not get: the session's language servers index
/// the parent's directory, so what they answer and the edits their actions make are about other
/// files than the child's.
pub const NOT_IN_A_WORKTREE: &[&str] = &["lsp", "apply_code_action"];

/// One kind of subagent the model may start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Definition {
    pub name: String,
    pub description: String,
    /// The tools it may use, as written; `None` is every tool the parent has.
    pub tools: Option<Vec<String>>,
    /// Tools it may not use, even when `tools` lists them or is absent, as written.
    pub disallowed: Vec<String>,
    /// A model or a role (`worker`, `explore`, `provider:model`); `None` is the parent's.
    pub model: Option<String>,
    /// `worktree` to work in a git worktree of its own.
    pub isolation: Option<String>,
    pub max_turns: Option<u32>,
    /// The system prompt.
    pub prompt: String,
    /// Where it was defined, for messages.
    pub source: String,
    /// Defined in the project (a cloned repository), not by the user: its `model` applies only
    /// once the user approved the project's settings, as the project's roles do.
    pub from_project: bool,
}

impl Definition {
    /// Whether the child may have this tool of the parent's. A listed `mcp__server` names every
    /// tool of that server.
    pub fn allows(&self, tool: ToolNames<'_>) -> bool {
        let names = |written: &String| tool.answer_to(written) || tool.name.starts_with(&format!("{written}__"));
        !PARENT_ONLY.contains(&tool.name)
            && !self.disallowed.iter().any(names)
            && self.tools.as_ref().is_none_or(|tools| tools.iter().any(names))
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Frontmatter {
    name: Option<String>,
    #[serde(default)]
    description: String,
    tools: Option<ToolList>,
    disallowed_tools: Option<ToolList>,
    model: Option<String>,
    isolation: Option<String>,
    max_turns: Option<u32>,
}

/// `tools: Read, Grep` (Claude Code's usual spelling) or a YAML list.
#[derive(Deserialize)]
#[serde(untagged)]
enum ToolList {
    Text(String),
    List(Vec<String>),
}

impl ToolList {
    fn names(self) -> Vec<String> {
        let names: Vec<String> = match self {
            Self::Text(text) => text.split(',').map(str::to_owned).collect(),
            Self::List(list) => list,
        };
        names.iter().map(|name| name.trim()).filter(|name| !name.is_empty()).map(str::to_owned).collect()
    }
}

/// The built-in definitions.
pub fn builtin() -> Vec<Definition> {
    let definition = |name: &str, description: &str, tools: Option<&[&str]>, model: &str, prompt: &str| Definition {
        name: name.into(),
        description: description.into(),
        tools: tools.map(|tools| tools.iter().map(|tool| (*tool).to_owned()).collect()),
        disallowed: Vec::new(),
        model: Some(model.into()),
        isolation: None,
        max_turns: None,
        prompt: prompt.into(),
        source: "built in".into(),
        from_project: false,
    };
    vec![
        definition(
            "general-purpose",
            "A capable agent for multi-step work: researching a question across the code, or making a change and checking it.",
            None,
            "worker",
            "You are an agent doing one task for another agent, which delegated it to you. Work on your own until the task is done, using the tools you have.",
        ),
        definition(
            "explore",
            "Fast, read-only search of the code: where something is defined, how something works, which files matter for a change.",
            Some(&["read", "grep", "glob", "lsp"]),
            "explore",
            "You are an agent exploring a codebase for another agent. Search and read; do not change anything. Be thorough but quick.",
        ),
    ]
}

/// Reads one definition file; `None` with a problem when it cannot be used.
pub(crate) fn parse(path: &Path, text: &str) -> Result<Definition, String> {
    let fallback_name = path.file_stem().and_then(|stem| stem.to_str()).unwrap_or_default().to_owned();
    let (frontmatter, body) =
        crate::frontmatter::split(text).ok_or("it has no YAML frontmatter between `---` lines")?;
    let front: Frontmatter =
        serde_saphyr::from_str(frontmatter).map_err(|error| format!("its frontmatter is not valid: {error}"))?;
    let name = front.name.filter(|name| !name.trim().is_empty()).unwrap_or(fallback_name);
    if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == ':') {
        return Err(format!("`{name}` is not a usable name (letters, digits, `-`, `_`)"));
    }
    Ok(Definition {
        name,
        description: front.description.trim().to_owned(),
        tools: front.tools.map(ToolList::names),
        disallowed: front.disallowed_tools.map(ToolList::names).unwrap_or_default(),
        model: front.model.filter(|model| !model.is_empty() && model != "inherit"),
        isolation: front.isolation,
        max_turns: front.max_turns,
        prompt: body.trim().to_owned(),
        source: path.display().to_string(),
        from_project: false,
    })
}

/// The directories definitions come from, lowest precedence first.
pub fn roots(cwd: &Path, env: &HashMap<String, String>) -> Vec<PathBuf> {
    let mut roots = Vec::new();
    if let Some(home) = env.get("HOME") {
        roots.push(Path::new(home).join(".claude").join("agents"));
    }
    if let Some(dir) = larik_settings::paths::user_config_dir(env) {
        roots.push(dir.join("agents"));
    }
    let repository = cwd.ancestors().find(|dir| dir.join(".git").exists()).unwrap_or(cwd);
    let mut chain: Vec<&Path> = cwd.ancestors().take_while(|dir| dir.starts_with(repository)).collect();
    chain.reverse();
    for dir in chain {
        roots.push(dir.join(".claude").join("agents"));
        roots.push(dir.join(".larik").join("agents"));
    }
    roots
}

/// Every definition: the built-ins, then each root's, later ones replacing earlier ones of the
/// same name, sorted by name. Returns them and what the user should hear (a file left out).
pub fn load(files: &SettingsFiles, cwd: &Path, env: &HashMap<String, String>) -> (Vec<Definition>, Vec<String>) {
    let mut definitions: BTreeMap<String, Definition> =
        builtin().into_iter().map(|definition| (definition.name.clone(), definition)).collect();
    let mut problems = Vec::new();
    let users = [
        env.get("HOME").map(|home| Path::new(home).join(".claude").join("agents")),
        larik_settings::paths::user_config_dir(env).map(|dir| dir.join("agents")),
    ];
    // The plugins' first, the lowest precedence, each named `plugin:name`.
    let (plugins, _) = crate::config::plugins::enabled(files, cwd, env);
    for plugin in plugins {
        for root in plugin.agent_paths() {
            let scope = Some(plugin.name.as_str());
            read_root(&root, scope, plugin.from_project, &mut definitions, &mut problems);
        }
    }
    for root in roots(cwd, env) {
        let from_project = !users.iter().flatten().any(|user| *user == root);
        read_root(&root, None, from_project, &mut definitions, &mut problems);
    }
    (definitions.into_values().collect(), problems)
}

/// The definitions in `root` (a folder of `.md` files, or one file), named `plugin:name` when
/// a plugin brought them.
fn read_root(
    root: &Path,
    plugin: Option<&str>,
    from_project: bool,
    definitions: &mut BTreeMap<String, Definition>,
    problems: &mut Vec<String>,
) {
    let mut files: Vec<PathBuf> = match std::fs::read_dir(root) {
        Ok(entries) => entries.filter_map(Result::ok).map(|entry| entry.path()).collect(),
        Err(_) if root.is_file() => vec![root.to_owned()],
        Err(_) => return,
    };
    files.retain(|path| path.extension().is_some_and(|ext| ext == "md"));
    files.sort();
    for path in files {
        let Ok(text) = std::fs::read_to_string(&path) else { continue };
        match parse(&path, &text) {
            Ok(definition) => {
                let name = match plugin {
                    Some(plugin) => format!("{plugin}:{}", definition.name),
                    None => definition.name,
                };
                definitions.insert(name.clone(), Definition { name, from_project, ..definition });
            }
            Err(problem) => {
                problems.push(format!("{}: the subagent definition is left out: {problem}", path.display()))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn built_in(name: &str) -> std::sync::Arc<dyn crate::tools::DynTool> {
        crate::tools::Registry::builtin(None).get(name).unwrap()
    }

    #[test]
    fn a_claude_code_agent_file_reads_as_written() {
        let text = "---\nname: code-reviewer\ndescription: \"Reviews code. Use after a change.\\n<example>review my diff</example>\"\ntools: Read, Grep, Glob, Bash\nmodel: sonnet\ncolor: blue\n---\n\nYou are a senior reviewer.\n\nBe specific.\n";
        let definition = parse(Path::new("/p/.claude/agents/code-reviewer.md"), text).unwrap();
        assert_eq!(definition.name, "code-reviewer");
        assert!(
            definition.description.starts_with("Reviews code. Use after a change.\n<example>"),
            "{}",
            definition.description
        );
        assert_eq!(definition.tools.as_deref(), Some(["Read", "Grep", "Glob", "Bash"].map(str::to_owned).as_slice()));
        assert_eq!(definition.model.as_deref(), Some("sonnet"));
        assert_eq!(definition.prompt, "You are a senior reviewer.\n\nBe specific.");
        for (tool, allowed) in [("grep", true), ("read", true), ("bash", true), ("edit", false), ("write", false)] {
            assert_eq!(definition.allows(built_in(tool).names()), allowed, "{tool}");
        }
        assert!(!definition.allows(ToolNames::from("task")), "children do not start children");

        let listed = parse(Path::new("/p/x.md"), "---\ntools:\n  - Read\n  - mcp__github\ndisallowedTools: Bash\nmodel: inherit\npermissionMode: bypassPermissions\nmaxTurns: 5\n---\nBody").unwrap();
        assert_eq!(listed.name, "x", "the file's name when the frontmatter has none");
        assert_eq!(listed.model, None, "`inherit` is the parent's model");
        assert_eq!(listed.max_turns, Some(5));
        assert!(listed.allows(ToolNames::from("mcp__github__create_issue")) && listed.allows(built_in("read").names()));
        assert!(!listed.allows(built_in("bash").names()) && !listed.allows(ToolNames::from("mcp__gitlab__x")));

        assert!(parse(Path::new("/p/y.md"), "no frontmatter").is_err());
        assert!(parse(Path::new("/p/z.md"), "---\ntools: [unclosed\n---\n").is_err());
        let general = &builtin()[0];
        assert!(
            general.allows(built_in("edit").names()) && !general.allows(ToolNames::from("task_wait")),
            "every tool but the task tools"
        );
    }

    #[test]
    fn later_roots_override_earlier_ones_from_the_repository_root_down() {
        let home = tempfile::tempdir().unwrap();
        let repo = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(repo.path().join(".git")).unwrap();
        let sub = repo.path().join("crates/app");
        let write = |dir: &Path, name: &str, description: &str| {
            std::fs::create_dir_all(dir).unwrap();
            std::fs::write(dir.join(format!("{name}.md")), format!("---\ndescription: {description}\n---\nprompt"))
                .unwrap();
        };
        write(&home.path().join(".claude/agents"), "reviewer", "from the user's Claude Code");
        write(&repo.path().join(".claude/agents"), "reviewer", "from the repository");
        write(&sub.join(".larik/agents"), "reviewer", "from the crate");
        write(&repo.path().join(".claude/agents"), "explore", "the project's own explore");
        std::fs::write(repo.path().join(".claude/agents/broken.md"), "---\ndescription: [\n---\n").unwrap();
        let env: HashMap<String, String> = [("HOME".to_owned(), home.path().display().to_string())].into();
        let (definitions, problems) = load(&SettingsFiles::default(), &sub, &env);
        let find = |name: &str| definitions.iter().find(|definition| definition.name == name).unwrap();
        assert_eq!(find("reviewer").description, "from the crate");
        assert_eq!(find("explore").description, "the project's own explore");
        assert!(find("general-purpose").source == "built in");
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert!(problems[0].contains("broken.md"));
    }
}
