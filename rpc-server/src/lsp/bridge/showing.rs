//! A turn running in Helix and what the user sees of it: the status line's progress, the chat
//! file's story, the running call's hints, warnings, and the answer as a message when there is no
//! chat file.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use larik_core::commands::Reply;
use larik_core::event::{AgentEvent, CompactionState, Display, PermissionRequest, ToolCallView, ToolStatus};
use lsp_types::notification::Progress;
use lsp_types::request::WorkDoneProgressCreate;
use lsp_types::{
    MessageType, NumberOrString, ProgressParams, ProgressParamsValue, WorkDoneProgress, WorkDoneProgressBegin,
    WorkDoneProgressCreateParams, WorkDoneProgressEnd, WorkDoneProgressReport,
};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::super::client::Client;
use super::super::question::{self, Question};
use super::super::story::{self, Story};
use super::{Bridge, Work, uri};
use crate::side_by_side::side_by_side;

/// The work-done progress a turn reports in the status line, when the client takes one.
struct StatusLine<'a> {
    client: &'a Client,
    token: NumberOrString,
    accepted: bool,
}

impl<'a> StatusLine<'a> {
    async fn begin(client: &'a Client, id: u64) -> Self {
        let token = NumberOrString::String(format!("larik/{id}"));
        let accepted = client
            .request::<WorkDoneProgressCreate>(WorkDoneProgressCreateParams { token: token.clone() })
            .await
            .is_ok();
        let line = Self { client, token, accepted };
        line.send(WorkDoneProgress::Begin(WorkDoneProgressBegin {
            title: "Larik".into(),
            message: Some("thinking…".into()),
            ..WorkDoneProgressBegin::default()
        }));
        line
    }

    fn send(&self, value: WorkDoneProgress) {
        if self.accepted {
            self.client.notify::<Progress>(ProgressParams {
                token: self.token.clone(),
                value: ProgressParamsValue::WorkDone(value),
            });
        }
    }

    fn report(&self, message: &str) {
        self.send(WorkDoneProgress::Report(WorkDoneProgressReport {
            message: Some(message.to_owned()),
            ..WorkDoneProgressReport::default()
        }));
    }

    fn end(&self) {
        self.send(WorkDoneProgress::End(WorkDoneProgressEnd { message: Some("done".into()) }));
    }
}

/// The answer's text so far, with a blank line between the messages around a tool call.
#[derive(Default)]
struct Answer {
    text: String,
    /// A tool call ran since the last text: the next text is a new message.
    new_message: bool,
}

impl Bridge {
    /// Runs a prompt's turn, or a built-in command, in the background; its events reach the
    /// editor as they come, and a command's reply is its answer.
    pub(super) fn start(self: &Arc<Self>, work: Work, chat: Option<Story>) {
        let bridge = Arc::clone(self);
        self.turn_running.store(true, Ordering::Relaxed);
        tokio::spawn(async move {
            let (events, received) = mpsc::channel(256);
            let turn_cancel = bridge.cancel.child_token();
            // The editor hears the turn is done only once it is: a chat file then offers its
            // actions again at once.
            let finished = CancellationToken::new();
            let turn = async {
                let outcome = match work {
                    Work::Prompt(prompt) => bridge.session.prompt(prompt, events, turn_cancel).await.map(drop),
                    Work::Command(command) => {
                        let reply = bridge.session.run_command(command, events.clone(), turn_cancel).await;
                        if let Ok(reply) = &reply
                            && !matches!(reply, Reply::Compacted(_))
                        {
                            let _ = events.send(AgentEvent::TextDelta(reply.to_string())).await;
                        }
                        reply.map(drop)
                    }
                };
                bridge.turn_running.store(false, Ordering::Relaxed);
                finished.cancel();
                outcome
            };
            let show = bridge.show_turn(received, chat, &finished);
            let outcome = side_by_side(turn, show).await;
            if let Err(error) = outcome {
                bridge.client.show(MessageType::ERROR, format!("Larik: {error}"));
            }
        });
    }

    async fn show_turn(
        &self,
        mut events: mpsc::Receiver<AgentEvent>,
        mut chat: Option<Story>,
        finished: &CancellationToken,
    ) {
        let status = StatusLine::begin(&self.client, self.next_id.fetch_add(1, Ordering::Relaxed)).await;
        if let Some(chat) = chat.as_mut() {
            chat.begin().await;
        }
        let mut answer = Answer::default();
        while let Some(event) = events.recv().await {
            // A subagent's calls and prompts show as the parent's, labelled with the task.
            let Some(event) = larik_core::subagents::flattened(event) else { continue };
            self.show_event(event, &status, chat.as_mut(), &mut answer).await;
        }
        if let Some(chat) = chat.as_mut() {
            chat.end().await;
        } else if !answer.text.trim().is_empty() {
            self.client.show(MessageType::INFO, format!("Larik: {}", answer.text.trim()));
        }
        finished.cancelled().await;
        status.end();
    }

    async fn show_event(
        &self,
        event: AgentEvent,
        status: &StatusLine<'_>,
        chat: Option<&mut Story>,
        answer: &mut Answer,
    ) {
        match event {
            AgentEvent::TextDelta(text) => {
                if std::mem::take(&mut answer.new_message) && !answer.text.is_empty() {
                    answer.text.push_str("\n\n");
                }
                answer.text.push_str(&text);
                if let Some(chat) = chat {
                    chat.text(&text).await;
                }
                let tail: String = answer.text.chars().rev().take(60).collect::<Vec<_>>().into_iter().rev().collect();
                status.report(&tail.split_whitespace().collect::<Vec<_>>().join(" "));
            }
            AgentEvent::ThinkingDelta(_) => status.report("thinking…"),
            AgentEvent::ToolCallStarted(view) => {
                answer.new_message = true;
                status.report(&view.title);
                self.show_running(&view);
                if let Some(chat) = chat {
                    chat.tool_started(view).await;
                }
            }
            AgentEvent::ToolCallUpdated { id, status, output, display, .. } => {
                if matches!(status, ToolStatus::Completed | ToolStatus::Failed) {
                    let finished =
                        self.running.lock().map(|mut running| std::mem::take(&mut *running)).unwrap_or_default();
                    for (address, _, _) in finished {
                        self.refresh_diagnostics(&address);
                    }
                }
                let answered = self.answers.lock().ok().and_then(|mut answers| answers.remove(&id));
                if let Some(chat) = chat {
                    chat.tool_updated(&id, answered, story::finished(status, output, display)).await;
                }
            }
            // A running command's latest line, as the progress message.
            AgentEvent::ToolOutput { text, .. } => {
                if let Some(line) = text.lines().rev().map(str::trim).find(|line| !line.is_empty()) {
                    status.report(line);
                }
            }
            AgentEvent::PermissionRequested(request) => {
                status.report(&self.waiting_status(&request));
                if let Some(chat) = chat {
                    chat.question(&request.tool_call.id, self.waiting_block(&request)).await;
                }
                self.ask(*request).await;
            }
            AgentEvent::Notice(message) => self.client.show(MessageType::WARNING, format!("Larik: {message}")),
            AgentEvent::Compaction { state: CompactionState::Completed { .. }, .. } => self.client.show(
                MessageType::INFO,
                "Larik: the conversation was compacted; it goes on from a summary.".to_owned(),
            ),
            AgentEvent::ToolTerminal { .. }
            | AgentEvent::ToolProgressNote { .. }
            | AgentEvent::Usage { .. }
            | AgentEvent::TitleChanged(_)
            | AgentEvent::CommandsChanged { .. }
            | AgentEvent::Compaction { .. } => {}
            AgentEvent::ChildStarted { .. } | AgentEvent::Child { .. } | AgentEvent::ChildEnded { .. } => {}
        }
    }

    /// The running call's locations become hints in the files it works on.
    fn show_running(&self, view: &ToolCallView) {
        if let Ok(mut running) = self.running.lock() {
            *running = view
                .locations
                .iter()
                .map(|location| {
                    (uri::from_path(&location.path), location.line.unwrap_or(1).saturating_sub(1), view.title.clone())
                })
                .collect();
        }
        for location in &view.locations {
            self.refresh_diagnostics(&uri::from_path(&location.path));
        }
    }

    /// The chat's account of a question while it waits: what will happen and where to answer.
    fn waiting_block(&self, request: &PermissionRequest) -> String {
        if let Some(Display::Diff { path, old_text, new_text }) = &request.preview {
            let file = path.file_name().map(|name| name.to_string_lossy().into_owned()).unwrap_or_default();
            let hunks = larik_core::hunks(old_text.as_deref().unwrap_or(""), new_text).len();
            return question::review_block(&request.tool_call.title, &file, hunks);
        }
        let answer_where = if self.answers_in_popup() {
            "Answer in Helix's popup"
        } else {
            "Answer with space a (code actions) here or in any open file"
        };
        Question::from_request(request).chat_block(answer_where)
    }

    /// The status line's words while a question waits: for what, and where to answer it.
    fn waiting_status(&self, request: &PermissionRequest) -> String {
        if let Some(Display::Diff { path, .. }) = &request.preview {
            let file = path.file_name().map(|name| name.to_string_lossy().into_owned()).unwrap_or_default();
            return format!("waiting for you: {} · space a in {file} to apply or reject", request.tool_call.title);
        }
        let answer_where = if self.answers_in_popup() { "answer in the popup" } else { "space a to answer" };
        Question::from_request(request).status(answer_where)
    }

    fn answers_in_popup(&self) -> bool {
        self.popup_prompts && !self.no_message_requests.load(Ordering::Relaxed)
    }
}
