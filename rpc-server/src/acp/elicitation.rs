//! Questions to the user through ACP's elicitation, for clients that advertise it: form mode for
//! the model's questions and an MCP server's, URL mode for an MCP server's login page (without
//! it, the page's address is said in the chat).

use larik_core::services::{AskUser, EditorError, FormAnswer, LoginBrowser};
use larik_protocol::acp;
use serde_json::{Value, json};

use super::connection::Peer;

pub struct FormQuestions {
    pub peer: Peer,
    pub session_id: acp::SessionId,
}

#[async_trait::async_trait]
impl AskUser for FormQuestions {
    async fn ask(&self, question: &str, choices: &[String]) -> Result<Option<String>, EditorError> {
        let mut answer = json!({"type": "string", "title": "Answer"});
        if !choices.is_empty() {
            answer["enum"] = json!(choices);
        }
        let schema = json!({"type": "object", "properties": {"answer": answer}, "required": ["answer"]});
        match self.form(question, schema).await? {
            FormAnswer::Accepted(content) => Ok(content.get("answer").and_then(Value::as_str).map(str::to_owned)),
            FormAnswer::Declined | FormAnswer::Cancelled => Ok(None),
        }
    }

    async fn form(&self, message: &str, schema: Value) -> Result<FormAnswer, EditorError> {
        let params =
            json!({"sessionId": self.session_id, "mode": "form", "message": message, "requestedSchema": schema});
        let response = self.peer.request("elicitation/create", params).await.map_err(refused)?;
        Ok(match response["action"].as_str() {
            Some("accept") => FormAnswer::Accepted(response.get("content").cloned().unwrap_or_else(|| json!({}))),
            Some("decline") => FormAnswer::Declined,
            _ => FormAnswer::Cancelled,
        })
    }
}

fn refused(error: super::connection::RpcError) -> EditorError {
    EditorError::Refused(error.message)
}

/// Opens MCP servers' login pages in the editor.
pub struct LoginPages {
    pub peer: Peer,
    pub session_id: acp::SessionId,
    /// The client takes URL elicitations (it opens the page itself).
    pub url_mode: bool,
}

#[async_trait::async_trait]
impl LoginBrowser for LoginPages {
    async fn open(&self, server: &str, url: &str) -> Result<(), EditorError> {
        let message = format!("Log in to the MCP server `{server}`");
        if !self.url_mode {
            let text = format!("{message}: open {url}\n\nLarik waits for the login to finish (5 minutes at most).");
            super::agent::notify(
                &self.peer,
                &self.session_id,
                acp::SessionUpdate::AgentMessageChunk(super::to_proto::text_chunk(text)),
            )
            .await;
            return Ok(());
        }
        let params = json!({"sessionId": self.session_id, "mode": "url", "message": message, "url": url, "elicitationId": format!("mcp-login-{server}")});
        let response = self.peer.request("elicitation/create", params).await.map_err(refused)?;
        match response["action"].as_str() {
            Some("accept") => Ok(()),
            _ => Err(EditorError::Declined("the login")),
        }
    }

    async fn finished(&self, server: &str) {
        if self.url_mode {
            self.peer.notify("elicitation/complete", json!({"elicitationId": format!("mcp-login-{server}")})).await;
        }
    }
}
