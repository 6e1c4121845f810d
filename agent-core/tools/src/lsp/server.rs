//! One running language server for one project root: the handshake, the documents it was told
//! about (and their versions), the diagnostics it published or is asked for, and whether it is
//! still loading (its work-done progress). It answers the server's requests honestly and lets it
//! change files only while a code action's own command runs (an [`EditWindow`]): at any other
//! time `workspace/applyEdit` is refused.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use larik_jsonrpc::RpcError;
use lsp_types::notification::{DidChangeTextDocument, DidOpenTextDocument, Initialized};
use lsp_types::request::{DocumentDiagnosticRequest, Initialize};
use lsp_types::{
    Diagnostic, DidChangeTextDocumentParams, DidOpenTextDocumentParams, DocumentDiagnosticParams,
    DocumentDiagnosticReport, DocumentDiagnosticReportResult, TextDocumentContentChangeEvent, TextDocumentIdentifier,
    TextDocumentItem, VersionedTextDocumentIdentifier,
};
use serde_json::{Value, json};
use tokio::sync::watch;

use super::connection::{Connection, LspError, Peer};
use super::uri;

/// How long a question of the `lsp` tool waits for its answer (a first one may wait on indexing).
const QUERY_TIMEOUT: Duration = Duration::from_secs(20);
/// How long the handshake may take: a server indexes a large project first.
const INITIALIZE_TIMEOUT: Duration = Duration::from_secs(30);

/// What one server published for one document.
#[derive(Clone, Default)]
struct Published {
    /// How many publishes came for it so far: a waiter wants one newer than it saw.
    count: u64,
    version: Option<i32>,
    diagnostics: Vec<Diagnostic>,
}

/// The server's side of the conversation, as the reader task sees it.
#[derive(Default)]
struct State {
    published: Mutex<HashMap<String, Published>>,
    /// Work-done progress the server has begun and not ended: it is busy (loading, indexing).
    progress: Mutex<HashSet<String>>,
    /// The server registered pull diagnostics after the handshake.
    pull_registered: AtomicBool,
    changed: watch::Sender<u64>,
    /// Where the server's edits go while a code action's command runs; `None` refuses them.
    edits: Mutex<Option<tokio::sync::mpsc::UnboundedSender<ServerEdit>>>,
}

/// An edit the server asked to apply (`workspace/applyEdit`) while an action's command ran:
/// its `WorkspaceEdit`, and where the answer (`ApplyWorkspaceEditResult`) goes.
pub struct ServerEdit {
    pub edit: Value,
    pub answer: tokio::sync::oneshot::Sender<Result<Value, RpcError>>,
}

/// The time a code action's command runs: the server's edits come out of [`EditWindow::next`];
/// once it is dropped they are refused again.
pub struct EditWindow {
    state: Arc<State>,
    edits: tokio::sync::mpsc::UnboundedReceiver<ServerEdit>,
}

impl EditWindow {
    pub async fn next(&mut self) -> Option<ServerEdit> {
        self.edits.recv().await
    }
}

impl Drop for EditWindow {
    fn drop(&mut self) {
        if let Ok(mut edits) = self.state.edits.lock() {
            *edits = None;
        }
    }
}

impl State {
    fn bump(&self) {
        self.changed.send_modify(|count| *count += 1);
    }
}

impl Peer for State {
    fn notification(&self, method: &str, params: Value) {
        match method {
            "textDocument/publishDiagnostics" => {
                let Some(address) = params["uri"].as_str().map(uri::normalized) else { return };
                let diagnostics: Vec<Diagnostic> =
                    serde_json::from_value(params["diagnostics"].clone()).unwrap_or_default();
                let version = params["version"].as_i64().and_then(|version| i32::try_from(version).ok());
                if let Ok(mut published) = self.published.lock() {
                    let entry = published.entry(address).or_default();
                    entry.count += 1;
                    entry.version = version;
                    entry.diagnostics = diagnostics;
                }
                self.bump();
            }
            "$/progress" => {
                let token = params["token"].to_string();
                if let Ok(mut progress) = self.progress.lock() {
                    match params["value"]["kind"].as_str() {
                        Some("begin") => {
                            progress.insert(token);
                        }
                        Some("end") => {
                            progress.remove(&token);
                        }
                        _ => {}
                    }
                }
                self.bump();
            }
            _ => {}
        }
    }

    fn later(&self, method: &str, params: &Value) -> Option<super::connection::LaterAnswer> {
        if method != "workspace/applyEdit" {
            return None;
        }
        let edits = self.edits.lock().ok()?;
        let (answer, later) = tokio::sync::oneshot::channel();
        edits.as_ref()?.send(ServerEdit { edit: params.clone(), answer }).ok()?;
        Some(later)
    }

    fn request(&self, method: &str, params: &Value) -> Result<Value, RpcError> {
        match method {
            // No settings of ours to give: one null per item asked, as the protocol says.
            "workspace/configuration" => {
                Ok(Value::Array(vec![Value::Null; params["items"].as_array().map_or(0, Vec::len)]))
            }
            "client/registerCapability" => {
                let registrations = params["registrations"].as_array().cloned().unwrap_or_default();
                if registrations.iter().any(|registration| registration["method"] == "textDocument/diagnostic") {
                    self.pull_registered.store(true, Ordering::Relaxed);
                    self.bump();
                }
                Ok(Value::Null)
            }
            "client/unregisterCapability"
            | "window/workDoneProgress/create"
            | "window/showMessageRequest"
            | "workspace/diagnostic/refresh"
            | "workspace/semanticTokens/refresh"
            | "workspace/inlayHint/refresh"
            | "workspace/codeLens/refresh" => Ok(Value::Null),
            "workspace/workspaceFolders" => Ok(Value::Null),
            // A server does not change the user's files on its own (see `later` for the time it may).
            "workspace/applyEdit" => Ok(
                json!({"applied": false, "failureReason": "Larik applies a server's edits only while a code action's command runs"}),
            ),
            _ => Err(RpcError::new(RpcError::METHOD_NOT_FOUND, format!("{method} is not supported"))),
        }
    }
}

/// A server, started and initialized.
pub struct Server {
    pub name: String,
    connection: Connection,
    state: Arc<State>,
    /// The server answers `textDocument/diagnostic` (said in its capabilities).
    pull: bool,
    /// The documents it was told about: their versions, and a hash of the text last sent.
    documents: tokio::sync::Mutex<HashMap<PathBuf, (i32, u64)>>,
    /// The last diagnostics had for each document, pulled or published.
    last: Mutex<HashMap<PathBuf, Vec<Diagnostic>>>,
}

impl Server {
    pub async fn start(spec: &super::ServerSpec, root: &Path) -> Result<Self, LspError> {
        let name = spec.name.as_str();
        let state = Arc::new(State { changed: watch::channel(0).0, ..State::default() });
        let connection =
            Connection::spawn(name, &spec.command, &spec.args, &spec.env, root, Arc::clone(&state) as Arc<dyn Peer>)?;
        let params = super::capabilities::initialize(root, spec.initialization_options.clone())?;
        let answer = connection.call::<Initialize>(params, INITIALIZE_TIMEOUT).await?;
        let pull = answer.capabilities.diagnostic_provider.is_some();
        connection.notify::<Initialized>(lsp_types::InitializedParams {});
        Ok(Self {
            name: name.to_owned(),
            connection,
            state,
            pull,
            documents: tokio::sync::Mutex::default(),
            last: Mutex::default(),
        })
    }

    pub fn is_alive(&self) -> bool {
        self.connection.is_alive()
    }

    /// Whether the server is still loading: it says so (work-done progress), or it has not
    /// given diagnostics for any document yet (a server just started is indexing, said or not).
    fn busy(&self) -> bool {
        self.last.lock().is_ok_and(|last| last.is_empty())
            || self.state.progress.lock().is_ok_and(|progress| !progress.is_empty())
    }

    /// Whether the server knows the document already.
    pub async fn knows(&self, path: &Path) -> bool {
        self.documents.lock().await.contains_key(path)
    }

    /// Tells the server the document's text (opening it the first time); its version, and
    /// whether the server heard anything new.
    pub async fn sync(&self, path: &Path, language_id: &str, text: &str) -> (i32, bool) {
        let Some(address) = uri::document(path) else { return (0, false) };
        let hash = {
            use std::hash::{Hash, Hasher};
            let mut hasher = std::collections::hash_map::DefaultHasher::new();
            text.hash(&mut hasher);
            hasher.finish()
        };
        let mut documents = self.documents.lock().await;
        match documents.get_mut(path) {
            Some((version, known)) if *known == hash => (*version, false),
            Some((version, known)) => {
                *version += 1;
                *known = hash;
                self.connection.notify::<DidChangeTextDocument>(DidChangeTextDocumentParams {
                    text_document: VersionedTextDocumentIdentifier { uri: address, version: *version },
                    content_changes: vec![TextDocumentContentChangeEvent {
                        range: None,
                        range_length: None,
                        text: text.to_owned(),
                    }],
                });
                (*version, true)
            }
            None => {
                documents.insert(path.to_path_buf(), (1, hash));
                self.connection.notify::<DidOpenTextDocument>(DidOpenTextDocumentParams {
                    text_document: TextDocumentItem {
                        uri: address,
                        language_id: language_id.to_owned(),
                        version: 1,
                        text: text.to_owned(),
                    },
                });
                (1, true)
            }
        }
    }

    /// The document's diagnostics now: asked for afresh where the server answers pulls or the
    /// text just changed, else the last ones had.
    pub async fn current_diagnostics(
        &self,
        path: &Path,
        version: i32,
        seen: u64,
        changed: bool,
        wait: Duration,
        loading: Duration,
    ) -> Vec<Diagnostic> {
        if (changed || self.pull || self.state.pull_registered.load(Ordering::Relaxed))
            && let Some(fresh) = self.diagnostics(path, version, seen, wait, loading).await
        {
            return fresh;
        }
        self.last_diagnostics(path)
    }

    /// A call whose params or result the protocol leaves open (code actions' commands, the
    /// actions themselves, which the planner reads as given).
    pub async fn call(&self, method: &str, params: Value) -> Result<Value, LspError> {
        self.connection.request(method, params, QUERY_TIMEOUT).await
    }

    /// Takes the server's edits until the window is dropped (a code action's command runs).
    pub fn accept_edits(&self) -> EditWindow {
        let (sender, edits) = tokio::sync::mpsc::unbounded_channel();
        if let Ok(mut open) = self.state.edits.lock() {
            *open = Some(sender);
        }
        EditWindow { state: Arc::clone(&self.state), edits }
    }

    /// Asks `R`, for the questions the `lsp` tool asks.
    pub async fn ask<R: lsp_types::request::Request>(&self, params: R::Params) -> Result<R::Result, LspError> {
        self.connection.call::<R>(params, QUERY_TIMEOUT).await
    }

    /// The document's diagnostics for `version`: pulled where the server offers it, else the
    /// first publish after the change was sent. Waits `wait` (`loading` while the server is
    /// busy); `None` when nothing fresh came in time.
    pub async fn diagnostics(
        &self,
        path: &Path,
        version: i32,
        seen: u64,
        wait: Duration,
        loading: Duration,
    ) -> Option<Vec<Diagnostic>> {
        let fresh = self.fresh_diagnostics(path, version, seen, wait, loading).await?;
        if let Ok(mut last) = self.last.lock() {
            last.insert(path.to_path_buf(), fresh.clone());
        }
        Some(fresh)
    }

    /// The diagnostics last had for the document (none before any).
    pub fn last_diagnostics(&self, path: &Path) -> Vec<Diagnostic> {
        self.last.lock().ok().and_then(|last| last.get(path).cloned()).unwrap_or_default()
    }

    async fn fresh_diagnostics(
        &self,
        path: &Path,
        version: i32,
        seen: u64,
        wait: Duration,
        loading: Duration,
    ) -> Option<Vec<Diagnostic>> {
        let address = uri::from_path(path);
        let started = tokio::time::Instant::now();
        let mut changes = self.state.changed.subscribe();
        let mut pull_failed = false;
        loop {
            let pulling = !pull_failed && (self.pull || self.state.pull_registered.load(Ordering::Relaxed));
            // What was published is taken before the time is looked at: a server ends its
            // progress right after it publishes, and the two may arrive together, so by the
            // time the waiter wakes the server is no longer loading and the shorter bound has
            // passed.
            if !pulling
                && let Some(fresh) = self.published(&address).filter(|published| {
                    published.count > seen && published.version.is_none_or(|published| published >= version)
                })
            {
                tracing::debug!(server = %self.name, version, published = ?fresh.version, items = fresh.diagnostics.len(), "published diagnostics");
                return Some(fresh.diagnostics);
            }
            let bound = if self.busy() { loading } else { wait };
            let left = bound.checked_sub(started.elapsed())?;
            // Pull where the server offers it; it may say so only after the handshake
            // (dynamic registration), so this is asked again while waiting. A pull refused or
            // failed falls back to what the server publishes, in the time left.
            if pulling {
                match self.pulled(&address, version, left).await {
                    Some(items) => return Some(items),
                    None => pull_failed = true,
                }
                continue;
            }
            if tokio::time::timeout(left, changes.changed()).await.is_err() || !self.is_alive() {
                return None;
            }
        }
    }

    async fn pulled(&self, address: &str, version: i32, bound: Duration) -> Option<Vec<Diagnostic>> {
        let params = DocumentDiagnosticParams {
            text_document: TextDocumentIdentifier { uri: address.parse().ok()? },
            identifier: None,
            previous_result_id: None,
            work_done_progress_params: lsp_types::WorkDoneProgressParams::default(),
            partial_result_params: lsp_types::PartialResultParams::default(),
        };
        match self.connection.call::<DocumentDiagnosticRequest>(params, bound).await {
            // Larik sends no previous result id, so a server has nothing to call unchanged.
            Ok(DocumentDiagnosticReportResult::Report(DocumentDiagnosticReport::Full(report))) => {
                let items = report.full_document_diagnostic_report.items;
                tracing::debug!(server = %self.name, version, items = items.len(), "pulled diagnostics");
                Some(items)
            }
            Ok(other) => {
                tracing::debug!(server = %self.name, version, ?other, "no full diagnostics report pulled");
                None
            }
            Err(error) => {
                tracing::debug!(server = %self.name, version, %error, "no diagnostics pulled");
                None
            }
        }
    }

    /// How many publishes came for the document so far (to wait for a newer one).
    pub fn publishes(&self, path: &Path) -> u64 {
        self.published(&uri::from_path(path)).map_or(0, |published| published.count)
    }

    fn published(&self, address: &str) -> Option<Published> {
        self.state.published.lock().ok()?.get(&uri::normalized(address)).cloned()
    }

    pub async fn shutdown(&self) {
        self.connection.shutdown().await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_server_is_answered_honestly_and_may_not_edit_files_itself() {
        let state = State { changed: watch::channel(0).0, ..State::default() };
        let edit = json!({"edit": {"changes": {"file:///p/a.py": [{"range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}}, "newText": "import os\n"}]}}});
        let answer = state.request("workspace/applyEdit", &edit).unwrap();
        assert_eq!(answer["applied"], false, "{answer}");
        assert_eq!(
            state
                .request("workspace/configuration", &json!({"items": [{"section": "python"}, {"section": "pyright"}]}))
                .unwrap(),
            json!([null, null])
        );
        state
            .request(
                "client/registerCapability",
                &json!({"registrations": [{"id": "1", "method": "textDocument/diagnostic"}]}),
            )
            .unwrap();
        assert!(state.pull_registered.load(Ordering::Relaxed), "a late registration turns pulls on");
        assert_eq!(
            state.request("workspace/executeClientCommand", &json!({})).unwrap_err().code,
            -32601,
            "unknown requests are refused, not faked"
        );
    }
}
