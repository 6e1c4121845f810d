//! A bidirectional JSON-RPC 2.0 connection over newline-delimited JSON (framing and message
//! kinds from `larik-jsonrpc`).
//!
//! Invariants: exactly one task writes the output stream (`writer`), every incoming request runs
//! in a task of its own so the reader never blocks on a handler (a handler may await a request it
//! sent to the peer), a panicking handler becomes an internal-error reply, and malformed input
//! gets the JSON-RPC error for its kind while the connection stays up.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::Mutex;

use larik_jsonrpc::{Frame, Framing, Incoming, Pending, message};
use serde_json::{Value, json};
use tokio::io::{AsyncBufRead, AsyncWrite, AsyncWriteExt};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use super::output_queue::{self, OutputReceiver, OutputSender};

/// Lines longer than this are refused rather than buffered without bound.
pub const MAX_LINE_BYTES: usize = 64 * 1024 * 1024;

pub use larik_jsonrpc::RpcError;

/// What the connection calls for incoming messages.
#[async_trait::async_trait]
pub trait Handler: Send + Sync + 'static {
    /// Answers a request. `cancel` fires on `$/cancel_request` for it or when the connection ends.
    async fn request(
        self: Arc<Self>,
        peer: Peer,
        method: String,
        params: Value,
        cancel: CancellationToken,
    ) -> Result<Value, RpcError>;
    /// Handles a notification; unknown ones are ignored.
    async fn notification(self: Arc<Self>, peer: Peer, method: String, params: Value);

    /// Runs after a successful response was queued, for messages that must follow it;
    /// `session_id` is the request's `sessionId`, if it named one.
    async fn after_response(
        self: Arc<Self>,
        _peer: Peer,
        _method: String,
        _session_id: Option<String>,
        _result: Value,
    ) {
    }
}

tokio::task_local! {
    /// The token of the incoming request whose handler is running: `$/cancel_request` for it
    /// fires it. A request sent while handling it knows what it was made for.
    static HANDLING: CancellationToken;
}

/// The sending half: requests and notifications to the other side.
#[derive(Clone)]
pub struct Peer {
    inner: Arc<PeerState>,
}

struct PeerState {
    outgoing: OutputSender,
    pending: Pending,
    in_flight: Mutex<HashMap<String, CancellationToken>>,
    tasks: TaskTracker,
    shutdown: CancellationToken,
}

/// `future` as part of handling the request being handled now, if one is: what it asks the peer
/// is withdrawn when the peer cancels that request, as a request sent from the handler itself
/// would be (a subagent's questions, forwarded by a task of their own during a prompt).
pub fn within_this_request<F: Future>(future: F) -> impl Future<Output = F::Output> {
    let handling = HANDLING.try_with(CancellationToken::clone).ok();
    async move {
        match handling {
            Some(token) => HANDLING.scope(token, future).await,
            None => future.await,
        }
    }
}

impl Peer {
    /// Sends a notification. Waits only while the writer's queue is full (see `output_queue`).
    /// The params are serialized straight into the line, without an intermediate JSON tree.
    pub async fn notify(&self, method: &str, params: impl serde::Serialize) {
        match message::notification(method, params) {
            Ok(line) => self.send_text(line).await,
            Err(error) => tracing::warn!(%error, method, "a notification could not be serialized"),
        }
    }

    /// Sends a request and waits for its response. Dropping the future before the answer came
    /// (the turn that asked was cancelled) tells the peer with `$/cancel_request`.
    pub async fn request(&self, method: &str, params: Value) -> Result<Value, RpcError> {
        self.send_request(method, params, None).await
    }

    /// A request that `settled` firing settles on the peer's side (ACP has the client answer an
    /// open permission request itself after session/cancel): dropped unanswered once it fired,
    /// the peer is not told again, which would only be noise (avante warns of each
    /// `$/cancel_request`). Dropped for any other reason it is told, as [`Peer::request`] is:
    /// the call that asked stopped waiting, or the peer cancelled the very request this one was
    /// sent while handling, and then nothing tells it to close its question.
    pub async fn request_settled_by(
        &self,
        method: &str,
        params: Value,
        settled: &CancellationToken,
    ) -> Result<Value, RpcError> {
        self.send_request(method, params, Some(settled.clone())).await
    }

    async fn send_request(
        &self,
        method: &str,
        params: Value,
        settled: Option<CancellationToken>,
    ) -> Result<Value, RpcError> {
        let (id, response) = self.inner.pending.open();
        let made_for = HANDLING.try_with(CancellationToken::clone).ok();
        let mut outstanding = Outstanding { peer: self.clone(), id, settled, made_for, answered: false };
        self.send_text(message::request(id, method, &params)).await;
        let result = tokio::select! {
            response = response => response.unwrap_or_else(|_| Err(RpcError::new(RpcError::INTERNAL_ERROR, "connection closed"))),
            () = self.inner.shutdown.cancelled() => Err(RpcError::new(RpcError::INTERNAL_ERROR, "connection closed")),
        };
        outstanding.answered = true;
        result
    }

    /// The token that fires when the connection ends.
    pub fn shutdown_token(&self) -> CancellationToken {
        self.inner.shutdown.clone()
    }

    /// Runs a future as a task the connection waits for when it ends.
    pub fn spawn<F: Future<Output = ()> + Send + 'static>(&self, future: F) {
        self.inner.tasks.spawn(future);
    }

    /// Queues one message. serde_json writes compact JSON: newlines inside strings are escaped,
    /// so one message is one line.
    async fn send_text(&self, line: String) {
        if self.inner.outgoing.send(line).await.is_err() {
            tracing::debug!("output closed; message dropped");
        }
    }

    async fn respond(&self, id: Value, result: Result<Value, RpcError>) {
        self.send_text(message::response(&id, result)).await;
    }
}

/// A request sent to the peer and not yet answered. When its waiter goes away first, the entry
/// is forgotten (a late answer is ignored) and the peer is told it may stop: the request is
/// cancelled as ACP's `$/cancel_request` says.
struct Outstanding {
    peer: Peer,
    id: i64,
    /// Once this fired, the peer settles the request itself and is not told.
    settled: Option<CancellationToken>,
    /// The incoming request being handled when this one was sent, if any.
    made_for: Option<CancellationToken>,
    answered: bool,
}

impl Drop for Outstanding {
    fn drop(&mut self) {
        if self.answered {
            return;
        }
        self.peer.inner.pending.forget(self.id);
        let fired = |token: &Option<CancellationToken>| token.as_ref().is_some_and(CancellationToken::is_cancelled);
        let settled_by_peer = fired(&self.settled) && !fired(&self.made_for);
        if settled_by_peer || self.peer.inner.shutdown.is_cancelled() || tokio::runtime::Handle::try_current().is_err()
        {
            return;
        }
        let (peer, id) = (self.peer.clone(), self.id);
        self.peer.spawn(async move { peer.notify("$/cancel_request", json!({"requestId": id})).await });
    }
}

/// Serves the connection until the input ends. On end of input it cancels every running handler,
/// waits for their tasks and flushes the output.
pub async fn run(
    input: impl AsyncBufRead + Unpin,
    output: impl AsyncWrite + Unpin + Send + 'static,
    handler: Arc<impl Handler>,
) {
    let (outgoing, queue) = output_queue::bounded(output_queue::BUDGET);
    // Handlers may keep a `Peer` alive past the end (sessions hold one to reach the editor), so
    // the writer is told when everything has been answered rather than waiting for every sender.
    let answered = CancellationToken::new();
    let writer = tokio::spawn(write_lines(output, queue, answered.clone()));
    let peer = Peer {
        inner: Arc::new(PeerState {
            outgoing,
            pending: Pending::new(0),
            in_flight: Mutex::new(HashMap::new()),
            tasks: TaskTracker::new(),
            shutdown: CancellationToken::new(),
        }),
    };
    read_messages(input, &peer, &handler).await;
    peer.inner.shutdown.cancel();
    peer.inner.tasks.close();
    peer.inner.tasks.wait().await;
    drop(peer);
    answered.cancel();
    let _ = writer.await;
}

async fn write_lines(mut output: impl AsyncWrite + Unpin, mut queue: OutputReceiver, answered: CancellationToken) {
    let mut shares = Vec::new();
    loop {
        let line = tokio::select! {
            biased;
            line = queue.recv() => line,
            () = answered.cancelled() => queue.try_recv().ok(),
        };
        let Some(line) = line else { return };
        // Coalesce what is already queued into one write; each line keeps its room in the queue
        // until the write is done.
        let mut batch = String::new();
        for line in std::iter::once(line).chain(std::iter::from_fn(|| queue.try_recv().ok())) {
            let (text, share) = line.split();
            batch.push_str(&text);
            batch.push('\n');
            shares.push(share);
        }
        if output.write_all(batch.as_bytes()).await.is_err() || output.flush().await.is_err() {
            tracing::warn!("output stream closed");
            return;
        }
        shares.clear();
    }
}

async fn read_messages(mut input: impl AsyncBufRead + Unpin, peer: &Peer, handler: &Arc<impl Handler>) {
    let mut line = Vec::new();
    loop {
        match Framing::Lines.read(&mut input, &mut line, MAX_LINE_BYTES).await {
            Ok(Frame::Eof) => return,
            Ok(Frame::TooLong | Frame::Unframed(_)) => {
                peer.respond(
                    Value::Null,
                    Err(RpcError::new(RpcError::INVALID_REQUEST, format!("message exceeds {MAX_LINE_BYTES} bytes"))),
                )
                .await;
            }
            Ok(Frame::Message) => handle_line(&line, peer, handler).await,
            Err(error) => {
                tracing::warn!(%error, "input failed");
                return;
            }
        }
    }
}

async fn handle_line(line: &[u8], peer: &Peer, handler: &Arc<impl Handler>) {
    match Incoming::parse(line) {
        Ok(None) => {}
        Ok(Some(Incoming::Request { id, method, params })) => spawn_request(peer, handler, id, method, params),
        Ok(Some(Incoming::Notification { method, params })) if method == "$/cancel_request" => {
            cancel_in_flight(peer, &params);
        }
        Ok(Some(Incoming::Notification { method, params })) => {
            let handler = Arc::clone(handler);
            // Notifications are handled in order of arrival: session/cancel must not overtake.
            handler.notification(peer.clone(), method, params).await;
        }
        Ok(Some(Incoming::Response { id, result })) => {
            if !peer.inner.pending.answer(&id, result) {
                tracing::debug!(%id, "response to an unknown request");
            }
        }
        Err(malformed) => peer.respond(malformed.id, Err(malformed.error)).await,
    }
}

fn spawn_request(peer: &Peer, handler: &Arc<impl Handler>, id: Value, method: String, params: Value) {
    let cancel = peer.inner.shutdown.child_token();
    let key = id.to_string();
    if let Ok(mut in_flight) = peer.inner.in_flight.lock() {
        in_flight.insert(key.clone(), cancel.clone());
    }
    let handler = Arc::clone(handler);
    let peer = peer.clone();
    let session_id = params.get("sessionId").and_then(Value::as_str).map(str::to_owned);
    peer.clone().spawn(async move {
        let span = tracing::debug_span!("request", %method);
        let handling =
            HANDLING.scope(cancel.clone(), Arc::clone(&handler).request(peer.clone(), method.clone(), params, cancel));
        let work = tokio::spawn(tracing::Instrument::instrument(handling, span));
        let result = match work.await {
            Ok(result) => result,
            Err(error) if error.is_panic() => {
                tracing::error!(%method, "request handler panicked");
                Err(RpcError::new(RpcError::INTERNAL_ERROR, format!("Internal error while handling {method}")))
            }
            Err(_) => Err(RpcError::new(RpcError::REQUEST_CANCELLED, "Request cancelled")),
        };
        if let Ok(mut in_flight) = peer.inner.in_flight.lock() {
            in_flight.remove(&key);
        }
        let follow_up = result.as_ref().ok().cloned();
        peer.respond(id, result).await;
        if let Some(result) = follow_up {
            handler.after_response(peer, method, session_id, result).await;
        }
    });
}

fn cancel_in_flight(peer: &Peer, params: &Value) {
    let Some(request_id) = params.get("requestId") else { return };
    if let Ok(in_flight) = peer.inner.in_flight.lock()
        && let Some(token) = in_flight.get(&request_id.to_string())
    {
        token.cancel();
    }
}

#[cfg(test)]
mod tests {
    use tokio::io::{AsyncBufReadExt, AsyncReadExt, BufReader};

    use super::*;

    struct Echo;

    #[async_trait::async_trait]
    impl Handler for Echo {
        async fn request(
            self: Arc<Self>,
            peer: Peer,
            method: String,
            params: Value,
            _cancel: CancellationToken,
        ) -> Result<Value, RpcError> {
            match method.as_str() {
                "echo" => Ok(params),
                "panic" => panic!("boom"),
                // Asks the peer a question before answering: the reader must keep running meanwhile.
                "ask" => peer.request("question", json!({})).await,
                _ => Err(RpcError::method_not_found(&method)),
            }
        }

        async fn notification(self: Arc<Self>, _peer: Peer, _method: String, _params: Value) {}
    }

    async fn exchange(input: &str) -> Vec<Value> {
        let (client, server) = tokio::io::duplex(1 << 16);
        let (server_read, server_write) = tokio::io::split(server);
        let (mut client_read, mut client_write) = tokio::io::split(client);
        let serve = tokio::spawn(run(BufReader::new(server_read), server_write, Arc::new(Echo)));
        client_write.write_all(input.as_bytes()).await.unwrap();
        // End of input, as when an editor closes the agent's stdin.
        client_write.shutdown().await.unwrap();
        let mut output = String::new();
        client_read.read_to_string(&mut output).await.unwrap();
        serve.await.unwrap();
        output.lines().map(|line| serde_json::from_str(line).unwrap()).collect()
    }

    #[tokio::test]
    async fn a_request_id_acp_does_not_allow_is_refused_not_echoed_changed() {
        let input = "{\"jsonrpc\":\"2.0\",\"id\":155555555555555555555555,\"method\":\"echo\"}\n{\"jsonrpc\":\"2.0\",\"id\":1.5,\"method\":\"echo\"}\n{\"jsonrpc\":\"2.0\",\"id\":true,\"method\":\"echo\"}\n{\"jsonrpc\":\"2.0\",\"id\":\"s\",\"method\":\"echo\"}\n";
        let lines = exchange(input).await;
        let refused: Vec<&Value> =
            lines.iter().filter(|line| line["error"]["code"] == RpcError::INVALID_REQUEST).collect();
        assert_eq!(refused.len(), 3, "{lines:?}");
        assert!(refused.iter().all(|line| line["id"].is_null()), "{refused:?}");
        assert!(lines.iter().any(|line| line["id"] == "s" && line.get("result").is_some()), "{lines:?}");
    }

    #[tokio::test]
    async fn bad_input_gets_the_right_error_and_the_server_stays_up() {
        let input = "{not json\n[1,2]\n\r\n\n{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"nope\"}\r\n{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"panic\"}\n{\"jsonrpc\":\"2.0\",\"method\":\"unknown/notification\"}\n{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"echo\",\"params\":{\"a\":1}}\n";
        let replies = exchange(input).await;
        let by_id = |id: Value| replies.iter().find(|reply| reply["id"] == id).cloned().unwrap();
        let nulls: Vec<i64> = replies
            .iter()
            .filter(|reply| reply["id"].is_null())
            .map(|reply| reply["error"]["code"].as_i64().unwrap())
            .collect();
        assert_eq!(nulls, vec![-32700, -32600]);
        assert_eq!(by_id(json!(1))["error"]["code"], -32601);
        assert_eq!(by_id(json!(2))["error"]["code"], -32603);
        assert_eq!(by_id(json!(3))["result"], json!({"a": 1}));
        assert_eq!(replies.len(), 5, "the notification got no reply: {replies:?}");
    }

    #[tokio::test]
    async fn a_handler_can_wait_on_the_peer_while_others_are_served() {
        let (client, server) = tokio::io::duplex(1 << 16);
        let (server_read, server_write) = tokio::io::split(server);
        let (client_read, mut client_write) = tokio::io::split(client);
        let serve = tokio::spawn(run(BufReader::new(server_read), server_write, Arc::new(Echo)));
        let mut lines = BufReader::new(client_read).lines();
        client_write.write_all(b"{\"jsonrpc\":\"2.0\",\"id\":\"a\",\"method\":\"ask\"}\n").await.unwrap();
        let question: Value = serde_json::from_str(&lines.next_line().await.unwrap().unwrap()).unwrap();
        assert_eq!(question["method"], "question");
        // While "ask" waits for our answer, another request is served.
        client_write.write_all(b"{\"jsonrpc\":\"2.0\",\"id\":\"b\",\"method\":\"echo\",\"params\":7}\n").await.unwrap();
        let echo: Value = serde_json::from_str(&lines.next_line().await.unwrap().unwrap()).unwrap();
        assert_eq!(echo, json!({"jsonrpc": "2.0", "id": "b", "result": 7}));
        let answer = json!({"jsonrpc": "2.0", "id": question["id"], "result": {"answer": 42}});
        client_write.write_all(format!("{answer}\n").as_bytes()).await.unwrap();
        let reply: Value = serde_json::from_str(&lines.next_line().await.unwrap().unwrap()).unwrap();
        assert_eq!(reply, json!({"jsonrpc": "2.0", "id": "a", "result": {"answer": 42}}));
        client_write.shutdown().await.unwrap();
        serve.await.unwrap();
    }
}
