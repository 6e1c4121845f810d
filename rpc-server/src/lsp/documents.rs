//! The editor's open buffers as the agent sees them, and the agent's reads and writes through
//! them ([`EditorFiles`]).
//!
//! Invariant: a write returns only once the file on disk holds what was written, because the next
//! tool (a test run) reads the disk. Helix cannot be asked to save and refuses `:w` on a file
//! changed behind it, so a write to an open buffer goes into the buffer (undoable, as the user
//! reviewed it) and then waits for the user's `:w` (`textDocument/didSave`), saying so; a file
//! that is not open is written directly.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use larik_core::services::{EditorError, EditorFiles};
use tokio::sync::watch;

use super::bridge::apply_edit;
use super::client::Client;
use super::proposal::LineEdit;
use larik_core::file_uri as uri;

#[derive(Clone)]
pub struct Documents {
    texts: Arc<Mutex<HashMap<PathBuf, String>>>,
    /// The editor's newest version of each open buffer, so an older change arriving late is
    /// dropped rather than taken for the current text.
    versions: Arc<Mutex<HashMap<PathBuf, i32>>>,
    /// Saves seen per file, so a waiting write can tell a save happened.
    saves: Arc<Mutex<HashMap<PathBuf, u64>>>,
    cancels: Arc<Mutex<u64>>,
    /// Bumped on every save and cancel: wakes writes waiting on either.
    changed: Arc<watch::Sender<u64>>,
}

impl Default for Documents {
    fn default() -> Self {
        Self {
            texts: Arc::default(),
            versions: Arc::default(),
            saves: Arc::default(),
            cancels: Arc::default(),
            changed: Arc::new(watch::Sender::new(0)),
        }
    }
}

impl Documents {
    pub fn get(&self, path: &Path) -> Option<String> {
        self.texts.lock().ok()?.get(path).cloned()
    }

    pub fn set(&self, path: PathBuf, text: String) {
        if let Ok(mut texts) = self.texts.lock() {
            texts.insert(path, text);
        }
    }

    /// The editor's whole text of `path` at `version` (an open or a full-sync change). A change
    /// older than one already seen is dropped: the editor may deliver its notifications out of
    /// order, and the newest text wins.
    pub fn edited(&self, path: PathBuf, version: i32, text: String) {
        let Ok(mut versions) = self.versions.lock() else { return };
        if versions.get(&path).is_some_and(|newest| *newest > version) {
            tracing::debug!(path = %path.display(), version, "an older change of a buffer dropped");
            return;
        }
        versions.insert(path.clone(), version);
        drop(versions);
        self.set(path, text);
    }

    pub fn remove(&self, path: &Path) {
        if let Ok(mut texts) = self.texts.lock() {
            texts.remove(path);
        }
        if let Ok(mut versions) = self.versions.lock() {
            versions.remove(path);
        }
    }

    pub fn saved(&self, path: &Path) {
        if let Ok(mut saves) = self.saves.lock() {
            *saves.entry(path.to_path_buf()).or_default() += 1;
        }
        self.changed.send_modify(|count| *count += 1);
    }

    /// The turn was cancelled: writes waiting for a save give up.
    pub fn cancel_waits(&self) {
        if let Ok(mut cancels) = self.cancels.lock() {
            *cancels += 1;
        }
        self.changed.send_modify(|count| *count += 1);
    }

    fn save_count(&self, path: &Path) -> u64 {
        self.saves.lock().ok().and_then(|saves| saves.get(path).copied()).unwrap_or(0)
    }

    fn cancel_count(&self) -> u64 {
        self.cancels.lock().map(|cancels| *cancels).unwrap_or(0)
    }

    /// Waits for the user to save `path` after `saves_before` saves; false if the turn was
    /// cancelled first.
    async fn wait_for_save(&self, path: &Path, saves_before: u64, cancels_before: u64) -> bool {
        let mut changed = self.changed.subscribe();
        loop {
            if self.save_count(path) != saves_before {
                return true;
            }
            if self.cancel_count() != cancels_before || changed.changed().await.is_err() {
                return false;
            }
        }
    }
}

/// Reads see unsaved buffers; writes reach the disk (see the module's invariant).
pub struct LspFiles {
    documents: Documents,
    client: Client,
}

impl LspFiles {
    pub fn new(documents: Documents, client: Client) -> Self {
        Self { documents, client }
    }
}

#[async_trait::async_trait]
impl EditorFiles for LspFiles {
    async fn read_text(&self, path: &Path) -> Result<String, EditorError> {
        match self.documents.get(path) {
            Some(text) => Ok(text),
            None => tokio::fs::read_to_string(path)
                .await
                .map_err(|source| EditorError::Io { path: path.to_path_buf(), source }),
        }
    }

    async fn write_text(&self, path: &Path, content: &str) -> Result<(), EditorError> {
        let Some(current) = self.documents.get(path) else {
            return larik_core::services::write_file_atomic(path, content.as_bytes())
                .map_err(|source| EditorError::Io { path: path.to_path_buf(), source });
        };
        let (saves_before, cancels_before) = (self.documents.save_count(path), self.documents.cancel_count());
        // Hunks the user applied already put this content in the buffer.
        if current != content {
            let whole = LineEdit { start: 0, end: current.split_inclusive('\n').count(), new_text: content.to_owned() };
            apply_edit(&self.client, &uri::from_path(path), &whole).await?;
            self.documents.set(path.to_path_buf(), content.to_owned());
        }
        if std::fs::read_to_string(path).ok().as_deref() == Some(content) {
            return Ok(());
        }
        let name = path.file_name().map(|name| name.to_string_lossy().into_owned()).unwrap_or_default();
        let message = format!("Larik waits for you to save {name} (:w): what runs next reads the file on disk");
        self.client.show(lsp_types::MessageType::WARNING, message);
        if self.documents.wait_for_save(path, saves_before, cancels_before).await {
            Ok(())
        } else {
            Err(EditorError::Cancelled(format!(
                "the turn was cancelled before {name} was saved; the edit is in the editor's buffer, unsaved"
            )))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_change_arriving_after_a_newer_one_does_not_replace_it() {
        let documents = Documents::default();
        let path = PathBuf::from("/project/.larik/chat.larik.md");
        documents.edited(path.clone(), 1, "Say".into());
        documents.edited(path.clone(), 3, "Say hi.\n".into());
        documents.edited(path.clone(), 2, "Say hi.".into());
        assert_eq!(documents.get(&path).as_deref(), Some("Say hi.\n"));
        documents.remove(&path);
        documents.edited(path.clone(), 0, "reopened".into());
        assert_eq!(documents.get(&path).as_deref(), Some("reopened"), "a closed buffer starts its versions again");
    }
}
