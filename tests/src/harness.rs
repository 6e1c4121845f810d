//! Drives the real `larik` binary over stdio, the way an editor does: one JSON message per line,
//! requests both ways. The agent runs with a cleared environment (only what the test sets), a
//! private home and config directory, and the mock model server as its model.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin};
use tokio::sync::mpsc;

/// How long a test waits for any one message before failing.
pub const WAIT: Duration = Duration::from_secs(20);

/// The `larik` binary: `$LARIK_BIN`, or beside the test executable's target directory.
pub fn larik_bin() -> PathBuf {
    if let Some(path) = std::env::var_os("LARIK_BIN") {
        return PathBuf::from(path);
    }
    let exe = std::env::current_exe().unwrap_or_default();
    // target/debug/deps/test-binary -> target/debug/larik
    let dir = exe.parent().and_then(Path::parent).map(Path::to_path_buf).unwrap_or_default();
    let bin = dir.join("larik");
    assert!(bin.exists(), "{} is missing: run `cargo build --workspace --bins` before the tests", bin.display());
    bin
}

/// Starts `larik <subcommand>` with only the given environment, its stdio piped to the test.
pub fn spawn_larik(subcommand: &str, cwd: &Path, env: &[(String, String)]) -> Child {
    let mut command = tokio::process::Command::new(larik_bin());
    command.arg(subcommand);
    spawn_piped(command, cwd, env)
}

/// Starts `command` (an agent, perhaps behind a wrapper) as `spawn_larik` does: in `cwd`, with
/// only the given environment, stdin and stdout piped, killed when dropped.
pub fn spawn_piped(mut command: tokio::process::Command, cwd: &Path, env: &[(String, String)]) -> Child {
    command
        .current_dir(cwd)
        .env_clear()
        .envs(env.iter().cloned())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .kill_on_drop(true)
        .spawn()
        .unwrap_or_else(|error| panic!("spawn {:?}: {error}", command.as_std().get_program()))
}

/// Writes `text` at `path`, making its directories. Panics on failure.
pub fn write_file(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().expect("a parent")).expect("directories");
    std::fs::write(path, text).expect("written");
}

/// Runs git in `dir` with a test identity; its stdout. Panics when git fails.
pub fn git(dir: &Path, args: &[&str]) -> String {
    let output = std::process::Command::new("git")
        .args(["-c", "user.name=Test", "-c", "user.email=test@example.com"])
        .args(args)
        .current_dir(dir)
        .output()
        .expect("git runs");
    assert!(output.status.success(), "git {args:?} failed: {}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// A scratch project and a private home for one agent run.
pub struct Sandbox {
    pub project: tempfile::TempDir,
    pub home: tempfile::TempDir,
}

impl Sandbox {
    pub fn new() -> Self {
        Self { project: tempfile::tempdir().expect("temp project"), home: tempfile::tempdir().expect("temp home") }
    }

    pub fn project_path(&self) -> PathBuf {
        self.project.path().canonicalize().expect("canonical project path")
    }

    /// The environment an agent sees: private dirs, PATH, and Anthropic pointed at `model_url`.
    pub fn env(&self, model_url: &str) -> Vec<(String, String)> {
        let mut env = self.base_env();
        env.push(("ANTHROPIC_BASE_URL".into(), model_url.into()));
        env.push(("ANTHROPIC_API_KEY".into(), "test-key".into()));
        env.push(("LARIK_MODEL".into(), "claude-mock".into()));
        env
    }

    /// The same, with the model served in OpenAI's Chat Completions format.
    pub fn openai_env(&self, model_url: &str) -> Vec<(String, String)> {
        let mut env = self.base_env();
        env.push(("OPENAI_BASE_URL".into(), format!("{model_url}/v1")));
        env.push(("LARIK_MODEL".into(), "openai:gpt-mock".into()));
        env
    }

    pub fn base_env(&self) -> Vec<(String, String)> {
        let home = self.home.path().display().to_string();
        vec![
            ("PATH".into(), std::env::var("PATH").unwrap_or_default()),
            ("HOME".into(), home.clone()),
            ("XDG_CONFIG_HOME".into(), format!("{home}/.config")),
            ("XDG_DATA_HOME".into(), format!("{home}/.local/share")),
            // Quiet by default; `LARIK_LOG=debug cargo test` shows the agent's logs.
            ("LARIK_LOG".into(), std::env::var("LARIK_LOG").unwrap_or_else(|_| "warn".into())),
        ]
    }
}

impl Sandbox {
    /// Writes the user's own Larik settings file (`~/.config/larik/settings.json` of this home),
    /// the one file whose every key applies.
    pub fn write_user_settings(&self, settings: &serde_json::Value) {
        let dir = self.home.path().join(".config/larik");
        std::fs::create_dir_all(&dir).expect("config dir");
        std::fs::write(dir.join("settings.json"), settings.to_string()).expect("user settings");
    }

    /// Writes `hooks` into the user's Claude Code settings (`~/.claude/settings.json`): hooks
    /// that run without asking, as the user's own.
    pub fn write_user_hooks(&self, hooks: serde_json::Value) {
        let path = self.home.path().join(".claude/settings.json");
        std::fs::create_dir_all(path.parent().expect("a parent")).expect("claude dir");
        std::fs::write(path, serde_json::json!({ "hooks": hooks }).to_string()).expect("user hooks");
    }

    /// A hook script of the user's, executable, in `~/.claude/hooks/`; its path.
    pub fn user_hook_script(&self, name: &str, body: &str) -> String {
        let path = self.home.path().join(".claude/hooks").join(name);
        std::fs::create_dir_all(path.parent().expect("a parent")).expect("hooks dir");
        std::fs::write(&path, body).expect("hook script");
        std::fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o755)).expect("executable");
        path.display().to_string()
    }

    /// Runs `larik ARGS` to its end in the project with this sandbox's environment.
    pub fn run_larik(&self, args: &[&str]) -> std::process::Output {
        std::process::Command::new(larik_bin())
            .args(args)
            .current_dir(self.project_path())
            .env_clear()
            .envs(self.base_env())
            .output()
            .expect("larik runs")
    }

    /// Where the agent keeps this home's session files.
    pub fn sessions_dir(&self) -> PathBuf {
        self.home.path().join(".local/share/larik/sessions")
    }

    /// Writes `count` stored sessions of this project, `sess_00000` on, as the agent writes them:
    /// a meta record, a title, then `exchanges` prompts (`prompt N`, then `prompt N.1`...) each
    /// with an answer.
    pub fn store_sessions(&self, count: usize, exchanges: usize) {
        let dir = self.sessions_dir();
        std::fs::create_dir_all(&dir).expect("sessions dir");
        let cwd = self.project_path();
        for n in 0..count {
            let mut lines = vec![
                serde_json::json!({"type": "meta", "id": format!("sess_{n:05}"), "cwd": cwd, "created_at": 1_780_000_000 + n}),
                serde_json::json!({"type": "title", "title": format!("Session number {n}")}),
            ];
            for exchange in 0..exchanges {
                let prompt = if exchange == 0 { format!("prompt {n}") } else { format!("prompt {n}.{exchange}") };
                lines.push(serde_json::json!({"type": "message", "message": {"role": "user", "content": [{"type": "text", "text": prompt}]}}));
                let answer = format!(
                    "An answer of a few sentences to prompt {n}.{exchange}, as a model would give one, with a path such as src/lib.rs in it."
                );
                lines.push(serde_json::json!({"type": "message", "message": {"role": "assistant", "content": [{"type": "text", "text": answer}]}}));
            }
            let text: String = lines.iter().map(|line| format!("{line}\n")).collect();
            std::fs::write(dir.join(format!("sess_{n:05}.jsonl")), text).expect("session file");
        }
    }
}

impl Default for Sandbox {
    fn default() -> Self {
        Self::new()
    }
}

/// A running `larik acp` and the client side of its connection.
pub struct Agent {
    pub child: Child,
    stdin: Option<ChildStdin>,
    incoming: mpsc::Receiver<Value>,
    next_id: i64,
    /// The `available_commands_update` that followed the last `session/new`.
    pub announced: Option<Value>,
    /// `_larik/sandbox` notifications seen, oldest first: [`Agent::next`] passes over them,
    /// since they come whenever the sandbox's check answers.
    sandbox_states: std::collections::VecDeque<Value>,
    /// Messages read while waiting for a sandbox state, for [`Agent::next`] to return first.
    held: std::collections::VecDeque<Value>,
}

impl Agent {
    pub fn spawn(cwd: &Path, env: &[(String, String)]) -> Self {
        Self::from_child(spawn_larik("acp", cwd, env))
    }

    /// The client side of any ACP agent started with piped stdin and stdout.
    pub fn from_child(mut child: Child) -> Self {
        let stdout = child.stdout.take().expect("stdout");
        let (sender, incoming) = mpsc::channel(4096);
        tokio::spawn(async move {
            let mut reader = BufReader::new(stdout);
            let mut bytes = Vec::new();
            while reader.read_until(b'\n', &mut bytes).await.is_ok_and(|read| read > 0) {
                // A line cut off by the end of output is a process killed mid-write, not a
                // message: only whole lines must be JSON.
                if bytes.last() != Some(&b'\n') {
                    return;
                }
                let line = String::from_utf8_lossy(&bytes).trim_end().to_owned();
                bytes.clear();
                let message: Value = serde_json::from_str(&line)
                    .unwrap_or_else(|error| panic!("stdout carried a non-JSON line ({error}): {line}"));
                if sender.send(message).await.is_err() {
                    return;
                }
            }
        });
        Self {
            stdin: child.stdin.take(),
            child,
            incoming,
            next_id: 1,
            announced: None,
            sandbox_states: Default::default(),
            held: Default::default(),
        }
    }

    pub async fn send_raw(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        stdin.write_all(line.as_bytes()).await.expect("write stdin");
        stdin.flush().await.expect("flush stdin");
    }

    pub async fn send(&mut self, message: Value) {
        self.send_raw(&format!("{message}\n")).await;
    }

    /// Sends a request and returns its id.
    pub async fn request(&mut self, method: &str, params: Value) -> i64 {
        let id = self.next_id;
        self.next_id += 1;
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})).await;
        id
    }

    pub async fn notify(&mut self, method: &str, params: Value) {
        self.send(json!({"jsonrpc": "2.0", "method": method, "params": params})).await;
    }

    /// Answers a request the agent sent.
    pub async fn reply(&mut self, request: &Value, result: Value) {
        self.send(json!({"jsonrpc": "2.0", "id": request["id"], "result": result})).await;
    }

    /// Answers a request the agent sent with an error.
    pub async fn reply_error(&mut self, request: &Value, code: i64, message: &str) {
        self.send(json!({"jsonrpc": "2.0", "id": request["id"], "error": {"code": code, "message": message}})).await;
    }

    /// The next message from the agent; fails the test after [`WAIT`].
    /// The next message, `_larik/sandbox` notifications aside.
    /// The next message with `method` (a request or a notification), those before it passed over.
    pub async fn next_with_method(&mut self, method: &str) -> Value {
        loop {
            let message = self.next().await;
            if message["method"] == method {
                return message;
            }
        }
    }

    /// The first message with `method` among `seen`, else the next one to come (each message read
    /// is added to `seen`).
    pub async fn seen_or_next_with_method(&mut self, seen: &mut Vec<Value>, method: &str) -> Value {
        loop {
            if let Some(found) = seen.iter().find(|message| message["method"] == method) {
                return found.clone();
            }
            seen.push(self.next().await);
        }
    }

    pub async fn next(&mut self) -> Value {
        if let Some(held) = self.held.pop_front() {
            return held;
        }
        loop {
            let message = self.receive().await;
            if message["method"] != "_larik/sandbox" {
                return message;
            }
            self.sandbox_states.push_back(message["params"].clone());
        }
    }

    /// The params of the next `_larik/sandbox` notification, keeping other messages for
    /// [`Agent::next`].
    pub async fn sandbox_state(&mut self) -> Value {
        loop {
            if let Some(state) = self.sandbox_states.pop_front() {
                return state;
            }
            let message = self.receive().await;
            if message["method"] == "_larik/sandbox" {
                self.sandbox_states.push_back(message["params"].clone());
            } else {
                self.held.push_back(message);
            }
        }
    }

    async fn receive(&mut self) -> Value {
        tokio::time::timeout(WAIT, self.incoming.recv())
            .await
            .expect("timed out waiting for the agent")
            .expect("agent closed stdout")
    }

    /// Waits for the response to `id`, returning it and every other message seen before it.
    pub async fn response(&mut self, id: i64) -> (Value, Vec<Value>) {
        let mut seen = Vec::new();
        loop {
            let message = self.next().await;
            if message["id"] == json!(id) && message.get("method").is_none() {
                return (message, seen);
            }
            seen.push(message);
        }
    }

    /// Waits for the first text of the running turn (the session's title may come first).
    pub async fn first_text(&mut self) {
        loop {
            let update = self.next().await;
            if update["params"]["update"]["sessionUpdate"] == "agent_message_chunk" {
                return;
            }
            assert_eq!(update["params"]["update"]["sessionUpdate"], "session_info_update", "{update}");
        }
    }

    /// Waits until a tool call of the running turn is in progress, allowing what it asks for.
    pub async fn until_tool_runs(&mut self) {
        loop {
            let message = self.next().await;
            if message["method"] == "session/request_permission" {
                self.reply(&message, json!({"outcome": {"outcome": "selected", "optionId": "allow_once"}})).await;
            }
            if message["params"]["update"]["status"] == "in_progress" {
                return;
            }
        }
    }

    /// Closes stdin, as an editor does on exit.
    pub fn close_stdin(&mut self) {
        self.stdin = None;
    }

    pub async fn initialize(&mut self) -> Value {
        self.initialize_with(json!({})).await
    }

    /// Initializes advertising the given client capabilities.
    pub async fn initialize_with(&mut self, capabilities: Value) -> Value {
        let id = self.request("initialize", json!({"protocolVersion": 1, "clientCapabilities": capabilities, "clientInfo": {"name": "larik-tests", "version": "0"}})).await;
        let (response, _) = self.response(id).await;
        response["result"].clone()
    }

    pub async fn new_session(&mut self, cwd: &Path) -> String {
        let id = self.request("session/new", json!({"cwd": cwd, "mcpServers": []})).await;
        let (response, _) = self.response(id).await;
        let session = response["result"]["sessionId"]
            .as_str()
            .unwrap_or_else(|| panic!("no session id in {response}"))
            .to_owned();
        // The session's commands are announced right after; take them out of the way.
        let announced = self.next().await;
        assert_eq!(announced["params"]["update"]["sessionUpdate"], "available_commands_update", "{announced}");
        self.announced = Some(announced);
        session
    }

    /// Runs a prompt to its end, answering permission requests with `answer` (an option id).
    /// Returns the prompt's response and the `session/update` params seen, in order.
    pub async fn prompt(
        &mut self,
        session: &str,
        text: &str,
        mut answer: impl FnMut(&Value) -> &'static str,
    ) -> (Value, Vec<Value>) {
        let id = self
            .request("session/prompt", json!({"sessionId": session, "prompt": [{"type": "text", "text": text}]}))
            .await;
        let mut updates = Vec::new();
        loop {
            let message = self.next().await;
            if message["id"] == json!(id) && message.get("method").is_none() {
                return (message, updates);
            }
            match message["method"].as_str() {
                Some("session/update") => updates.push(message["params"]["update"].clone()),
                Some("session/request_permission") => {
                    let option = answer(&message["params"]);
                    updates.push(json!({"sessionUpdate": "_permission_asked", "params": message["params"]}));
                    self.reply(&message, json!({"outcome": {"outcome": "selected", "optionId": option}})).await;
                }
                _ => panic!("unexpected message during a prompt: {message}"),
            }
        }
    }

    /// Runs a prompt to its end, rejecting every permission request. Returns the prompt's
    /// response, the requests' params (what was asked) and the `session/update` params.
    pub async fn prompt_rejecting(&mut self, session: &str, text: &str) -> (Value, Vec<Value>, Vec<Value>) {
        let mut asked = Vec::new();
        let (response, updates) = self
            .prompt(session, text, |params| {
                asked.push(params.clone());
                "reject_once"
            })
            .await;
        (response, asked, updates)
    }

    /// Waits for the process to exit after stdin closed.
    pub async fn wait_exit(&mut self) -> std::process::ExitStatus {
        tokio::time::timeout(WAIT, self.child.wait()).await.expect("agent did not exit").expect("wait")
    }
}

/// The text of every `agent_message_chunk`, joined.
pub fn message_text(updates: &[Value]) -> String {
    updates
        .iter()
        .filter(|update| update["sessionUpdate"] == "agent_message_chunk")
        .filter_map(|update| update["content"]["text"].as_str())
        .collect()
}

/// Updates of one kind.
pub fn updates_of<'a>(updates: &'a [Value], kind: &str) -> Vec<&'a Value> {
    updates.iter().filter(|update| update["sessionUpdate"] == kind).collect()
}

/// The titles of the notices among `updates`, one a line.
pub fn notice_titles(updates: &[Value]) -> String {
    let notices = updates_of(updates, "notice").into_iter();
    notices.map(|notice| notice["title"].as_str().unwrap_or_default()).collect::<Vec<_>>().join("\n")
}
