#![allow(clippy::unwrap_used, clippy::expect_used)]
//! The MCP client over ACP with the real binary and real servers from npm
//! (`@modelcontextprotocol/server-everything`, `server-filesystem`, installed by
//! `scripts/setup.sh` into `tests/mcp/node_modules`): tools offered to the model, called through
//! the permission pipeline, results (text and images) in the next request; the editor's own
//! servers, a project's `.mcp.json` behind the user's approval, streamable HTTP, and a server that
//! dies mid-session.

use larik_tests::harness::{Agent, Sandbox};
use larik_tests::mcp_servers::{everything, everything_from_the_editor, node, servers_dir, session_with};
use larik_tests::mock_llm::{MockLlm, Scenario, Step};
use serde_json::{Value, json};

fn tool_names(request: &Value) -> Vec<String> {
    request["tools"]
        .as_array()
        .map(|tools| tools.iter().map(|tool| tool["name"].as_str().unwrap_or_default().to_owned()).collect())
        .unwrap_or_default()
}

fn last_result(request: &Value) -> Value {
    request["messages"].as_array().unwrap().last().unwrap()["content"][0].clone()
}

#[tokio::test]
async fn the_editors_stdio_server_offers_tools_that_run_through_the_pipeline() {
    let sandbox = Sandbox::new();
    let steps = vec![
        Step::tool("t1", "mcp__everything__echo", json!({"message": "hello over MCP"})),
        Step::tool("t2", "mcp__everything__get-tiny-image", json!({})),
        Step::tool("t3", "mcp__everything__toggle-simulated-logging", json!({})),
        Step::text("done"),
    ];
    let mock = MockLlm::start(Scenario { responses: steps }).await.unwrap();
    let mut agent = Agent::spawn(&sandbox.project_path(), &sandbox.env(mock.url()));
    let initialized = agent.initialize().await;
    assert_eq!(
        initialized["agentCapabilities"]["mcpCapabilities"],
        json!({"http": true, "sse": true}),
        "{initialized}"
    );
    let servers = json!([everything_from_the_editor()]);
    let session = session_with(&mut agent, &sandbox, servers).await;
    let mut asked = Vec::new();
    let (response, updates) = agent
        .prompt(&session, "use the server", |params| {
            asked.push(params["toolCall"]["toolCallId"].as_str().unwrap_or_default().to_owned());
            "allow_once"
        })
        .await;
    assert_eq!(response["result"]["stopReason"], "end_turn");
    let requests = mock.requests();
    let offered = tool_names(&requests[0]);
    for expected in ["mcp__everything__echo", "mcp__everything__get-sum", "mcp__everything__get-tiny-image", "bash"] {
        assert!(offered.iter().any(|name| name == expected), "{expected} offered: {offered:?}");
    }
    let mut sorted = offered.clone();
    sorted.sort();
    assert_eq!(offered, sorted, "tools are listed sorted by name, so the prompt prefix is stable");
    // echo and the image declare readOnlyHint and no open world; the logging toggle does not.
    assert_eq!(asked, ["t3"], "only the server tool that may change things asked first");
    let echoed = last_result(&requests[1]);
    assert!(echoed["content"].to_string().contains("Echo: hello over MCP"), "{echoed}");
    let image = last_result(&requests[2]);
    let parts = image["content"].as_array().unwrap();
    assert!(
        parts.iter().any(|part| part["type"] == "image" && part["source"]["media_type"] == "image/png"),
        "the image reaches the model: {image}"
    );
    assert!(
        last_result(&requests[3])["content"].to_string().to_lowercase().contains("logging"),
        "{}",
        last_result(&requests[3])
    );
    let shown = updates.iter().find(|update| update["toolCallId"] == "t2" && update["status"] == "completed").unwrap();
    assert!(
        shown["content"]
            .as_array()
            .unwrap()
            .iter()
            .any(|block| block["content"]["type"] == "image" && block["content"]["mimeType"] == "image/png"),
        "the editor shows the image: {shown}"
    );
}

#[tokio::test]
async fn a_projects_mcp_json_connects_only_once_approved_and_asks_again_when_changed() {
    let sandbox = Sandbox::new();
    let write_config = |args: Value| {
        let config = json!({"mcpServers": {"everything": {"command": node(), "args": args}}});
        std::fs::write(sandbox.project.path().join(".mcp.json"), serde_json::to_string_pretty(&config).unwrap())
            .unwrap();
    };
    write_config(json!([everything(), "stdio"]));
    let run = |answer: &'static str| {
        let sandbox = &sandbox;
        async move {
            let mock = MockLlm::start(Scenario { responses: vec![Step::text("ok")] }).await.unwrap();
            let mut agent = Agent::spawn(&sandbox.project_path(), &sandbox.env(mock.url()));
            agent.initialize().await;
            let session = agent.new_session(&sandbox.project_path()).await;
            let mut asked = Vec::new();
            agent
                .prompt(&session, "hi", |params| {
                    asked.push(params["toolCall"]["title"].as_str().unwrap_or_default().to_owned());
                    answer
                })
                .await;
            let offered = tool_names(&mock.requests()[0]);
            agent.close_stdin();
            agent.wait_exit().await;
            (asked, offered.iter().any(|name| name.starts_with("mcp__everything__")))
        }
    };
    let (asked, connected) = run("reject_once").await;
    assert_eq!(asked.len(), 1, "{asked:?}");
    assert!(asked[0].contains("MCP servers"), "{asked:?}");
    assert!(!connected, "an unapproved project server never connects");
    let (asked, connected) = run("allow_always").await;
    assert_eq!((asked.len(), connected), (1, true), "approved: it connects and its tools are in the first request");
    let (asked, connected) = run("reject_once").await;
    assert_eq!((asked.len(), connected), (0, true), "approved before: no question");
    write_config(json!([everything(), "stdio", "--changed"]));
    let (asked, _) = run("reject_once").await;
    assert_eq!(asked.len(), 1, "a changed definition asks again");
}

/// A free port on 127.0.0.1 for a server of the test's own.
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// server-everything listening on a port of its own in `mode` (`streamableHttp` or `sse`).
async fn everything_over_http(mode: &str) -> (tokio::process::Child, u16) {
    let port = free_port();
    let server = tokio::process::Command::new(node())
        .args([everything(), mode.to_owned()])
        .env("PORT", port.to_string())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let started = std::time::Instant::now();
    while tokio::net::TcpStream::connect(("127.0.0.1", port)).await.is_err() {
        assert!(started.elapsed() < std::time::Duration::from_secs(20), "server-everything did not listen");
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    (server, port)
}

/// A server from the user's settings, `{"type": kind, "url": "${EVERYTHING_URL}"}`, answers
/// get-sum.
async fn remote_server_answers(kind: &str, url: String) {
    let sandbox = Sandbox::new();
    let settings = sandbox.home.path().join(".config/larik/settings.json");
    std::fs::create_dir_all(settings.parent().unwrap()).unwrap();
    std::fs::write(
        &settings,
        json!({"mcpServers": {"remote": {"type": kind, "url": "${EVERYTHING_URL}"}}}).to_string(),
    )
    .unwrap();
    let steps = vec![Step::tool("t1", "mcp__remote__get-sum", json!({"a": 2, "b": 3})), Step::text("five")];
    let mock = MockLlm::start(Scenario { responses: steps }).await.unwrap();
    let mut env = sandbox.env(mock.url());
    env.push(("EVERYTHING_URL".into(), url));
    let mut agent = Agent::spawn(&sandbox.project_path(), &env);
    agent.initialize().await;
    let session = agent.new_session(&sandbox.project_path()).await;
    agent.prompt(&session, "add", |_| "allow_once").await;
    let requests = mock.requests();
    assert!(
        tool_names(&requests[0]).contains(&"mcp__remote__get-sum".to_owned()),
        "{kind}: {:?}",
        tool_names(&requests[0])
    );
    assert!(
        last_result(&requests[1])["content"].to_string().contains("The sum of 2 and 3 is 5"),
        "{kind}: {}",
        last_result(&requests[1])
    );
}

#[tokio::test]
async fn a_streamable_http_server_from_the_users_settings_connects() {
    let (mut server, port) = everything_over_http("streamableHttp").await;
    remote_server_answers("http", format!("http://127.0.0.1:{port}/mcp")).await;
    let _ = server.kill().await;
}

#[tokio::test]
async fn a_server_on_the_older_sse_transport_connects() {
    let (mut server, port) = everything_over_http("sse").await;
    remote_server_answers("sse", format!("http://127.0.0.1:{port}/sse")).await;
    let _ = server.kill().await;
}

/// The pid of a running process whose command line holds `needle`.
fn pid_with(needle: &str) -> Option<i32> {
    std::fs::read_dir("/proc").ok()?.filter_map(Result::ok).find_map(|entry| {
        let pid: i32 = entry.file_name().to_str()?.parse().ok()?;
        let cmdline = std::fs::read(entry.path().join("cmdline")).ok()?;
        String::from_utf8_lossy(&cmdline).contains(needle).then_some(pid)
    })
}

#[tokio::test]
async fn a_server_that_dies_is_reported_and_reconnected() {
    let sandbox = Sandbox::new();
    // A marker in the arguments finds this test's server among others.
    let marker = format!("--larik-test-{}", std::process::id());
    let steps = vec![
        Step::text("first"),
        Step::tool("t1", "mcp__everything__echo", json!({"message": "back"})),
        Step::text("second"),
    ];
    let mock = MockLlm::start(Scenario { responses: steps }).await.unwrap();
    let mut agent = Agent::spawn(&sandbox.project_path(), &sandbox.env(mock.url()));
    agent.initialize().await;
    let servers =
        json!([{"name": "everything", "command": node(), "args": [everything(), "stdio", marker], "env": []}]);
    let session = session_with(&mut agent, &sandbox, servers).await;
    agent.prompt(&session, "hi", |_| "allow_once").await;
    let pid = pid_with(&marker).expect("the server runs");
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), nix::sys::signal::Signal::SIGKILL).unwrap();
    // It comes back within the first backoff.
    let started = std::time::Instant::now();
    while pid_with(&marker).is_none_or(|again| again == pid) {
        assert!(started.elapsed() < std::time::Duration::from_secs(15), "the server was not restarted");
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    let (_, updates) = agent.prompt(&session, "again", |_| "allow_once").await;
    let said = serde_json::to_string(&updates).unwrap();
    assert!(said.contains("The MCP server `everything` stopped; reconnecting"), "the user heard once: {said}");
    let requests = mock.requests();
    assert!(
        last_result(&requests[2])["content"].to_string().contains("Echo: back"),
        "the tool works again: {}",
        last_result(&requests[2])
    );
}

#[tokio::test]
async fn slash_mcp_lists_the_servers_and_their_state() {
    let sandbox = Sandbox::new();
    let mock = MockLlm::start(Scenario { responses: vec![] }).await.unwrap();
    let mut agent = Agent::spawn(&sandbox.project_path(), &sandbox.env(mock.url()));
    agent.initialize().await;
    let servers = json!([
        everything_from_the_editor(),
        {"name": "missing", "command": "/nonexistent/mcp-server", "args": [], "env": []}
    ]);
    let session = session_with(&mut agent, &sandbox, servers).await;
    let (response, updates) = agent.prompt(&session, "/mcp", |_| "reject_once").await;
    assert_eq!(response["result"]["stopReason"], "end_turn");
    let said = larik_tests::harness::message_text(&updates);
    assert!(
        said.contains("MCP server `everything`") && said.contains("connected, ") && said.contains("tools"),
        "{said}"
    );
    assert!(
        said.contains("MCP server `missing`") && said.contains("failed: could not start `/nonexistent/mcp-server`"),
        "{said}"
    );
    assert!(mock.requests().is_empty(), "a slash command does not go to the model");
}

#[tokio::test]
async fn resources_are_listed_read_and_attached_when_mentioned() {
    let sandbox = Sandbox::new();
    let steps = vec![
        Step::tool("t1", "list_mcp_resources", json!({})),
        Step::tool(
            "t2",
            "read_mcp_resource",
            json!({"server": "everything", "uri": "demo://resource/static/document/architecture.md"}),
        ),
        Step::text("read"),
        Step::text("seen"),
    ];
    let mock = MockLlm::start(Scenario { responses: steps }).await.unwrap();
    let mut agent = Agent::spawn(&sandbox.project_path(), &sandbox.env(mock.url()));
    agent.initialize().await;
    let servers = json!([everything_from_the_editor()]);
    let session = session_with(&mut agent, &sandbox, servers).await;
    agent.prompt(&session, "look around", |_| panic!("reading resources needs no approval")).await;
    let requests = mock.requests();
    assert!(tool_names(&requests[0]).contains(&"read_mcp_resource".to_owned()), "offered once a server has resources");
    let listed = last_result(&requests[1])["content"].to_string();
    assert!(listed.contains("everything: demo://resource/static/document/architecture.md"), "{listed}");
    let read = last_result(&requests[2])["content"].to_string();
    assert!(read.len() > 200 && !read.contains("could not read"), "{read}");
    agent
        .prompt(
            &session,
            "compare with @everything:demo://resource/static/document/architecture.md please",
            |_| "reject_once",
        )
        .await;
    let mentioned = serde_json::to_string(&mock.requests()[3]["messages"]).unwrap();
    assert!(
        mentioned.contains(
            "<mcp-resource server=\\\"everything\\\" uri=\\\"demo://resource/static/document/architecture.md\\\">"
        ),
        "the mention came with the resource: {mentioned}"
    );
}

#[tokio::test]
async fn a_servers_prompts_are_slash_commands_expanded_with_their_arguments() {
    let sandbox = Sandbox::new();
    let mock = MockLlm::start(Scenario { responses: vec![Step::text("Nice city.")] }).await.unwrap();
    let mut agent = Agent::spawn(&sandbox.project_path(), &sandbox.env(mock.url()));
    agent.initialize().await;
    let servers = json!([everything_from_the_editor()]);
    let session = session_with(&mut agent, &sandbox, servers).await;
    // The built-in commands come first; the server's prompts follow once it is connected.
    let mut announced = Vec::new();
    while !announced.iter().any(|name: &String| name == "mcp__everything__args-prompt") {
        let message = agent.next().await;
        if message["params"]["update"]["sessionUpdate"] == "available_commands_update" {
            announced = message["params"]["update"]["availableCommands"]
                .as_array()
                .unwrap()
                .iter()
                .map(|command| command["name"].as_str().unwrap().to_owned())
                .collect();
        }
    }
    assert!(
        announced.contains(&"compact".to_owned()) && announced.contains(&"mcp__everything__simple-prompt".to_owned()),
        "{announced:?}"
    );
    let (response, _) =
        agent.prompt(&session, "/mcp__everything__args-prompt Lisbon Lisboa District", |_| "reject_once").await;
    assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");
    let sent = serde_json::to_string(&mock.requests()[0]["messages"]).unwrap();
    assert!(
        sent.contains("Lisbon") && sent.contains("Lisboa District"),
        "the prompt's text with both arguments: {sent}"
    );
    let id = agent
        .request(
            "session/prompt",
            json!({"sessionId": session, "prompt": [{"type": "text", "text": "/mcp__everything__no-such-prompt"}]}),
        )
        .await;
    let (failed, _) = agent.response(id).await;
    assert_eq!(failed["error"]["code"], -32602, "{failed}");
    assert_eq!(mock.requests().len(), 1, "a prompt that cannot be had never reaches the model");
}

#[test]
fn larik_mcp_list_and_get_report_the_servers() {
    let sandbox = Sandbox::new();
    let settings = sandbox.home.path().join(".config/larik/settings.json");
    std::fs::create_dir_all(settings.parent().unwrap()).unwrap();
    std::fs::write(
        &settings,
        json!({"mcpServers": {"everything": {"command": node(), "args": [everything(), "stdio"]}}}).to_string(),
    )
    .unwrap();
    std::fs::write(
        sandbox.project.path().join(".mcp.json"),
        json!({"mcpServers": {"theirs": {"command": "evil"}}}).to_string(),
    )
    .unwrap();
    let run = |args: &[&str]| {
        let output = sandbox.run_larik(args);
        (output.status.code(), String::from_utf8(output.stdout).unwrap())
    };
    let (code, listed) = run(&["mcp", "list"]);
    assert_eq!(code, Some(0), "{listed}");
    assert!(listed.contains("MCP server `everything`") && listed.contains("(your settings): connected, "), "{listed}");
    assert!(
        listed.contains("MCP server `theirs`: evil (the project): waiting for your approval"),
        "a project server never starts unapproved: {listed}"
    );
    let (code, one) = run(&["mcp", "get", "everything"]);
    assert_eq!((code, one.lines().count()), (Some(0), 1), "{one}");
    assert_eq!(run(&["mcp", "get", "nothing"]).0, Some(1));
}

#[tokio::test]
async fn server_filesystem_reads_freely_and_asks_before_it_writes() {
    let sandbox = Sandbox::new();
    let root = sandbox.project_path();
    std::fs::write(root.join("notes.txt"), "from the project\n").unwrap();
    let script = servers_dir().join("server-filesystem/dist/index.js").display().to_string();
    let steps = vec![
        Step::tool("t1", "mcp__fs__read_text_file", json!({"path": root.join("notes.txt")})),
        Step::tool("t2", "mcp__fs__write_file", json!({"path": root.join("new.txt"), "content": "x"})),
        Step::text("done"),
    ];
    let mock = MockLlm::start(Scenario { responses: steps }).await.unwrap();
    let mut agent = Agent::spawn(&root, &sandbox.env(mock.url()));
    agent.initialize().await;
    let servers = json!([{"name": "fs", "command": node(), "args": [script, root.display().to_string()], "env": []}]);
    let session = session_with(&mut agent, &sandbox, servers).await;
    let mut asked = Vec::new();
    agent
        .prompt(&session, "read and write", |params| {
            asked.push(params["toolCall"]["toolCallId"].as_str().unwrap_or_default().to_owned());
            "reject_once"
        })
        .await;
    let requests = mock.requests();
    assert!(
        last_result(&requests[1])["content"].to_string().contains("from the project"),
        "{}",
        last_result(&requests[1])
    );
    assert_eq!(asked, ["t2"], "the read-only read ran, the write asked");
    assert!(!root.join("new.txt").exists(), "the rejected write did not happen");
}

#[tokio::test]
async fn progress_of_a_long_call_reaches_the_editor_while_it_runs() {
    let sandbox = Sandbox::new();
    let steps = vec![
        Step::tool("t1", "mcp__everything__trigger-long-running-operation", json!({"duration": 1, "steps": 3})),
        Step::text("done"),
    ];
    let mock = MockLlm::start(Scenario { responses: steps }).await.unwrap();
    let mut agent = Agent::spawn(&sandbox.project_path(), &sandbox.env(mock.url()));
    agent.initialize().await;
    let servers = json!([everything_from_the_editor()]);
    let session = session_with(&mut agent, &sandbox, servers).await;
    let (_, updates) = agent.prompt(&session, "wait", |_| "allow_once").await;
    let notes: Vec<&Value> = updates
        .iter()
        .filter(|update| {
            update["sessionUpdate"] == "tool_call_update"
                && update["toolCallId"] == "t1"
                && update.get("status").is_none()
        })
        .collect();
    assert!(notes.len() >= 2, "progress came as updates of the call: {updates:?}");
    let first = notes[0]["content"][0]["content"]["text"].as_str().unwrap_or_default();
    assert!(first.contains("of 3"), "{first}");
    let done =
        updates.iter().position(|update| update["toolCallId"] == "t1" && update["status"] == "completed").unwrap();
    assert!(
        updates.iter().position(|update| std::ptr::eq(update, notes[0])).unwrap() < done,
        "progress came before the result"
    );
}

/// Runs a prompt, answering permission prompts with "allow once" and each `elicitation/create`
/// with `answer`; returns the forms asked, in order.
async fn prompt_answering_forms(
    agent: &mut Agent,
    session: &str,
    text: &str,
    answer: impl Fn(&Value) -> Value,
) -> Vec<Value> {
    let id = agent
        .request("session/prompt", json!({"sessionId": session, "prompt": [{"type": "text", "text": text}]}))
        .await;
    let mut forms = Vec::new();
    loop {
        let message = agent.next().await;
        if message["id"] == id && message.get("method").is_none() {
            assert_eq!(message["result"]["stopReason"], "end_turn", "{message}");
            return forms;
        }
        match message["method"].as_str() {
            Some("session/request_permission") => {
                agent.reply(&message, json!({"outcome": {"outcome": "selected", "optionId": "allow_once"}})).await
            }
            Some("elicitation/create") => {
                let reply = answer(&message["params"]);
                agent.reply(&message, reply).await;
                forms.push(message["params"].clone());
            }
            _ => {}
        }
    }
}

#[tokio::test]
async fn a_servers_question_is_a_form_in_the_editor_with_its_defaults() {
    let sandbox = Sandbox::new();
    let steps = vec![Step::tool("t1", "mcp__everything__trigger-elicitation-request", json!({})), Step::text("done")];
    let mock = MockLlm::start(Scenario { responses: steps }).await.unwrap();
    let mut agent = Agent::spawn(&sandbox.project_path(), &sandbox.env(mock.url()));
    agent.initialize_with(json!({"elicitation": {"form": {}}})).await;
    let servers = json!([everything_from_the_editor()]);
    let session = session_with(&mut agent, &sandbox, servers).await;
    let forms = prompt_answering_forms(&mut agent, &session, "ask me", |params| {
        // The user keeps every default the form shows and types a name.
        let mut content: serde_json::Map<String, Value> = params["requestedSchema"]["properties"]
            .as_object()
            .unwrap()
            .iter()
            .filter_map(|(name, property)| property.get("default").map(|value| (name.clone(), value.clone())))
            .collect();
        content.insert("name".into(), json!("Ada Lovelace"));
        json!({"action": "accept", "content": content})
    })
    .await;
    assert_eq!(forms.len(), 1, "{forms:?}");
    let form = &forms[0];
    assert_eq!(form["mode"], "form");
    assert!(form["message"].as_str().unwrap().starts_with("The MCP server `everything` asks: "), "{form}");
    let properties = form["requestedSchema"]["properties"].as_object().unwrap();
    assert!(properties.len() > 3, "the server's whole form: {form}");
    assert!(
        properties.values().any(|property| property.get("default").is_some()),
        "its defaults, for the editor to fill in: {form}"
    );
    let result = last_result(&mock.requests()[1]).to_string();
    assert!(result.contains("Ada Lovelace"), "the server got the user's answer: {result}");
}

#[tokio::test]
async fn a_servers_question_without_forms_is_declined_and_the_user_told() {
    let sandbox = Sandbox::new();
    let steps = vec![
        Step::tool("t1", "mcp__everything__trigger-elicitation-request", json!({})),
        Step::text("done"),
        Step::text("again"),
    ];
    let mock = MockLlm::start(Scenario { responses: steps }).await.unwrap();
    let mut agent = Agent::spawn(&sandbox.project_path(), &sandbox.env(mock.url()));
    agent.initialize().await;
    let servers = json!([everything_from_the_editor()]);
    let session = session_with(&mut agent, &sandbox, servers).await;
    let forms = prompt_answering_forms(&mut agent, &session, "ask me", |_| json!({"action": "cancel"})).await;
    assert!(forms.is_empty(), "no form for an editor without them");
    let result = last_result(&mock.requests()[1]).to_string();
    assert!(result.to_lowercase().contains("declin"), "the server heard the decline: {result}");
    let (_, updates) = agent.prompt(&session, "next", |_| "allow_once").await;
    assert!(
        updates.iter().any(|update| update.to_string().contains("which this editor cannot show")),
        "the user is told: {updates:?}"
    );
}
