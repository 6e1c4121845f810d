#![allow(clippy::unwrap_used, clippy::expect_used)]
//! The provider's prompt cache is the user's bill: over a scripted session through `larik acp`,
//! every request repeats the previous one byte for byte and only appends, and carries the cache
//! markers that let the provider read that prefix back (Anthropic's breakpoints, OpenAI's
//! `prompt_cache_key`).

use larik_tests::harness::{Agent, Sandbox};
use larik_tests::mock_llm::{MockLlm, Scenario, Step, without_cache_markers};
use serde_json::{Value, json};

/// Two prompts: one read, then a response of three reads at once (many blocks in one round).
fn scripted(sandbox: &Sandbox) -> Vec<Step> {
    for name in ["a", "b", "c", "d"] {
        std::fs::write(sandbox.project.path().join(format!("{name}.txt")), format!("contents of {name}\n")).unwrap();
    }
    let mut three = Step::tool("r2", "read", json!({"path": "b.txt"}));
    for (id, path) in [("r3", "c.txt"), ("r4", "d.txt")] {
        three.response.tool_calls.extend(Step::tool(id, "read", json!({"path": path})).response.tool_calls);
    }
    vec![
        Step::tool("r1", "read", json!({"path": "a.txt"})),
        Step::text("a.txt holds its contents."),
        three,
        Step::text("b, c and d hold theirs."),
    ]
}

async fn run_session(sandbox: &Sandbox, env: &[(String, String)]) {
    let mut agent = Agent::spawn(&sandbox.project_path(), env);
    agent.initialize().await;
    let session = agent.new_session(&sandbox.project_path()).await;
    agent.prompt(&session, "what is in a.txt?", |_| "allow_once").await;
    agent.prompt(&session, "and in b, c and d?", |_| "allow_once").await;
}

/// The content blocks of a request's messages, in order.
fn blocks(request: &Value) -> Vec<Value> {
    request["messages"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|message| match &message["content"] {
            Value::Array(blocks) => blocks.clone(),
            other => vec![other.clone()],
        })
        .collect()
}

#[tokio::test]
async fn anthropic_requests_only_append_and_read_the_cache_where_the_last_one_wrote() {
    let sandbox = Sandbox::new();
    let mock = MockLlm::start(Scenario { responses: scripted(&sandbox) }).await.unwrap();
    run_session(&sandbox, &sandbox.env(mock.url())).await;
    let requests = mock.requests();
    assert_eq!(requests.len(), 4, "{requests:#?}");
    for pair in requests.windows(2) {
        let (before, after) = (without_cache_markers(&pair[0]), without_cache_markers(&pair[1]));
        assert_eq!(before["system"], after["system"], "the system prompt never changes");
        assert_eq!(before["tools"], after["tools"], "the tool list never changes");
        let (old, new) = (blocks(&before), blocks(&after));
        assert!(new.len() > old.len() && new[..old.len()] == old[..], "only appended:\n{old:#?}\n{new:#?}");
        // The newest breakpoint of one request is where the next reads from.
        let written = blocks(&pair[0]).into_iter().rfind(|block| block.get("cache_control").is_some()).unwrap();
        assert!(blocks(&pair[1]).contains(&written), "the next request keeps a breakpoint at {written}");
    }
    for request in &requests {
        let markers = request.to_string().matches("cache_control").count();
        assert!((3..=4).contains(&markers), "tools, system and the conversation, at most 4: {markers}");
        assert!(request["tools"].as_array().unwrap().last().unwrap().get("cache_control").is_some());
        assert!(request["system"][0].get("cache_control").is_some());
        assert!(blocks(request).last().unwrap().get("cache_control").is_some(), "the newest block is cached");
    }
}

#[tokio::test]
async fn openai_requests_only_append_and_share_one_cache_key_per_session() {
    let sandbox = Sandbox::new();
    let mock = MockLlm::start(Scenario { responses: scripted(&sandbox) }).await.unwrap();
    run_session(&sandbox, &sandbox.openai_env(mock.url())).await;
    let requests = mock.requests();
    assert_eq!(requests.len(), 4, "{requests:#?}");
    let key = requests[0]["prompt_cache_key"].as_str().expect("a cache key").to_owned();
    for pair in requests.windows(2) {
        assert_eq!(pair[1]["prompt_cache_key"], key.as_str(), "one key for the whole session");
        assert_eq!(pair[0]["tools"], pair[1]["tools"]);
        let (old, new) = (pair[0]["messages"].as_array().unwrap(), pair[1]["messages"].as_array().unwrap());
        assert!(new.len() > old.len() && new[..old.len()] == old[..], "only appended:\n{old:#?}\n{new:#?}");
    }
}

/// `promptCacheTtl: "1h"` in the user's own settings keeps the cache an hour; the same key in a
/// repository's settings changes nothing (it would raise what the user pays for each write).
#[tokio::test]
async fn an_hours_cache_is_the_users_choice_not_the_repositorys() {
    let hour = r#""ttl":"1h""#;
    for (whose, expect_hour) in [("project", false), ("user", true)] {
        let sandbox = Sandbox::new();
        let file = match whose {
            "user" => sandbox.home.path().join(".config/larik/settings.json"),
            _ => sandbox.project.path().join(".larik/settings.json"),
        };
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(&file, json!({"promptCacheTtl": "1h"}).to_string()).unwrap();
        let mock = MockLlm::start(Scenario { responses: scripted(&sandbox) }).await.unwrap();
        run_session(&sandbox, &sandbox.env(mock.url())).await;
        for request in mock.requests() {
            let text = request.to_string();
            let marked = if expect_hour { text.matches(hour).count() } else { text.matches("cache_control").count() };
            assert!(marked >= 3, "{whose}: {text}");
            assert_eq!(text.contains(hour), expect_hour, "{whose}'s setting: {text}");
        }
    }
}
