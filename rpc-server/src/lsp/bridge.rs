//! The language-server face of one agent session: open documents, code actions and commands
//! that start turns, and the turn's events turned into progress, diagnostics, messages, edits
//! under review and permission questions.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use larik_core::event::{AgentEvent, Display, PermissionAnswer, PermissionRequest};
use larik_core::Part;
use larik_core::Mode;
use larik_core::session::{Session, SessionConfig};
use serde_json::{Value, json};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::side_by_side::side_by_side;
use super::chat::{self, ChatWriter};
use super::documents::{Documents, LspFiles};
use super::client::{Client, ClientError, METHOD_NOT_FOUND};
use super::proposal::{self, LineEdit, Proposal, apply_line_edit};
use super::question::{self, Question};
use super::story::{self, Story};
use larik_core::file_uri as uri;

pub const COMMANDS: &[&str] = &[
    "larik.ask",
    "larik.explain",
    "larik.fix",
    "larik.send",
    "larik.cancel",
    "larik.mode",
    "larik.accept",
    "larik.reject",
    "larik.hunk",
    "larik.permission",
];

const HINT: u32 = 4;
const INFO_MESSAGE: u32 = 3;

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
    pub fn new(env: HashMap<String, String>, init: &Value, client: Client) -> Self {
        let root = init
            .pointer("/workspaceFolders/0/uri")
            .or_else(|| init.get("rootUri"))
            .and_then(Value::as_str)
            .and_then(uri::to_path)
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
        let config = SessionConfig { editor: Some(Arc::new(LspFiles::new(documents.clone(), client.clone()))), ..config };
        let session = Arc::new(Session::new(config, &cancel));
        let show_document = init.pointer("/capabilities/window/showDocument/support").and_then(Value::as_bool).unwrap_or(false);
        let popup_prompts = init.pointer("/capabilities/window/showMessage").is_some();
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

    pub async fn notification(self: &Arc<Self>, method: &str, params: Value) {
        match method {
            "textDocument/didOpen" => self.opened(&params["textDocument"]["uri"], params["textDocument"]["text"].as_str()),
            "textDocument/didChange" => {
                // Full sync: the last change holds the whole text.
                let text = params["contentChanges"].as_array().and_then(|changes| changes.last()).and_then(|change| change["text"].as_str());
                self.opened(&params["textDocument"]["uri"], text);
            }
            "textDocument/didClose" => {
                if let Some(path) = params["textDocument"]["uri"].as_str().and_then(uri::to_path) {
                    self.documents.remove(&path);
                }
            }
            "textDocument/didSave" => {
                if let Some(path) = params["textDocument"]["uri"].as_str().and_then(uri::to_path) {
                    self.documents.saved(&path);
                }
            }
            _ => {}
        }
    }

    fn opened(&self, document: &Value, text: Option<&str>) {
        let (Some(address), Some(text)) = (document.as_str(), text) else { return };
        if let Some(path) = uri::to_path(address) {
            self.documents.set(path, text.to_owned());
        }
        if let Ok(mut last) = self.last_uri.lock() {
            *last = Some(address.to_owned());
        }
    }

    pub async fn request(self: &Arc<Self>, method: &str, params: Value) -> Result<Value, ClientError> {
        match method {
            "textDocument/codeAction" => Ok(Value::Array(self.code_actions(&params))),
            "workspace/executeCommand" => {
                let arguments = params["arguments"].as_array().cloned().unwrap_or_default();
                self.execute(params["command"].as_str().unwrap_or_default(), &arguments).await
            }
            _ => Err(ClientError { code: METHOD_NOT_FOUND, message: format!("Method not found: {method}") }),
        }
    }

    fn code_actions(&self, params: &Value) -> Vec<Value> {
        let address = params["textDocument"]["uri"].as_str().unwrap_or_default().to_owned();
        if let Ok(mut last) = self.last_uri.lock() {
            *last = Some(address.clone());
        }
        let range = &params["range"];
        let (first, last) = (range["start"]["line"].as_u64().unwrap_or(0) as usize, range["end"]["line"].as_u64().unwrap_or(0) as usize);
        let mut actions = Vec::new();
        let action = |title: String, kind: &str, command: &str, arguments: Value| json!({"title": title, "kind": kind, "command": {"title": title, "command": command, "arguments": arguments}});
        // Edits under review in this document come first.
        if let Ok(proposals) = self.proposals.lock() {
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
                    let place = if shown.len() > 1 { format!(" at line {}", proposal.current_start(hunk.index) + 1) } else { String::new() };
                    let sizes = format!("+{} -{}", hunk.new_lines, hunk.old_lines);
                    let what = proposal::summary(hunk, 48);
                    actions.push(action(format!("Larik: apply edit ({sizes}){place}: {what}"), "quickfix", "larik.hunk", json!([proposal.id, hunk.index, true])));
                    actions.push(action(format!("Larik: reject{place}"), "quickfix", "larik.hunk", json!([proposal.id, hunk.index, false])));
                }
            }
        }
        if let Ok(permission) = self.permission.lock()
            && let Some(pending) = permission.as_ref()
        {
            for (option, name) in &pending.question.options {
                actions.push(action(format!("Larik: {name}"), "quickfix", "larik.permission", json!([option, pending.id])));
            }
        }
        if chat::is_chat(&address) {
            if !self.turn_running.load(Ordering::Relaxed) {
                actions.push(action("Larik: send".into(), "source", "larik.send", json!([address])));
                // The skills and custom commands, run as typed (`/name` with no arguments; with
                // arguments, write `/name args` as the message and send it).
                for command in self.session.skill_commands().into_iter().take(MAX_COMMAND_ACTIONS) {
                    let title = format!("Larik: /{} — {}", command.name, command.summary(60));
                    actions.push(action(title, "source", "larik.ask", json!([format!("/{}", command.name)])));
                }
            }
            return actions;
        }
        let selected = first != last || range["start"]["character"] != range["end"]["character"];
        if selected {
            actions.push(action("Larik: ask about selection".into(), "refactor", "larik.ask", json!([address, range])));
        }
        actions.push(action("Larik: explain".into(), "refactor", "larik.explain", json!([address, range])));
        let diagnostics = params["context"]["diagnostics"].as_array().filter(|list| list.iter().any(|diagnostic| diagnostic["source"] != "larik"));
        if diagnostics.is_some() {
            actions.push(action("Larik: fix diagnostics here".into(), "quickfix", "larik.fix", json!([address, range, params["context"]["diagnostics"]])));
        }
        actions.push(action("Larik: refactor this".into(), "refactor", "larik.ask", json!([address, range, "Refactor this code to be clearer, keeping its behaviour."])));
        actions
    }

    async fn execute(self: &Arc<Self>, command: &str, arguments: &[Value]) -> Result<Value, ClientError> {
        let text = |index: usize| arguments.get(index).and_then(Value::as_str).map(str::to_owned);
        match command {
            "larik.ask" | "larik.explain" | "larik.fix" => {
                let Some(address) = text(0) else {
                    let hint = "Larik: write your question under a heading in a *.larik.md chat file and run the code action \"Larik: send\", or select code and use the code actions";
                    self.client.notify("window/showMessage", json!({"type": INFO_MESSAGE, "message": hint}));
                    return Ok(Value::Null);
                };
                // `larik.ask "prompt"` from the command line; `larik.ask uri range` from a code action.
                if !address.starts_with("file://") {
                    let typed = arguments.iter().filter_map(Value::as_str).collect::<Vec<_>>().join(" ");
                    let prompt = self.expanded(typed).await?;
                    self.start_turn(vec![Part::Text { text: prompt }], None);
                    return Ok(Value::Null);
                }
                let selection = self.selection(&address, arguments.get(1).unwrap_or(&Value::Null));
                let request = match command {
                    "larik.explain" => "Explain what this code does and anything surprising about it.".to_owned(),
                    "larik.fix" => format!("Fix these problems:\n{}", describe_diagnostics(arguments.get(2).unwrap_or(&Value::Null))),
                    _ => text(2).unwrap_or_else(|| "Help with this code: review it and improve it where it needs it.".into()),
                };
                self.start_turn(vec![Part::Text { text: format!("{selection}\n\n{request}") }], None);
                Ok(Value::Null)
            }
            "larik.send" => {
                let address = text(0).ok_or_else(|| invalid("larik.send takes the chat file's URI"))?;
                let current = uri::to_path(&address).and_then(|path| self.documents.get(&path)).unwrap_or_default();
                let prompt = chat::prompt_from(&current).ok_or_else(|| invalid("write your message under the last heading first"))?;
                if self.turn_running.load(Ordering::Relaxed) {
                    return Err(invalid("Larik is still answering; wait for it, or cancel with larik.cancel"));
                }
                let prompt = self.expanded(prompt).await?;
                let headings = chat::headings_for(&current);
                let story = Story::new(ChatWriter::new(self.client.clone(), address, current), headings);
                self.start_turn(vec![Part::Text { text: prompt }], Some(story));
                Ok(Value::Null)
            }
            "larik.cancel" => {
                self.session.cancel_turn();
                self.documents.cancel_waits();
                Ok(Value::Null)
            }
            "larik.mode" => {
                // Editors that cannot pass arguments (Helix's `:lsp-workspace-command`) cycle modes.
                let mode = match text(0) {
                    Some(id) => Mode::from_id(&id).ok_or_else(|| invalid("larik.mode takes default, accept-edits, plan or yolo"))?,
                    None => next_mode(self.session.permissions().mode()),
                };
                self.session.permissions().set_mode(mode);
                self.client.notify("window/showMessage", json!({"type": INFO_MESSAGE, "message": format!("Larik: mode is now {}", mode.id())}));
                Ok(Value::Null)
            }
            "larik.hunk" => {
                let id = arguments.first().and_then(Value::as_u64).ok_or_else(|| invalid("larik.hunk takes a proposal, a hunk and a decision"))?;
                let index = arguments.get(1).and_then(Value::as_u64).unwrap_or(0) as usize;
                let accept = arguments.get(2).and_then(Value::as_bool).unwrap_or(false);
                self.decide_hunk(id, Some(index), accept).await
            }
            "larik.accept" | "larik.reject" => {
                let accept = command == "larik.accept";
                let pending = self.proposals.lock().ok().and_then(|proposals| proposals.iter().find(|proposal| !proposal.is_done()).map(|proposal| proposal.id));
                if let Some(id) = pending {
                    return self.decide_hunk(id, None, accept).await;
                }
                let option = if accept { "allow_once" } else { "reject_once" };
                self.answer_permission(option);
                Ok(Value::Null)
            }
            "larik.permission" => {
                let current = self.permission.lock().ok().and_then(|permission| permission.as_ref().map(|pending| pending.id));
                let asked = arguments.get(1).and_then(Value::as_u64);
                if asked.is_some() && asked != current {
                    return Err(invalid("that question was already answered"));
                }
                self.answer_permission(&text(0).unwrap_or_default());
                Ok(Value::Null)
            }
            other => Err(invalid(&format!("unknown command {other}"))),
        }
    }

    /// The selected text (or the whole file) of a document, for a prompt.
    fn selection(&self, address: &str, range: &Value) -> String {
        let path = uri::to_path(address).unwrap_or_default();
        let text = self.documents.get(&path).or_else(|| std::fs::read_to_string(&path).ok()).unwrap_or_default();
        let (first, last) = (range["start"]["line"].as_u64().unwrap_or(0) as usize, range["end"]["line"].as_u64().unwrap_or(0) as usize);
        let lines: Vec<&str> = text.lines().collect();
        if range.is_null() || lines.is_empty() {
            return format!("File {}:\n```\n{text}\n```", path.display());
        }
        let last = last.max(first).min(lines.len() - 1);
        let first = first.min(last);
        format!("In {} (lines {}-{}):\n```\n{}\n```", path.display(), first + 1, last + 1, lines[first..=last].join("\n"))
    }

    async fn decide_hunk(&self, id: u64, index: Option<usize>, accept: bool) -> Result<Value, ClientError> {
        let edits: Vec<(String, PathBuf, usize, LineEdit)> = {
            let proposals = self.proposals.lock().map_err(|_| invalid("state poisoned"))?;
            let proposal = proposals.iter().find(|proposal| proposal.id == id && !proposal.is_done()).ok_or_else(|| invalid("that edit was already decided"))?;
            let indices: Vec<usize> = match index {
                Some(index) => vec![index],
                None => proposal.pending().map(|hunk| hunk.index).collect(),
            };
            // Later hunks first, so applying one does not move the next.
            indices.into_iter().rev().map(|index| (proposal.uri.clone(), proposal.path.clone(), index, proposal.edit(index))).collect()
        };
        for (address, path, index, edit) in edits {
            if accept {
                apply_edit(&self.client, &address, &edit).await.map_err(|message| invalid(&message))?;
                let current = self.documents.get(&path).or_else(|| std::fs::read_to_string(&path).ok()).unwrap_or_default();
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
                    story::Answer { done: format!("{outcome}, saved"), meanwhile: Some(format!("{outcome}; ⚑ waiting for you to save {file} with :w")) }
                } else {
                    story::Answer::new(format!("{outcome}, saved"))
                };
                if let Ok(mut answers) = self.answers.lock() {
                    answers.insert(proposal.tool_id.clone(), answer);
                }
                proposal.finish();
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

    /// Runs a turn in the background; its events reach the editor as they come.
    /// What the user typed, or the prompt it stands for when it is `/name args` (a skill, a
    /// custom command, an MCP prompt).
    async fn expanded(&self, typed: String) -> Result<String, ClientError> {
        match self.session.expand_command(&typed, &self.cancel).await {
            Ok(expanded) => Ok(expanded.unwrap_or(typed)),
            Err(error) => Err(invalid(&error)),
        }
    }

    fn start_turn(self: &Arc<Self>, prompt: Vec<Part>, chat: Option<Story>) {
        let bridge = Arc::clone(self);
        self.turn_running.store(true, Ordering::Relaxed);
        tokio::spawn(async move {
            let (events, received) = mpsc::channel(256);
            let turn_cancel = bridge.cancel.child_token();
            let turn = bridge.session.prompt(prompt, events, turn_cancel);
            let show = bridge.show_turn(received, chat);
            let outcome = side_by_side(turn, show).await;
            bridge.turn_running.store(false, Ordering::Relaxed);
            if let Err(error) = outcome {
                bridge.client.notify("window/showMessage", json!({"type": 1, "message": format!("Larik: {error}")}));
            }
        });
    }

    async fn show_turn(&self, mut events: mpsc::Receiver<AgentEvent>, mut chat: Option<Story>) {
        let token = format!("larik/{}", self.next_id.fetch_add(1, Ordering::Relaxed));
        let progress = self.client.request("window/workDoneProgress/create", json!({"token": token})).await.is_ok();
        let report = |kind: &str, title: Option<&str>, message: &str| {
            if progress {
                let mut value = json!({"kind": kind, "message": message});
                if let Some(title) = title {
                    value["title"] = json!(title);
                }
                self.client.notify("$/progress", json!({"token": token, "value": value}));
            }
        };
        report("begin", Some("Larik"), "thinking…");
        if let Some(chat) = chat.as_mut() {
            chat.begin().await;
        }
        let mut answer = String::new();
        // A tool call ran since the last text: the next text is a new message.
        let mut new_message = false;
        while let Some(event) = events.recv().await {
            // A subagent's calls and prompts show as the parent's, labelled with the task.
            let Some(event) = larik_core::subagents::flattened(event) else { continue };
            match event {
                AgentEvent::TextDelta(text) => {
                    if std::mem::take(&mut new_message) && !answer.is_empty() {
                        answer.push_str("\n\n");
                    }
                    answer.push_str(&text);
                    if let Some(chat) = chat.as_mut() {
                        chat.text(&text).await;
                    }
                    let tail: String = answer.chars().rev().take(60).collect::<Vec<_>>().into_iter().rev().collect();
                    report("report", None, &tail.split_whitespace().collect::<Vec<_>>().join(" "));
                }
                AgentEvent::ThinkingDelta(_) => report("report", None, "thinking…"),
                AgentEvent::ToolCallStarted(view) => {
                    new_message = true;
                    report("report", None, &view.title);
                    if let Ok(mut running) = self.running.lock() {
                        *running = view.locations.iter().map(|location| (uri::from_path(&location.path), location.line.unwrap_or(1).saturating_sub(1), view.title.clone())).collect();
                    }
                    for location in &view.locations {
                        self.refresh_diagnostics(&uri::from_path(&location.path));
                    }
                    if let Some(chat) = chat.as_mut() {
                        chat.tool_started(view).await;
                    }
                }
                AgentEvent::ToolCallUpdated { id, status, output, display, .. } => {
                    if matches!(status, larik_core::event::ToolStatus::Completed | larik_core::event::ToolStatus::Failed) {
                        let finished = self.running.lock().map(|mut running| std::mem::take(&mut *running)).unwrap_or_default();
                        for (address, _, _) in finished {
                            self.refresh_diagnostics(&address);
                        }
                    }
                    let answered = self.answers.lock().ok().and_then(|mut answers| answers.remove(&id));
                    if let Some(chat) = chat.as_mut() {
                        chat.tool_updated(&id, answered, story::finished(status, output, display)).await;
                    }
                }
                // A running command's latest line, as the progress message.
                AgentEvent::ToolOutput { text, .. } => {
                    if let Some(line) = text.lines().rev().map(str::trim).find(|line| !line.is_empty()) {
                        report("report", None, line);
                    }
                }
                AgentEvent::PermissionRequested(request) => {
                    report("report", None, "waiting for you");
                    if let Some(chat) = chat.as_mut() {
                        chat.question(&request.tool_call.id, self.waiting_block(&request)).await;
                    }
                    self.ask(*request).await;
                }
                AgentEvent::Notice(message) => self.client.notify("window/showMessage", json!({"type": 2, "message": format!("Larik: {message}")})),
                AgentEvent::ToolTerminal { .. } | AgentEvent::ToolProgressNote { .. } | AgentEvent::Usage { .. } | AgentEvent::TitleChanged(_) => {}
                AgentEvent::ChildStarted { .. } | AgentEvent::Child { .. } | AgentEvent::ChildEnded { .. } => {}
            }
        }
        if let Some(chat) = chat.as_mut() {
            chat.end().await;
        } else if !answer.trim().is_empty() {
            self.client.notify("window/showMessage", json!({"type": INFO_MESSAGE, "message": format!("Larik: {}", answer.trim())}));
        }
        report("end", None, "done");
    }

    /// The chat's account of a question while it waits: what will happen and where to answer.
    fn waiting_block(&self, request: &PermissionRequest) -> String {
        if let Some(Display::Diff { path, old_text, new_text }) = &request.preview {
            let file = path.file_name().map(|name| name.to_string_lossy().into_owned()).unwrap_or_default();
            let hunks = larik_core::hunks(old_text.as_deref().unwrap_or(""), new_text).len();
            return question::review_block(&request.tool_call.title, &file, hunks);
        }
        let answer_where = if self.popup_prompts && !self.no_message_requests.load(Ordering::Relaxed) {
            "Answer in Helix's popup"
        } else {
            "Answer with `space a` (code actions) here or in any open file"
        };
        Question::from_request(request).chat_block(answer_where)
    }

    /// Edits become proposals reviewed hunk by hunk; anything else is a question.
    async fn ask(&self, request: PermissionRequest) {
        if let Some(Display::Diff { path, old_text, new_text }) = &request.preview {
            let address = uri::from_path(path);
            let id = self.next_id.fetch_add(1, Ordering::Relaxed);
            let proposal = Proposal::new(id, request.tool_call.id.clone(), path.clone(), address.clone(), old_text.as_deref().unwrap_or(""), new_text, request.reply);
            if let Ok(mut proposals) = self.proposals.lock() {
                proposals.retain(|proposal| !proposal.is_done());
                proposals.push(proposal);
            }
            if self.show_document {
                let _ = self.client.request("window/showDocument", json!({"uri": address, "takeFocus": true})).await;
            }
            self.refresh_diagnostics(&address);
            return;
        }
        let question = Question::from_request(&request);
        if !self.no_message_requests.load(Ordering::Relaxed) {
            let actions: Vec<Value> = question.options.iter().map(|(_, name)| json!({"title": name})).collect();
            let message = format!("Larik: {}", question.one_line());
            let asked = self.client.request("window/showMessageRequest", json!({"type": INFO_MESSAGE, "message": message, "actions": actions})).await;
            match asked {
                Ok(choice) => {
                    let chosen = choice["title"].as_str().and_then(|title| question.options.iter().find(|(_, name)| name == title)).map(|(id, _)| *id);
                    let answer = match chosen {
                        Some("allow_once") => PermissionAnswer::AllowOnce,
                        Some("allow_always") => PermissionAnswer::AllowAlways,
                        Some(_) => PermissionAnswer::Reject { feedback: None },
                        None => PermissionAnswer::Cancelled,
                    };
                    if let Ok(mut answers) = self.answers.lock() {
                        answers.insert(question.tool_id.clone(), story::Answer::new(question.answered(chosen.unwrap_or("cancelled"))));
                    }
                    let _ = request.reply.send(answer);
                    return;
                }
                // Helix answers "method not found": ask through code actions from now on.
                Err(error) if error.code == METHOD_NOT_FOUND => self.no_message_requests.store(true, Ordering::Relaxed),
                Err(error) => tracing::warn!(message = %error.message, "showMessageRequest failed; asking through code actions"),
            }
        }
        let address = self.last_uri.lock().ok().and_then(|last| last.clone());
        if let Ok(mut permission) = self.permission.lock() {
            let id = self.next_id.fetch_add(1, Ordering::Relaxed);
            *permission = Some(PendingPermission { id, uri: address.clone(), question, reply: request.reply });
        }
        match address {
            Some(address) => self.refresh_diagnostics(&address),
            None => self.client.notify("window/showMessage", json!({"type": 2, "message": "Larik is waiting for approval: run `:lsp-workspace-command larik.accept` or `larik.reject`"})),
        }
    }

    /// Publishes every hint Larik has for a document: edits under review, the running tool call,
    /// a pending question.
    fn refresh_diagnostics(&self, address: &str) {
        let mut diagnostics = Vec::new();
        let hint = |line: usize, message: String| json!({"range": {"start": {"line": line, "character": 0}, "end": {"line": line, "character": 200}}, "severity": HINT, "source": "larik", "message": message});
        if let Ok(proposals) = self.proposals.lock() {
            for proposal in proposals.iter().filter(|proposal| proposal.uri == address && !proposal.is_done()) {
                for hunk in proposal.pending() {
                    let line = proposal.current_start(hunk.index);
                    let what = proposal::summary(hunk, 60);
                    diagnostics.push(hint(line, format!("Larik proposes an edit (+{} -{}): {what} · apply or reject it with a code action (space a)", hunk.new_lines, hunk.old_lines)));
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
            diagnostics.push(hint(0, format!("Larik asks: {}. Answer with a code action (space a).", pending.question.one_line())));
        }
        self.client.notify("textDocument/publishDiagnostics", json!({"uri": address, "diagnostics": diagnostics}));
    }
}

fn next_mode(mode: Mode) -> Mode {
    let index = Mode::ALL.iter().position(|candidate| *candidate == mode).unwrap_or(0);
    Mode::ALL[(index + 1) % Mode::ALL.len()]
}

pub(super) async fn apply_edit(client: &Client, address: &str, edit: &LineEdit) -> Result<(), String> {
    let range = json!({"start": {"line": edit.start, "character": 0}, "end": {"line": edit.end, "character": 0}});
    let change = json!({"changes": {address: [{"range": range, "newText": edit.new_text}]}});
    let response = client.request("workspace/applyEdit", json!({"label": "Larik", "edit": change})).await.map_err(|error| error.message)?;
    if response["applied"].as_bool() == Some(false) {
        return Err(response["failureReason"].as_str().unwrap_or("the editor did not apply the edit").to_owned());
    }
    Ok(())
}

fn describe_diagnostics(diagnostics: &Value) -> String {
    diagnostics
        .as_array()
        .into_iter()
        .flatten()
        .filter(|diagnostic| diagnostic["source"] != "larik")
        .map(|diagnostic| format!("- line {}: {}", diagnostic["range"]["start"]["line"].as_u64().unwrap_or(0) + 1, diagnostic["message"].as_str().unwrap_or_default()))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Skills and commands offered as code actions in a chat file, at most.
const MAX_COMMAND_ACTIONS: usize = 12;

fn invalid(message: &str) -> ClientError {
    ClientError { code: -32602, message: message.to_owned() }
}
