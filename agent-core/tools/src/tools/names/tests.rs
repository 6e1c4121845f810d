use serde_json::json;

use super::*;
use crate::tools::{
    apply_code_action::ApplyCodeAction, bash::Bash, edit::Edit, glob::Glob, grep::Grep, multi_edit::MultiEdit,
    read::Read, todo::Todo, web_fetch::WebFetch, web_search::WebSearch, write::Write,
};

fn built_in() -> Vec<ToolNames<'static>> {
    vec![
        ToolNames::of::<Bash>(),
        ToolNames::of::<Read>(),
        ToolNames::of::<Write>(),
        ToolNames::of::<Edit>(),
        ToolNames::of::<MultiEdit>(),
        ToolNames::of::<Grep>(),
        ToolNames::of::<Glob>(),
        ToolNames::of::<WebFetch>(),
        ToolNames::of::<WebSearch>(),
        ToolNames::of::<Todo>(),
        ToolNames::of::<ApplyCodeAction>(),
    ]
}

fn named(name: &str) -> ToolNames<'static> {
    built_in().into_iter().find(|names| names.name == name).unwrap_or_else(|| panic!("no tool {name}"))
}

#[test]
fn every_built_in_counterpart_answers_to_claude_codes_name() {
    let expected = [
        ("bash", "Bash"),
        ("read", "Read"),
        ("write", "Write"),
        ("edit", "Edit"),
        ("multi_edit", "MultiEdit"),
        ("grep", "Grep"),
        ("glob", "Glob"),
        ("web_fetch", "WebFetch"),
        ("web_search", "WebSearch"),
        ("todo", "TodoWrite"),
    ];
    for (larik, claude) in expected {
        let names = named(larik);
        assert_eq!(names.claude_code_name(), claude);
        assert!(names.answer_to(claude) && names.answer_to(larik), "{larik}");
        let others = built_in().into_iter().filter(|other| other.name != larik && other.family.is_none());
        for other in others {
            assert!(!other.answer_to(claude), "{} answers to {claude}", other.name);
        }
    }
}

#[test]
fn other_tools_keep_their_names() {
    for name in ["mcp__github__create_issue", "bash_output", "kill_shell", "ask_user"] {
        assert_eq!(ToolNames::from(name).claude_code_name(), name);
    }
    assert!(!named("bash").answer_to("BashOutput"));
    assert_eq!(named("apply_code_action").claude_code_name(), "apply_code_action");
}

#[test]
fn an_edit_rule_names_every_tool_that_edits_a_file() {
    for editor in ["edit", "write", "multi_edit", "apply_code_action"] {
        assert!(named(editor).answer_to("edit") && named(editor).answer_to("Edit"), "{editor}");
    }
    assert!(!named("edit").answer_to("Write") && !named("read").answer_to("Edit"));
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
        assert_eq!(named(tool).to_claude_code_input(&larik), claude, "{tool}");
        assert_eq!(named(tool).from_claude_code_input(&claude), larik, "{tool}");
    }
}

#[test]
fn grep_flags_use_ripgrep_spellings() {
    let grep = named("grep");
    let larik = json!({"pattern": "fn main", "path": "src", "glob": "*.rs", "type": "rust", "case_insensitive": true, "multiline": false,
        "output_mode": "content", "context": 2, "before_context": 1, "after_context": 3, "head_limit": 20});
    let claude = json!({"pattern": "fn main", "path": "src", "glob": "*.rs", "type": "rust", "-i": true, "multiline": false,
        "output_mode": "content", "-C": 2, "-B": 1, "-A": 3, "head_limit": 20});
    assert_eq!(grep.to_claude_code_input(&larik), claude);
    assert_eq!(grep.from_claude_code_input(&claude), larik);
    assert_eq!(
        grep.to_claude_code_input(&json!({"pattern": "x", "file_type": "py"})),
        json!({"pattern": "x", "type": "py"})
    );
    // Claude Code's `-n` has no counterpart and is kept; Larik ignores it.
    assert_eq!(grep.from_claude_code_input(&json!({"pattern": "x", "-n": true})), json!({"pattern": "x", "-n": true}));
}

#[test]
fn shared_and_unknown_fields_pass_through() {
    let bash = json!({"command": "cargo test", "timeout": 120000, "description": "tests", "run_in_background": false, "sandbox": true});
    assert_eq!(named("bash").to_claude_code_input(&bash), bash);
    assert_eq!(named("bash").from_claude_code_input(&bash), bash);
    let todos = json!({"todos": [{"content": "write tests", "status": "in_progress", "priority": "high"}]});
    assert_eq!(named("todo").to_claude_code_input(&todos), todos);
    for (tool, input) in [
        ("web_search", json!({"query": "rust regex", "max_results": 5})),
        ("web_fetch", json!({"url": "https://a.b", "max_length": 100})),
        ("glob", json!({"pattern": "**/*.rs", "path": "src"})),
    ] {
        assert_eq!(named(tool).to_claude_code_input(&input), input, "{tool}");
    }
    assert_eq!(ToolNames::from("mcp__x__y").to_claude_code_input(&json!({"path": "a"})), json!({"path": "a"}));
    assert_eq!(named("read").to_claude_code_input(&json!("not an object")), json!("not an object"));
}

#[test]
fn mapping_back_accepts_larik_spellings_and_prefers_claude_ones() {
    assert_eq!(
        named("edit").from_claude_code_input(&json!({"path": "a", "old_string": "x", "new_string": "y"})),
        json!({"path": "a", "old_string": "x", "new_string": "y"})
    );
    assert_eq!(
        named("write").from_claude_code_input(&json!({"path": "old", "file_path": "new", "content": ""})),
        json!({"path": "new", "content": ""})
    );
    assert_eq!(
        named("grep").from_claude_code_input(&json!({"case_insensitive": false, "-i": true, "pattern": "p"})),
        json!({"case_insensitive": true, "pattern": "p"})
    );
}

#[test]
fn tool_responses_have_claude_codes_shape() {
    assert_eq!(
        named("bash").tool_response(&json!({"command": "ls"}), "a\nb", false),
        json!({"stdout": "a\nb", "stderr": "", "interrupted": false})
    );
    assert_eq!(
        named("write").tool_response(&json!({"path": "a.txt"}), "wrote", false),
        json!({"filePath": "a.txt", "success": true})
    );
    assert_eq!(
        named("edit").tool_response(&json!({"file_path": "b.txt"}), "no match", true),
        json!({"filePath": "b.txt", "success": false})
    );
    assert_eq!(
        named("read").tool_response(&json!({"path": "c.rs"}), "1\tfn main", false),
        json!({"file": {"filePath": "c.rs", "content": "1\tfn main"}})
    );
    assert_eq!(
        named("grep").tool_response(&json!({}), "src/a.rs", false),
        json!({"output": "src/a.rs", "is_error": false})
    );
}
