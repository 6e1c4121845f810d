#![allow(clippy::unwrap_used, clippy::expect_used)]
//! A client that stops reading stdout for 30 s while the model streams fast: the agent's memory
//! stays bounded (its queues are bounded, so the model's stream waits in the socket), and when
//! the client reads again every piece of text arrives, in order, none dropped. The same for
//! `larik lsp`, whose turn sends a progress report for each of its events.

use std::time::{Duration, Instant};

use larik_tests::harness::{Sandbox, spawn_larik};
use larik_tests::lsp_client::LspServer;
use larik_tests::mock_llm::{MockLlm, Scenario, Step};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

/// The process's anonymous resident memory: its heap and stacks, without the pages of its binary
/// (which grow as code runs for the first time, the debug build's especially).
fn anonymous_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|line| line.strip_prefix("RssAnon:"))
        .and_then(|value| value.trim().trim_end_matches(" kB").trim().parse().ok())
        .unwrap_or(0)
}

/// `numbers` seven-digit numbers, each followed by a space, streamed by the mock model in
/// 40-character deltas as fast as it can.
async fn a_fast_stream(numbers: usize) -> (String, MockLlm) {
    let text: String = (0..numbers).map(|number| format!("{number:07} ")).collect();
    let mut step = Step::text(&text);
    step.chunk_chars = Some(40);
    (text, MockLlm::start(Scenario { responses: vec![step] }).await.unwrap())
}

/// The most anonymous memory `pid` holds, sampled for `seconds` while nothing is read from it.
async fn peak_while_not_reading(pid: u32, baseline: u64, seconds: u64) -> u64 {
    let mut peak = baseline;
    let stopped = Instant::now();
    while stopped.elapsed() < Duration::from_secs(seconds) {
        tokio::time::sleep(Duration::from_millis(250)).await;
        peak = peak.max(anonymous_kib(pid));
    }
    peak
}

#[tokio::test]
async fn a_client_that_stops_reading_costs_bounded_memory_and_loses_nothing() {
    // 8 MB of numbered text in 40-character deltas: about 200,000 events. Read whole while the
    // client does not read, it would cost 16 MiB at least (the message, and its JSON-RPC lines
    // queued). Read only while there is room in the queues (1 MiB of lines, 256 events of at
    // most 8 KiB), the rest waits in the model's socket and the agent stays under 12 MiB more.
    let (text, mock) = a_fast_stream(1_000_000).await;
    let sandbox = Sandbox::new();
    let mut child = spawn_larik("acp", &sandbox.project_path(), &sandbox.env(mock.url()));
    let pid = child.id().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::with_capacity(1 << 16, child.stdout.take().unwrap());
    let mut line = String::new();
    let mut send = async |message: Value| {
        stdin.write_all(format!("{message}\n").as_bytes()).await.unwrap();
        stdin.flush().await.unwrap();
    };
    send(json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}})).await;
    send(json!({"jsonrpc": "2.0", "id": 2, "method": "session/new", "params": {"cwd": sandbox.project_path(), "mcpServers": []}})).await;
    let session = loop {
        line.clear();
        stdout.read_line(&mut line).await.unwrap();
        let message: Value = serde_json::from_str(&line).unwrap();
        if message["id"] == 2 {
            break message["result"]["sessionId"].as_str().unwrap().to_owned();
        }
    };
    let baseline = anonymous_kib(pid);
    send(json!({"jsonrpc": "2.0", "id": 3, "method": "session/prompt", "params": {"sessionId": session, "prompt": [{"type": "text", "text": "go"}]}})).await;

    // Not a byte read for 30 s; the agent's memory sampled meanwhile.
    let peak = peak_while_not_reading(pid, baseline, 30).await;
    assert!(
        peak < baseline + 12 * 1024,
        "memory grew by {} KiB while the client did not read (baseline {baseline} KiB)",
        peak - baseline
    );

    // Reading again: everything, in order, then the answer.
    let mut received = String::new();
    loop {
        line.clear();
        assert!(stdout.read_line(&mut line).await.unwrap() > 0, "the agent ended early");
        let message: Value = serde_json::from_str(&line).unwrap_or_else(|error| panic!("{error}: {line}"));
        if message["id"] == 3 {
            assert_eq!(message["result"]["stopReason"], "end_turn", "{message}");
            break;
        }
        let update = &message["params"]["update"];
        if update["sessionUpdate"] == "agent_message_chunk" {
            received.push_str(update["content"]["text"].as_str().unwrap());
        }
    }
    assert_eq!(received.len(), text.len(), "no text dropped or repeated");
    assert!(received == text, "the text arrived in order");
    eprintln!("agent anonymous memory: {baseline} KiB before, {peak} KiB at most while the client did not read");
}

#[tokio::test]
async fn an_lsp_client_that_stops_reading_costs_bounded_memory_and_loses_nothing() {
    // 4 MB of numbered text in 40-character deltas, 100,000 of them. While the editor lags, the
    // agent merges text into events of up to 8 KiB, and each event is one `$/progress` report
    // of the answer's last words: a few hundred small messages wait for stdout. What grows is
    // the answer, read whole and kept to be shown at the end (measured: 17.7 MiB more for the
    // 4 MB, which the agent holds in more than one place).
    let (text, mock) = a_fast_stream(500_000).await;
    let sandbox = Sandbox::new();
    let mut server = LspServer::spawn(&sandbox.project_path(), &sandbox.env(mock.url()));
    server.initialize(&sandbox.project_path()).await;
    let pid = server.child.id().unwrap();
    let baseline = anonymous_kib(pid);
    server.request("workspace/executeCommand", json!({"command": "larik.ask", "arguments": ["go"]})).await;
    // The command's answer may come before or after the turn's progress is created.
    let (create, _) = server.wait_for(|message| message["method"] == "window/workDoneProgress/create").await;
    server.reply(&create, Value::Null).await;

    // Not a message read for 10 s (the test's reader holds a few thousand, then the pipe fills).
    let peak = peak_while_not_reading(pid, baseline, 10).await;
    assert!(
        peak < baseline + 24 * 1024,
        "memory grew by {} KiB while the editor did not read (baseline {baseline} KiB)",
        peak - baseline
    );

    // Reading again: the reports in order, then the whole answer.
    let mut last_number = -1_i64;
    let mut reports = 0;
    let answer = loop {
        let message = server.next().await;
        if message["method"] == "window/showMessage" {
            break message["params"]["message"].as_str().unwrap().to_owned();
        }
        if message["method"] == "$/progress" && message["params"]["value"]["kind"] == "report" {
            let tail = message["params"]["value"]["message"].as_str().unwrap();
            // The tail's last whole number: every number has seven digits, a cut one fewer.
            if let Some(number) =
                tail.split_whitespace().rev().find(|word| word.len() == 7).and_then(|word| word.parse::<i64>().ok())
            {
                assert!(number >= last_number, "report {tail:?} came after one at {last_number}");
                last_number = number;
                reports += 1;
            }
        }
    };
    assert_eq!(answer, format!("Larik: {}", text.trim()), "the answer arrived whole");
    assert_eq!(last_number, 499_999, "the last report is the text's end");
    eprintln!(
        "larik lsp anonymous memory: {baseline} KiB before, {peak} KiB at most while the editor did not read; {reports} reports"
    );
}
