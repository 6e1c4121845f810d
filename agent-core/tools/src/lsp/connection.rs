//! One language server's process and its JSON-RPC connection: Content-Length framing over its
//! stdio, a writer task, a reader task that routes responses to their callers by id and hands
//! the server's own requests and notifications to the [`Peer`] the caller supplies, and a
//! stderr task that logs. Every call has a timeout; when the process exits, every pending call
//! fails at once. The process has its own process group, ended with the connection.

use std::collections::HashMap;
use std::path::Path;
use std::process::Stdio;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;

/// A message the server sent, framed, at most (bytes): a larger one is a broken server.
const MAX_MESSAGE_BYTES: usize = 64 * 1024 * 1024;

/// Why a call to the server gave no answer; named for what the caller does next.
#[derive(Debug, Clone, thiserror::Error)]
pub enum LspError {
    /// The server is gone (it exited, or never started): start it again or do without.
    #[error("the language server is not running: {0}")]
    Gone(String),
    /// No answer in time: go on without it.
    #[error("the language server did not answer `{0}` in time")]
    Timeout(String),
    /// The server answered with an error: report it.
    #[error("the language server refused `{method}`: {message}")]
    Refused { method: String, message: String },
}

/// What the client side does with the server's own messages.
pub trait Peer: Send + Sync + 'static {
    fn notification(&self, method: &str, params: Value);
    /// The answer to a request of the server's: a result, or an error code and message.
    fn request(&self, method: &str, params: &Value) -> Result<Value, (i64, String)>;
}

type Pending = Arc<Mutex<HashMap<i64, oneshot::Sender<Result<Value, LspError>>>>>;

pub struct Connection {
    outgoing: mpsc::UnboundedSender<Value>,
    pending: Pending,
    next_id: AtomicI64,
    alive: Arc<AtomicBool>,
    child: Mutex<Box<dyn process_wrap::tokio::ChildWrapper>>,
    stop: CancellationToken,
}

impl Connection {
    /// Starts `command` in `cwd`; the server's messages go to `peer`.
    pub fn spawn(
        name: &str,
        command: &str,
        args: &[String],
        env: &[(String, String)],
        cwd: &Path,
        peer: Arc<dyn Peer>,
    ) -> Result<Self, LspError> {
        let mut plain = tokio::process::Command::new(command);
        plain
            .args(args)
            .envs(env.iter().map(|(key, value)| (key, value)))
            .current_dir(cwd)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        crate::child_process::dies_with_agent(&mut plain);
        let mut wrapped = process_wrap::tokio::CommandWrap::from(plain);
        // Its own group: stopping the server stops the workers it started.
        wrapped.wrap(process_wrap::tokio::ProcessGroup::leader());
        let mut child =
            wrapped.spawn().map_err(|error| LspError::Gone(format!("`{command}` could not start: {error}")))?;
        let (Some(stdin), Some(stdout), Some(stderr)) =
            (child.stdin().take(), child.stdout().take(), child.stderr().take())
        else {
            return Err(LspError::Gone(format!("`{command}` has no stdio")));
        };
        let (outgoing, queued) = mpsc::unbounded_channel();
        let pending: Pending = Arc::default();
        let alive = Arc::new(AtomicBool::new(true));
        let stop = CancellationToken::new();
        tokio::spawn(write_messages(stdin, queued, stop.clone()));
        tokio::spawn(read_messages(
            stdout,
            Arc::clone(&pending),
            Arc::clone(&alive),
            outgoing.clone(),
            peer,
            name.to_owned(),
            stop.clone(),
        ));
        let server = name.to_owned();
        tokio::spawn(async move {
            let mut lines = BufReader::new(stderr).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                tracing::debug!(server = %server, "{line}");
            }
        });
        Ok(Self { outgoing, pending, next_id: AtomicI64::new(1), alive, child: Mutex::new(child), stop })
    }

    pub fn is_alive(&self) -> bool {
        self.alive.load(Ordering::Relaxed)
    }

    /// Calls `method`; its result, or why there is none within `timeout`.
    pub async fn request(&self, method: &str, params: Value, timeout: Duration) -> Result<Value, LspError> {
        if !self.is_alive() {
            return Err(LspError::Gone("it exited".into()));
        }
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (answer, answered) = oneshot::channel();
        if let Ok(mut pending) = self.pending.lock() {
            pending.insert(id, answer);
        }
        if self.outgoing.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})).is_err() {
            return Err(LspError::Gone("its input is closed".into()));
        }
        match tokio::time::timeout(timeout, answered).await {
            Ok(Ok(result)) => result.map_err(|error| match error {
                LspError::Refused { message, .. } => LspError::Refused { method: method.to_owned(), message },
                other => other,
            }),
            Ok(Err(_)) => Err(LspError::Gone("it exited".into())),
            Err(_) => {
                if let Ok(mut pending) = self.pending.lock() {
                    pending.remove(&id);
                }
                // The server may still be working on it: tell it to stop.
                self.notify("$/cancelRequest", json!({"id": id}));
                Err(LspError::Timeout(method.to_owned()))
            }
        }
    }

    pub fn notify(&self, method: &str, params: Value) {
        let _ = self.outgoing.send(json!({"jsonrpc": "2.0", "method": method, "params": params}));
    }

    /// Asks the server to exit, then ends its process group whatever it did.
    pub async fn shutdown(&self) {
        if self.is_alive() {
            let _ = self.request("shutdown", Value::Null, Duration::from_secs(2)).await;
            self.notify("exit", Value::Null);
        }
        self.stop.cancel();
        if let Ok(mut child) = self.child.lock() {
            let _ = child.start_kill();
        }
    }
}

impl Drop for Connection {
    fn drop(&mut self) {
        self.stop.cancel();
        if let Ok(mut child) = self.child.lock() {
            let _ = child.start_kill();
        }
    }
}

async fn write_messages(
    mut stdin: tokio::process::ChildStdin,
    mut queued: mpsc::UnboundedReceiver<Value>,
    stop: CancellationToken,
) {
    loop {
        let message = tokio::select! {
            message = queued.recv() => match message {
                Some(message) => message,
                None => return,
            },
            () = stop.cancelled() => return,
        };
        let body = message.to_string();
        let frame = format!("Content-Length: {}\r\n\r\n{body}", body.len());
        if stdin.write_all(frame.as_bytes()).await.is_err() || stdin.flush().await.is_err() {
            return;
        }
    }
}

async fn read_messages(
    stdout: tokio::process::ChildStdout,
    pending: Pending,
    alive: Arc<AtomicBool>,
    outgoing: mpsc::UnboundedSender<Value>,
    peer: Arc<dyn Peer>,
    name: String,
    stop: CancellationToken,
) {
    let mut reader = BufReader::new(stdout);
    loop {
        let message = tokio::select! {
            message = read_frame(&mut reader) => message,
            () = stop.cancelled() => break,
        };
        let message = match message {
            Ok(Some(message)) => message,
            Ok(None) => break,
            Err(error) => {
                tracing::warn!(server = %name, %error, "unreadable message from the language server");
                break;
            }
        };
        tracing::trace!(server = %name, %message, "from the language server");
        let id = message.get("id").cloned();
        match (message.get("method").and_then(Value::as_str), id) {
            (Some(method), Some(id)) => {
                let params = message.get("params").cloned().unwrap_or(Value::Null);
                let reply = match peer.request(method, &params) {
                    Ok(result) => json!({"jsonrpc": "2.0", "id": id, "result": result}),
                    Err((code, message)) => {
                        json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
                    }
                };
                let _ = outgoing.send(reply);
            }
            (Some(method), None) => peer.notification(method, message.get("params").cloned().unwrap_or(Value::Null)),
            (None, Some(id)) => {
                let Some(id) = id.as_i64() else { continue };
                let answer = pending.lock().ok().and_then(|mut pending| pending.remove(&id));
                if let Some(answer) = answer {
                    let result = match message.get("error") {
                        Some(error) => Err(LspError::Refused {
                            method: String::new(),
                            message: error["message"].as_str().unwrap_or("unknown error").to_owned(),
                        }),
                        None => Ok(message.get("result").cloned().unwrap_or(Value::Null)),
                    };
                    let _ = answer.send(result);
                }
            }
            (None, None) => {}
        }
    }
    alive.store(false, Ordering::Relaxed);
    // Every caller still waiting hears it is over.
    if let Ok(mut pending) = pending.lock() {
        pending.clear();
    }
}

/// One framed message; `None` at the end of the stream.
async fn read_frame(reader: &mut BufReader<tokio::process::ChildStdout>) -> Result<Option<Value>, String> {
    let mut length: Option<usize> = None;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).await.map_err(|error| error.to_string())? == 0 {
            return Ok(None);
        }
        let line = line.trim_end();
        if line.is_empty() {
            if length.is_some() {
                break;
            }
            continue;
        }
        if let Some((key, value)) = line.split_once(':')
            && key.eq_ignore_ascii_case("content-length")
        {
            length = Some(value.trim().parse().map_err(|_| format!("bad Content-Length `{value}`"))?);
        }
    }
    let length = length.unwrap_or(0);
    if length > MAX_MESSAGE_BYTES {
        return Err(format!("a message of {length} bytes"));
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body).await.map_err(|error| error.to_string())?;
    serde_json::from_slice(&body).map(Some).map_err(|error| error.to_string())
}
