//! The fuzz targets' bodies, each over the real code in process, each asserting a property
//! beyond "does not panic". `cargo fuzz run <target>` drives them with libFuzzer (see
//! `fuzz/run.sh`); `tests/corpus.rs` replays every committed input on stable, so a crash once
//! found stays fixed.
//!
//! - `jsonrpc`: any bytes on an ACP connection's input; every line it writes is a JSON-RPC
//!   object, and every request gets its answer.
//! - `model_stream`: any response body, in any pieces, as Anthropic and as OpenAI; the events
//!   are the same whatever the split.
//! - `shell_rules`: any bash line; a line `Bash(ls:*)` allows runs no command but `ls`, by a
//!   second, deliberately simple reading of the line ([`oracle`]).
//! - `session_file`: any bytes as a session file; an intact line after them still loads.
//! - `definitions`: any text as a settings file and as an agent, skill or command file.

// A failed property is a panic: that is how libFuzzer learns of it and keeps the input.
#![allow(clippy::expect_used, reason = "a fuzz target reports what it found by panicking")]

pub mod oracle;

use std::sync::OnceLock;

use larik_core::fuzzing::{self, WireFormat};
use serde_json::Value;

/// One runtime for every input: making one per input would cost more than the work.
fn runtime() -> &'static tokio::runtime::Runtime {
    static RUNTIME: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RUNTIME.get_or_init(|| tokio::runtime::Builder::new_current_thread().enable_all().build().expect("a runtime"))
}

/// A home directory of our own for the agent's session files.
fn home() -> &'static std::path::Path {
    static HOME: OnceLock<tempfile::TempDir> = OnceLock::new();
    HOME.get_or_init(|| tempfile::tempdir().expect("a temp dir")).path()
}

/// What the agent writes, kept for the checks.
#[derive(Clone, Default)]
struct Written(std::sync::Arc<std::sync::Mutex<Vec<u8>>>);

impl tokio::io::AsyncWrite for Written {
    fn poll_write(
        self: std::pin::Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
        bytes: &[u8],
    ) -> std::task::Poll<std::io::Result<usize>> {
        if let Ok(mut written) = self.0.lock() {
            written.extend_from_slice(bytes);
        }
        std::task::Poll::Ready(Ok(bytes.len()))
    }

    fn poll_flush(
        self: std::pin::Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::task::Poll::Ready(Ok(()))
    }

    fn poll_shutdown(
        self: std::pin::Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::task::Poll::Ready(Ok(()))
    }
}

pub fn jsonrpc(data: &[u8]) {
    // Servers a client names in `session/new` are started without asking (the editor chose
    // them): input naming one could run any program on this machine, so it is left out.
    if data.windows(b"mcpServers".len()).any(|window| window == b"mcpServers") {
        return;
    }
    let written = Written::default();
    let env = std::collections::HashMap::from([
        ("HOME".to_owned(), home().display().to_string()),
        ("PATH".to_owned(), String::new()),
    ]);
    let agent = std::sync::Arc::new(larik::acp::AcpAgent::new(env));
    let output = written.clone();
    runtime().block_on(async {
        larik::acp::connection::run(tokio::io::BufReader::new(data), output, std::sync::Arc::clone(&agent)).await;
        agent.shutdown().await;
    });
    let bytes = written.0.lock().map(|bytes| bytes.clone()).unwrap_or_default();
    let text = String::from_utf8(bytes).expect("the agent wrote bytes that are not UTF-8");
    let answered: Vec<Value> = text
        .lines()
        .map(|line| {
            let message: Value = serde_json::from_str(line)
                .unwrap_or_else(|error| panic!("the agent wrote a line that is not JSON ({error}): {line}"));
            assert_eq!(message["jsonrpc"], "2.0", "not a JSON-RPC message: {line}");
            message
        })
        .filter(|message| message.get("method").is_none())
        .map(|message| message["id"].clone())
        .collect();
    for line in data.split(|byte| *byte == b'\n') {
        let Ok(request) = serde_json::from_str::<Value>(String::from_utf8_lossy(line).trim()) else { continue };
        if let (Some(_), Some(id)) = (request.get("method").and_then(Value::as_str), request.get("id")) {
            // An id ACP does not allow (a float, a number past i64, anything but a string or
            // null) is refused with a null id: it could not be echoed back as sent.
            let expected = if id.is_null() || id.is_string() || id.is_i64() { id } else { &Value::Null };
            assert!(answered.contains(expected), "the request {request} got no answer");
        }
    }
}

pub fn model_stream(data: &[u8]) {
    let [format, seed, body @ ..] = data else { return };
    let format = if format & 1 == 0 { WireFormat::Anthropic } else { WireFormat::OpenAi };
    let whole = fuzzing::stream_events(format, &[body]);
    let bytes: Vec<&[u8]> = body.chunks(1).collect();
    assert_eq!(fuzzing::stream_events(format, &bytes), whole, "byte by byte differs from whole");
    // Pieces of 1 to 16 bytes, their sizes drawn from the seed.
    let mut state = u32::from(*seed) | 1;
    let mut pieces = Vec::new();
    let mut rest = body;
    while !rest.is_empty() {
        state = state.wrapping_mul(1_103_515_245).wrapping_add(12_345);
        let size = (((state >> 16) % 16) as usize + 1).min(rest.len());
        let (piece, after) = rest.split_at(size);
        pieces.push(piece);
        rest = after;
    }
    assert_eq!(fuzzing::stream_events(format, &pieces), whole, "pieces differ from whole");
}

pub fn shell_rules(data: &[u8]) {
    let Ok(line) = std::str::from_utf8(data) else { return };
    let _ = fuzzing::shell_line(line);
    if fuzzing::bash_line_allowed(&["Bash(ls:*)".to_owned()], line)
        && let Some(other) = oracle::command_other_than(line, "ls")
    {
        panic!("`Bash(ls:*)` allows {line:?}, which runs {other:?}");
    }
}

/// A record any session file may hold.
const META_LINE: &[u8] = br#"{"type":"meta","id":"s","cwd":"/p","created_at":1}"#;

pub fn session_file(data: &[u8]) {
    let (records, _, _) = fuzzing::session_file(data);
    let mut longer = data.to_vec();
    longer.push(b'\n');
    longer.extend_from_slice(META_LINE);
    longer.push(b'\n');
    let (after, _, _) = fuzzing::session_file(&longer);
    assert_eq!(after, records + 1, "an intact line after these bytes did not load");
}

pub fn definitions(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let _ = fuzzing::settings_file(&text);
    fuzzing::markdown_definition(&text);
}
