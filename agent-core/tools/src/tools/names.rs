//! The names a tool is known by outside its own spec: its name, the name Claude Code gives it
//! (so a Claude Code user's permission rules, hook matchers, hook scripts and agent files that
//! say `Bash` or `Read` mean Larik's tool), and the family whose rules cover it. Each tool
//! declares these ([`super::Tool::CLAUDE_CODE`], [`super::Tool::RULE_FAMILY`]); nothing keeps a
//! table of tool names.
//!
//! A tool's [`ClaudeCodeAlias`] also says which top-level input fields Claude Code spells
//! differently (`path` is `file_path` there) and the shape of the `tool_response` its hooks read.
//! Nested items already share Claude Code's names. Mapping back (an `updatedInput` a hook wrote)
//! accepts either spelling; when both are present the Claude Code one wins, since that is the
//! shape the hook wrote.

use serde_json::{Map, Value, json};

/// The names rules, hooks and agent files know a tool by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ToolNames<'a> {
    pub name: &'a str,
    /// How Claude Code knows the tool, where it has a counterpart there.
    pub claude_code: Option<&'static ClaudeCodeAlias>,
    /// The family whose rules cover this tool too (`edit` covers every tool that edits a file).
    pub family: Option<RuleFamily>,
}

/// A family of tools one rule covers, by Larik's name and Claude Code's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RuleFamily {
    pub name: &'static str,
    pub claude_code: &'static str,
}

/// How Claude Code knows one of Larik's tools.
#[derive(Debug, PartialEq, Eq)]
pub struct ClaudeCodeAlias {
    pub name: &'static str,
    /// Top-level input fields Claude Code spells differently.
    pub fields: &'static [FieldRename],
    /// The shape of the `tool_response` Claude Code's PostToolUse hooks read.
    pub response: HookResponse,
}

/// One input field spelt differently in Claude Code.
#[derive(Debug, PartialEq, Eq)]
pub struct FieldRename {
    pub larik: &'static str,
    pub claude_code: &'static str,
    /// False where Larik reads Claude Code's spelling already and only hand-built inputs use the
    /// other (grep's `file_type` is read as `type`).
    pub maps_back: bool,
}

impl FieldRename {
    pub const fn both_ways(larik: &'static str, claude_code: &'static str) -> Self {
        Self { larik, claude_code, maps_back: true }
    }
}

/// The `tool_response` shapes Claude Code's hook scripts read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HookResponse {
    /// `{stdout, stderr, interrupted}`.
    Command,
    /// `{filePath, success}`.
    FileChange,
    /// `{file: {filePath, content}}`.
    FileRead,
    /// Larik's plain `{output, is_error}`.
    Output,
}

/// The input field the file tools name their file by, `file_path` in Claude Code.
pub const FILE_PATH: &[FieldRename] = &[FieldRename::both_ways("path", "file_path")];

impl<'a> From<&'a str> for ToolNames<'a> {
    /// A tool known only by its own name (an MCP server's).
    fn from(name: &'a str) -> Self {
        Self { name, claude_code: None, family: None }
    }
}

impl<'a> ToolNames<'a> {
    /// The names of a typed tool, as it declares them.
    pub fn of<T: super::Tool>() -> ToolNames<'static> {
        ToolNames { name: T::NAME, claude_code: T::CLAUDE_CODE, family: T::RULE_FAMILY }
    }

    /// Whether `written` (a rule's tool, a matcher's name, an agent file's tool list) names this
    /// tool, its Claude Code counterpart or its family.
    pub fn answer_to(&self, written: &str) -> bool {
        written == self.name
            || self.claude_code.is_some_and(|alias| alias.name == written)
            || self.family.is_some_and(|family| family.name == written || family.claude_code == written)
    }

    /// The name Claude Code's hooks see: its counterpart's, or the tool's own.
    pub fn claude_code_name(&self) -> &'a str {
        self.claude_code.map_or(self.name, |alias| alias.name)
    }

    /// A Larik input in Claude Code's field names.
    pub fn to_claude_code_input(&self, input: &Value) -> Value {
        let fields = self.claude_code.map_or(&[][..], |alias| alias.fields);
        rename(input, fields.iter().map(|field| (field.larik, field.claude_code)))
    }

    /// An input in Claude Code's field names (an `updatedInput`) in Larik's; Larik's own spellings
    /// pass through.
    pub fn from_claude_code_input(&self, input: &Value) -> Value {
        let fields = self.claude_code.map_or(&[][..], |alias| alias.fields);
        rename(input, fields.iter().filter(|field| field.maps_back).map(|field| (field.claude_code, field.larik)))
    }

    /// The `tool_response` of PostToolUse in Claude Code's shape where scripts read it.
    pub fn tool_response(&self, input: &Value, output_text: &str, is_error: bool) -> Value {
        let path = input.get("path").or_else(|| input.get("file_path")).and_then(Value::as_str).unwrap_or_default();
        match self.claude_code.map_or(HookResponse::Output, |alias| alias.response) {
            HookResponse::Command => json!({"stdout": output_text, "stderr": "", "interrupted": false}),
            HookResponse::FileChange => json!({"filePath": path, "success": !is_error}),
            HookResponse::FileRead => json!({"file": {"filePath": path, "content": output_text}}),
            HookResponse::Output => json!({"output": output_text, "is_error": is_error}),
        }
    }
}

/// `input` with each `from` key renamed `to`; a key already spelt `to` is replaced by the one
/// renamed, so the spelling being converted from wins.
fn rename<'a>(input: &Value, pairs: impl Iterator<Item = (&'a str, &'a str)> + Clone) -> Value {
    let Value::Object(fields) = input else { return input.clone() };
    let mut out = Map::new();
    for (key, value) in fields {
        match pairs.clone().find(|(from, _)| from == key) {
            Some((_, to)) => {
                out.insert(to.to_owned(), value.clone());
            }
            None => {
                let overridden = pairs.clone().any(|(from, to)| to == key && fields.contains_key(from));
                if !overridden {
                    out.insert(key.clone(), value.clone());
                }
            }
        }
    }
    Value::Object(out)
}

#[cfg(test)]
mod tests;
