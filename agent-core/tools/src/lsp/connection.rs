//! One language server's process and its JSON-RPC connection: Content-Length framing over its
//! stdio (`larik-jsonrpc`), a writer task, a reader task that routes responses to their callers
//! by id and hands the server's own requests and notifications to the [`Peer`] the caller
//! supplies, and a stderr task that logs. Calls are typed by their `lsp-types` request, so params
//! and results are the protocol's own structs. Every call has a timeout; when the process exits,
//! every pending call fails at once. The process has its own process group, ended with the
//! connection.

use std::path::Path;
use std::process::Stdio;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use larik_jsonrpc::{Frame, Framing, Incoming, Pending, RpcError, message};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;
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

/// The answer to a request of the server's that takes work elsewhere (an edit to apply).
pub type LaterAnswer = tokio::sync::oneshot::Receiver<Result<Value, RpcError>>;

/// What the client side does with the server's own messages.
pub trait Peer: Send + Sync + 'static {
    fn notification(&self, method: &str, params: Value);
    /// The answer to a request of the server's: a result, or the error to answer with.
    fn request(&self, method: &str, params: &Value) -> Result<Value, RpcError>;
    /// A request answered later, once work elsewhere is done; `None` to answer with
    /// [`Peer::request`] at once.
    fn later(&self, _method: &str, _params: &Value) -> Option<LaterAnswer> {
        None
    }
}

pub struct Connection {
    outgoing: mpsc::UnboundedSender<String>,
    pending: Arc<Pending>,
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
        let pending = Arc::new(Pending::new(1));
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
        Ok(Self { outgoing, pending, alive, child: Mutex::new(child), stop })
    }

    pub fn is_alive(&self) -> bool {
        self.alive.load(Ordering::Relaxed)
    }

    /// Asks `R`; its result, or why there is none within `timeout`. A result that is not what
    /// the protocol says `R` answers is the server's error.
    pub async fn call<R: lsp_types::request::Request>(
        &self,
        params: R::Params,
        timeout: Duration,
    ) -> Result<R::Result, LspError> {
        let params = serde_json::to_value(params).unwrap_or(Value::Null);
        let answer = self.request(R::METHOD, params, timeout).await?;
        serde_json::from_value(answer).map_err(|error| LspError::Refused {
            method: R::METHOD.to_owned(),
            message: format!("its answer is not what the protocol says: {error}"),
        })
    }

    /// Tells the server `N`.
    pub fn notify<N: lsp_types::notification::Notification>(&self, params: N::Params) {
        self.send_notification(N::METHOD, params);
    }

    /// Calls `method` with params the protocol leaves open (a command's arguments); its result,
    /// or why there is none within `timeout`.
    pub async fn request(&self, method: &str, params: Value, timeout: Duration) -> Result<Value, LspError> {
        if !self.is_alive() {
            return Err(LspError::Gone("it exited".into()));
        }
        let (id, answered) = self.pending.open();
        if self.outgoing.send(message::request(id, method, &params)).is_err() {
            self.pending.forget(id);
            return Err(LspError::Gone("its input is closed".into()));
        }
        match tokio::time::timeout(timeout, answered).await {
            Ok(Ok(result)) => {
                result.map_err(|error| LspError::Refused { method: method.to_owned(), message: error.message })
            }
            Ok(Err(_)) => Err(LspError::Gone("it exited".into())),
            Err(_) => {
                self.pending.forget(id);
                // The server may still be working on it: tell it to stop.
                self.send_notification("$/cancelRequest", json!({"id": id}));
                Err(LspError::Timeout(method.to_owned()))
            }
        }
    }

    fn send_notification(&self, method: &str, params: impl serde::Serialize) {
        match message::notification(method, params) {
            Ok(text) => {
                let _ = self.outgoing.send(text);
            }
            Err(error) => tracing::warn!(%error, method, "a notification could not be serialized"),
        }
    }

    /// Asks the server to exit, then ends its process group whatever it did.
    pub async fn shutdown(&self) {
        if self.is_alive() {
            let _ = self.call::<lsp_types::request::Shutdown>((), Duration::from_secs(2)).await;
            self.notify::<lsp_types::notification::Exit>(());
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
    mut queued: mpsc::UnboundedReceiver<String>,
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
        let frame = Framing::ContentLength.frame(&message);
        if stdin.write_all(&frame).await.is_err() || stdin.flush().await.is_err() {
            return;
        }
    }
}

async fn read_messages(
    stdout: tokio::process::ChildStdout,
    pending: Arc<Pending>,
    alive: Arc<AtomicBool>,
    outgoing: mpsc::UnboundedSender<String>,
    peer: Arc<dyn Peer>,
    name: String,
    stop: CancellationToken,
) {
    let mut reader = BufReader::new(stdout);
    let mut body = Vec::new();
    loop {
        let frame = tokio::select! {
            frame = Framing::ContentLength.read(&mut reader, &mut body, MAX_MESSAGE_BYTES) => frame,
            () = stop.cancelled() => break,
        };
        match frame {
            Ok(Frame::Message) => {}
            Ok(Frame::Eof) => break,
            Ok(Frame::TooLong) => {
                tracing::warn!(server = %name, "a message over {MAX_MESSAGE_BYTES} bytes from the language server was dropped");
                continue;
            }
            Ok(Frame::Unframed(why)) => {
                tracing::warn!(server = %name, %why, "unreadable message from the language server");
                break;
            }
            Err(error) => {
                tracing::warn!(server = %name, %error, "the language server's output failed");
                break;
            }
        }
        tracing::trace!(server = %name, message = %String::from_utf8_lossy(&body), "from the language server");
        match Incoming::parse(&body) {
            Ok(Some(Incoming::Request { id, method, params })) => match peer.later(&method, &params) {
                // Answered when the work is done; the reader goes on meanwhile (the work may wait
                // on this server's answer to another call).
                Some(answer) => {
                    let outgoing = outgoing.clone();
                    tokio::spawn(async move {
                        let result = answer.await.unwrap_or_else(|_| {
                            Err(RpcError::new(RpcError::INTERNAL_ERROR, format!("{method} was dropped unanswered")))
                        });
                        let _ = outgoing.send(message::response(&id, result));
                    });
                }
                None => {
                    let _ = outgoing.send(message::response(&id, peer.request(&method, &params)));
                }
            },
            Ok(Some(Incoming::Notification { method, params })) => peer.notification(&method, params),
            Ok(Some(Incoming::Response { id, result })) => {
                pending.answer(&id, result);
            }
            Ok(None) => {}
            Err(malformed) => {
                tracing::warn!(server = %name, error = %malformed.error.message, "a malformed message from the language server");
            }
        }
    }
    alive.store(false, Ordering::Relaxed);
    // Every caller still waiting hears it is over.
    pending.fail_all();
}
