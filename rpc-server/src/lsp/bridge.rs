//! The language-server face of one agent session: open documents, code actions and commands
//! that start turns, and the turn's events turned into progress, diagnostics, messages, edits
//! under review and permission questions.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use larik_core::Mode;
use larik_core::Part;
use larik_core::event::PermissionAnswer;
use larik_core::services::EditorError;
use larik_core::session::{Session, SessionConfig};
use lsp_server::Notification;
use lsp_types::notification::{
    DidChangeTextDocument, DidCloseTextDocument, DidOpenTextDocument, DidSaveTextDocument, Notification as _,
    PublishDiagnostics,
};
use lsp_types::request::{CodeActionRequest, ExecuteCommand, Request as _};
use lsp_types::{
    CodeAction, CodeActionKind, CodeActionOrCommand, CodeActionParams, Diagnostic, DiagnosticSeverity,
    DidChangeTextDocumentParams, DidCloseTextDocumentParams, DidOpenTextDocumentParams, DidSaveTextDocumentParams,
    ExecuteCommandParams, InitializeParams, MessageType, Position, PublishDiagnosticsParams, Range, Uri,
};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::chat::{self, ChatWriter};
use super::client::{Client, ClientError, METHOD_NOT_FOUND};
use super::command::{CodeRequest, Command};
use super::documents::{Documents, LspFiles};
use super::proposal::{self, LineEdit, Proposal, apply_line_edit};
use super::question::{self, Question};

mod asking;
mod showing;
use super::story::{self, Story};
use larik_core::file_uri as uri;

/// What the user asked to run: a prompt's turn, or a built-in command.
enum Work {
    Prompt(Vec<Part>),
    Command(larik_core::commands::Command),
}

/// A question for the user that is not an edit, waiting on an answer.
struct PendingPermission {
    /// Answers name the question they answer, so a stale menu cannot answer a newer one.
    id: u64,
    uri: Option<String>,
    question: Question,
    reply: tokio::sync::oneshot::Sender<PermissionAnswer>,
}

pub struct Bridge {
    client: Client,
    session: Arc<Session>,
    documents: Documents,
    proposals: Mutex<Vec<Proposal>>,
    next_id: AtomicU64,
    permission: Mutex<Option<PendingPermission>>,
    /// The document the user last worked in: where questions without a file are shown.
    last_uri: Mutex<Option<String>>,
    /// Locations of the running tool call, shown as hints.
    running: Mutex<Vec<(String, u32, String)>>,
    /// Once the client answered showMessageRequest with "method not found", code actions are used.
    no_message_requests: AtomicBool,
    /// The client says it shows message requests as popups (Helix after 25.07).
    popup_prompts: bool,
    /// The user's answers by tool call, until the turn's story shows them.
    answers: Mutex<HashMap<String, story::Answer>>,
    /// A turn is running: the chat file offers no "send" meanwhile.
    turn_running: Arc<AtomicBool>,
    show_document: bool,
    cancel: CancellationToken,
}

impl Bridge {
    pub fn new(env: HashMap<String, String>, init: &InitializeParams, client: Client) -> Self {
        #[allow(deprecated)] // `rootUri` is what editors without workspace folders still send.
        let root_uri = init.root_uri.as_ref();
        let root = init
            .workspace_folders
            .as_ref()
            .and_then(|folders| folders.first())
            .map(|folder| &folder.uri)
            .or(root_uri)
            .and_then(|address| uri::to_path(address.as_str()))
            .or_else(|| std::env::current_dir().ok())
            .unwrap_or_else(|| PathBuf::from("."));
        let documents = Documents::default();
        let cancel = CancellationToken::new();
        let config = match SessionConfig::from_settings(root.clone(), &env, std::env::current_exe().ok()) {
            Ok((config, _)) => config,
            Err(error) => {
                tracing::warn!(%error, "settings could not be read; the agent cannot run");
                let failed = Err(larik_core::ProviderError::BadRequest { message: error.to_string() });
                SessionConfig::plain(root.clone(), failed, larik_core::session::ModelSettings::none())
            }
        };
        let config =
            SessionConfig { editor: Some(Arc::new(LspFiles::new(documents.clone(), client.clone()))), ..config };
        let session = Arc::new(Session::new(config, &cancel));
        let window = init.capabilities.window.as_ref();
        let show_document = window.and_then(|window| window.show_document.as_ref()).is_some_and(|show| show.support);
        let popup_prompts = window.is_some_and(|window| window.show_message.is_some());
        Self {
            client,
            session,
            documents,
            proposals: Mutex::new(Vec::new()),
            next_id: AtomicU64::new(1),
            permission: Mutex::new(None),
            last_uri: Mutex::new(None),
            running: Mutex::new(Vec::new()),
            no_message_requests: AtomicBool::new(false),
            popup_prompts,
            answers: Mutex::new(HashMap::new()),
            turn_running: Arc::new(AtomicBool::new(false)),
            show_document,
            cancel,
        }
    }

    pub fn shutdown(&self) {
        self.cancel.cancel();
    }

    /// Ends the session as the editor goes away: its SessionEnd hooks run, then it is cancelled.
    pub async fn end(&self) {
        self.session.cancel_turn();
        self.session.end("prompt_input_exit").await;
        self.shutdown();
    }

    /// The editor's notifications about its documents; others, and malformed ones, are ignored.
    pub async fn notification(self: &Arc<Self>, notification: Notification) {
        fn params<P: serde::de::DeserializeOwned>(notification: Notification) -> Option<P> {
            let method = notification.method.clone();
            serde_json::from_value(notification.params)
                .map_err(|error| tracing::warn!(%method, %error, "malformed notification ignored"))
                .ok()
        }
        match notification.method.as_str() {
            DidOpenTextDocument::METHOD => {
                if let Some(DidOpenTextDocumentParams { text_document }) = params(notification) {
                    self.opened(&text_document.uri, text_document.version, text_document.text);
                }
            }
            DidChangeTextDocument::METHOD => {
                // Full sync: the last change holds the whole text.
                if let Some(DidChangeTextDocumentParams { text_document, content_changes }) = params(notification)
                    && let Some(change) = content_changes.into_iter().last()
                {
                    self.opened(&text_document.uri, text_document.version, change.text);
                }
            }
            DidCloseTextDocument::METHOD => {
                if let Some(path) = params::<DidCloseTextDocumentParams>(notification)
                    .and_then(|closed| uri::to_path(closed.text_document.uri.as_str()))
                {
                    self.documents.remove(&path);
                }
            }
            DidSaveTextDocument::METHOD => {
                if let Some(path) = params::<DidSaveTextDocumentParams>(notification)
                    .and_then(|saved| uri::to_path(saved.text_document.uri.as_str()))
                {
                    self.documents.saved(&path);
                }
            }
            _ => {}
        }
    }

    fn opened(&self, address: &Uri, version: i32, text: String) {
        if let Some(path) = uri::to_path(address.as_str()) {
            self.documents.edited(path, version, text);
        }
        if let Ok(mut last) = self.last_uri.lock() {
            *last = Some(address.as_str().to_owned());
        }
    }

    pub async fn request(self: &Arc<Self>, method: &str, params: Value) -> Result<Value, ClientError> {
        fn parsed<P: serde::de::DeserializeOwned>(method: &str, params: Value) -> Result<P, ClientError> {
            serde_json::from_value(params).map_err(|error| ClientError::invalid(format!("{method}: {error}")))
        }
        match method {
            CodeActionRequest::METHOD => {
                let actions = self.code_actions(&parsed(method, params)?);
                serde_json::to_value(actions).map_err(|error| ClientError::invalid(error.to_string()))
            }
            ExecuteCommand::METHOD => {
                let ExecuteCommandParams { command, arguments, .. } = parsed(method, params)?;
                let command = Command::parse(&command, &arguments).map_err(|bad| ClientError::invalid(bad.0))?;
                self.execute(command).await
            }
            _ => Err(ClientError { code: METHOD_NOT_FOUND, message: format!("Method not found: {method}") }),
        }
    }

    fn code_actions(&self, params: &CodeActionParams) -> Vec<CodeActionOrCommand> {
        let document = &params.text_document.uri;
        let address = document.as_str().to_owned();
        if let Ok(mut last) = self.last_uri.lock() {
            *last = Some(address.clone());
        }
        let range = params.range;
        let (first, last) = (range.start.line as usize, range.end.line as usize);
        let action = code_action;
        // Edits under review in this document come first.
        let mut actions = self.hunk_actions(&address, first, last);
        if let Ok(permission) = self.permission.lock()
            && let Some(pending) = permission.as_ref()
        {
            for (option, name) in &pending.question.options {
                let answer = Command::Permission { option: (*option).to_owned(), question: Some(pending.id) };
                let title = short_title(&format!("Larik: {}", question::plain(name)));
                actions.push(action(title, CodeActionKind::QUICKFIX, answer));
            }
        }
        if chat::is_chat(&address) {
            if !self.turn_running.load(Ordering::Relaxed) {
                actions.push(action(
                    "Larik: send".into(),
                    CodeActionKind::SOURCE,
                    Command::Send { uri: document.clone() },
                ));
                // The skills and custom commands, run as typed (`/name` with no arguments; with
                // arguments, write `/name args` as the message and send it).
                for command in self.session.skill_commands().into_iter().take(MAX_COMMAND_ACTIONS) {
                    let title = short_title(&format!("Larik: /{} — {}", command.name, command.summary(60)));
                    actions.push(action(title, CodeActionKind::SOURCE, Command::Prompt(format!("/{}", command.name))));
                }
            }
            return actions;
        }
        let about = |request: CodeRequest| Command::AboutCode { uri: document.clone(), range: Some(range), request };
        if range.start != range.end {
            actions.push(action(
                "Larik: ask about selection".into(),
                CodeActionKind::REFACTOR,
                about(CodeRequest::Ask(None)),
            ));
        }
        actions.push(action("Larik: explain".into(), CodeActionKind::REFACTOR, about(CodeRequest::Explain)));
        let theirs: Vec<Diagnostic> =
            params.context.diagnostics.iter().filter(|diagnostic| !is_ours(diagnostic)).cloned().collect();
        if !theirs.is_empty() {
            actions.push(action(
                "Larik: fix diagnostics here".into(),
                CodeActionKind::QUICKFIX,
                about(CodeRequest::Fix(theirs)),
            ));
        }
        let refactor = CodeRequest::Ask(Some("Refactor this code to be clearer, keeping its behaviour.".into()));
        actions.push(action("Larik: refactor this".into(), CodeActionKind::REFACTOR, about(refactor)));
        actions
    }

    /// Apply and reject for each hunk under review in the document: the hunks the range
    /// touches, or all of them when it touches none.
    fn hunk_actions(&self, address: &str, first: usize, last: usize) -> Vec<CodeActionOrCommand> {
        let mut actions = Vec::new();
        let Ok(proposals) = self.proposals.lock() else { return actions };
        for proposal in proposals.iter().filter(|proposal| proposal.uri == address && !proposal.is_done()) {
            let pending: Vec<_> = proposal.pending().collect();
            let touching: Vec<_> = pending
                .iter()
                .filter(|hunk| {
                    let start = proposal.current_start(hunk.index);
                    start <= last && first <= start + hunk.old_lines.max(1)
                })
                .collect();
            let shown = if touching.is_empty() { pending.iter().collect::<Vec<_>>() } else { touching };
            for hunk in &shown {
                let place = if shown.len() > 1 {
                    format!(" at line {}", proposal.current_start(hunk.index) + 1)
                } else {
                    String::new()
                };
                let sizes = format!("+{} -{}", hunk.new_lines, hunk.old_lines);
                let what = proposal::summary(hunk, 48);
                let decide = |accept: bool| Command::Hunk { proposal: proposal.id, hunk: hunk.index, accept };
                actions.push(code_action(
                    short_title(&format!("Larik: apply edit ({sizes}){place}: {what}")),
                    CodeActionKind::QUICKFIX,
                    decide(true),
                ));
                actions.push(code_action(format!("Larik: reject{place}"), CodeActionKind::QUICKFIX, decide(false)));
            }
        }
        actions
    }

    async fn execute(self: &Arc<Self>, command: Command) -> Result<Value, ClientError> {
        match command {
            Command::Help => {
                let hint = "Larik: write your question under a heading in a *.larik.md chat file and run the code action \"Larik: send\", or select code and use the code actions";
                self.client.show(MessageType::INFO, hint);
            }
            Command::Prompt(typed) => {
                let work = self.work(typed).await?;
                self.start(work, None);
            }
            Command::AboutCode { uri: address, range, request } => {
                let selection = self.selection(address.as_str(), range);
                let request = match request {
                    CodeRequest::Explain => "Explain what this code does and anything surprising about it.".to_owned(),
                    CodeRequest::Fix(diagnostics) => {
                        format!("Fix these problems:\n{}", describe_diagnostics(&diagnostics))
                    }
                    CodeRequest::Ask(request) => request
                        .unwrap_or_else(|| "Help with this code: review it and improve it where it needs it.".into()),
                };
                self.start(Work::Prompt(vec![Part::Text { text: format!("{selection}\n\n{request}") }]), None);
            }
            Command::Send { uri: address } => {
                let current =
                    uri::to_path(address.as_str()).and_then(|path| self.documents.get(&path)).unwrap_or_default();
                let prompt = chat::prompt_from(&current)
                    .ok_or_else(|| ClientError::invalid("write your message under the last heading first"))?;
                if self.turn_running.load(Ordering::Relaxed) {
                    return Err(ClientError::invalid(
                        "Larik is still answering; wait for it, or cancel with larik.cancel",
                    ));
                }
                let work = self.work(prompt).await?;
                let headings = chat::headings_for(&current);
                let story =
                    Story::new(ChatWriter::new(self.client.clone(), address.as_str().to_owned(), current), headings);
                self.start(work, Some(story));
            }
            Command::Cancel => {
                self.session.cancel_turn();
                self.documents.cancel_waits();
            }
            Command::Mode(mode) => {
                // Editors that cannot pass arguments (Helix's `:lsp-workspace-command`) cycle modes.
                let permissions = self.session.permissions();
                let mode = mode.unwrap_or_else(|| next_mode(permissions.mode(), &permissions.modes()));
                match permissions.set_mode(mode) {
                    Ok(()) => self.client.show(MessageType::INFO, format!("Larik: mode is now {}", mode.id())),
                    Err(refused) => self.client.show(MessageType::WARNING, format!("Larik: {refused}")),
                }
            }
            Command::Hunk { proposal, hunk, accept } => return self.decide_hunk(proposal, Some(hunk), accept).await,
            Command::Decide { accept } => {
                let pending = self.proposals.lock().ok().and_then(|proposals| {
                    proposals.iter().find(|proposal| !proposal.is_done()).map(|proposal| proposal.id)
                });
                if let Some(id) = pending {
                    return self.decide_hunk(id, None, accept).await;
                }
                self.answer_permission(if accept { "allow_once" } else { "reject_once" });
            }
            Command::Permission { option, question } => {
                let current =
                    self.permission.lock().ok().and_then(|permission| permission.as_ref().map(|pending| pending.id));
                if question.is_some() && question != current {
                    return Err(ClientError::invalid("that question was already answered"));
                }
                self.answer_permission(&option);
            }
        }
        Ok(Value::Null)
    }

    /// The selected text (or the whole file) of a document, for a prompt.
    fn selection(&self, address: &str, range: Option<Range>) -> String {
        let path = uri::to_path(address).unwrap_or_default();
        let text = self.documents.get(&path).or_else(|| std::fs::read_to_string(&path).ok()).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        let Some(range) = range.filter(|_| !lines.is_empty()) else {
            return format!("File {}:\n```\n{text}\n```", path.display());
        };
        let (first, last) = (range.start.line as usize, range.end.line as usize);
        let last = last.max(first).min(lines.len() - 1);
        let first = first.min(last);
        format!(
            "In {} (lines {}-{}):\n```\n{}\n```",
            path.display(),
            first + 1,
            last + 1,
            lines[first..=last].join("\n")
        )
    }

    async fn decide_hunk(&self, id: u64, index: Option<usize>, accept: bool) -> Result<Value, ClientError> {
        let edits: Vec<(String, PathBuf, usize, LineEdit)> = {
            let proposals = self.proposals.lock().map_err(|_| ClientError::invalid("state poisoned"))?;
            let proposal = proposals
                .iter()
                .find(|proposal| proposal.id == id && !proposal.is_done())
                .ok_or_else(|| ClientError::invalid("that edit was already decided"))?;
            let indices: Vec<usize> = match index {
                Some(index) => vec![index],
                None => proposal.pending().map(|hunk| hunk.index).collect(),
            };
            // Later hunks first, so applying one does not move the next.
            indices
                .into_iter()
                .rev()
                .map(|index| (proposal.uri.clone(), proposal.path.clone(), index, proposal.edit(index)))
                .collect()
        };
        for (address, path, index, edit) in edits {
            if accept {
                apply_edit(&self.client, &address, &edit)
                    .await
                    .map_err(|error| ClientError::invalid(error.to_string()))?;
                let current =
                    self.documents.get(&path).or_else(|| std::fs::read_to_string(&path).ok()).unwrap_or_default();
                self.documents.set(path.clone(), apply_line_edit(&current, &edit));
            }
            if let Ok(mut proposals) = self.proposals.lock()
                && let Some(proposal) = proposals.iter_mut().find(|proposal| proposal.id == id)
                && proposal.decide(index, accept)
            {
                // The outcome is recorded before the turn hears it, so its story can tell it.
                let outcome = proposal.outcome();
                let file = path.file_name().map(|name| name.to_string_lossy().into_owned()).unwrap_or_default();
                let answer = if outcome == "rejected" {
                    story::Answer::new(outcome)
                } else if self.documents.get(&path).is_some() {
                    story::Answer {
                        done: format!("{outcome}, saved"),
                        meanwhile: Some(format!("{outcome}; ⚑ waiting for you to save {file} with :w")),
                    }
                } else {
                    story::Answer::new(format!("{outcome}, saved"))
                };
                if let Ok(mut answers) = self.answers.lock() {
                    answers.insert(proposal.tool_id.clone(), answer);
                }
                proposal.finish();
            }
            // The edit call's own hint sat on the hunk's line: once a hunk is decided it would
            // look pending still. The hunks left keep theirs.
            if let Ok(mut running) = self.running.lock() {
                running.retain(|(place, _, _)| *place != address);
            }
            self.refresh_diagnostics(&address);
        }
        Ok(Value::Null)
    }

    fn answer_permission(&self, option: &str) {
        let Some(pending) = self.permission.lock().ok().and_then(|mut permission| permission.take()) else { return };
        if let Ok(mut answers) = self.answers.lock() {
            answers.insert(pending.question.tool_id.clone(), story::Answer::new(pending.question.answered(option)));
        }
        let answer = match option {
            "allow_once" => PermissionAnswer::AllowOnce,
            "allow_always" => PermissionAnswer::AllowAlways,
            _ => PermissionAnswer::Reject { feedback: None },
        };
        let _ = pending.reply.send(answer);
        if let Some(address) = pending.uri {
            self.refresh_diagnostics(&address);
        }
    }

    /// What the user typed as work: a built-in command (`/compact`, `/undo`, `/mcp`...), or a
    /// prompt, expanded when it is `/name args` (a skill, a custom command, an MCP prompt).
    async fn work(&self, typed: String) -> Result<Work, ClientError> {
        if let Some(command) = larik_core::commands::parse(&typed) {
            return Ok(Work::Command(command));
        }
        match self.session.expand_command(&typed).await {
            Ok(expanded) => Ok(Work::Prompt(vec![Part::Text { text: expanded.unwrap_or(typed) }])),
            Err(error) => Err(ClientError::invalid(error.to_string())),
        }
    }

    /// Publishes every hint Larik has for a document: edits under review, the running tool call,
    /// a pending question.
    fn refresh_diagnostics(&self, address: &str) {
        let mut diagnostics = Vec::new();
        let hint = |line: usize, message: String| {
            let line = u32::try_from(line).unwrap_or(u32::MAX);
            let range = Range::new(Position::new(line, 0), Position::new(line, 200));
            Diagnostic {
                range,
                severity: Some(DiagnosticSeverity::HINT),
                source: Some(OURS.into()),
                message,
                ..Diagnostic::default()
            }
        };
        if let Ok(proposals) = self.proposals.lock() {
            for proposal in proposals.iter().filter(|proposal| proposal.uri == address && !proposal.is_done()) {
                for hunk in proposal.pending() {
                    let line = proposal.current_start(hunk.index);
                    diagnostics.push(hint(line, proposal::hint(hunk)));
                }
            }
        }
        if let Ok(running) = self.running.lock() {
            for (place, line, title) in running.iter().filter(|(place, _, _)| place == address) {
                let _ = place;
                diagnostics.push(hint(*line as usize, format!("Larik: {title}")));
            }
        }
        if let Ok(permission) = self.permission.lock()
            && let Some(pending) = permission.as_ref().filter(|pending| pending.uri.as_deref() == Some(address))
        {
            diagnostics.push(hint(
                0,
                format!("Larik asks: {}. Answer with a code action (space a).", pending.question.one_line()),
            ));
        }
        match address.parse::<Uri>() {
            Ok(uri) => {
                self.client.notify::<PublishDiagnostics>(PublishDiagnosticsParams { uri, diagnostics, version: None })
            }
            Err(_) => tracing::warn!(%address, "not a URI; its hints are not shown"),
        }
    }
}

/// Longest code-action title: Helix's menu does not wrap, and a longer one overflows it.
const MAX_TITLE_CHARS: usize = 52;

/// `title` cut to fit the code-action menu, ending in "…" when cut; the diagnostic and the chat
/// file say the whole.
fn short_title(title: &str) -> String {
    if title.chars().count() <= MAX_TITLE_CHARS {
        return title.to_owned();
    }
    let cut: String = title.chars().take(MAX_TITLE_CHARS - 1).collect();
    format!("{}…", cut.trim_end())
}

/// A code action that runs one of Larik's commands.
fn code_action(title: String, kind: CodeActionKind, command: Command) -> CodeActionOrCommand {
    let command = Some(command.to_lsp(&title));
    CodeActionOrCommand::CodeAction(CodeAction { title, kind: Some(kind), command, ..CodeAction::default() })
}

/// The mode after `mode` among those `offered`, round again at the end.
fn next_mode(mode: Mode, offered: &[Mode]) -> Mode {
    let index = offered.iter().position(|candidate| *candidate == mode).unwrap_or(0);
    offered.get((index + 1) % offered.len().max(1)).copied().unwrap_or(Mode::Default)
}

/// Replaces whole lines of a document in the editor.
pub(super) async fn apply_edit(client: &Client, address: &str, edit: &LineEdit) -> Result<(), EditorError> {
    let line = |line: usize| Position::new(u32::try_from(line).unwrap_or(u32::MAX), 0);
    client.replace(address, Range::new(line(edit.start), line(edit.end)), edit.new_text.clone()).await
}

/// The hints Larik publishes itself, which are not problems to fix.
const OURS: &str = "larik";

fn is_ours(diagnostic: &Diagnostic) -> bool {
    diagnostic.source.as_deref() == Some(OURS)
}

fn describe_diagnostics(diagnostics: &[Diagnostic]) -> String {
    diagnostics
        .iter()
        .map(|diagnostic| format!("- line {}: {}", diagnostic.range.start.line + 1, diagnostic.message))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Skills and commands offered as code actions in a chat file, at most.
const MAX_COMMAND_ACTIONS: usize = 12;
