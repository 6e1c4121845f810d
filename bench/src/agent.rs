//! Figures of the agent process itself, driven over ACP like an editor drives it: time to be
//! ready, idle footprint, the cost of a scripted turn, memory over a long session, the overhead
//! of relaying a fast stream, and the size of the first model request.

use std::time::{Duration, Instant};

use larik_tests::harness::{Agent, Sandbox};
use larik_tests::mock_llm::{MockLlm, Scenario, Step};
use serde_json::json;

use crate::process::{cpu_time, memory_kib, resident_split_kib};
use crate::stats::{Row, duration_row, median_of};

fn row(name: &str, values: &[f64], unit: &str, target: &str) -> Row {
    let show = |value: f64| format!("{value:.1} {unit}");
    Row {
        name: name.to_owned(),
        median: show(median_of(values)),
        min: show(values.iter().copied().reduce(f64::min).unwrap_or_default()),
        max: show(values.iter().copied().reduce(f64::max).unwrap_or_default()),
        target: target.to_owned(),
    }
}

async fn ready_agent(sandbox: &Sandbox, mock: &MockLlm) -> (Agent, String) {
    ready_agent_in(sandbox, &sandbox.env(mock.url())).await
}

async fn ready_agent_in(sandbox: &Sandbox, env: &[(String, String)]) -> (Agent, String) {
    let mut agent = Agent::spawn(&sandbox.project_path(), env);
    agent.initialize().await;
    let session = agent.new_session(&sandbox.project_path()).await;
    (agent, session)
}

async fn stop(mut agent: Agent) {
    agent.close_stdin();
    agent.wait_exit().await;
}

/// The agent's sections, by name: `ready` (with idle), `turn`, `long`, `relay`, `request`, `mcp`,
/// `lsp`, `browser`, `compaction`, `checkpoints`, `load`, `sessions`.
pub const SECTIONS: &[&str] = &[
    "ready",
    "turn",
    "long",
    "relay",
    "request",
    "mcp",
    "lsp",
    "browser",
    "compaction",
    "checkpoints",
    "load",
    "sessions",
];

pub async fn measure(section: &str, idle_seconds: u64) -> anyhow::Result<Vec<Row>> {
    match section {
        "ready" => ready_and_idle(idle_seconds).await,
        "turn" => turn().await,
        "long" => long_session().await,
        "relay" => relay().await,
        "request" => first_request().await,
        "mcp" => mcp_servers().await,
        "lsp" => language_server().await,
        "browser" => browser().await,
        "compaction" => crate::long_sessions::compaction().await,
        "checkpoints" => crate::long_sessions::checkpoints().await,
        "load" => crate::load::fifty_sessions().await,
        "sessions" => crate::stored_sessions::ten_thousand().await,
        other => anyhow::bail!("no agent section `{other}`"),
    }
}

async fn ready_and_idle(idle_seconds: u64) -> anyhow::Result<Vec<Row>> {
    let mut rows = Vec::new();
    let sandbox = Sandbox::new();
    let mock = MockLlm::start(Scenario::default()).await?;

    // 1. Ready time, each start followed by one of the minimal binary's, so a pair meets the
    // same load on a noisy machine; 2. idle footprint.
    let (mut ready, mut floor) = (Vec::new(), Vec::new());
    for _ in 0..20 {
        let started = Instant::now();
        let (agent, _) = ready_agent(&sandbox, &mock).await;
        ready.push(started.elapsed());
        stop(agent).await;
        floor.push(minimal_ready(&sandbox).await?);
    }
    rows.push(duration_row("ready: spawn → initialize → session/new answered", &ready, "< 10 ms"));
    let (mut rss, mut idle_cpu) = (Vec::new(), Vec::new());
    for _ in 0..3 {
        let (agent, _) = ready_agent(&sandbox, &mock).await;
        let pid = agent.child.id().unwrap_or(0);
        rss.push(memory_kib(pid).0 as f64 / 1024.0);
        let before = cpu_time(pid);
        tokio::time::sleep(Duration::from_secs(idle_seconds)).await;
        idle_cpu.push((cpu_time(pid) - before).as_secs_f64() * 1000.0);
        stop(agent).await;
    }
    rows.push(row("idle: RSS after session/new", &rss, "MiB", "< 12 MiB"));
    rows.push(row(&format!("idle: CPU over {idle_seconds} s"), &idle_cpu, "ms", "< 5 ms"));
    rows.extend(against_the_floor(&ready, &rss, &floor));
    let (agent, _) = ready_agent(&sandbox, &mock).await;
    tokio::time::sleep(Duration::from_secs(1)).await;
    let layout = crate::layout_check::row(&larik_tests::harness::larik_bin(), agent.child.id().unwrap_or(0));
    stop(agent).await;
    rows.push(layout?);
    Ok(rows)
}

/// The minimal tokio binary the ready figures are compared with, built beside `larik-bench` and
/// measured from a copy beside the measured `larik`.
pub const MINIMAL_BINARY: &str = "minimal-acp";

/// The minimal binary started and answering the same two requests: how long it took, and its
/// RSS then.
async fn minimal_ready(sandbox: &Sandbox) -> anyhow::Result<(Duration, f64)> {
    let minimal = larik_tests::harness::larik_bin().with_file_name(MINIMAL_BINARY);
    anyhow::ensure!(minimal.exists(), "{} is not built (bench/run.sh builds it)", minimal.display());
    let started = Instant::now();
    let command = tokio::process::Command::new(&minimal);
    let mut agent = Agent::from_child(larik_tests::harness::spawn_piped(command, &sandbox.project_path(), &[]));
    agent.initialize().await;
    agent.new_session(&sandbox.project_path()).await;
    let elapsed = started.elapsed();
    let rss = memory_kib(agent.child.id().unwrap_or(0)).0 as f64 / 1024.0;
    stop(agent).await;
    Ok((elapsed, rss))
}

/// Larik against the minimal binary measured in the same run: the targets are ratios to it,
/// which hold when the machine is busy. The ready ratio is the median of each pair's.
fn against_the_floor(ready: &[Duration], rss: &[f64], floor: &[(Duration, f64)]) -> Vec<Row> {
    let floor_times: Vec<Duration> = floor.iter().map(|(time, _)| *time).collect();
    let floor_rss: Vec<f64> = floor.iter().map(|(_, rss)| *rss).collect();
    let pairs: Vec<f64> = ready
        .iter()
        .zip(&floor_times)
        .map(|(ours, minimal)| ours.as_secs_f64() / minimal.as_secs_f64().max(f64::EPSILON))
        .collect();
    let ratio = |value: f64| format!("{value:.1}×");
    let rss_ratio = median_of(rss) / median_of(&floor_rss).max(f64::EPSILON);
    vec![
        duration_row("ready: a minimal tokio binary answering the same requests", &floor_times, ""),
        row("idle: RSS of that minimal binary", &floor_rss, "MiB", ""),
        Row::single("ready: Larik / the minimal binary (median of pairs)", ratio(median_of(&pairs)), "≤ 3×"),
        Row::single("RSS at ready: Larik / the minimal binary", ratio(rss_ratio), "≤ 4×"),
    ]
}

/// The scripted turn's project and model answers: read a file, edit it, run a command, answer.
pub(crate) fn scripted_turn(sandbox: &Sandbox) -> anyhow::Result<Vec<Step>> {
    std::fs::write(sandbox.project.path().join("app.py"), "print('hello')\n")?;
    Ok(vec![
        Step::tool("t1", "read", json!({"path": "app.py"})),
        Step::tool("t2", "edit", json!({"path": "app.py", "old_string": "hello", "new_string": "world"})),
        Step::tool("t3", "bash", json!({"command": "true"})),
        Step::text("Changed the greeting and checked it runs."),
    ])
}

async fn turn() -> anyhow::Result<Vec<Row>> {
    let mut rows = Vec::new();
    // 3. A scripted turn: read a file, edit it, run a command, answer.
    let (mut turn_cpu, mut turn_peak, mut turn_wall) = (Vec::new(), Vec::new(), Vec::new());
    let (mut anonymous, mut file_backed) = (Vec::new(), Vec::new());
    for _ in 0..10 {
        let sandbox = Sandbox::new();
        let steps = scripted_turn(&sandbox)?;
        let mock = MockLlm::start(Scenario { responses: steps }).await?;
        let (mut agent, session) = ready_agent(&sandbox, &mock).await;
        let pid = agent.child.id().unwrap_or(0);
        let before = cpu_time(pid);
        let started = Instant::now();
        agent.prompt(&session, "change the greeting", |_| "allow_once").await;
        turn_wall.push(started.elapsed());
        turn_cpu.push((cpu_time(pid) - before).as_secs_f64() * 1000.0);
        turn_peak.push(memory_kib(pid).1 as f64 / 1024.0);
        let (anon, file) = resident_split_kib(pid);
        anonymous.push(anon as f64 / 1024.0);
        file_backed.push(file as f64 / 1024.0);
        stop(agent).await;
    }
    rows.push(row("turn (read, edit, bash, answer): agent CPU", &turn_cpu, "ms", "< 20 ms"));
    rows.push(row("turn: peak RSS", &turn_peak, "MiB", "< 16 MiB"));
    rows.push(row("turn: RSS after it, anonymous", &anonymous, "MiB", ""));
    rows.push(row("turn: RSS after it, file-backed (code, read-only data)", &file_backed, "MiB", ""));
    rows.push(duration_row("turn: wall time (the mock adds no delay)", &turn_wall, ""));
    Ok(rows)
}

async fn long_session() -> anyhow::Result<Vec<Row>> {
    let mut rows = Vec::new();
    // 4. A long session: RSS at turn 10 and at turn 500.
    let turns = 500;
    let sandbox = Sandbox::new();
    std::fs::write(sandbox.project.path().join("notes.txt"), "a short file\n")?;
    let mut steps = Vec::new();
    for turn in 0..turns {
        steps.push(Step::tool(&format!("t{turn}"), "read", json!({"path": "notes.txt"})));
        steps.push(Step::text("It is a short file."));
    }
    let mock = MockLlm::start(Scenario { responses: steps }).await?;
    let (mut agent, session) = ready_agent(&sandbox, &mock).await;
    let pid = agent.child.id().unwrap_or(0);
    let (mut at_10, mut at_end) = (0.0, 0.0);
    for turn in 1..=turns {
        agent.prompt(&session, "read the notes", |_| "allow_once").await;
        if turn == 10 {
            at_10 = memory_kib(pid).0 as f64 / 1024.0;
        }
        if turn == turns {
            at_end = memory_kib(pid).0 as f64 / 1024.0;
        }
    }
    stop(agent).await;
    rows.push(Row::single("long session: RSS at turn 10 → 500", format!("{at_10:.1} → {at_end:.1} MiB"), "≤ 1.5×"));
    rows.push(Row::single("long session: growth", format!("{:.2}×", at_end / at_10.max(0.1)), "≤ 1.5×"));
    Ok(rows)
}

async fn relay() -> anyhow::Result<Vec<Row>> {
    let mut rows = relay_in(Format::Anthropic).await?;
    rows.extend(relay_in(Format::OpenAi).await?);
    Ok(rows)
}

#[derive(Clone, Copy)]
enum Format {
    Anthropic,
    OpenAi,
}

impl Format {
    fn label(self) -> &'static str {
        match self {
            Format::Anthropic => "streaming relay",
            Format::OpenAi => "streaming relay (OpenAI format)",
        }
    }

    /// The target is set for the default provider; the OpenAI format is reported beside it.
    fn target(self) -> &'static str {
        match self {
            Format::Anthropic => "< 10 %",
            Format::OpenAi => "",
        }
    }

    fn env(self, sandbox: &Sandbox, mock: &MockLlm) -> Vec<(String, String)> {
        match self {
            Format::Anthropic => sandbox.env(mock.url()),
            Format::OpenAi => sandbox.openai_env(mock.url()),
        }
    }
}

/// 5. Relaying a fast stream: 20,000 small deltas in one wire format.
async fn relay_in(format: Format) -> anyhow::Result<Vec<Row>> {
    let mut rows = Vec::new();
    let label = format.label();
    let (mut overheads, mut sent_times, mut relayed_times, mut messages, mut agent_cpu) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for _ in 0..5 {
        let sandbox = Sandbox::new();
        let mut step = Step::text("ab");
        step.chunk_chars = Some(2);
        step.repeat = Some(20_000);
        let mock = MockLlm::start(Scenario { responses: vec![step] }).await?;
        let (mut agent, session) = ready_agent_in(&sandbox, &format.env(&sandbox, &mock)).await;
        let pid = agent.child.id().unwrap_or(0);
        let cpu_before = cpu_time(pid);
        let id = agent
            .request("session/prompt", json!({"sessionId": session, "prompt": [{"type": "text", "text": "stream"}]}))
            .await;
        let (mut first, mut last, mut received, mut chunks) = (None, Instant::now(), 0usize, 0usize);
        loop {
            let message = agent.next().await;
            if message["id"] == json!(id) && message.get("method").is_none() {
                break;
            }
            if message["params"]["update"]["sessionUpdate"] == "agent_message_chunk" {
                first.get_or_insert_with(Instant::now);
                last = Instant::now();
                received += message["params"]["update"]["content"]["text"].as_str().map_or(0, str::len);
                chunks += 1;
            }
        }
        anyhow::ensure!(received == 40_000, "text was lost: {received} of 40000 bytes");
        let (sent_first, sent_last) =
            mock.first_stream_timing().await.ok_or_else(|| anyhow::anyhow!("no stream timing"))?;
        let sent = sent_last.duration_since(sent_first).as_secs_f64();
        let relayed = last.duration_since(first.unwrap_or(last)).as_secs_f64();
        overheads.push((relayed - sent).max(0.0) / sent.max(f64::EPSILON) * 100.0);
        sent_times.push(sent * 1000.0);
        relayed_times.push(relayed * 1000.0);
        messages.push(chunks as f64);
        agent_cpu.push((cpu_time(pid) - cpu_before).as_secs_f64() * 1000.0);
        stop(agent).await;
    }
    rows.push(row(&format!("{label}: the mock's send time"), &sent_times, "ms", ""));
    rows.push(row(&format!("{label}: first to last delta at the client"), &relayed_times, "ms", ""));
    rows.push(row(&format!("{label}: messages the client got"), &messages, "", ""));
    rows.push(row(&format!("{label}: agent CPU for the turn"), &agent_cpu, "ms", ""));
    rows.push(row(&format!("{label} of 20,000 deltas: overhead"), &overheads, "%", format.target()));
    Ok(rows)
}

async fn first_request() -> anyhow::Result<Vec<Row>> {
    let mut rows = Vec::new();
    // 7. The first model request with the full tool set; then with three MCP servers configured.
    for servers in [false, true] {
        let sandbox = Sandbox::new();
        let label = if servers {
            let Some(configured) = crate::mcp_servers::three(&sandbox.project_path()) else {
                rows.push(Row::single("first model request: MCP servers not installed (scripts/setup.sh)", "-", ""));
                continue;
            };
            sandbox.write_user_settings(&json!({"mcpServers": configured}));
            "first model request, with server-everything, server-filesystem and a second server-everything"
        } else {
            "first model request (system prompt + tool schemas)"
        };
        let mock = MockLlm::start(Scenario { responses: vec![Step::text("ok")] }).await?;
        let (mut agent, session) = ready_agent(&sandbox, &mock).await;
        agent.prompt(&session, "hi", |_| "reject_once").await;
        let first_request = mock.requests().first().map(|request| request.to_string().len()).unwrap_or(0);
        stop(agent).await;
        let target = if servers { "tools on demand beyond 10 KB of MCP schemas" } else { "lean (peers: 31–96 KB)" };
        rows.push(Row::single(label, format!("{:.1} KB", first_request as f64 / 1024.0), target));
    }
    Ok(rows)
}

/// MCP (figure 9): ready time with three stdio servers configured, which should stay within 2 ms of none
/// as they connect in the background; and the time from session/new to the first model request
/// that carries server-everything's tools.
async fn mcp_servers() -> anyhow::Result<Vec<Row>> {
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/mcp/node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    if !script.exists() {
        return Ok(vec![Row::single("mcp: server-everything not installed (scripts/setup.sh)", "-", "")]);
    }
    let node = String::from_utf8(std::process::Command::new("bash").args(["-c", "command -v node"]).output()?.stdout)?
        .trim()
        .to_owned();
    let mock = MockLlm::start(Scenario::default()).await?;
    let mut ready_by_servers = Vec::new();
    for servers in [0, 3] {
        let sandbox = Sandbox::new();
        let entries: serde_json::Map<String, serde_json::Value> = (0..servers)
            .map(|index| (format!("everything{index}"), json!({"command": node, "args": [script, "stdio"]})))
            .collect();
        let settings = sandbox.home.path().join(".config/larik/settings.json");
        std::fs::create_dir_all(settings.parent().ok_or_else(|| anyhow::anyhow!("no parent"))?)?;
        std::fs::write(&settings, json!({"mcpServers": entries}).to_string())?;
        let mut ready = Vec::new();
        for _ in 0..10 {
            let started = Instant::now();
            let (agent, _) = ready_agent(&sandbox, &mock).await;
            ready.push(started.elapsed());
            stop(agent).await;
        }
        ready_by_servers.push(ready);
    }
    let mut rows = vec![
        duration_row("mcp: ready with no servers", &ready_by_servers[0], "(reference)"),
        duration_row("mcp: ready with 3 stdio servers configured", &ready_by_servers[1], "≤ no servers + 2 ms"),
    ];
    let mut listed = Vec::new();
    for _ in 0..5 {
        let sandbox = Sandbox::new();
        let settings = sandbox.home.path().join(".config/larik/settings.json");
        std::fs::create_dir_all(settings.parent().ok_or_else(|| anyhow::anyhow!("no parent"))?)?;
        std::fs::write(
            &settings,
            json!({"mcpServers": {"everything": {"command": node, "args": [script, "stdio"]}}}).to_string(),
        )?;
        let mock = MockLlm::start(Scenario { responses: vec![Step::text("hi")] }).await?;
        let (mut agent, session) = ready_agent(&sandbox, &mock).await;
        let started = Instant::now();
        agent.prompt(&session, "hello", |_| "reject_once").await;
        listed.push(started.elapsed());
        let tools = mock.requests().first().map(|request| request["tools"].to_string()).unwrap_or_default();
        anyhow::ensure!(tools.contains("mcp__everything__echo"), "the first request lacked the server's tools");
        stop(agent).await;
    }
    rows.push(duration_row(
        "mcp: session/new → first request with server-everything's tools",
        &listed,
        "(Node starting the server)",
    ));
    Ok(rows)
}

/// Language servers: how long an edit takes when its result waits for pyright's diagnostics
/// (the server warm: the file was read and edited before), against the same edit with no
/// server; and the agent's memory with pyright running, the server's own reported apart.
async fn language_server() -> anyhow::Result<Vec<Row>> {
    let bin = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/lsp-servers/node_modules/.bin");
    if !bin.join("pyright-langserver").exists() {
        return Ok(vec![Row::single("lsp: pyright not installed (scripts/setup.sh)", "-", "")]);
    }
    const EDITS: usize = 10;
    let mut rows = Vec::new();
    let mut agent_rss = 0;
    let mut server_rss = 0;
    for with_server in [true, false] {
        let sandbox = Sandbox::new();
        let settings = sandbox.home.path().join(".config/larik/settings.json");
        std::fs::create_dir_all(settings.parent().ok_or_else(|| anyhow::anyhow!("no parent"))?)?;
        // Only pyright: a machine's other servers stay out of the figure.
        let servers = if with_server {
            json!({"servers": {"typescript": {"enabled": false}, "gopls": {"enabled": false}, "clangd": {"enabled": false}, "rust-analyzer": {"enabled": false}}})
        } else {
            json!({"enabled": false})
        };
        std::fs::write(&settings, json!({"lsp": servers}).to_string())?;
        std::fs::write(
            sandbox.project_path().join("app.py"),
            "def greet(name: str) -> str:\n    return \"hi \" + name\n\n\nprint(greet(\"x\"))\n",
        )?;
        // Each edit swaps the call's name, making or fixing an error.
        let mut steps = vec![Step::tool("r", "read", json!({"path": "app.py"}))];
        for index in 0..=EDITS {
            let (from, to) =
                if index % 2 == 0 { ("greet(\"x\")", "gret(\"x\")") } else { ("gret(\"x\")", "greet(\"x\")") };
            steps.push(Step::tool(
                &format!("e{index}"),
                "edit",
                json!({"path": "app.py", "old_string": from, "new_string": to}),
            ));
        }
        steps.push(Step::text("done"));
        let mock = MockLlm::start(Scenario { responses: steps }).await?;
        let mut env = sandbox.env(mock.url());
        for (key, value) in &mut env {
            if key == "PATH" {
                *value = format!("{}:{value}", bin.display());
            }
        }
        let (mut agent, session) = ready_agent_in(&sandbox, &env).await;
        let times = timed_calls(&mut agent, &session, "edit").await;
        // The first edit starts the server: it is not a warm edit.
        let edits: Vec<Duration> =
            times.iter().filter(|(id, _)| id.starts_with('e') && id.as_str() != "e0").map(|(_, time)| *time).collect();
        let text = mock.requests().last().map(|request| request.to_string()).unwrap_or_default();
        anyhow::ensure!(
            !with_server || text.contains("is not defined"),
            "pyright's diagnostics did not reach the model"
        );
        let pid = agent.child.id().unwrap_or(0);
        if with_server {
            agent_rss = memory_kib(pid).0;
            server_rss = children_of(pid).iter().map(|child| memory_kib(*child).0).sum();
        }
        stop(agent).await;
        let name = if with_server {
            "lsp: an edit with pyright's diagnostics (warm): tool call time"
        } else {
            "lsp: the same edit with no server: tool call time"
        };
        rows.push(duration_row(name, &edits, if with_server { "(the wait is the server's)" } else { "(reference)" }));
    }
    rows.push(Row::single(
        "lsp: agent RSS with pyright running",
        format!("{:.1} MiB", agent_rss as f64 / 1024.0),
        "(the agent alone)",
    ));
    rows.push(Row::single(
        "lsp: pyright's own RSS",
        format!("{:.1} MiB", server_rss as f64 / 1024.0),
        "(Node; apart from the agent)",
    ));
    Ok(rows)
}

/// Runs a prompt, allowing every question, and returns each tool call's time from running to
/// completed, by call id, in the order they completed.
async fn timed_calls(agent: &mut Agent, session: &str, text: &str) -> Vec<(String, Duration)> {
    let prompt = agent
        .request("session/prompt", json!({"sessionId": session, "prompt": [{"type": "text", "text": text}]}))
        .await;
    let mut started: std::collections::HashMap<String, Instant> = std::collections::HashMap::new();
    let mut times = Vec::new();
    loop {
        let message = agent.next().await;
        if message["id"] == prompt && message.get("method").is_none() {
            return times;
        }
        if message["method"] == "session/request_permission" {
            agent.reply(&message, json!({"outcome": {"outcome": "selected", "optionId": "allow_once"}})).await;
            continue;
        }
        let update = &message["params"]["update"];
        let id = update["toolCallId"].as_str().unwrap_or_default().to_owned();
        match update["status"].as_str() {
            Some("in_progress") => {
                started.insert(id, Instant::now());
            }
            Some("completed") => {
                if let Some(start) = started.get(&id) {
                    times.push((id, start.elapsed()));
                }
            }
            _ => {}
        }
    }
}

/// The browser tools (figure 11): the first navigation (Chromium launched cold), a warm snapshot
/// of a page of 2,000 elements, and memory with the browser open: the agent's own RSS apart
/// from Chromium's (every process of its group).
async fn browser() -> anyhow::Result<Vec<Row>> {
    const SNAPSHOTS: usize = 10;
    let base =
        larik_tests::pages::serve(std::collections::HashMap::from([("/many", larik_tests::pages::many_buttons(2000))]))
            .await;
    let sandbox = Sandbox::new();
    let mut steps = vec![Step::tool("n", "browser_navigate", json!({"url": format!("{base}/many")}))];
    steps.extend((0..SNAPSHOTS).map(|index| Step::tool(&format!("s{index}"), "browser_snapshot", json!({}))));
    steps.push(Step::text("done"));
    let mock = MockLlm::start(Scenario { responses: steps }).await?;
    let (mut agent, session) = ready_agent(&sandbox, &mock).await;
    let times = timed_calls(&mut agent, &session, "look").await;
    let text = mock.requests().last().map(|request| request.to_string()).unwrap_or_default();
    anyhow::ensure!(
        text.contains("Item number 1999") || text.contains("snapshot cut at"),
        "the snapshot did not reach the model"
    );
    let navigate: Vec<Duration> = times.iter().filter(|(id, _)| id == "n").map(|(_, time)| *time).collect();
    let snapshots: Vec<Duration> = times.iter().filter(|(id, _)| id.starts_with('s')).map(|(_, time)| *time).collect();
    let pid = agent.child.id().unwrap_or(0);
    let agent_rss = memory_kib(pid).0;
    let browser_rss: u64 =
        children_of(pid).iter().flat_map(|child| group_of(*child)).map(|member| memory_kib(member).0).sum();
    stop(agent).await;
    Ok(vec![
        duration_row("browser: first browser_navigate (Chromium launched cold)", &navigate, "(Chromium's start)"),
        duration_row("browser: browser_snapshot of 2,000 elements (warm)", &snapshots, "(capped at 20k characters)"),
        Row::single(
            "browser: agent RSS with the browser open",
            format!("{:.1} MiB", agent_rss as f64 / 1024.0),
            "(the agent alone)",
        ),
        Row::single(
            "browser: Chromium's own RSS (all its processes)",
            format!("{:.1} MiB", browser_rss as f64 / 1024.0),
            "(apart from the agent)",
        ),
    ])
}

/// The processes in the process group led by `leader`.
fn group_of(leader: u32) -> Vec<u32> {
    processes_whose_stat_field(2, leader)
}

/// The processes whose parent is `pid`.
fn children_of(pid: u32) -> Vec<u32> {
    processes_whose_stat_field(1, pid)
}

/// The processes whose `/proc/<pid>/stat` field `field` (counted after the command name: 1 is
/// the parent, 2 the process group) equals `value`.
fn processes_whose_stat_field(field: usize, value: u32) -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir("/proc") else { return Vec::new() };
    entries
        .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            stat.rsplit_once(')').and_then(|(_, rest)| rest.split_whitespace().nth(field)?.parse::<u32>().ok())
                == Some(value)
        })
        .collect()
}
