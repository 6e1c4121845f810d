//! The client's terminals (`terminal/create`, `output`, `wait_for_exit`, `kill`, `release`) as the
//! core's [`EditorTerminals`], for clients that advertise `terminal` but not the agent-owned
//! terminal stream of `_meta.terminal_output`.

use larik_core::services::{
    EditorError, EditorTerminal, EditorTerminals, TerminalCommand, TerminalExit, TerminalOutput,
};
use larik_protocol::acp;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::connection::Peer;

pub struct ClientTerminals {
    pub peer: Peer,
    pub session_id: acp::SessionId,
}

struct ClientTerminal {
    peer: Peer,
    session_id: acp::SessionId,
    id: acp::TerminalId,
}

/// Sends a `terminal/*` request and decodes its answer; errors are worded for the log.
async fn call<T: DeserializeOwned>(peer: &Peer, method: &str, params: impl serde::Serialize) -> Result<T, EditorError> {
    let params = serde_json::to_value(params).map_err(EditorError::encoding)?;
    let value = peer
        .request(method, params)
        .await
        .map_err(|error| EditorError::Refused(format!("{method}: {}", error.message)))?;
    serde_json::from_value(value)
        .map_err(|error| EditorError::Malformed(format!("{method}: unexpected answer: {error}")))
}

#[async_trait::async_trait]
impl EditorTerminals for ClientTerminals {
    async fn create(&self, command: &TerminalCommand) -> Result<Box<dyn EditorTerminal>, EditorError> {
        let request = acp::CreateTerminalRequest::new(self.session_id.clone(), command.program.display().to_string())
            .args(command.args.clone())
            .cwd(command.cwd.clone())
            .output_byte_limit(command.output_limit);
        let created: acp::CreateTerminalResponse = call(&self.peer, "terminal/create", request).await?;
        Ok(Box::new(ClientTerminal {
            peer: self.peer.clone(),
            session_id: self.session_id.clone(),
            id: created.terminal_id,
        }))
    }
}

impl ClientTerminal {
    fn params(&self) -> (acp::SessionId, acp::TerminalId) {
        (self.session_id.clone(), self.id.clone())
    }
}

fn exit(status: acp::TerminalExitStatus) -> TerminalExit {
    TerminalExit { code: status.exit_code.and_then(|code| i32::try_from(code).ok()), signal: status.signal }
}

#[async_trait::async_trait]
impl EditorTerminal for ClientTerminal {
    fn id(&self) -> &str {
        &self.id.0
    }

    async fn wait_for_exit(&self) -> Result<TerminalExit, EditorError> {
        let (session, id) = self.params();
        let response: acp::WaitForTerminalExitResponse =
            call(&self.peer, "terminal/wait_for_exit", acp::WaitForTerminalExitRequest::new(session, id)).await?;
        Ok(exit(response.exit_status))
    }

    async fn output(&self) -> Result<TerminalOutput, EditorError> {
        let (session, id) = self.params();
        let response: acp::TerminalOutputResponse =
            call(&self.peer, "terminal/output", acp::TerminalOutputRequest::new(session, id)).await?;
        Ok(TerminalOutput { text: response.output, truncated: response.truncated })
    }

    async fn kill(&self) -> Result<(), EditorError> {
        let (session, id) = self.params();
        call::<Value>(&self.peer, "terminal/kill", acp::KillTerminalRequest::new(session, id)).await.map(|_| ())
    }

    async fn release(&self) {
        let (session, id) = self.params();
        if let Err(error) =
            call::<Value>(&self.peer, "terminal/release", acp::ReleaseTerminalRequest::new(session, id)).await
        {
            tracing::warn!(%error, terminal = %self.id.0, "the client did not release its terminal");
        }
    }
}
