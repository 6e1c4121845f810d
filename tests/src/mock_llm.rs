//! A mock model server on 127.0.0.1: it speaks Anthropic's Messages SSE (`POST /v1/messages`) and
//! OpenAI's Chat Completions SSE (`POST /v1/chat/completions`, also under `/v1`), answering each
//! request with the next step of a scenario, and records every request body (`GET /requests`).
//! It is the only mock in the test suite: the model is a paid remote service.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use larik_core::replay::ModelStop;
use larik_core::replay::RecordedResponse;
use serde::Deserialize;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, TcpStream};

/// What the mock answers, request by request.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct Scenario {
    pub responses: Vec<Step>,
}

/// One answer: a model response streamed in chunks, or an HTTP error.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct Step {
    #[serde(flatten)]
    pub response: RecordedResponse,
    /// Text is streamed in pieces of this many characters.
    pub chunk_chars: Option<usize>,
    /// Pause before each streamed event.
    pub chunk_delay_ms: u64,
    /// Send the text as this many chunks of `chunk_chars`, repeating it (for streaming benchmarks).
    pub repeat: Option<usize>,
    /// After the text, keep the stream open without finishing (until the client goes away).
    pub hang: bool,
    /// After the text, end the body cleanly but without the model's final events, as a dropped
    /// upstream connection looks.
    pub cut: bool,
    /// Answer with this HTTP status and body instead of a stream.
    pub status: Option<u16>,
    pub headers: BTreeMap<String, String>,
    pub body: Option<String>,
    /// Answer only a request whose body contains this text (for conversations that run side by
    /// side, like subagents); steps without it are taken in order.
    pub when: Option<String>,
    /// Hold the answer until this many requests have arrived in all: a step that can only be
    /// answered when other conversations run at the same time (10 s at most, then a 500).
    pub after_requests: Option<usize>,
    /// The usage object in the provider's own format (Anthropic's `message_start` usage, with
    /// its `output_tokens` repeated in `message_delta`; OpenAI's final usage chunk) instead of
    /// the default 100 in, 42 out.
    pub usage: Option<Value>,
}

impl Step {
    pub fn text(text: &str) -> Self {
        Self {
            response: RecordedResponse { text: Some(text.into()), ..RecordedResponse::default() },
            ..Self::default()
        }
    }

    /// An HTTP error answer with the default error body.
    pub fn http_error(status: u16) -> Self {
        Self { status: Some(status), ..Self::default() }
    }

    pub fn tool(id: &str, name: &str, input: Value) -> Self {
        let call = larik_core::replay::RecordedToolCall { id: Some(id.into()), name: name.into(), input };
        Self { response: RecordedResponse { tool_calls: vec![call], ..RecordedResponse::default() }, ..Self::default() }
    }
}

#[derive(Default)]
struct State {
    /// Which steps have been answered.
    used: Vec<bool>,
    requests: Vec<Value>,
    /// The credential each model request carried (`x-api-key`, or `authorization`'s token).
    keys: Vec<String>,
    disconnects: usize,
    /// When each finished stream sent its first and last event.
    streams: Vec<(std::time::Instant, std::time::Instant)>,
}

/// A running mock server.
pub struct MockLlm {
    url: String,
    state: Arc<Mutex<State>>,
}

impl MockLlm {
    pub async fn start(scenario: Scenario) -> std::io::Result<Self> {
        Self::start_on(scenario, 0).await
    }

    pub async fn start_on(scenario: Scenario, port: u16) -> std::io::Result<Self> {
        let listener = TcpListener::bind(("127.0.0.1", port)).await?;
        let url = format!("http://{}", listener.local_addr()?);
        let state = Arc::new(Mutex::new(State::default()));
        let scenario = Arc::new(scenario);
        tokio::spawn({
            let state = Arc::clone(&state);
            async move {
                while let Ok((stream, _)) = listener.accept().await {
                    tokio::spawn(serve_connection(stream, Arc::clone(&scenario), Arc::clone(&state)));
                }
            }
        });
        Ok(Self { url, state })
    }

    /// The base URL, e.g. `http://127.0.0.1:40123`.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Every request body received so far, in order.
    pub fn requests(&self) -> Vec<Value> {
        self.state.lock().map(|state| state.requests.clone()).unwrap_or_default()
    }

    /// The text of the tool result each request after the first ended with (Anthropic's
    /// format): what the model read of each call, in order.
    pub fn tool_result_texts(&self) -> Vec<String> {
        self.requests()
            .iter()
            .skip(1)
            .map(|request| {
                let last =
                    request["messages"].as_array().and_then(|messages| messages.last()).cloned().unwrap_or_default();
                last["content"][0]["content"][0]["text"].as_str().unwrap_or_default().to_owned()
            })
            .collect()
    }

    /// The credential each model request carried, in order.
    pub fn keys(&self) -> Vec<String> {
        self.state.lock().map(|state| state.keys.clone()).unwrap_or_default()
    }

    /// When the first finished stream sent its first and last event. The client can see the
    /// last event before the server has noted it, so this waits a moment for the note.
    pub async fn first_stream_timing(&self) -> Option<(std::time::Instant, std::time::Instant)> {
        for _ in 0..500 {
            if let Some(timing) = self.state.lock().ok().and_then(|state| state.streams.first().copied()) {
                return Some(timing);
            }
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
        None
    }

    /// How many streams the client abandoned before they finished.
    pub fn disconnects(&self) -> usize {
        self.state.lock().map(|state| state.disconnects).unwrap_or_default()
    }
}

async fn serve_connection(stream: TcpStream, scenario: Arc<Scenario>, state: Arc<Mutex<State>>) {
    // As streaming servers do: each event leaves when written, not held back to fill a segment.
    let _ = stream.set_nodelay(true);
    let (read, mut write) = stream.into_split();
    let mut reader = BufReader::new(read);
    loop {
        let Some((method, path, body, key)) = read_request(&mut reader).await else { return };
        if method == "GET" && path == "/requests" {
            let requests = state.lock().map(|state| Value::Array(state.requests.clone())).unwrap_or_default();
            if write_response(&mut write, 200, "application/json", &BTreeMap::new(), &requests.to_string())
                .await
                .is_err()
            {
                return;
            }
            continue;
        }
        if method == "GET" && path.ends_with("/models") {
            let (status, body) = model_list(&scenario, &state);
            if write_response(&mut write, status, "application/json", &BTreeMap::new(), &body).await.is_err() {
                return;
            }
            continue;
        }
        let request: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
        let Some(step) = take_step(&scenario, &state, &request, key) else { return };
        if let Some(wanted) = step.as_ref().and_then(|step| step.after_requests) {
            let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
            while state.lock().map(|state| state.requests.len()).unwrap_or(0) < wanted {
                if std::time::Instant::now() > deadline {
                    let body = json!({"error": {"type": "api_error", "message": format!("mock: fewer than {wanted} requests arrived together")}}).to_string();
                    let _ = write_response(&mut write, 500, "application/json", &BTreeMap::new(), &body).await;
                    return;
                }
                tokio::time::sleep(std::time::Duration::from_millis(5)).await;
            }
        }
        let Some(step) = step else {
            let body = json!({"error": {"type": "api_error", "message": "mock scenario exhausted"}}).to_string();
            let _ = write_response(&mut write, 500, "application/json", &BTreeMap::new(), &body).await;
            return;
        };
        if let Some(status) = step.status {
            let body = step.body.clone().unwrap_or_else(|| {
                json!({"error": {"type": "error", "message": format!("mock status {status}")}}).to_string()
            });
            if write_response(&mut write, status, "application/json", &step.headers, &body).await.is_err() {
                return;
            }
            continue;
        }
        let events = if path.ends_with("/chat/completions") {
            openai_events(&step, &request)
        } else {
            anthropic_events(&step, &request)
        };
        let head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\ntransfer-encoding: chunked\r\n\r\n";
        if write.write_all(head.as_bytes()).await.is_err() {
            return;
        }
        let started = std::time::Instant::now();
        let finished = stream_events(&mut write, &mut reader, &step, events).await;
        if finished && let Ok(mut state) = state.lock() {
            state.streams.push((started, std::time::Instant::now()));
        }
        if !finished {
            if let Ok(mut state) = state.lock() {
                state.disconnects += 1;
            }
            return;
        }
    }
}

/// The answer to a model list. A list costs nothing: answered from the scenario only when its
/// next step is an HTTP error (a rejected key), else listed in the provider's own format.
fn model_list(scenario: &Scenario, state: &Mutex<State>) -> (u16, String) {
    let error = state.lock().ok().and_then(|mut state| {
        state.used.resize(scenario.responses.len(), false);
        let next = state.used.iter().position(|used| !used)?;
        let status = scenario.responses[next].status?;
        state.used[next] = true;
        Some((status, scenario.responses[next].body.clone()))
    });
    match error {
        Some((status, body)) => (status, body.unwrap_or_else(|| json!({"type": "error", "error": {"type": "authentication_error", "message": "invalid x-api-key"}}).to_string())),
        // Both providers' list shapes at once: Anthropic's `has_more`, OpenAI's `object`.
        None => (200, json!({"object": "list", "data": [{"type": "model", "id": "claude-sonnet-4-5", "object": "model", "owned_by": "mock"}], "has_more": false}).to_string()),
    }
}

/// Records the request and takes the first unused step it matches; `None` when the state is
/// poisoned, `Some(None)` when no step is left.
fn take_step(scenario: &Scenario, state: &Mutex<State>, request: &Value, key: String) -> Option<Option<Step>> {
    let mut state = state.lock().ok()?;
    state.requests.push(request.clone());
    state.keys.push(key);
    let text = request.to_string();
    state.used.resize(scenario.responses.len(), false);
    let chosen = scenario.responses.iter().enumerate().position(|(index, step)| {
        !state.used[index] && step.when.as_ref().is_none_or(|needle| text.contains(needle.as_str()))
    });
    Some(chosen.map(|index| {
        state.used[index] = true;
        scenario.responses[index].clone()
    }))
}

/// Writes the events as chunks; returns false when the client went away first.
async fn stream_events(
    write: &mut tokio::net::tcp::OwnedWriteHalf,
    reader: &mut BufReader<tokio::net::tcp::OwnedReadHalf>,
    step: &Step,
    events: Vec<SseEvent>,
) -> bool {
    for event in events {
        if step.chunk_delay_ms > 0 {
            tokio::time::sleep(Duration::from_millis(step.chunk_delay_ms)).await;
        }
        if event.hang_here {
            // Wait until the client closes the connection.
            let mut byte = [0u8; 1];
            let _ = reader.read(&mut byte).await;
            return false;
        }
        let frame = match &event.name {
            Some(name) => format!("event: {name}\ndata: {}\n\n", event.data),
            None => format!("data: {}\n\n", event.data),
        };
        let chunk = format!("{:x}\r\n{frame}\r\n", frame.len());
        if write.write_all(chunk.as_bytes()).await.is_err() || write.flush().await.is_err() {
            return false;
        }
    }
    write.write_all(b"0\r\n\r\n").await.is_ok() && write.flush().await.is_ok()
}

struct SseEvent {
    name: Option<String>,
    data: String,
    hang_here: bool,
}

impl SseEvent {
    fn named(name: &str, data: Value) -> Self {
        Self { name: Some(name.into()), data: data.to_string(), hang_here: false }
    }

    fn data(data: impl Into<String>) -> Self {
        Self { name: None, data: data.into(), hang_here: false }
    }

    fn hang() -> Self {
        Self { name: None, data: String::new(), hang_here: true }
    }
}

fn chunks(text: &str, size: usize) -> Vec<String> {
    let characters: Vec<char> = text.chars().collect();
    characters.chunks(size.max(1)).map(|piece| piece.iter().collect()).collect()
}

fn stop_name(stop: ModelStop, anthropic: bool) -> &'static str {
    match (stop, anthropic) {
        (ModelStop::EndTurn, true) => "end_turn",
        (ModelStop::ToolUse, true) => "tool_use",
        (ModelStop::MaxTokens, true) => "max_tokens",
        (ModelStop::Refusal, true) => "refusal",
        (ModelStop::EndTurn, false) => "stop",
        (ModelStop::ToolUse, false) => "tool_calls",
        (ModelStop::MaxTokens, false) => "length",
        (ModelStop::Refusal, false) => "content_filter",
    }
}

fn anthropic_events(step: &Step, request: &Value) -> Vec<SseEvent> {
    let response = &step.response;
    let size = step.chunk_chars.unwrap_or(8);
    let model = request["model"].as_str().unwrap_or("mock");
    let mut events = vec![SseEvent::named(
        "message_start",
        json!({"type": "message_start", "message": {"id": "msg_mock", "type": "message", "role": "assistant", "model": model, "content": [], "stop_reason": null, "usage": step.usage.clone().unwrap_or_else(|| json!({"input_tokens": 100, "output_tokens": 1}))}}),
    )];
    let mut index = 0;
    if let Some(thinking) = &response.thinking {
        events.push(SseEvent::named("content_block_start", json!({"type": "content_block_start", "index": index, "content_block": {"type": "thinking", "thinking": ""}})));
        for piece in chunks(thinking, size) {
            events.push(SseEvent::named("content_block_delta", json!({"type": "content_block_delta", "index": index, "delta": {"type": "thinking_delta", "thinking": piece}})));
        }
        events.push(SseEvent::named("content_block_delta", json!({"type": "content_block_delta", "index": index, "delta": {"type": "signature_delta", "signature": "sig-mock"}})));
        events.push(SseEvent::named("content_block_stop", json!({"type": "content_block_stop", "index": index})));
        index += 1;
    }
    if let Some(text) = &response.text {
        events.push(SseEvent::named(
            "content_block_start",
            json!({"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}}),
        ));
        let text = text.repeat(step.repeat.unwrap_or(1));
        for piece in chunks(&text, size) {
            events.push(SseEvent::named(
                "content_block_delta",
                json!({"type": "content_block_delta", "index": index, "delta": {"type": "text_delta", "text": piece}}),
            ));
        }
        if step.hang {
            events.push(SseEvent::hang());
            return events;
        }
        if step.cut {
            return events;
        }
        events.push(SseEvent::named("content_block_stop", json!({"type": "content_block_stop", "index": index})));
        index += 1;
    }
    for (call_index, call) in response.tool_calls.iter().enumerate() {
        let id = call.id.clone().unwrap_or_else(|| format!("toolu_mock_{call_index}"));
        events.push(SseEvent::named("content_block_start", json!({"type": "content_block_start", "index": index, "content_block": {"type": "tool_use", "id": id, "name": call.name, "input": {}}})));
        for piece in chunks(&streamed_input(&call.input), 16) {
            events.push(SseEvent::named("content_block_delta", json!({"type": "content_block_delta", "index": index, "delta": {"type": "input_json_delta", "partial_json": piece}})));
        }
        events.push(SseEvent::named("content_block_stop", json!({"type": "content_block_stop", "index": index})));
        index += 1;
    }
    if step.hang {
        events.push(SseEvent::hang());
        return events;
    }
    let stop = stop_name(response.effective_stop(), true);
    let output_tokens = step.usage.as_ref().map_or(json!(42), |usage| usage["output_tokens"].clone());
    events.push(SseEvent::named("message_delta", json!({"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": null}, "usage": {"output_tokens": output_tokens}})));
    events.push(SseEvent::named("message_stop", json!({"type": "message_stop"})));
    events
}

fn openai_events(step: &Step, request: &Value) -> Vec<SseEvent> {
    let response = &step.response;
    let size = step.chunk_chars.unwrap_or(8);
    let model = request["model"].as_str().unwrap_or("mock");
    let chunk = |delta: Value, finish: Value| {
        SseEvent::data(json!({"id": "chatcmpl-mock", "object": "chat.completion.chunk", "model": model, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}).to_string())
    };
    let mut events = vec![chunk(json!({"role": "assistant", "content": ""}), Value::Null)];
    if let Some(thinking) = &response.thinking {
        for piece in chunks(thinking, size) {
            events.push(chunk(json!({"reasoning_content": piece}), Value::Null));
        }
    }
    if let Some(text) = &response.text {
        for piece in chunks(&text.repeat(step.repeat.unwrap_or(1)), size) {
            events.push(chunk(json!({"content": piece}), Value::Null));
        }
    }
    if step.hang {
        events.push(SseEvent::hang());
        return events;
    }
    if step.cut {
        return events;
    }
    for (call_index, call) in response.tool_calls.iter().enumerate() {
        let id = call.id.clone().unwrap_or_else(|| format!("call_mock_{call_index}"));
        events.push(chunk(json!({"tool_calls": [{"index": call_index, "id": id, "type": "function", "function": {"name": call.name, "arguments": ""}}]}), Value::Null));
        for piece in chunks(&streamed_input(&call.input), 16) {
            events.push(chunk(
                json!({"tool_calls": [{"index": call_index, "function": {"arguments": piece}}]}),
                Value::Null,
            ));
        }
    }
    events.push(chunk(json!({}), json!(stop_name(response.effective_stop(), false))));
    let usage = step.usage.clone().unwrap_or_else(|| json!({"prompt_tokens": 100, "completion_tokens": 42}));
    events.push(SseEvent::data(
        json!({"id": "chatcmpl-mock", "object": "chat.completion.chunk", "choices": [], "usage": usage}).to_string(),
    ));
    events.push(SseEvent::data("[DONE]"));
    events
}

/// Reads one HTTP/1.1 request: method, path, body (Content-Length framing) and the credential
/// it carried.
async fn read_request(
    reader: &mut BufReader<tokio::net::tcp::OwnedReadHalf>,
) -> Option<(String, String, Vec<u8>, String)> {
    let mut request_line = String::new();
    if reader.read_line(&mut request_line).await.ok()? == 0 {
        return None;
    }
    let mut parts = request_line.split_whitespace();
    let method = parts.next()?.to_owned();
    let path = parts.next()?.to_owned();
    let mut content_length = 0usize;
    let mut key = String::new();
    loop {
        let mut header = String::new();
        if reader.read_line(&mut header).await.ok()? == 0 {
            return None;
        }
        let header = header.trim_end();
        if header.is_empty() {
            break;
        }
        if let Some((name, value)) = header.split_once(':')
            && name.eq_ignore_ascii_case("content-length")
        {
            content_length = value.trim().parse().ok()?;
        }
        if let Some((name, value)) = header.split_once(':')
            && (name.eq_ignore_ascii_case("x-api-key") || name.eq_ignore_ascii_case("authorization"))
        {
            key = value.trim().trim_start_matches("Bearer ").to_owned();
        }
    }
    let mut body = vec![0u8; content_length];
    reader.read_exact(&mut body).await.ok()?;
    Some((method, path, body, key))
}

async fn write_response(
    write: &mut tokio::net::tcp::OwnedWriteHalf,
    status: u16,
    content_type: &str,
    headers: &BTreeMap<String, String>,
    body: &str,
) -> std::io::Result<()> {
    let mut head =
        format!("HTTP/1.1 {status} Mock\r\ncontent-type: {content_type}\r\ncontent-length: {}\r\n", body.len());
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("\r\n");
    write.write_all(head.as_bytes()).await?;
    write.write_all(body.as_bytes()).await?;
    write.flush().await
}

/// A recorded request as the provider caches it: Anthropic's `cache_control` markers taken out,
/// so two requests' prefixes compare by what the model reads.
/// A recorded call's input as the model streams it: JSON, or a string's own text for a call
/// whose input is not JSON (a broken or cut-off call).
fn streamed_input(input: &Value) -> String {
    match input {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

pub fn without_cache_markers(value: &Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.iter()
                .filter(|(key, _)| *key != "cache_control")
                .map(|(key, value)| (key.clone(), without_cache_markers(value)))
                .collect(),
        ),
        Value::Array(list) => Value::Array(list.iter().map(without_cache_markers).collect()),
        other => other.clone(),
    }
}
