//! Drives the real `larik lsp` the way an editor does: Content-Length framed JSON-RPC over stdio,
//! requests both ways.

use std::path::Path;

use larik_jsonrpc::{Frame, Framing};
use serde_json::{Value, json};
use tokio::io::{AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin};
use tokio::sync::mpsc;

use crate::harness::{WAIT, spawn_larik};

/// A message larger than this from `larik lsp` is a bug, not a message.
const MAX_MESSAGE_BYTES: usize = 64 * 1024 * 1024;

pub struct LspServer {
    pub child: Child,
    stdin: ChildStdin,
    incoming: mpsc::Receiver<Value>,
    next_id: i64,
}

impl LspServer {
    pub fn spawn(cwd: &Path, env: &[(String, String)]) -> Self {
        let mut child = spawn_larik("lsp", cwd, env);
        let stdout = child.stdout.take().expect("stdout");
        let (sender, incoming) = mpsc::channel(4096);
        tokio::spawn(async move {
            let mut reader = BufReader::new(stdout);
            let mut body = Vec::new();
            while let Ok(Frame::Message) = Framing::ContentLength.read(&mut reader, &mut body, MAX_MESSAGE_BYTES).await
            {
                let message: Value = serde_json::from_slice(&body).expect("a JSON message");
                if sender.send(message).await.is_err() {
                    return;
                }
            }
        });
        Self { stdin: child.stdin.take().expect("stdin"), child, incoming, next_id: 1 }
    }

    pub async fn send(&mut self, message: Value) {
        self.stdin.write_all(&Framing::ContentLength.frame(&message.to_string())).await.expect("write");
        self.stdin.flush().await.expect("flush");
    }

    pub async fn request(&mut self, method: &str, params: Value) -> i64 {
        let id = self.next_id;
        self.next_id += 1;
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})).await;
        id
    }

    pub async fn notify(&mut self, method: &str, params: Value) {
        self.send(json!({"jsonrpc": "2.0", "method": method, "params": params})).await;
    }

    pub async fn reply(&mut self, request: &Value, result: Value) {
        self.send(json!({"jsonrpc": "2.0", "id": request["id"], "result": result})).await;
    }

    pub async fn reply_error(&mut self, request: &Value, code: i64, message: &str) {
        self.send(json!({"jsonrpc": "2.0", "id": request["id"], "error": {"code": code, "message": message}})).await;
    }

    pub async fn next(&mut self) -> Value {
        tokio::time::timeout(WAIT, self.incoming.recv())
            .await
            .expect("timed out waiting for the server")
            .expect("server closed stdout")
    }

    /// The response to request `id`, answering `workDoneProgress/create` on the way and keeping
    /// everything else seen.
    pub async fn response(&mut self, id: i64) -> (Value, Vec<Value>) {
        let mut seen = Vec::new();
        loop {
            let message = self.next().await;
            if message["id"] == json!(id) && message.get("method").is_none() {
                return (message, seen);
            }
            self.answer_routine(&message).await;
            seen.push(message);
        }
    }

    /// Waits for a message matching `wanted`, answering routine requests meanwhile.
    pub async fn wait_for(&mut self, wanted: impl Fn(&Value) -> bool) -> (Value, Vec<Value>) {
        let mut seen = Vec::new();
        loop {
            let message = self.next().await;
            if wanted(&message) {
                return (message, seen);
            }
            self.answer_routine(&message).await;
            seen.push(message);
        }
    }

    async fn answer_routine(&mut self, message: &Value) {
        if message["method"] == "window/workDoneProgress/create" {
            self.reply(message, Value::Null).await;
        }
    }

    pub async fn initialize(&mut self, root: &Path) -> Value {
        let root_uri = format!("file://{}", root.display());
        let capabilities = json!({"window": {"workDoneProgress": true, "showDocument": {"support": false}}, "workspace": {"applyEdit": true}});
        let id = self
            .request("initialize", json!({"processId": null, "rootUri": root_uri, "capabilities": capabilities}))
            .await;
        let (response, _) = self.response(id).await;
        self.notify("initialized", json!({})).await;
        response["result"].clone()
    }

    pub async fn open(&mut self, path: &Path, text: &str) -> String {
        let uri = format!("file://{}", path.display());
        self.notify(
            "textDocument/didOpen",
            json!({"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": text}}),
        )
        .await;
        uri
    }

    pub async fn code_actions(&mut self, uri: &str, range: Value, diagnostics: Value) -> Vec<Value> {
        let id = self
            .request(
                "textDocument/codeAction",
                json!({"textDocument": {"uri": uri}, "range": range, "context": {"diagnostics": diagnostics}}),
            )
            .await;
        let (response, _) = self.response(id).await;
        response["result"].as_array().cloned().unwrap_or_default()
    }

    /// Runs the command of the code action titled `title`.
    pub async fn run_action(&mut self, actions: &[Value], title: &str) -> i64 {
        let action = actions
            .iter()
            .find(|action| action["title"] == title)
            .unwrap_or_else(|| panic!("no action `{title}` in {actions:?}"));
        let command = action["command"].clone();
        self.request(
            "workspace/executeCommand",
            json!({"command": command["command"], "arguments": command["arguments"]}),
        )
        .await
    }
}

pub fn range(start: u32, end: u32) -> Value {
    json!({"start": {"line": start, "character": 0}, "end": {"line": end, "character": 0}})
}
