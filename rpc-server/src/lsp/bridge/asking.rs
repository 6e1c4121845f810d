//! Permission questions in Helix: an edit becomes a proposal reviewed hunk by hunk in its file;
//! any other question is a popup (`window/showMessageRequest`) where the client shows one, else a
//! hint answered through code actions.

use std::collections::HashMap;
use std::sync::atomic::Ordering;

use larik_core::event::{Display, PermissionAnswer, PermissionRequest};
use lsp_types::request::{ShowDocument, ShowMessageRequest};
use lsp_types::{MessageActionItem, MessageType, ShowDocumentParams, ShowMessageRequestParams, Uri};

use super::super::client::METHOD_NOT_FOUND;
use super::super::proposal::Proposal;
use super::super::question::Question;
use super::super::story;
use super::{Bridge, PendingPermission, uri};

impl Bridge {
    /// Edits become proposals reviewed hunk by hunk; anything else is a question.
    pub(super) async fn ask(&self, request: PermissionRequest) {
        if let Some(Display::Diff { path, old_text, new_text }) = &request.preview {
            let (path, old_text, new_text) = (path.clone(), old_text.clone(), new_text.clone());
            self.propose(request, &path, old_text.as_deref().unwrap_or(""), &new_text).await;
            return;
        }
        let question = Question::from_request(&request);
        let request = if self.no_message_requests.load(Ordering::Relaxed) {
            request
        } else {
            match self.ask_in_popup(request, &question).await {
                Some(unanswered) => unanswered,
                None => return,
            }
        };
        let address = self.last_uri.lock().ok().and_then(|last| last.clone());
        if let Ok(mut permission) = self.permission.lock() {
            let id = self.next_id.fetch_add(1, Ordering::Relaxed);
            *permission = Some(PendingPermission { id, uri: address.clone(), question, reply: request.reply });
        }
        match address {
            Some(address) => self.refresh_diagnostics(&address),
            None => self.client.show(
                MessageType::WARNING,
                "Larik is waiting for approval: run `:lsp-workspace-command larik.accept` or `larik.reject`",
            ),
        }
    }

    /// Shows the edit in its file as a proposal, its hunks accepted or rejected one by one.
    async fn propose(&self, request: PermissionRequest, path: &std::path::Path, old_text: &str, new_text: &str) {
        let address = uri::from_path(path);
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let proposal = Proposal::new(
            id,
            request.tool_call.id.clone(),
            path.to_path_buf(),
            address.clone(),
            old_text,
            new_text,
            request.reply,
        );
        if let Ok(mut proposals) = self.proposals.lock() {
            proposals.retain(|proposal| !proposal.is_done());
            proposals.push(proposal);
        }
        if self.show_document
            && let Ok(document) = address.parse::<Uri>()
        {
            let show = ShowDocumentParams { uri: document, external: None, take_focus: Some(true), selection: None };
            let _ = self.client.request::<ShowDocument>(show).await;
        }
        self.refresh_diagnostics(&address);
    }

    /// Asks in a popup and answers the request; gives the request back when the client cannot
    /// show one, to be asked through code actions.
    async fn ask_in_popup(&self, request: PermissionRequest, question: &Question) -> Option<PermissionRequest> {
        let actions = question
            .options
            .iter()
            .map(|(_, name)| MessageActionItem { title: (*name).to_owned(), properties: HashMap::new() })
            .collect();
        let asking = ShowMessageRequestParams {
            typ: MessageType::INFO,
            message: format!("Larik: {}", question.one_line()),
            actions: Some(actions),
        };
        match self.client.request::<ShowMessageRequest>(asking).await {
            Ok(choice) => {
                let chosen = choice
                    .and_then(|item| question.options.iter().find(|(_, name)| *name == item.title))
                    .map(|(id, _)| *id);
                let answer = match chosen {
                    Some("allow_once") => PermissionAnswer::AllowOnce,
                    Some("allow_always") => PermissionAnswer::AllowAlways,
                    Some(_) => PermissionAnswer::Reject { feedback: None },
                    None => PermissionAnswer::Cancelled,
                };
                if let Ok(mut answers) = self.answers.lock() {
                    answers.insert(
                        question.tool_id.clone(),
                        story::Answer::new(question.answered(chosen.unwrap_or("cancelled"))),
                    );
                }
                let _ = request.reply.send(answer);
                None
            }
            // Helix answers "method not found": ask through code actions from now on.
            Err(error) if error.code == METHOD_NOT_FOUND => {
                self.no_message_requests.store(true, Ordering::Relaxed);
                Some(request)
            }
            Err(error) => {
                tracing::warn!(message = %error.message, "showMessageRequest failed; asking through code actions");
                Some(request)
            }
        }
    }
}
