#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Memory that applies where the model works, over ACP with the real binary and Claude Code's
//! file shapes: a subdirectory's `CLAUDE.md` reaches the model the first time it reads a file
//! below it, a rule with `paths` frontmatter the first time it touches a matching file, each
//! once and after the cached prefix (the system prompt and earlier messages never change).

use larik_tests::harness::Sandbox;
use larik_tests::mock_llm::Step;
use larik_tests::turns::rejected_turn;
use serde_json::json;

#[tokio::test]
async fn nested_memory_and_path_rules_arrive_with_the_first_touch_and_keep_the_prefix() {
    let sandbox = Sandbox::new();
    let root = sandbox.project_path();
    let write = |path: &str, text: &str| {
        let path = root.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };
    write("CLAUDE.md", "Root memory.");
    write("services/api/CLAUDE.md", "API SERVICE MEMORY: handlers return Result.");
    write("services/api/main.rs", "fn main() {}\n");
    write("services/api/lib.rs", "pub fn f() {}\n");
    write("web/app.ts", "export const x = 1;\n");
    write(".claude/rules/typescript.md", "---\npaths: \"**/*.ts\"\n---\nTYPESCRIPT RULE: no default exports.");
    let read = |id: &str, path: &str| Step::tool(id, "read", json!({"path": path}));
    let steps = vec![
        read("t1", "services/api/main.rs"),
        read("t2", "services/api/lib.rs"),
        read("t3", "web/app.ts"),
        Step::text("done"),
    ];
    let turn = rejected_turn(&sandbox, &[], steps).await;
    let requests = &turn.requests;
    let result = |index: usize| requests[index]["messages"].as_array().unwrap().last().unwrap()["content"].to_string();
    let system = requests[0]["system"].to_string();
    assert!(
        system.contains("Root memory.")
            && !system.contains("API SERVICE MEMORY")
            && !system.contains("TYPESCRIPT RULE")
    );
    assert!(result(1).contains("API SERVICE MEMORY"), "{}", result(1));
    assert!(result(1).contains("services/api/CLAUDE.md"), "{}", result(1));
    assert!(!result(2).contains("API SERVICE MEMORY"), "once: {}", result(2));
    assert!(result(3).contains("TYPESCRIPT RULE: no default exports."), "{}", result(3));
    assert!(!result(3).contains("paths:"), "the frontmatter stays out: {}", result(3));
    // Each request only appends to the one before.
    for pair in requests.windows(2) {
        assert_eq!(pair[0]["system"], pair[1]["system"]);
        let before = pair[0]["messages"].as_array().unwrap();
        let after = pair[1]["messages"].as_array().unwrap();
        let strip = |value: &serde_json::Value| larik_tests::mock_llm::without_cache_markers(value);
        for (old, new) in before.iter().zip(after) {
            assert_eq!(strip(old), strip(new));
        }
    }
}

#[tokio::test]
async fn the_users_claude_md_excludes_leave_memory_files_out_and_a_repositorys_do_not() {
    let sandbox = Sandbox::new();
    let root = sandbox.project_path();
    let write = |path: &std::path::Path, text: &str| {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };
    write(&root.join("CLAUDE.md"), "ROOT MEMORY @docs/legacy.md");
    write(&root.join("docs/legacy.md"), "LEGACY NOTES");
    write(&root.join("other-team/CLAUDE.md"), "OTHER TEAM MEMORY");
    write(&root.join("other-team/code.rs"), "fn f() {}\n");
    write(
        &sandbox.home.path().join(".claude/settings.json"),
        &json!({"claudeMdExcludes": ["**/other-team/**", "**/docs/legacy.md"]}).to_string(),
    );
    // A repository excluding the root's memory changes nothing: only the user chooses.
    write(&root.join(".claude/settings.json"), &json!({"claudeMdExcludes": ["**/CLAUDE.md"]}).to_string());
    let steps = vec![Step::tool("t1", "read", json!({"path": "other-team/code.rs"})), Step::text("done")];
    let turn = rejected_turn(&sandbox, &[], steps).await;
    let system = turn.requests[0]["system"].to_string();
    assert!(system.contains("ROOT MEMORY") && !system.contains("LEGACY NOTES"), "{system}");
    let result = turn.requests[1]["messages"].as_array().unwrap().last().unwrap()["content"].to_string();
    assert!(!result.contains("OTHER TEAM MEMORY"), "{result}");
}
