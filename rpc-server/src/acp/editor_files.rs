//! The client's file system (`fs/read_text_file`, `fs/write_text_file`) as the core's
//! [`EditorFiles`]: reads see unsaved buffers, writes land in the editor's undo history.

use std::path::Path;

use larik_core::services::{EditorError, EditorFiles};
use larik_protocol::acp;

use super::connection::Peer;

pub struct ClientFiles {
    pub peer: Peer,
    pub session_id: acp::SessionId,
    pub read: bool,
    pub write: bool,
}

#[async_trait::async_trait]
impl EditorFiles for ClientFiles {
    async fn read_text(&self, path: &Path) -> Result<String, EditorError> {
        if !self.read {
            return tokio::fs::read_to_string(path)
                .await
                .map_err(|source| EditorError::Io { path: path.to_path_buf(), source });
        }
        let request = acp::ReadTextFileRequest::new(self.session_id.clone(), path.to_path_buf());
        let value =
            self.peer.request("fs/read_text_file", serde_json::to_value(request).map_err(EditorError::encoding)?).await;
        let value = value.map_err(|error| {
            EditorError::Refused(format!("{}: the editor could not read it: {}", path.display(), error.message))
        })?;
        let response: acp::ReadTextFileResponse =
            serde_json::from_value(value).map_err(|error| EditorError::Malformed(error.to_string()))?;
        Ok(response.content)
    }

    async fn write_text(&self, path: &Path, content: &str) -> Result<(), EditorError> {
        if !self.write {
            return larik_core::services::write_file_atomic(path, content.as_bytes())
                .map_err(|source| EditorError::Io { path: path.to_path_buf(), source });
        }
        let request = acp::WriteTextFileRequest::new(self.session_id.clone(), path.to_path_buf(), content.to_owned());
        self.peer
            .request("fs/write_text_file", serde_json::to_value(request).map_err(EditorError::encoding)?)
            .await
            .map(|_| ())
            .map_err(|error| {
                EditorError::Refused(format!("{}: the editor could not write it: {}", path.display(), error.message))
            })
    }
}
