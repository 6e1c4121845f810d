//! Questions to the user through ACP's elicitation (form mode), for clients that advertise it.

use larik_core::services::AskUser;
use larik_protocol::acp;
use serde_json::{Value, json};

use super::connection::Peer;

pub struct FormQuestions {
    pub peer: Peer,
    pub session_id: acp::SessionId,
}

#[async_trait::async_trait]
impl AskUser for FormQuestions {
    async fn ask(&self, question: &str, choices: &[String]) -> Result<Option<String>, String> {
        let mut answer = json!({"type": "string", "title": "Answer"});
        if !choices.is_empty() {
            answer["enum"] = json!(choices);
        }
        let params = json!({
            "sessionId": self.session_id,
            "mode": "form",
            "message": question,
            "requestedSchema": {"type": "object", "properties": {"answer": answer}, "required": ["answer"]},
        });
        let response = self.peer.request("elicitation/create", params).await.map_err(|error| error.message)?;
        match response["action"].as_str() {
            Some("accept") => Ok(response.pointer("/content/answer").and_then(Value::as_str).map(str::to_owned)),
            _ => Ok(None),
        }
    }
}
