//! Permission rules: `tool` or `tool(pattern)`. Claude Code's spellings work too: the names its
//! users write (`Bash`, `WebFetch`), which each tool declares as its alias ([`ToolNames`]),
//! `Bash(git commit:*)`, `WebFetch(domain:example.com)`.
//!
//! What a pattern is matched against depends on the tool: a bash rule is a prefix of each command
//! in the line; a path rule (`read`, `write`, `edit`, `multi_edit`) is a glob on the file's path,
//! relative to the project or absolute; a `web_fetch` rule is a domain (subdomains included).

use std::path::Path;

use crate::tools::ToolNames;

/// One parsed rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rule {
    /// The tool as written: Larik's name, Claude Code's, a family or an MCP server.
    pub tool: String,
    pub pattern: Option<String>,
    /// The rule as written, for messages.
    pub text: String,
}

/// What a call offers for rules to match.
#[derive(Debug, Clone, Copy)]
pub enum Subject<'a> {
    /// One simple command of a bash line.
    Command(&'a str),
    /// A file, absolute, with the project root to make it relative.
    Path { path: &'a Path, root: &'a Path },
    /// The host a URL points to.
    Domain(&'a str),
    /// Nothing beyond the tool itself.
    Nothing,
}

impl Rule {
    pub fn parse(text: &str) -> Option<Rule> {
        let text = text.trim();
        let (tool, pattern) = match text.split_once('(') {
            Some((tool, rest)) => (tool.trim(), Some(rest.strip_suffix(')')?.trim().to_owned())),
            None => (text, None),
        };
        if tool.is_empty() {
            return None;
        }
        let pattern = pattern.filter(|pattern| !pattern.is_empty() && pattern != "*");
        Some(Rule { tool: tool.to_owned(), pattern, text: text.to_owned() })
    }

    /// Whether the rule covers this tool and subject. A rule with a pattern never covers a
    /// subject of the wrong kind.
    pub fn matches<'a>(&self, tool: impl Into<ToolNames<'a>>, subject: Subject<'_>) -> bool {
        if !self.names_tool(tool.into()) {
            return false;
        }
        let Some(pattern) = &self.pattern else { return true };
        match subject {
            Subject::Command(command) => command_matches(pattern, command),
            Subject::Path { path, root } => path_matches(pattern, path, root),
            Subject::Domain(host) => {
                let domain = pattern.strip_prefix("domain:").unwrap_or(pattern).trim_start_matches("*.");
                host == domain || host.ends_with(&format!(".{domain}"))
            }
            Subject::Nothing => false,
        }
    }

    /// Whether the rule names this tool, whatever its pattern.
    pub fn names_tool(&self, tool: ToolNames<'_>) -> bool {
        covers_tool(&self.tool, tool)
    }
}

/// Whether a rule's tool name covers `tool`: any name the tool answers to (its own, Claude
/// Code's, its family's: `edit` for every tool that edits a file), and as in Claude Code
/// `mcp__server` or `mcp__server__*` for every tool of that MCP server. Names match exactly as
/// written, with no case folding.
fn covers_tool(rule_tool: &str, tool: ToolNames<'_>) -> bool {
    if tool.answer_to(rule_tool) {
        return true;
    }
    let tool = tool.name;
    let server = rule_tool.strip_suffix("__*").unwrap_or(rule_tool);
    server.starts_with("mcp__")
        && !server["mcp__".len()..].contains("__")
        && tool.strip_prefix(server).is_some_and(|rest| rest.starts_with("__"))
}

/// `git commit*` and `git commit:*` are prefixes (`:*` only at a word boundary); anything else
/// must match the whole command.
fn command_matches(pattern: &str, command: &str) -> bool {
    if let Some(prefix) = pattern.strip_suffix(":*") {
        let prefix = prefix.trim_end();
        return command == prefix || command.starts_with(&format!("{prefix} "));
    }
    if let Some(prefix) = pattern.strip_suffix('*') {
        return command.starts_with(prefix);
    }
    command == pattern
}

fn path_matches(pattern: &str, path: &Path, root: &Path) -> bool {
    let expanded = match pattern.strip_prefix("~/") {
        Some(rest) => std::env::var("HOME").map(|home| format!("{home}/{rest}")).unwrap_or_else(|_| pattern.to_owned()),
        None => pattern.strip_prefix("./").unwrap_or(pattern).to_owned(),
    };
    let Ok(glob) = globset::GlobBuilder::new(&expanded).literal_separator(false).build() else { return false };
    let matcher = glob.compile_matcher();
    let relative = path.strip_prefix(root).ok();
    // A bare name like `.env` matches that file anywhere in the project.
    let by_name = !expanded.contains('/') && path.file_name().is_some_and(|name| matcher.is_match(name));
    matcher.is_match(path) || relative.is_some_and(|relative| matcher.is_match(relative)) || by_name
}

/// Rules by effect.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RuleSet {
    pub allow: Vec<Rule>,
    pub deny: Vec<Rule>,
    pub ask: Vec<Rule>,
    /// Allow rules the project's own settings bring: they count only once the user approved
    /// the project's settings.
    pub project_allow: Vec<Rule>,
}

impl RuleSet {
    pub fn from_lists(allow: &[String], deny: &[String], ask: &[String]) -> Self {
        Self { allow: parse_all(allow), deny: parse_all(deny), ask: parse_all(ask), project_allow: Vec::new() }
    }

    pub fn with_project_allow(mut self, rules: &[String]) -> Self {
        self.project_allow = parse_all(rules);
        self
    }

    pub fn extend(&mut self, other: RuleSet) {
        for (mine, theirs) in [
            (&mut self.allow, other.allow),
            (&mut self.deny, other.deny),
            (&mut self.ask, other.ask),
            (&mut self.project_allow, other.project_allow),
        ] {
            for rule in theirs {
                if !mine.contains(&rule) {
                    mine.push(rule);
                }
            }
        }
    }
}

fn parse_all(list: &[String]) -> Vec<Rule> {
    list.iter().filter_map(|text| Rule::parse(text)).collect()
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::tools::{DynTool, Registry};

    /// A built-in tool, with the names it declares.
    fn tool(name: &str) -> Arc<dyn DynTool> {
        Registry::builtin(None).get(name).unwrap()
    }

    #[test]
    fn run_time_tool_names_match_as_written() {
        let exact = Rule::parse("mcp__github__create_issue").unwrap();
        assert!(exact.matches("mcp__github__create_issue", Subject::Nothing));
        assert!(!exact.matches("mcp__github__delete_repo", Subject::Nothing));
        assert!(
            !Rule::parse("mcp__GitHub__create_issue").unwrap().matches("mcp__github__create_issue", Subject::Nothing),
            "no case folding"
        );
        for server in ["mcp__github", "mcp__github__*"] {
            let rule = Rule::parse(server).unwrap();
            assert!(rule.matches("mcp__github__delete_repo", Subject::Nothing), "{server}");
            assert!(!rule.matches("mcp__githubx__tool", Subject::Nothing), "{server}");
            assert!(!rule.matches(tool("bash").names(), Subject::Nothing), "{server}");
        }
        let skill = ToolNames::of::<crate::skills::tool::SkillTool>();
        assert!(Rule::parse("Skill").unwrap().matches(skill, Subject::Nothing));
        assert!(!Rule::parse("skill").unwrap().matches(tool("read").names(), Subject::Nothing));
    }

    #[test]
    fn parses_both_spellings() {
        let rule = Rule::parse("Bash(git commit:*)").unwrap();
        assert_eq!(rule.pattern.as_deref(), Some("git commit:*"));
        assert!(rule.names_tool(tool("bash").names()) && !rule.names_tool(tool("bash_output").names()));
        assert!(Rule::parse("bash(git commit:*)").unwrap().names_tool(tool("bash").names()));
        assert!(!Rule::parse("BASH").unwrap().names_tool(tool("bash").names()), "no case folding");
        assert_eq!(Rule::parse("web_fetch").unwrap().pattern, None);
        assert_eq!(Rule::parse("bash(*)").unwrap().pattern, None, "`(*)` is the bare rule");
        assert_eq!(Rule::parse("bash(unclosed"), None);
    }

    #[test]
    fn matches_by_subject_kind() {
        let bash = tool("bash");
        let bash = bash.names();
        let commit = Rule::parse("bash(git commit:*)").unwrap();
        assert!(commit.matches(bash, Subject::Command("git commit -m x")));
        assert!(commit.matches(bash, Subject::Command("git commit")));
        assert!(!commit.matches(bash, Subject::Command("git commitx")));
        assert!(Rule::parse("bash(make*)").unwrap().matches(bash, Subject::Command("make test")));
        assert!(!Rule::parse("bash(make)").unwrap().matches(bash, Subject::Command("make test")));
        let root = Path::new("/p");
        let read = tool("read");
        let read = read.names();
        let env = Rule::parse("Read(.env)").unwrap();
        assert!(env.matches(read, Subject::Path { path: Path::new("/p/sub/.env"), root }));
        assert!(!env.matches(read, Subject::Path { path: Path::new("/p/env.txt"), root }));
        let secrets = Rule::parse("read(secrets/**)").unwrap();
        assert!(secrets.matches(read, Subject::Path { path: Path::new("/p/secrets/a/key"), root }));
        let docs_file = Subject::Path { path: Path::new("/p/docs/x.md"), root };
        let (write, multi_edit) = (tool("write"), tool("multi_edit"));
        let editors =
            [write.names(), multi_edit.names(), ToolNames::of::<crate::tools::apply_code_action::ApplyCodeAction>()];
        for docs in ["edit(docs/**)", "Edit(docs/**)"] {
            let docs = Rule::parse(docs).unwrap();
            for editor in editors {
                assert!(docs.matches(editor, docs_file), "edit rules cover {}", editor.name);
            }
            assert!(!docs.matches(read, docs_file), "only a tool of the edit family");
        }
        assert!(!Rule::parse("Write(docs/**)").unwrap().matches(tool("edit").names(), docs_file));
        let web_fetch = tool("web_fetch");
        let domain = Rule::parse("WebFetch(domain:example.com)").unwrap();
        assert!(domain.matches(web_fetch.names(), Subject::Domain("docs.example.com")));
        assert!(!domain.matches(web_fetch.names(), Subject::Domain("example.com.evil.net")));
        assert!(!domain.matches(web_fetch.names(), Subject::Nothing));
    }
}
