//! The client side of the connection as the bridge sees it: requests to the editor (with their
//! responses awaited), notifications, and answers to the editor's requests, each typed by its
//! `lsp-types` message so params and results are the protocol's own structs.

use std::collections::HashMap;
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::{Arc, Mutex};

use larik_core::services::EditorError;
use lsp_server::{Message, Notification, Request, RequestId, Response, ResponseError};
use lsp_types::notification::ShowMessage;
use lsp_types::request::ApplyWorkspaceEdit;
use lsp_types::{ApplyWorkspaceEditParams, MessageType, Range, ShowMessageParams, TextEdit, Uri, WorkspaceEdit};
use serde_json::Value;
use tokio::sync::{mpsc, oneshot};

/// A JSON-RPC error from the editor.
#[derive(Debug, Clone)]
pub struct ClientError {
    pub code: i32,
    pub message: String,
}

pub const METHOD_NOT_FOUND: i32 = -32601;
pub const INVALID_PARAMS: i32 = -32602;
const INTERNAL_ERROR: i32 = -32603;

impl ClientError {
    pub fn invalid(message: impl Into<String>) -> Self {
        Self { code: INVALID_PARAMS, message: message.into() }
    }
}

/// Requests sent to the editor, waiting for its answer.
type Pending = Arc<Mutex<HashMap<RequestId, oneshot::Sender<Result<Value, ClientError>>>>>;

#[derive(Clone)]
pub struct Client {
    outbox: mpsc::UnboundedSender<Message>,
    pending: Pending,
    next_id: Arc<AtomicI32>,
}

impl Client {
    pub fn new(outbox: mpsc::UnboundedSender<Message>) -> Self {
        Self { outbox, pending: Arc::default(), next_id: Arc::new(AtomicI32::new(1)) }
    }

    pub fn notify<N: lsp_types::notification::Notification>(&self, params: N::Params) {
        let notification = Notification::new(N::METHOD.to_owned(), params);
        let _ = self.outbox.send(Message::Notification(notification));
    }

    /// Shows `message` to the user (`window/showMessage`).
    pub fn show(&self, kind: MessageType, message: impl Into<String>) {
        self.notify::<ShowMessage>(ShowMessageParams { typ: kind, message: message.into() });
    }

    pub async fn request<R: lsp_types::request::Request>(&self, params: R::Params) -> Result<R::Result, ClientError> {
        let id = RequestId::from(self.next_id.fetch_add(1, Ordering::Relaxed));
        let (reply, response) = oneshot::channel();
        if let Ok(mut pending) = self.pending.lock() {
            pending.insert(id.clone(), reply);
        }
        let _ = self.outbox.send(Message::Request(Request::new(id, R::METHOD.to_owned(), params)));
        let result = response
            .await
            .unwrap_or_else(|_| Err(ClientError { code: INTERNAL_ERROR, message: "connection closed".into() }))?;
        serde_json::from_value(result).map_err(|error| ClientError {
            code: INTERNAL_ERROR,
            message: format!("the editor's answer to {} is not what LSP says: {error}", R::METHOD),
        })
    }

    /// Replaces `range` of a document with `new_text` through `workspace/applyEdit`.
    pub async fn replace(&self, address: &str, range: Range, new_text: String) -> Result<(), EditorError> {
        let document: Uri = address.parse().map_err(|_| EditorError::Malformed(format!("not a URI: {address}")))?;
        let edit = WorkspaceEdit {
            changes: Some(HashMap::from([(document, vec![TextEdit { range, new_text }])])),
            ..WorkspaceEdit::default()
        };
        let response = self
            .request::<ApplyWorkspaceEdit>(ApplyWorkspaceEditParams { label: Some("Larik".into()), edit })
            .await
            .map_err(|error| EditorError::Refused(error.message))?;
        if !response.applied {
            let reason = response.failure_reason.unwrap_or_else(|| "the editor did not apply the edit".into());
            return Err(EditorError::Refused(reason));
        }
        Ok(())
    }

    pub fn respond(&self, id: RequestId, result: Result<Value, ClientError>) {
        let response_result =
            result.map_err(|error| ResponseError { code: error.code, message: error.message, data: None });
        let response = Response { id, response_result };
        let _ = self.outbox.send(Message::Response(response));
    }

    pub fn deliver(&self, response: Response) {
        let Some(reply) = self.pending.lock().ok().and_then(|mut pending| pending.remove(&response.id)) else { return };
        let result = response.response_result.map_err(|error| ClientError { code: error.code, message: error.message });
        let _ = reply.send(result);
    }
}
