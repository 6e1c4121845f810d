//! Language servers: the session's own client for them. A server is started lazily, on the first
//! file it serves, once per project root, and stopped with the session: pyright (or
//! basedpyright), typescript-language-server, gopls, clangd and rust-analyzer when their binary
//! is on PATH, others from settings (`lsp.servers`), any turned off there.
//!
//! What it gives: the file's new problems after an edit, in the same tool result that
//! confirmed it ([`LanguageServers::after_write`]): the file is synced, fresh diagnostics are
//! awaited (3 s, 15 s while the server says it is loading) and the errors and warnings it did
//! not have before are reported. A server that is missing or slow means no report, never an
//! error; one that crashed is started again once.

mod capabilities;
pub mod code_action;
mod connection;
mod error;
pub mod queries;
mod report;
mod server;
mod specs;
pub mod uri;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

pub use error::LspError;
use queries::Operation;
use server::Server;
pub use specs::ServerSpec;

/// How long fresh diagnostics are awaited after an edit.
const WAIT: Duration = Duration::from_secs(3);
/// The same while the server says it is loading the project.
const WAIT_LOADING: Duration = Duration::from_secs(15);

/// The editor's own language servers, when the front end offers them: a file's problems as
/// the editor shows them, waited for up to `wait` after a change. `Ok(None)`: no server of the
/// editor's covers the file.
#[async_trait::async_trait]
pub trait EditorDiagnostics: Send + Sync {
    async fn diagnostics(
        &self,
        path: &Path,
        wait: Duration,
    ) -> Result<Option<Vec<lsp_types::Diagnostic>>, larik_host::editor::EditorError>;
}

/// One server per (spec, root), as it stands.
enum Slot {
    Running(Arc<Server>),
    /// It could not start, or crashed after its one restart: not tried again this session.
    Failed,
}

/// Why an edit a server asked for while its command ran was not applied: what the server is
/// told (`failureReason`).
#[derive(Debug)]
pub struct EditRefused(pub String);

/// How a code action's command went: the files its edits changed (applied as it ran), and how
/// it ended; it may fail after editing (a server asking the client for what it cannot do).
pub struct CommandRun {
    pub changed: Vec<PathBuf>,
    pub ended: Result<(), LspError>,
}

/// The session's language servers.
pub struct LanguageServers {
    specs: Vec<ServerSpec>,
    /// The project: servers' roots lie within it.
    project: PathBuf,
    running: tokio::sync::Mutex<HashMap<(String, PathBuf), Slot>>,
    /// Servers that crashed and were restarted once already.
    restarted: std::sync::Mutex<std::collections::HashSet<(String, PathBuf)>>,
    /// Held while a document is synced and its diagnostics awaited: a warm-up and an edit's
    /// check of the same file must not interleave (the edit would see no baseline).
    syncing: tokio::sync::Mutex<()>,
    /// Held while a code action's command runs: its server's edits are taken for that command
    /// alone (one edit window at a time).
    commands: tokio::sync::Mutex<()>,
    /// Where the user hears that a server is gone for the session.
    notices: Arc<crate::event::Notices>,
    /// The editor's servers, asked first where the front end offers them.
    editor: Option<Arc<dyn EditorDiagnostics>>,
    /// What the editor last said of each file, the baseline for the next edit's report.
    editor_seen: std::sync::Mutex<HashMap<PathBuf, Vec<lsp_types::Diagnostic>>>,
}

impl LanguageServers {
    pub fn new(
        project: &Path,
        specs: Vec<ServerSpec>,
        notices: Arc<crate::event::Notices>,
        editor: Option<Arc<dyn EditorDiagnostics>>,
    ) -> Self {
        Self {
            specs,
            project: project.to_path_buf(),
            running: tokio::sync::Mutex::default(),
            restarted: std::sync::Mutex::default(),
            syncing: tokio::sync::Mutex::default(),
            commands: tokio::sync::Mutex::default(),
            notices,
            editor,
            editor_seen: std::sync::Mutex::default(),
        }
    }

    /// No servers at all (a session without settings, a test).
    pub fn none() -> Self {
        Self::new(Path::new("/"), Vec::new(), Arc::default(), None)
    }

    /// The editor's view of the file, when it has one: `Some(report)` (maybe no report), or
    /// `None` when Larik's own servers should be asked.
    async fn editor_report(&self, path: &Path) -> Option<Option<String>> {
        let editor = self.editor.as_ref()?;
        let fresh = match editor.diagnostics(path, WAIT).await {
            Ok(Some(fresh)) => fresh,
            Ok(None) => return None,
            Err(error) => {
                tracing::debug!(%error, "the editor gave no diagnostics");
                return Some(None);
            }
        };
        let previous = self
            .editor_seen
            .lock()
            .ok()
            .and_then(|mut seen| seen.insert(path.to_path_buf(), fresh.clone()))
            .unwrap_or_default();
        Some(report::new_problems(&previous, &fresh, &report::LineShift::unknown(), "the editor"))
    }

    /// What the file's server newly reports after `path` went from `before` (`None`: it did not
    /// exist) to `after`: a few lines for the tool result, or `None` when there is nothing to
    /// say (no server, no new problem, no answer in time).
    pub async fn after_write(&self, path: &Path, before: Option<&str>, after: &str) -> Option<String> {
        let _syncing = self.syncing.lock().await;
        // The editor's own servers already check the file: no second server for it.
        if let Some(report) = self.editor_report(path).await {
            return report;
        }
        // A server found dead while it is asked is started again (once) and asked again.
        for _ in 0..2 {
            let (spec, server) = self.server_for(path).await?;
            let report = check(spec, &server, path, before, after).await;
            if server.is_alive() {
                return report;
            }
        }
        None
    }

    /// Starts the file's server and tells it the file, so an edit that follows finds it ready
    /// and knows what problems the file had. For a file the model read.
    pub async fn warm(&self, path: &Path) {
        /// Files larger than this are not sent to a server just because they were read.
        const MAX_WARM_BYTES: u64 = 1024 * 1024;
        // What the editor says of the file now is the baseline for its next edit.
        if self.editor_report(path).await.is_some() {
            return;
        }
        if !self.specs.iter().any(|spec| spec.serves(path))
            || tokio::fs::metadata(path).await.map_or(true, |meta| meta.len() > MAX_WARM_BYTES)
        {
            return;
        }
        let Ok(text) = tokio::fs::read_to_string(path).await else { return };
        let _syncing = self.syncing.lock().await;
        let Some((spec, server)) = self.server_for(path).await else { return };
        if server.knows(path).await {
            return;
        }
        let seen = server.publishes(path);
        let (version, _) = server.sync(path, spec.language_id(path), &text).await;
        server.diagnostics(path, version, seen, WAIT, WAIT_LOADING).await;
    }

    /// The code action titled `title` at 1-based `line` of `path`, asked for again on the file's
    /// current text and resolved: what applying it would change.
    pub async fn plan_code_action(
        &self,
        path: &Path,
        line: u32,
        title: &str,
    ) -> Result<code_action::PlannedAction, LspError> {
        let _syncing = self.syncing.lock().await;
        let (spec, server) = self.server_for(path).await.ok_or_else(|| LspError::NoServer { path: path.to_owned() })?;
        let text = read(path).await?;
        let seen = server.publishes(path);
        let (version, changed) = server.sync(path, spec.language_id(path), &text).await;
        let diagnostics = server.current_diagnostics(path, version, seen, changed, WAIT, WAIT_LOADING).await;
        let answer = offered_actions(&server, path, line.saturating_sub(1), &diagnostics).await?;
        let offered = answer.as_array().cloned().unwrap_or_default();
        let action = code_action::pick(&offered, title)?.clone();
        let action_title = action["title"].as_str().unwrap_or(title).to_owned();
        // A bare command: nothing to edit here, the server does the rest.
        if action["command"].is_string() {
            return Ok(code_action::PlannedAction { title: action_title, changes: Vec::new(), command: Some(action) });
        }
        let action = if action["edit"].is_null() && !action["data"].is_null() {
            server.call("codeAction/resolve", action).await.map_err(|error| LspError::Request(error.to_string()))?
        } else {
            action
        };
        let changes = if action["edit"].is_null() { Vec::new() } else { code_action::changes(&action["edit"]).await? };
        Ok(code_action::PlannedAction {
            title: action_title,
            changes,
            command: action.get("command").filter(|command| command.is_object()).cloned(),
        })
    }

    /// Runs a code action's command on the file's server. The edits the server asks to apply
    /// while it runs (`workspace/applyEdit`) go through `apply`, which writes them as any edit
    /// is written or says why not; before and after, the server's edits are refused. Says which
    /// files its edits changed, and how the command ended.
    pub async fn run_command<F, Fut>(&self, path: &Path, command: &Value, apply: F) -> CommandRun
    where
        F: Fn(Vec<code_action::FileChange>) -> Fut,
        Fut: std::future::Future<Output = Result<(), EditRefused>>,
    {
        let Some((_, server)) = self.server_for(path).await else {
            return CommandRun { changed: Vec::new(), ended: Err(LspError::NoServer { path: path.to_owned() }) };
        };
        let params = serde_json::json!({"command": command["command"], "arguments": command.get("arguments").cloned().unwrap_or(Value::Array(Vec::new()))});
        let _one_at_a_time = self.commands.lock().await;
        let mut window = server.accept_edits();
        let call = server.call("workspace/executeCommand", params);
        tokio::pin!(call);
        let mut changed = Vec::new();
        loop {
            tokio::select! {
                answer = &mut call => {
                    let ended = answer.map(drop).map_err(|error| LspError::Request(error.to_string()));
                    return CommandRun { changed, ended };
                }
                Some(edit) = window.next() => {
                    let outcome = match code_action::changes(&edit.edit["edit"]).await {
                        Ok(changes) => {
                            let paths: Vec<PathBuf> = changes.iter().map(|change| change.path.clone()).collect();
                            apply(changes).await.map(|()| paths).map_err(|refused| refused.0)
                        }
                        Err(error) => Err(error.to_string()),
                    };
                    let answer = match outcome {
                        Ok(paths) => {
                            changed.extend(paths);
                            serde_json::json!({"applied": true})
                        }
                        Err(reason) => {
                            tracing::debug!(server = %server.name, %reason, "a command's edit was not applied");
                            serde_json::json!({"applied": false, "failureReason": reason})
                        }
                    };
                    let _ = edit.answer.send(Ok(answer));
                }
            }
        }
    }

    /// Asks the file's server `operation` at 1-based `line` and `character` (or for `query`);
    /// the answer as text, or why there is none.
    pub async fn query(
        &self,
        operation: Operation,
        path: &Path,
        line: u32,
        character: u32,
        query: &str,
    ) -> Result<String, LspError> {
        let _syncing = self.syncing.lock().await;
        let (spec, server) = self.server_for(path).await.ok_or_else(|| LspError::NoServer { path: path.to_owned() })?;
        // The server answers about the file as it is on disk now.
        let text = read(path).await?;
        let seen = server.publishes(path);
        let (version, changed) = server.sync(path, spec.language_id(path), &text).await;
        let position = lsp_types::Position::new(line.saturating_sub(1), character.saturating_sub(1));
        if let Some(answer) = operation.ask(&server, path, position, query, &self.project).await {
            return answer.map_err(|error| LspError::Request(error.to_string()));
        }
        let diagnostics = server.current_diagnostics(path, version, seen, changed, WAIT, WAIT_LOADING).await;
        if operation != Operation::CodeActions {
            return Ok(report::listed(&diagnostics));
        }
        let answer = offered_actions(&server, path, line.saturating_sub(1), &diagnostics).await?;
        Ok(Operation::render_actions(&answer))
    }

    /// The running server for `path`, started if need be.
    async fn server_for(&self, path: &Path) -> Option<(&ServerSpec, Arc<Server>)> {
        let spec = self.specs.iter().find(|spec| spec.serves(path))?;
        let root = spec.root_for(path, &self.project);
        let key = (spec.name.clone(), root.clone());
        let mut running = self.running.lock().await;
        match running.get(&key) {
            Some(Slot::Running(server)) if server.is_alive() => return Some((spec, Arc::clone(server))),
            Some(Slot::Failed) => return None,
            Some(Slot::Running(_)) => {
                // It crashed: once more, then no more.
                let again = self.restarted.lock().is_ok_and(|mut restarted| restarted.insert(key.clone()));
                if !again {
                    tracing::warn!(server = %spec.name, "the language server crashed again; not restarting it");
                    self.notices.push(format!("The {} language server crashed again and was not restarted: edits get no diagnostics from it for the rest of this session.", spec.name));
                    running.insert(key, Slot::Failed);
                    return None;
                }
                tracing::warn!(server = %spec.name, "the language server crashed; starting it again");
            }
            None => {}
        }
        match Server::start(spec, &root).await {
            Ok(server) => {
                let server = Arc::new(server);
                running.insert(key, Slot::Running(Arc::clone(&server)));
                Some((spec, server))
            }
            Err(error) => {
                tracing::warn!(server = %spec.name, %error, "the language server did not start");
                self.notices.push(format!(
                    "The {} language server did not start ({error}): edits get no diagnostics from it in this session.",
                    spec.name
                ));
                running.insert(key, Slot::Failed);
                None
            }
        }
    }

    /// Stops every server.
    pub async fn shutdown(&self) {
        let running: Vec<Arc<Server>> = self
            .running
            .lock()
            .await
            .drain()
            .filter_map(|(_, slot)| match slot {
                Slot::Running(server) => Some(server),
                Slot::Failed => None,
            })
            .collect();
        futures::future::join_all(running.iter().map(|server| server.shutdown())).await;
    }
}

/// What one server says the change brought.
async fn check(spec: &ServerSpec, server: &Server, path: &Path, before: Option<&str>, after: &str) -> Option<String> {
    let language = spec.language_id(path);
    // What the file had before, so only what the edit brought is reported.
    let previous = match before {
        _ if server.knows(path).await => server.last_diagnostics(path),
        Some(before) => {
            let seen = server.publishes(path);
            let (version, _) = server.sync(path, language, before).await;
            server.diagnostics(path, version, seen, WAIT, WAIT_LOADING).await.unwrap_or_default()
        }
        None => Vec::new(),
    };
    let seen = server.publishes(path);
    let (version, _) = server.sync(path, language, after).await;
    let fresh = server.diagnostics(path, version, seen, WAIT, WAIT_LOADING).await?;
    let shift = before.map_or_else(report::LineShift::unknown, |before| report::LineShift::between(before, after));
    report::new_problems(&previous, &fresh, &shift, &server.name)
}

/// The file as it is on disk now, which is what a server is asked about.
async fn read(path: &Path) -> Result<String, LspError> {
    tokio::fs::read_to_string(path)
        .await
        .map_err(|error| LspError::Unreadable { path: path.to_owned(), reason: error.to_string() })
}
/// The actions `server` offers at 0-based `line` of `path`, given the diagnostics there
/// (`(Command | CodeAction)[]`, as the server wrote them).
async fn offered_actions(
    server: &Server,
    path: &Path,
    line: u32,
    diagnostics: &[lsp_types::Diagnostic],
) -> Result<Value, LspError> {
    let params = Operation::code_actions_request(path, line, diagnostics)
        .ok_or_else(|| LspError::Request(format!("{} cannot be named by a URI", path.display())))?;
    server.call("textDocument/codeAction", params).await.map_err(|error| LspError::Request(error.to_string()))
}
