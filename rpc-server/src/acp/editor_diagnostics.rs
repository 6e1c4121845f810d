//! The editor's own language servers as the core's [`EditorDiagnostics`]: `_larik/diagnostics`
//! for a client that set `clientCapabilities._meta.larik.diagnostics`. The editor is given the
//! wait, and a little more for the answer to travel; no answer in time means no report.

use std::path::Path;
use std::time::Duration;

use larik_core::services::{EditorDiagnostics, EditorError};
use larik_protocol::acp;
use larik_protocol::extensions::{
    DIAGNOSTICS_METHOD, DiagnosticSeverityName, DiagnosticsRequest, DiagnosticsResponse, EditorDiagnostic,
};
use lsp_types::{Diagnostic, DiagnosticSeverity, Position, Range};

use super::connection::Peer;

/// What the answer may take beyond the wait the editor was given.
const SLACK: Duration = Duration::from_secs(1);

pub struct ClientDiagnostics {
    pub peer: Peer,
    pub session_id: acp::SessionId,
}

#[async_trait::async_trait]
impl EditorDiagnostics for ClientDiagnostics {
    async fn diagnostics(&self, path: &Path, wait: Duration) -> Result<Option<Vec<Diagnostic>>, EditorError> {
        let request = DiagnosticsRequest {
            session_id: self.session_id.0.to_string(),
            path: path.display().to_string(),
            wait_ms: u64::try_from(wait.as_millis()).unwrap_or(u64::MAX),
        };
        let params = serde_json::to_value(request).map_err(EditorError::encoding)?;
        let answer = tokio::time::timeout(wait + SLACK, self.peer.request(DIAGNOSTICS_METHOD, params))
            .await
            .map_err(|_| EditorError::NoAnswer)?;
        let value = answer.map_err(|error| EditorError::Refused(error.message))?;
        let response: DiagnosticsResponse = serde_json::from_value(value)
            .map_err(|error| EditorError::Malformed(format!("the editor's diagnostics are malformed: {error}")))?;
        Ok(response.diagnostics.map(|list| list.iter().map(to_lsp).collect()))
    }
}

fn to_lsp(diagnostic: &EditorDiagnostic) -> Diagnostic {
    let position = Position::new(diagnostic.line.saturating_sub(1), diagnostic.character.saturating_sub(1));
    let severity = match diagnostic.severity {
        DiagnosticSeverityName::Error => DiagnosticSeverity::ERROR,
        DiagnosticSeverityName::Warning => DiagnosticSeverity::WARNING,
        DiagnosticSeverityName::Information => DiagnosticSeverity::INFORMATION,
        DiagnosticSeverityName::Hint => DiagnosticSeverity::HINT,
    };
    Diagnostic {
        range: Range::new(position, position),
        severity: Some(severity),
        source: diagnostic.source.clone(),
        message: diagnostic.message.clone(),
        ..Diagnostic::default()
    }
}
