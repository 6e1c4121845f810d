#![cfg(feature = "browser")]
#![allow(clippy::unwrap_used, clippy::expect_used)]
//! The browser tools end to end, in Debian's Chromium (`scripts/setup.sh` installs it) against
//! pages this test serves on 127.0.0.1: a form whose framework keeps its own copy of the
//! input's value, a shadow-DOM button, a link that opens a tab, dialogs, a two-page history,
//! console errors and long pages. Every call goes through the real dispatch pipeline of the
//! real binary, with the mock model asking for it.

use std::collections::HashMap;
use std::time::Duration;

use larik_tests::chromium::{browsers_of, drop_devtools_connections, gone_within, main_browser};
use larik_tests::harness::{Agent, Sandbox};
use larik_tests::mock_llm::{MockLlm, Scenario, Step};
use larik_tests::pages::{many_buttons, serve};
use serde_json::{Value, json};

const FORM: &str = r#"<!doctype html><title>Form</title>
<h1>Sign up</h1>
<p>Tell us who you are.</p>
<input id="name" aria-label="Name">
<button id="go" onclick="document.getElementById('echo').textContent = 'Hello, ' + state">Submit</button>
<fancy-button></fancy-button>
<a href="/two" target="_blank">Open two</a>
<select id="size" aria-label="Size"><option>Small</option><option value="l">Large</option></select>
<p id="echo">Hello, nobody</p>
<p id="shadow-said"></p>
<script>
  // As React does: the framework remembers the last value it saw through the element's own
  // setter and only hears of a change whose value differs from it.
  const input = document.getElementById('name');
  const native = Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, 'value');
  let tracked = '';
  var state = '(untouched)';
  Object.defineProperty(input, 'value', { get() { return native.get.call(this); }, set(v) { tracked = v; native.set.call(this, v); } });
  input.value = 'prefilled';
  input.addEventListener('input', () => { const v = native.get.call(input); if (v !== tracked) { tracked = v; state = v; } });
  customElements.define('fancy-button', class extends HTMLElement {
    constructor() { super(); const root = this.attachShadow({mode: 'open'}); root.innerHTML = '<button>Shadow action</button>'; root.querySelector('button').onclick = () => { document.getElementById('shadow-said').textContent = 'shadow clicked'; }; }
  });
  console.error('broken thing on the form');
  setTimeout(() => { throw new Error('late failure'); }, 0);
</script>"#;

const TWO: &str = r#"<!doctype html><title>Two</title><h1>Page two</h1><a href="/dialogs">Dialogs</a>"#;

const DIALOGS: &str = r#"<!doctype html><title>Dialogs</title>
<button onclick="alert('hello'); document.getElementById('said').textContent = 'confirm said ' + confirm('sure?')">Ask</button>
<p id="said">nothing yet</p>"#;

/// A page of `height` CSS pixels.
fn long(height: u32) -> String {
    format!(
        r#"<!doctype html><title>Long</title><style>body {{ margin: 0 }}</style><div style="height: {height}px; background: linear-gradient(#fff, #36c)">top</div>"#
    )
}

fn pages() -> HashMap<&'static str, String> {
    HashMap::from([
        ("/form", FORM.to_owned()),
        ("/two", TWO.to_owned()),
        ("/dialogs", DIALOGS.to_owned()),
        ("/long", long(3000)),
        ("/very-long", long(9000)),
        ("/many", many_buttons(2000)),
    ])
}

/// The text of the result for call `id` in a request to the model, and its images (base64).
fn result_of(request: &Value, id: &str) -> (String, Vec<String>) {
    let messages = request["messages"].as_array().unwrap();
    let result = messages
        .iter()
        .flat_map(|message| message["content"].as_array().cloned().unwrap_or_default())
        .find(|part| part["type"] == "tool_result" && part["tool_use_id"] == id)
        .unwrap_or_else(|| panic!("no result for {id}"));
    match &result["content"] {
        Value::String(text) => (text.clone(), Vec::new()),
        content => {
            let parts = content.as_array().unwrap();
            let text = parts.iter().filter_map(|part| part["text"].as_str()).collect::<Vec<_>>().join("\n");
            let images = parts
                .iter()
                .filter(|part| part["type"] == "image")
                .map(|part| part["source"]["data"].as_str().unwrap().to_owned())
                .collect();
            (text, images)
        }
    }
}

/// A JPEG's width and height, read from its frame header.
fn jpeg_size(base64: &str) -> (u32, u32) {
    let bytes = decode_base64(base64);
    assert_eq!(&bytes[..2], [0xFF, 0xD8], "a JPEG");
    let mut at = 2;
    while at + 9 < bytes.len() {
        assert_eq!(bytes[at], 0xFF, "a marker at {at}");
        let marker = bytes[at + 1];
        let length = usize::from(bytes[at + 2]) << 8 | usize::from(bytes[at + 3]);
        if matches!(marker, 0xC0..=0xC3) {
            let height = u32::from(bytes[at + 5]) << 8 | u32::from(bytes[at + 6]);
            let width = u32::from(bytes[at + 7]) << 8 | u32::from(bytes[at + 8]);
            return (width, height);
        }
        at += 2 + length;
    }
    panic!("no frame header");
}

fn decode_base64(text: &str) -> Vec<u8> {
    let value = |c: u8| match c {
        b'A'..=b'Z' => c - b'A',
        b'a'..=b'z' => c - b'a' + 26,
        b'0'..=b'9' => c - b'0' + 52,
        b'+' => 62,
        _ => 63,
    };
    let clean: Vec<u8> = text.bytes().filter(|c| *c != b'=' && !c.is_ascii_whitespace()).collect();
    let mut out = Vec::with_capacity(clean.len() * 3 / 4);
    for chunk in clean.chunks(4) {
        let bits =
            chunk.iter().enumerate().fold(0u32, |bits, (index, c)| bits | u32::from(value(*c)) << (18 - 6 * index));
        out.extend_from_slice(&bits.to_be_bytes()[1..chunk.len()]);
    }
    out
}

/// Two turns: the first opens `/two` (call `n1`), the second `/form` (call `n2`).
fn open_two_then_form(base: &str) -> Vec<Step> {
    vec![
        Step::tool("n1", "browser_navigate", json!({"url": format!("{base}/two")})),
        Step::text("One."),
        Step::tool("n2", "browser_navigate", json!({"url": format!("{base}/form")})),
        Step::text("Two."),
    ]
}

fn write_user_settings(sandbox: &Sandbox, settings: &Value) {
    let dir = sandbox.home.path().join(".config/larik");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("settings.json"), settings.to_string()).unwrap();
}

/// One browser at a time: three Chromiums on two cores make every timing in them a guess.
static ONE_AT_A_TIME: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// The mock model with `steps` and the agent with a session open, with `permissions` in the
/// user's settings.
async fn start(sandbox: &Sandbox, steps: Vec<Step>, permissions: Value) -> (MockLlm, Agent, String) {
    write_user_settings(sandbox, &json!({"lsp": {"enabled": false}, "permissions": permissions}));
    let project = sandbox.project_path();
    let mock = MockLlm::start(Scenario { responses: steps }).await.unwrap();
    let mut agent = Agent::spawn(&project, &sandbox.env(mock.url()));
    agent.initialize().await;
    let session = agent.new_session(&project).await;
    (mock, agent, session)
}

#[tokio::test]
async fn the_browser_tools_drive_real_pages_through_the_pipeline() {
    let _one = ONE_AT_A_TIME.lock().await;
    let base = serve(pages()).await;
    let sandbox = Sandbox::new();
    let call = |id: &str, tool: &str, input: Value| Step::tool(id, tool, input);
    let steps = vec![
        call("n1", "browser_navigate", json!({"url": format!("{base}/form")})),
        call("s1", "browser_snapshot", json!({})),
        call("t1", "browser_type", json!({"ref": "e1", "text": "Ada"})),
        call("c1", "browser_click", json!({"ref": "e2"})),
        call("c2", "browser_click", json!({"ref": "e3"})),
        call("l1", "browser_select", json!({"ref": "e5", "values": ["Large"]})),
        call("s2", "browser_snapshot", json!({})),
        call("k1", "browser_console", json!({})),
        call("c3", "browser_click", json!({"ref": "e4"})),
        call("tabs", "browser_tabs", json!({"action": "list"})),
        call("s3", "browser_snapshot", json!({})),
        call("c4", "browser_click", json!({"ref": "e1"})),
        call("d1", "browser_snapshot", json!({})),
        call("d2", "browser_click", json!({"ref": "e1"})),
        call("d3", "browser_snapshot", json!({})),
        call("d4", "browser_console", json!({})),
        call("b1", "browser_back", json!({})),
        call("f1", "browser_forward", json!({})),
        call("b2", "browser_back", json!({})),
        call("x1", "browser_click", json!({"ref": "e99"})),
        // The page closes its own tab: the next call drops it.
        call("w1", "browser_evaluate", json!({"script": "setTimeout(() => window.close(), 0), 'closing'"})),
        call("t2", "browser_tabs", json!({"action": "list"})),
        call("t3", "browser_tabs", json!({"action": "new"})),
        call("t4", "browser_tabs", json!({"action": "switch", "index": 0})),
        call("t5", "browser_tabs", json!({"action": "close", "index": 1})),
        Step::text("Done."),
    ];
    let (mock, mut agent, session) = start(&sandbox, steps, json!({})).await;
    let mut asked = Vec::new();
    let mut always = Vec::new();
    let (response, updates) = agent
        .prompt(&session, "try the form", |params| {
            asked.push(params["toolCall"]["title"].as_str().unwrap_or_default().to_owned());
            always.extend(
                params["options"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter(|option| option["kind"] == "allow_always")
                    .filter_map(|option| option["name"].as_str().map(str::to_owned)),
            );
            "allow_once"
        })
        .await;
    assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");
    let last = mock.requests().last().unwrap().clone();

    // Navigation asks like web_fetch; acting on the page asks; looking does not.
    asked_like_web_fetch(&asked, &always);
    the_pages_answered(&last);

    // The editor saw the calls as they ran.
    assert!(
        updates.iter().any(|update| update.to_string().contains("Click e4 in the browser")),
        "the editor heard of the calls"
    );

    // The browser lives with the session, not with a call; it ends with the session.
    let home = sandbox.home.path().to_path_buf();
    assert!(main_browser(&home).is_some(), "still running between turns");
    agent.close_stdin();
    assert!(agent.wait_exit().await.success());
    assert!(gone_within(&home, 5).await, "a browser process outlived the session: {:?}", browsers_of(&home));
}

#[tokio::test]
async fn screenshots_are_images_at_css_pixel_size_and_labels_leave_nothing_behind() {
    let _one = ONE_AT_A_TIME.lock().await;
    let base = serve(pages()).await;
    let sandbox = Sandbox::new();
    let call = |id: &str, tool: &str, input: Value| Step::tool(id, tool, input);
    let steps = vec![
        call("n1", "browser_navigate", json!({"url": format!("{base}/long")})),
        call("v0", "browser_evaluate", json!({"script": "[innerWidth, innerHeight]"})),
        call("v1", "browser_screenshot", json!({})),
        call("p1", "browser_screenshot", json!({"full_page": true})),
        call("n2", "browser_navigate", json!({"url": format!("{base}/very-long")})),
        call("p2", "browser_screenshot", json!({"full_page": true})),
        call("n3", "browser_navigate", json!({"url": format!("{base}/form")})),
        call("s1", "browser_snapshot", json!({})),
        call("e1", "browser_screenshot", json!({"ref": "e2"})),
        call("a1", "browser_screenshot", json!({"labels": true})),
        call(
            "g1",
            "browser_evaluate",
            json!({"script": "[document.getElementById('__larik_labels') === null, document.querySelectorAll('[data-larik-ref]').length]"}),
        ),
        call("s2", "browser_snapshot", json!({})),
        call("n4", "browser_navigate", json!({"url": format!("{base}/many")})),
        call("m1", "browser_snapshot", json!({})),
        Step::text("Done."),
    ];
    let (mock, mut agent, session) = start(&sandbox, steps, json!({})).await;
    let (response, updates) = agent.prompt(&session, "look at it", |_| "allow_once").await;
    assert_eq!(response["result"]["stopReason"], "end_turn", "{response}");
    let last = mock.requests().last().unwrap().clone();
    let image = |id: &str| {
        let (text, images) = result_of(&last, id);
        assert_eq!(images.len(), 1, "{id}: one image: {text}");
        jpeg_size(&images[0])
    };
    let viewport: Vec<u32> = serde_json::from_str(&result_of(&last, "v0").0).unwrap();
    assert_eq!(viewport[0], 1280, "the window's width is the viewport's");
    assert_eq!(image("v1"), (viewport[0], viewport[1]), "the viewport");
    assert_eq!(image("p1"), (1280, 3000), "the whole page");
    assert_eq!(image("p2"), (1280, 5000), "cut at 5000 CSS pixels");
    let (width, height) = image("e1");
    assert!((40..300).contains(&width) && (20..80).contains(&height), "one button, padded: {width}x{height}");
    assert_eq!(image("a1"), (viewport[0], viewport[1]));
    assert_eq!(
        result_of(&last, "g1").0.split_whitespace().collect::<String>(),
        "[true,4]",
        "the overlay is gone, the refs stay (the shadow root holds the fifth)"
    );
    assert_eq!(result_of(&last, "s2").0, result_of(&last, "s1").0, "the page is as it was");
    // The editor gets the images too.
    assert!(
        updates.iter().any(|update| update.to_string().contains("\"mimeType\":\"image/jpeg\"")),
        "the editor shows the screenshot"
    );
    let many = result_of(&last, "m1").0;
    assert!(
        many.len() <= 20_000 && many.contains("[snapshot cut at 20000 characters: "),
        "capped with a note: {} characters",
        many.len()
    );

    // An agent killed outright takes its browser with it.
    let home = sandbox.home.path().to_path_buf();
    assert!(main_browser(&home).is_some());
    agent.child.start_kill().unwrap();
    agent.wait_exit().await;
    assert!(gone_within(&home, 5).await, "the browser outlived a killed agent: {:?}", browsers_of(&home));
}

#[tokio::test]
async fn a_browser_the_user_closed_starts_again_and_rules_and_plan_mode_hold() {
    let _one = ONE_AT_A_TIME.lock().await;
    let base = serve(pages()).await;
    let sandbox = Sandbox::new();
    let mut steps = open_two_then_form(&base);
    steps.extend([
        Step::tool("n3", "browser_navigate", json!({"url": "http://denied.example/secret"})),
        Step::tool("n4", "browser_navigate", json!({"url": "file:///etc/passwd"})),
        Step::text("Three."),
        Step::tool("n5", "browser_navigate", json!({"url": format!("{base}/two")})),
        Step::tool("c1", "browser_click", json!({"ref": "e1"})),
        Step::text("Four."),
    ]);
    let project = sandbox.project_path();
    // A cloned project cannot choose the program the browser tools start.
    std::fs::create_dir_all(project.join(".larik")).unwrap();
    std::fs::write(project.join(".larik/settings.json"), json!({"browser": {"executable": "/bin/sh"}}).to_string())
        .unwrap();
    let (mock, mut agent, session) =
        start(&sandbox, steps, json!({"deny": ["browser_navigate(domain:denied.example)"]})).await;
    let home = sandbox.home.path().to_path_buf();

    let (_, updates) = agent.prompt(&session, "one", |_| "allow_once").await;
    assert!(
        updates.iter().any(|update| update.to_string().contains("`browser` is ignored")),
        "the user is told: {updates:?}"
    );
    assert!(
        result_of(mock.requests().last().unwrap(), "n1").0.contains("Page: Two ("),
        "Chromium, not the project's program"
    );
    let first = main_browser(&home).expect("a browser");
    // The user closes the browser (its window gone, the process with it).
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(i32::try_from(first).unwrap()),
        nix::sys::signal::Signal::SIGTERM,
    )
    .unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while main_browser(&home) == Some(first) && std::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    agent.prompt(&session, "two", |_| "allow_once").await;
    assert!(
        result_of(mock.requests().last().unwrap(), "n2").0.contains("Page: Form ("),
        "started again: {}",
        result_of(mock.requests().last().unwrap(), "n2").0
    );
    let second = main_browser(&home).expect("a browser again");
    assert_ne!(first, second);

    // A deny rule denies without asking; only the web is opened.
    let mut asked = 0;
    agent
        .prompt(&session, "three", |_| {
            asked += 1;
            "allow_once"
        })
        .await;
    let last = mock.requests().last().unwrap().clone();
    assert!(
        result_of(&last, "n3").0.contains("denied by the rule `browser_navigate(domain:denied.example)`"),
        "{}",
        result_of(&last, "n3").0
    );
    assert!(result_of(&last, "n4").0.contains("http and https URLs only"), "{}", result_of(&last, "n4").0);
    assert_eq!(asked, 1, "only the file:// call asked (and was refused after)");

    // Plan mode: navigating still asks (it changes nothing local); acting on a page is refused.
    let set = agent.request("session/set_mode", json!({"sessionId": session, "modeId": "plan"})).await;
    agent.response(set).await;
    let mut titles = Vec::new();
    agent
        .prompt(&session, "four", |params| {
            titles.push(params["toolCall"]["title"].as_str().unwrap_or_default().to_owned());
            "allow_once"
        })
        .await;
    let last = mock.requests().last().unwrap().clone();
    assert!(titles.len() == 1 && titles[0].starts_with("Open http://127.0.0.1"), "{titles:?}");
    assert!(result_of(&last, "c1").0.contains("plan mode is on"), "{}", result_of(&last, "c1").0);

    agent.close_stdin();
    assert!(agent.wait_exit().await.success());
    assert!(gone_within(&home, 5).await, "{:?}", browsers_of(&home));
}

/// A browser shutting down drops its DevTools connection a moment before its process ends; a
/// call made in that moment must not wait on the dead connection (it used to, for the 30 s of
/// the connection's own timeout) but start the browser again.
#[tokio::test]
async fn a_browser_whose_connection_dropped_is_started_again_by_the_next_call() {
    let _one = ONE_AT_A_TIME.lock().await;
    let base = serve(pages()).await;
    let sandbox = Sandbox::new();
    let steps = open_two_then_form(&base);
    let (mock, mut agent, session) = start(&sandbox, steps, json!({"allow": ["browser_navigate"]})).await;
    let home = sandbox.home.path().to_path_buf();
    agent.prompt(&session, "one", |_| "allow_once").await;
    assert!(result_of(mock.requests().last().unwrap(), "n1").0.contains("Page: Two ("));
    let first = main_browser(&home).expect("a browser");

    assert_eq!(drop_devtools_connections(first), 1, "the agent's one connection");
    agent.prompt(&session, "two", |_| "allow_once").await;
    let (n2, _) = result_of(mock.requests().last().unwrap(), "n2");
    assert!(n2.contains("Page: Form ("), "started again: {n2}");
    let second = main_browser(&home).expect("a browser again");
    assert_ne!(first, second);
    assert!(
        !browsers_of(&home).iter().any(|(pid, _)| *pid == first),
        "the browser that lost its connection was ended: {:?}",
        browsers_of(&home)
    );

    agent.close_stdin();
    assert!(agent.wait_exit().await.success());
    assert!(gone_within(&home, 5).await, "{:?}", browsers_of(&home));
}

#[tokio::test]
async fn closing_the_first_tab_closes_that_page_and_the_browser_stays() {
    let _one = ONE_AT_A_TIME.lock().await;
    let base = serve(pages()).await;
    let sandbox = Sandbox::new();
    let steps = vec![
        Step::tool("n1", "browser_navigate", json!({"url": format!("{base}/form")})),
        Step::tool("t1", "browser_tabs", json!({"action": "new"})),
        Step::tool("n2", "browser_navigate", json!({"url": format!("{base}/two")})),
        Step::text("Two tabs."),
        Step::tool("x1", "browser_tabs", json!({"action": "close", "index": 0})),
        Step::tool("s1", "browser_snapshot", json!({})),
        Step::text("Closed."),
    ];
    let (mock, mut agent, session) = start(&sandbox, steps, json!({})).await;
    let home = sandbox.home.path().to_path_buf();
    agent.prompt(&session, "open two tabs", |_| "allow_once").await;
    let browser = main_browser(&home).expect("a browser");
    agent.prompt(&session, "close the first", |_| "allow_once").await;
    let last = mock.requests().last().unwrap().clone();
    let tabs = result_of(&last, "x1").0;
    assert!(tabs.starts_with("0 (active) Two (") && tabs.lines().count() == 1, "{tabs}");
    // The second tab's page is still there: the browser was not closed and started again.
    assert!(result_of(&last, "s1").0.contains("link \"Dialogs\" [ref=e1]"), "{}", result_of(&last, "s1").0);
    assert_eq!(main_browser(&home), Some(browser), "the same browser runs");
    agent.close_stdin();
    assert!(agent.wait_exit().await.success());
}

/// Opening a page asks as web_fetch does, with the domain to always allow; acting on a page
/// asks; looking does not.
fn asked_like_web_fetch(asked: &[String], always: &[String]) {
    assert!(asked.iter().any(|title| title.starts_with("Open http://127.0.0.1")), "{asked:?}");
    assert!(
        asked.iter().any(|title| title == "Type into e1 in the browser")
            && asked.iter().any(|title| title == "Click e2 in the browser"),
        "{asked:?}"
    );
    assert!(
        always.contains(&"Always allow `browser_navigate(domain:127.0.0.1)` in this project".to_owned()),
        "always allow proposes the domain: {always:?}"
    );
    assert!(always.contains(&"Always allow `browser_click` in this project".to_owned()), "{always:?}");
    assert!(
        !asked.iter().any(|title| title.contains("Look at") || title.contains("console") || title.contains("Go back")),
        "{asked:?}"
    );
}

/// What each call of the script answered, from the last request's tool results.
fn the_pages_answered(last: &Value) {
    let text = |id: &str| result_of(last, id).0;
    assert!(text("n1").contains("Page: Form ("), "{}", text("n1"));
    let first = text("s1");
    for expected in [
        "heading \"Sign up\" [level=1]",
        "text \"Tell us who you are.\"",
        "textbox \"Name\" [ref=e1] value=\"prefilled\"",
        "button \"Submit\" [ref=e2]",
        "button \"Shadow action\" [ref=e3]",
        "link \"Open two\" [ref=e4] -> /two",
        "combobox \"Size\" [ref=e5] selected=\"Small\"",
    ] {
        assert!(first.contains(expected), "{expected} in:\n{first}");
    }
    // The framework saw the typing (the field was cleared through the native setter), the
    // shadow root's button was found by its ref, the select changed; refs stayed the same.
    let second = text("s2");
    assert!(second.contains("text \"Hello, Ada\""), "{second}");
    assert!(second.contains("text \"shadow clicked\""), "{second}");
    assert!(
        second.contains("textbox \"Name\" [ref=e1] value=\"Ada\"")
            && second.contains("combobox \"Size\" [ref=e5] selected=\"Large\""),
        "{second}\n{}",
        text("l1")
    );
    let console = text("k1");
    assert!(
        console.contains("[error] broken thing on the form") && console.contains("[exception] Error: late failure"),
        "{console}"
    );

    // The link's new tab was adopted and made active.
    assert!(text("c3").contains("Page: Two ("), "{}", text("c3"));
    let tabs = text("tabs");
    assert!(tabs.contains("0 Form (") && tabs.contains("1 (active) Two ("), "{tabs}");
    assert!(text("s3").contains("link \"Dialogs\" [ref=e1] -> /dialogs"), "{}", text("s3"));

    // Dialogs do not block: the alert was accepted, the confirm dismissed, both logged.
    assert!(text("d1").contains("button \"Ask\" [ref=e1]"), "{}", text("d1"));
    assert!(text("d3").contains("text \"confirm said false\""), "{}", text("d3"));
    let dialogs = text("d4");
    assert!(
        dialogs.contains("[dialog] alert \"hello\": accepted")
            && dialogs.contains("[dialog] confirm \"sure?\": dismissed"),
        "{dialogs}"
    );

    // History by entry, never waiting on a cached page's load event.
    assert!(text("b1").contains("Page: Two ("), "{}", text("b1"));
    assert!(text("f1").contains("Page: Dialogs ("), "{}", text("f1"));
    assert!(text("b2").contains("Page: Two ("), "{}", text("b2"));
    assert!(text("x1").contains("No element has the ref e99"), "{}", text("x1"));
    assert!(
        text("t2").starts_with("0 (active) Form (") && !text("t2").contains("Two"),
        "the closed tab is gone: {}",
        text("t2")
    );
    assert!(text("t3").contains("1 (active)  (about:blank)"), "{}", text("t3"));
    assert!(text("t4").starts_with("0 (active) Form ("), "{}", text("t4"));
    assert_eq!(text("t5").lines().count(), 1, "{}", text("t5"));
}
