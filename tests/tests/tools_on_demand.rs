#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Tools offered on demand, through `larik acp` with a real MCP server (server-everything, from
//! `scripts/setup.sh`): the browser's tools and a server that connects after the first request
//! are found with `tool_search` and called with `use_tool`, the call going through the pipeline
//! as the named tool's own; and over the whole scripted session no request's prefix differs
//! from the previous request's except by what was appended, until the user clears the
//! conversation.

use std::path::PathBuf;

use larik_tests::harness::{Agent, Sandbox, message_text};
use larik_tests::mock_llm::{MockLlm, Scenario, Step, without_cache_markers};
use serde_json::{Value, json};

fn everything() -> String {
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("mcp/node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    assert!(script.exists(), "{} is missing: run scripts/setup.sh", script.display());
    script.display().to_string()
}

fn node() -> String {
    let output = std::process::Command::new("bash").args(["-c", "command -v node"]).output().unwrap();
    String::from_utf8(output.stdout).unwrap().trim().to_owned()
}

fn tool_names(request: &Value) -> Vec<String> {
    request["tools"].as_array().unwrap().iter().map(|tool| tool["name"].as_str().unwrap().to_owned()).collect()
}

/// The content blocks of a request's messages, in order, without cache markers.
fn blocks(request: &Value) -> Vec<Value> {
    without_cache_markers(request)["messages"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|message| match &message["content"] {
            Value::Array(blocks) => blocks.clone(),
            other => vec![other.clone()],
        })
        .collect()
}

/// `later` starts with everything `earlier` sent: the system prompt, the tools and every block.
fn only_appends(earlier: &Value, later: &Value) -> bool {
    let (before, after) = (without_cache_markers(earlier), without_cache_markers(later));
    let (old, new) = (blocks(earlier), blocks(later));
    before["system"] == after["system"]
        && before["tools"] == after["tools"]
        && new.len() > old.len()
        && new[..old.len()] == old[..]
}

/// A server that fails its first start and connects when started again: it arrives after the
/// session's first request.
fn late_server(sandbox: &Sandbox) -> PathBuf {
    let script = sandbox.home.path().join("late-server.sh");
    let mark = sandbox.home.path().join("late-server.started");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\nif [ ! -e '{mark}' ]; then : > '{mark}'; exit 1; fi\nexec '{node}' '{everything}' stdio\n",
            mark = mark.display(),
            node = node(),
            everything = everything()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    script
}

/// Asks `/mcp` (answered without the model) until the server says it is connected.
async fn until_connected(agent: &mut Agent, session: &str, server: &str) {
    let started = std::time::Instant::now();
    loop {
        let (_, updates) = agent.prompt(session, "/mcp", |_| "reject_once").await;
        let said = message_text(&updates);
        if said.contains(&format!("MCP server `{server}`")) && said.contains("connected, ") {
            return;
        }
        assert!(started.elapsed() < std::time::Duration::from_secs(30), "{server} never connected: {said}");
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }
}

#[tokio::test]
async fn a_whole_session_with_tools_on_demand_and_a_late_server_only_appends_to_its_prefix() {
    let sandbox = Sandbox::new();
    let server = late_server(&sandbox);
    sandbox.write_user_settings(&json!({"mcpServers": {"late": {"command": server, "args": []}}}));
    let steps = vec![
        // 1: the browser's tools are on demand; the model looks one up.
        Step::tool("s1", "tool_search", json!({"query": "browser navigate"})),
        Step::text("found it"),
        // 2: the late server's tools arrived meanwhile; found and called through use_tool.
        Step::tool("s2", "tool_search", json!({"query": "select:mcp__late__echo"})),
        Step::tool("u1", "use_tool", json!({"name": "mcp__late__echo", "input": {"message": "hello on demand"}})),
        Step::text("echoed"),
        // 3: after a switch to plan mode.
        Step::text("planned"),
        // 4: after /clear.
        Step::text("fresh"),
    ];
    let mock = MockLlm::start(Scenario { responses: steps }).await.unwrap();
    let mut agent = Agent::spawn(&sandbox.project_path(), &sandbox.env(mock.url()));
    agent.initialize().await;
    let session = agent.new_session(&sandbox.project_path()).await;
    agent.prompt(&session, "open a page", |_| "allow_once").await;
    until_connected(&mut agent, &session, "late").await;
    // A skill the user writes mid-session is read before the next prompt.
    let skill = sandbox.home.path().join(".claude/skills/release-notes");
    std::fs::create_dir_all(&skill).unwrap();
    std::fs::write(
        skill.join("SKILL.md"),
        "---\nname: release-notes\ndescription: Writes release notes from the git log\n---\nRead git log.\n",
    )
    .unwrap();
    let (_, updates) = agent.prompt(&session, "echo something", |_| "allow_once").await;
    let set = agent.request("session/set_mode", json!({"sessionId": session, "modeId": "plan"})).await;
    agent.response(set).await;
    agent.prompt(&session, "plan it", |_| "allow_once").await;
    agent.prompt(&session, "/clear", |_| "allow_once").await;
    agent.prompt(&session, "start over", |_| "allow_once").await;

    let requests = mock.requests();
    assert_eq!(requests.len(), 7, "{requests:#?}");
    let first = &requests[0];
    let listed = tool_names(first);
    assert!(listed.iter().any(|name| name == "tool_search") && listed.iter().any(|name| name == "use_tool"));
    assert!(!listed.iter().any(|name| name.starts_with("browser_")), "the browser is on demand: {listed:?}");
    assert!(!listed.iter().any(|name| name.starts_with("mcp__late__")), "the server was not there yet");
    let search = first["tools"].as_array().unwrap().iter().find(|tool| tool["name"] == "tool_search").unwrap();
    assert!(search["description"].as_str().unwrap().contains("browser_navigate"), "{search}");

    // The search answers with the schema the model then calls by.
    let found = blocks(&requests[1]).last().unwrap().to_string();
    assert!(found.contains("<tool name=\\\"browser_navigate\\\">") && found.contains("Input schema"), "{found}");

    // The late server's tools are told of in the next prompt, not by changing the list.
    let told = blocks(&requests[2]).iter().rev().find(|block| block["type"] == "text").unwrap().to_string();
    assert!(told.contains("More tools are offered on demand") && told.contains("mcp__late__echo"), "{told}");
    let echoed = blocks(&requests[4]).last().unwrap().to_string();
    assert!(echoed.contains("Echo: hello on demand"), "the call ran as the server's tool: {echoed}");
    let skill_note = blocks(&requests[2]).iter().map(Value::to_string).find(|text| text.contains("skills changed"));
    let skill_note = skill_note.expect("the model is told of the new skill");
    assert!(skill_note.contains("release-notes: Writes release notes from the git log"), "{skill_note}");
    let menu = updates.iter().find(|update| update["sessionUpdate"] == "available_commands_update");
    let menu = menu.expect("the editor's menu follows the new skill").to_string();
    assert!(menu.contains("\"release-notes\"") && menu.contains("\"compact\""), "{menu}");
    let shown = updates.iter().find(|update| update["toolCallId"] == "u1").unwrap();
    assert!(!shown["title"].as_str().unwrap_or_default().starts_with("Use "), "shown as the tool it called: {shown}");

    // Every request until /clear only appended, the mode switch and the new skill included (the
    // mode and the skills' change are notes in the prompt, not changes to the system prompt).
    for (index, pair) in requests[..6].windows(2).enumerate() {
        assert!(only_appends(&pair[0], &pair[1]), "request {} changed the prefix of {index}", index + 1);
    }
    // `/clear` is the user's own choice to start over: the conversation starts again, and the
    // tools are listed anew, the late server's now among them.
    let cleared = &requests[6];
    assert_eq!(blocks(cleared)[0]["text"], "start over", "a fresh conversation: {cleared}");
    assert!(tool_names(cleared).iter().any(|name| name == "mcp__late__echo"));
    assert!(cleared["system"].to_string().contains("release-notes"), "the new skill is in the fresh index");
    assert!(!first["system"].to_string().contains("release-notes"));
}

/// `use_tool` is no way around the permissions: the tool it names is decided on as its own call
/// (a command out of the sandbox asks).
#[tokio::test]
async fn a_call_through_use_tool_is_asked_about_as_the_tool_it_names() {
    let sandbox = Sandbox::new();
    let steps = vec![
        Step::tool(
            "u1",
            "use_tool",
            json!({"name": "bash", "input": {"command": "touch made-through-use-tool", "sandbox": false}}),
        ),
        Step::text("done"),
    ];
    let mock = MockLlm::start(Scenario { responses: steps }).await.unwrap();
    let mut agent = Agent::spawn(&sandbox.project_path(), &sandbox.env(mock.url()));
    agent.initialize().await;
    let session = agent.new_session(&sandbox.project_path()).await;
    let mut asked = Vec::new();
    agent
        .prompt(&session, "make a file", |params| {
            asked.push(params["toolCall"].clone());
            "reject_once"
        })
        .await;
    assert_eq!(asked.len(), 1, "asked once: {asked:?}");
    assert!(asked[0]["title"].as_str().unwrap().contains("touch made-through-use-tool"), "{asked:?}");
    assert!(!sandbox.project.path().join("made-through-use-tool").exists(), "a rejected call did not run");
    let result = blocks(&mock.requests()[1]).last().unwrap().to_string();
    assert!(result.contains("is_error"), "{result}");
}

/// `alwaysOfferedTools` in the user's settings keeps tools in the list; in a repository's
/// settings it is not read (each listed schema is paid for in every request).
#[tokio::test]
async fn the_user_keeps_tools_listed_and_a_repository_cannot() {
    for (whose, listed) in [("project", false), ("user", true)] {
        let sandbox = Sandbox::new();
        let file = match whose {
            "user" => sandbox.home.path().join(".config/larik/settings.json"),
            _ => sandbox.project.path().join(".larik/settings.json"),
        };
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(&file, json!({"alwaysOfferedTools": ["browser_*"]}).to_string()).unwrap();
        let mock = MockLlm::start(Scenario { responses: vec![Step::text("hi")] }).await.unwrap();
        let mut agent = Agent::spawn(&sandbox.project_path(), &sandbox.env(mock.url()));
        agent.initialize().await;
        let session = agent.new_session(&sandbox.project_path()).await;
        agent.prompt(&session, "hello", |_| "allow_once").await;
        let names = tool_names(&mock.requests()[0]);
        assert_eq!(names.iter().any(|name| name == "browser_navigate"), listed, "{whose}: {names:?}");
    }
}
