//! The client side of the connection as the bridge sees it: requests to the editor (with their
//! responses awaited), notifications, and answers to the editor's requests.

use std::collections::HashMap;
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::{Arc, Mutex};

use lsp_server::{Message, Notification, Request, RequestId, Response, ResponseError};
use serde_json::Value;
use tokio::sync::{mpsc, oneshot};

/// A JSON-RPC error from the editor.
#[derive(Debug, Clone)]
pub struct ClientError {
    pub code: i32,
    pub message: String,
}

pub const METHOD_NOT_FOUND: i32 = -32601;

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

    pub fn notify(&self, method: &str, params: Value) {
        let _ = self.outbox.send(Message::Notification(Notification { method: method.to_owned(), params }));
    }

    pub async fn request(&self, method: &str, params: Value) -> Result<Value, ClientError> {
        let id = RequestId::from(self.next_id.fetch_add(1, Ordering::Relaxed));
        let (reply, response) = oneshot::channel();
        if let Ok(mut pending) = self.pending.lock() {
            pending.insert(id.clone(), reply);
        }
        let _ = self.outbox.send(Message::Request(Request { id, method: method.to_owned(), params }));
        response.await.unwrap_or_else(|_| Err(ClientError { code: -32603, message: "connection closed".into() }))
    }

    pub fn respond(&self, id: RequestId, result: Result<Value, ClientError>) {
        let response_result = result.map_err(|error| ResponseError { code: error.code, message: error.message, data: None });
        let response = Response { id, response_result };
        let _ = self.outbox.send(Message::Response(response));
    }

    pub fn deliver(&self, response: Response) {
        let Some(reply) = self.pending.lock().ok().and_then(|mut pending| pending.remove(&response.id)) else { return };
        let result = response.response_result.map_err(|error| ClientError { code: error.code, message: error.message });
        let _ = reply.send(result);
    }
}
