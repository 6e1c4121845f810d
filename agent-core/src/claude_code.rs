//! Claude Code's names for Larik's tools, one table for everything that reads them: permission
//! rules written as `Bash(...)` or `WebFetch(...)`, and hooks, so that users' existing scripts
//! read what they expect (`tool_name: "Bash"`, `tool_input.file_path`, `tool_input.command`), and an
//! `updatedInput` written in Claude Code's shape maps back to Larik's.
//!
//! | Larik        | Claude Code | Input fields (Larik → Claude Code); others kept as they are |
//! |--------------|-------------|--------------------------------------------------------------|
//! | `bash`       | `Bash`      | same names: `command`, `timeout` (ms in both), `description`, `run_in_background`; Larik's `sandbox` kept |
//! | `read`       | `Read`      | `path` → `file_path`; `offset`, `limit` |
//! | `write`      | `Write`     | `path` → `file_path`; `content` |
//! | `edit`       | `Edit`      | `path` → `file_path`; `old_string`, `new_string`, `replace_all` |
//! | `multi_edit` | `MultiEdit` | `path` → `file_path`; `edits[]` with `old_string`, `new_string`, `replace_all` |
//! | `grep`       | `Grep`      | `case_insensitive` → `-i`, `context` → `-C`, `before_context` → `-B`, `after_context` → `-A`, `file_type` → `type` (Larik's input already says `type`); `pattern`, `path`, `glob`, `output_mode`, `head_limit`, `multiline` |
//! | `glob`       | `Glob`      | `pattern`, `path` |
//! | `web_fetch`  | `WebFetch`  | `url`; Larik's `start`, `max_length` kept |
//! | `web_search` | `WebSearch` | `query`; Larik's `max_results` kept |
//! | `task`       | `Task`      | as they are |
//! | `todo`       | `TodoWrite` | `todos[]` with `content`, `status` (`pending`, `in_progress`, `completed`); Larik's `priority` kept |
//!
//! Other tools (`mcp__server__tool`, `bash_output`, `kill_shell`, `ask_user`) keep their names.
//! Only top-level input fields are renamed: nested items already share Claude Code's names.
//! Mapping back accepts either spelling; when both are present the Claude Code one wins, since
//! that is the shape the hook wrote.

use serde_json::{Map, Value, json};

const TOOL_NAMES: &[(&str, &str)] = &[
    ("bash", "Bash"),
    ("read", "Read"),
    ("write", "Write"),
    ("edit", "Edit"),
    ("multi_edit", "MultiEdit"),
    ("grep", "Grep"),
    ("glob", "Glob"),
    ("web_fetch", "WebFetch"),
    ("web_search", "WebSearch"),
    ("task", "Task"),
    ("skill", "Skill"),
    ("todo", "TodoWrite"),
];

const FILE_PATH: &[(&str, &str)] = &[("path", "file_path")];
const GREP_FLAGS: &[(&str, &str)] =
    &[("case_insensitive", "-i"), ("context", "-C"), ("before_context", "-B"), ("after_context", "-A")];

/// Claude Code's name for a Larik tool; names without a counterpart unchanged.
pub fn claude_tool_name(larik: &str) -> &str {
    TOOL_NAMES.iter().find(|(ours, _)| *ours == larik).map_or(larik, |(_, theirs)| theirs)
}

/// Larik's name for one of Claude Code's built-in tools.
pub fn larik_tool_name(claude: &str) -> Option<&'static str> {
    TOOL_NAMES.iter().find(|(_, theirs)| *theirs == claude).map(|(ours, _)| *ours)
}

/// Top-level fields renamed between the two spellings, as (Larik, Claude Code).
fn renames(larik_tool: &str) -> &'static [(&'static str, &'static str)] {
    match larik_tool {
        "read" | "write" | "edit" | "multi_edit" => FILE_PATH,
        "grep" => GREP_FLAGS,
        _ => &[],
    }
}

/// A Larik tool input in Claude Code's field names.
pub fn to_claude_input(larik_tool: &str, input: &Value) -> Value {
    let mut renamed = rename(input, renames(larik_tool).iter().copied());
    // GrepInput is read from `type` already; a `file_type` only appears if built by hand.
    if larik_tool == "grep"
        && let Value::Object(fields) = &mut renamed
        && let Some(file_type) = fields.remove("file_type")
    {
        fields.entry("type").or_insert(file_type);
    }
    renamed
}

/// An input in Claude Code's field names (an `updatedInput`) in Larik's; Larik's own spellings
/// pass through.
pub fn from_claude_input(larik_tool: &str, input: &Value) -> Value {
    rename(input, renames(larik_tool).iter().map(|(ours, theirs)| (*theirs, *ours)))
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

/// The `tool_response` of PostToolUse in Claude Code's shape where scripts read it, and a
/// plain `{output, is_error}` for other tools.
pub fn tool_response(larik_tool: &str, input: &Value, output_text: &str, is_error: bool) -> Value {
    let path = input.get("path").or_else(|| input.get("file_path")).and_then(Value::as_str).unwrap_or_default();
    match larik_tool {
        "bash" => json!({"stdout": output_text, "stderr": "", "interrupted": false}),
        "write" | "edit" | "multi_edit" => json!({"filePath": path, "success": !is_error}),
        "read" => json!({"file": {"filePath": path, "content": output_text}}),
        _ => json!({"output": output_text, "is_error": is_error}),
    }
}

/// Claude Code's `permission_mode` for a Larik mode id (`Mode::id`).
pub fn claude_permission_mode(larik_mode_id: &str) -> &'static str {
    match larik_mode_id {
        "accept-edits" => "acceptEdits",
        "plan" => "plan",
        "yolo" => "bypassPermissions",
        _ => "default",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_built_in_counterpart_maps_both_ways() {
        for (larik, claude) in TOOL_NAMES {
            assert_eq!(claude_tool_name(larik), *claude);
            assert_eq!(larik_tool_name(claude), Some(*larik));
        }
        assert_eq!(claude_tool_name("todo"), "TodoWrite");
        assert_eq!(claude_tool_name("multi_edit"), "MultiEdit");
    }

    #[test]
    fn other_tools_keep_their_names() {
        for name in ["mcp__github__create_issue", "bash_output", "kill_shell", "ask_user"] {
            assert_eq!(claude_tool_name(name), name);
        }
        assert_eq!(larik_tool_name("NotebookEdit"), None);
        assert_eq!(larik_tool_name("bash"), None);
    }

    #[test]
    fn file_tools_say_file_path() {
        let cases = [
            (
                "read",
                json!({"path": "src/a.rs", "offset": 10, "limit": 5}),
                json!({"file_path": "src/a.rs", "offset": 10, "limit": 5}),
            ),
            ("write", json!({"path": "a.txt", "content": "hi"}), json!({"file_path": "a.txt", "content": "hi"})),
            (
                "edit",
                json!({"path": "a", "old_string": "x", "new_string": "y", "replace_all": true}),
                json!({"file_path": "a", "old_string": "x", "new_string": "y", "replace_all": true}),
            ),
            (
                "multi_edit",
                json!({"path": "a", "edits": [{"old_string": "x", "new_string": "y", "replace_all": false}]}),
                json!({"file_path": "a", "edits": [{"old_string": "x", "new_string": "y", "replace_all": false}]}),
            ),
        ];
        for (tool, larik, claude) in cases {
            assert_eq!(to_claude_input(tool, &larik), claude, "{tool}");
            assert_eq!(from_claude_input(tool, &claude), larik, "{tool}");
        }
    }

    #[test]
    fn grep_flags_use_ripgrep_spellings() {
        let larik = json!({"pattern": "fn main", "path": "src", "glob": "*.rs", "type": "rust", "case_insensitive": true, "multiline": false,
            "output_mode": "content", "context": 2, "before_context": 1, "after_context": 3, "head_limit": 20});
        let claude = json!({"pattern": "fn main", "path": "src", "glob": "*.rs", "type": "rust", "-i": true, "multiline": false,
            "output_mode": "content", "-C": 2, "-B": 1, "-A": 3, "head_limit": 20});
        assert_eq!(to_claude_input("grep", &larik), claude);
        assert_eq!(from_claude_input("grep", &claude), larik);
        assert_eq!(
            to_claude_input("grep", &json!({"pattern": "x", "file_type": "py"})),
            json!({"pattern": "x", "type": "py"})
        );
        // Claude Code's `-n` has no counterpart and is kept; Larik ignores it.
        assert_eq!(
            from_claude_input("grep", &json!({"pattern": "x", "-n": true})),
            json!({"pattern": "x", "-n": true})
        );
    }

    #[test]
    fn shared_and_unknown_fields_pass_through() {
        let bash = json!({"command": "cargo test", "timeout": 120000, "description": "tests", "run_in_background": false, "sandbox": true});
        assert_eq!(to_claude_input("bash", &bash), bash);
        assert_eq!(from_claude_input("bash", &bash), bash);
        let todos = json!({"todos": [{"content": "write tests", "status": "in_progress", "priority": "high"}]});
        assert_eq!(to_claude_input("todo", &todos), todos);
        for (tool, input) in [
            ("web_search", json!({"query": "rust regex", "max_results": 5})),
            ("web_fetch", json!({"url": "https://a.b", "max_length": 100})),
            ("glob", json!({"pattern": "**/*.rs", "path": "src"})),
        ] {
            assert_eq!(to_claude_input(tool, &input), input, "{tool}");
        }
        assert_eq!(to_claude_input("mcp__x__y", &json!({"path": "a"})), json!({"path": "a"}));
        assert_eq!(to_claude_input("read", &json!("not an object")), json!("not an object"));
    }

    #[test]
    fn mapping_back_accepts_larik_spellings_and_prefers_claude_ones() {
        assert_eq!(
            from_claude_input("edit", &json!({"path": "a", "old_string": "x", "new_string": "y"})),
            json!({"path": "a", "old_string": "x", "new_string": "y"})
        );
        assert_eq!(
            from_claude_input("write", &json!({"path": "old", "file_path": "new", "content": ""})),
            json!({"path": "new", "content": ""})
        );
        assert_eq!(
            from_claude_input("grep", &json!({"case_insensitive": false, "-i": true, "pattern": "p"})),
            json!({"case_insensitive": true, "pattern": "p"})
        );
    }

    #[test]
    fn tool_responses_have_claude_codes_shape() {
        assert_eq!(
            tool_response("bash", &json!({"command": "ls"}), "a\nb", false),
            json!({"stdout": "a\nb", "stderr": "", "interrupted": false})
        );
        assert_eq!(
            tool_response("write", &json!({"path": "a.txt"}), "wrote", false),
            json!({"filePath": "a.txt", "success": true})
        );
        assert_eq!(
            tool_response("edit", &json!({"file_path": "b.txt"}), "no match", true),
            json!({"filePath": "b.txt", "success": false})
        );
        assert_eq!(
            tool_response("read", &json!({"path": "c.rs"}), "1\tfn main", false),
            json!({"file": {"filePath": "c.rs", "content": "1\tfn main"}})
        );
        assert_eq!(
            tool_response("grep", &json!({}), "src/a.rs", false),
            json!({"output": "src/a.rs", "is_error": false})
        );
    }

    #[test]
    fn permission_modes_use_claude_codes_names() {
        let cases = [
            ("default", "default"),
            ("accept-edits", "acceptEdits"),
            ("plan", "plan"),
            ("yolo", "bypassPermissions"),
            ("other", "default"),
        ];
        for (larik, claude) in cases {
            assert_eq!(claude_permission_mode(larik), claude);
        }
        // Every Larik mode has a name Claude Code reads back as the same mode.
        for mode in crate::permission::Mode::ALL {
            assert_eq!(
                crate::permission::Mode::from_setting(claude_permission_mode(mode.id())),
                Some(mode),
                "{mode:?}"
            );
        }
    }
}
