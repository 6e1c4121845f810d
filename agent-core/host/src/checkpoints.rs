//! Checkpoints: the project's files as they were before each turn that changed them, and undo
//! back to one, the files bash created, changed or deleted included.
//!
//! A checkpoint is taken before a turn's first change (an edit, a write, a command); what each
//! command changed is known by comparing snapshots before and after it, and shown with the call.
//! Snapshots live in a private bare git repository under the user's data directory
//! (`checkpoints/<session>.git`), content-addressed, so a checkpoint of a large project costs
//! only the files that changed since the last one; the list is `checkpoints/<session>.json`.
//! Undo restores a checkpoint with a three-way check (see `restore.rs`) and tells the session
//! where to rewind the conversation.

mod ignored;
mod restore;
mod snapshot;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use git2::{Oid, Repository};
use serde::{Deserialize, Serialize};

pub use ignored::{IgnoredChanges, code_span};
pub use restore::Restored;
use snapshot::{Files, Snapshot, StatCache};

/// A text file's change larger than this is shown without its text.
const MAX_SHOWN_TEXT_BYTES: usize = 256 * 1024;

/// One checkpoint as the list keeps it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Checkpoint {
    /// `cp-1`, `cp-2`, ... within the session.
    pub id: String,
    /// Seconds since the epoch.
    pub created_at: u64,
    /// The prompt of the turn it was taken for.
    pub prompt: String,
    /// The conversation's length when the turn started: undo rewinds it to there.
    pub history_len: usize,
    /// The files before the turn.
    before: String,
    /// The files when the turn ended (set at its end).
    after: Option<String>,
    /// What the turn changed, project-relative.
    pub files: Vec<PathBuf>,
    /// What the snapshots leave out (`target/`, large files).
    pub skipped: Vec<String>,
}

/// A file a command (or a turn) changed: `old_text`/`new_text` are `None` where the file did
/// not exist, and both `None` for binary or very large content.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileChange {
    pub path: PathBuf,
    pub kind: ChangeKind,
    /// The project ignores it (`.gitignore`): build output, caches, installed packages.
    pub ignored: bool,
    pub old_text: Option<String>,
    pub new_text: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChangeKind {
    Added,
    Modified,
    Deleted,
}

/// What `/undo` did: the files, and where the conversation goes back to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Undone {
    pub checkpoint: Checkpoint,
    pub files: Restored,
}

/// The turn being run, for the checkpoint its first change takes.
#[derive(Default)]
struct Turn {
    prompt: String,
    history_len: usize,
    /// The checkpoint this turn took, once it changed something.
    checkpoint: Option<usize>,
}

struct State {
    store: Option<Repository>,
    cache: StatCache,
    list: Vec<Checkpoint>,
    turn: Turn,
}

/// A session's checkpoints of its project.
pub struct Checkpoints {
    root: PathBuf,
    store_dir: PathBuf,
    list_file: PathBuf,
    state: Arc<Mutex<State>>,
}

impl Checkpoints {
    /// Checkpoints of `root` for session `session_id`, kept under `data_dir`; the list of an
    /// earlier run of the session is read back.
    pub fn new(root: &Path, data_dir: &Path, session_id: &str) -> Self {
        let dir = data_dir.join("checkpoints");
        let list_file = dir.join(format!("{session_id}.json"));
        let list =
            std::fs::read(&list_file).ok().and_then(|bytes| serde_json::from_slice(&bytes).ok()).unwrap_or_default();
        Self {
            root: root.to_path_buf(),
            store_dir: dir.join(format!("{session_id}.git")),
            list_file,
            state: Arc::new(Mutex::new(State {
                store: None,
                cache: StatCache::default(),
                list,
                turn: Turn::default(),
            })),
        }
    }

    /// A turn starts: its first change will take a checkpoint.
    pub fn begin_turn(&self, prompt: &str, history_len: usize) {
        if let Ok(mut state) = self.state.lock() {
            state.turn = Turn { prompt: prompt.chars().take(200).collect(), history_len, checkpoint: None };
        }
    }

    /// Before an edit or a write: the turn's checkpoint, if it has none yet.
    pub async fn checkpoint_turn(&self) {
        let taken = self.state.lock().is_ok_and(|state| state.turn.checkpoint.is_some());
        if !taken {
            self.before_command().await;
        }
    }

    /// Before a command that may change anything: the turn's checkpoint, if it has none yet,
    /// and a snapshot of the files as they are now, for [`Checkpoints::changed_since`].
    pub async fn before_command(&self) -> Option<Oid> {
        let state = Arc::clone(&self.state);
        let (root, store_dir) = (self.root.clone(), self.store_dir.clone());
        let result = tokio::task::spawn_blocking(move || {
            let mut state = state.lock().map_err(|_| "checkpoint state poisoned".to_owned())?;
            let snapshot = state.snapshot(&root, &store_dir, &snapshot::Ignores::of(&root))?;
            if state.turn.checkpoint.is_none() {
                let number =
                    state.list.last().and_then(|last| last.id.strip_prefix("cp-")?.parse::<u32>().ok()).unwrap_or(0)
                        + 1;
                let checkpoint = Checkpoint {
                    id: format!("cp-{number}"),
                    created_at: crate::clock::now_secs(),
                    prompt: state.turn.prompt.clone(),
                    history_len: state.turn.history_len,
                    before: snapshot.tree.to_string(),
                    after: None,
                    files: Vec::new(),
                    skipped: snapshot.skipped.clone(),
                };
                state.list.push(checkpoint);
                state.turn.checkpoint = Some(state.list.len() - 1);
            }
            Ok::<_, String>(snapshot.tree)
        })
        .await;
        match result {
            Ok(Ok(tree)) => Some(tree),
            Ok(Err(error)) => {
                tracing::warn!(%error, "no checkpoint could be taken");
                None
            }
            Err(_) => None,
        }
    }

    /// What changed in the files since the snapshot `before` (taken by `before_command`).
    pub async fn changed_since(&self, before: Oid) -> Vec<FileChange> {
        let state = Arc::clone(&self.state);
        let (root, store_dir) = (self.root.clone(), self.store_dir.clone());
        let changes = tokio::task::spawn_blocking(move || {
            let mut state = state.lock().map_err(|_| "checkpoint state poisoned".to_owned())?;
            // The project is asked once what it ignores, for the snapshot and the changes.
            let ignores = snapshot::Ignores::of(&root);
            let now = state.snapshot(&root, &store_dir, &ignores)?;
            let store = state.store.as_ref().ok_or("no store")?;
            let old = snapshot::files_of(store, before).map_err(|error| error.to_string())?;
            Ok::<_, String>(changes(store, &root, &old, &now.files, &ignores))
        })
        .await;
        changes.ok().and_then(Result::ok).unwrap_or_default()
    }

    /// The turn ended: its checkpoint learns what the turn changed; one that changed nothing
    /// is dropped (there is nothing to undo). The list is saved.
    pub async fn end_turn(&self) {
        let state = Arc::clone(&self.state);
        let (root, store_dir, list_file) = (self.root.clone(), self.store_dir.clone(), self.list_file.clone());
        let _ = tokio::task::spawn_blocking(move || {
            let Ok(mut state) = state.lock() else { return };
            let Some(index) = state.turn.checkpoint.take() else { return };
            let Ok(after) = state.snapshot(&root, &store_dir, &snapshot::Ignores::of(&root)) else { return };
            let changed: Vec<PathBuf> = {
                let Some(store) = state.store.as_ref() else { return };
                let before = state.list[index]
                    .before
                    .parse::<Oid>()
                    .ok()
                    .and_then(|tree| snapshot::files_of(store, tree).ok())
                    .unwrap_or_default();
                changed_paths(&before, &after.files)
            };
            if changed.is_empty() {
                state.list.remove(index);
            } else {
                let checkpoint = &mut state.list[index];
                checkpoint.after = Some(after.tree.to_string());
                checkpoint.files = changed;
            }
            state.save(&list_file);
        })
        .await;
    }

    /// The checkpoints, oldest first.
    pub fn list(&self) -> Vec<Checkpoint> {
        self.state.lock().map(|state| state.list.clone()).unwrap_or_default()
    }

    /// Restores the project to checkpoint `id` (the latest when `None`): every file the turns
    /// since changed goes back, unless it was changed by hand since; those checkpoints are gone.
    pub async fn undo(&self, id: Option<String>) -> Result<Undone, UndoError> {
        let state = Arc::clone(&self.state);
        let (root, store_dir, list_file) = (self.root.clone(), self.store_dir.clone(), self.list_file.clone());
        tokio::task::spawn_blocking(move || {
            let mut state = state.lock().map_err(|_| UndoError::Store("checkpoint state poisoned".to_owned()))?;
            let index = match &id {
                Some(id) => state
                    .list
                    .iter()
                    .position(|checkpoint| &checkpoint.id == id)
                    .ok_or_else(|| UndoError::NoSuchCheckpoint(id.clone()))?,
                None => state.list.len().checked_sub(1).ok_or(UndoError::NothingToUndo)?,
            };
            let now = state.snapshot(&root, &store_dir, &snapshot::Ignores::of(&root)).map_err(UndoError::Store)?;
            let store = state.store.as_ref().ok_or_else(|| UndoError::Store("no store".to_owned()))?;
            let tree = |text: &Option<String>| text.as_deref().and_then(|text| text.parse::<Oid>().ok());
            let target = snapshot::files_of(store, state.list[index].before.parse::<Oid>().map_err(UndoError::store)?)
                .map_err(UndoError::store)?;
            // What the agent's last turn left; a path that differs from it was changed by hand.
            let last = state
                .list
                .last()
                .and_then(|last| tree(&last.after))
                .map(|after| snapshot::files_of(store, after))
                .transpose()
                .map_err(UndoError::store)?
                .unwrap_or_else(|| now.files.clone());
            let files = restore::restore(store, &root, &target, &now.files, &last)?;
            let checkpoint = state.list[index].clone();
            state.list.truncate(index);
            state.turn.checkpoint = None;
            state.save(&list_file);
            Ok(Undone { checkpoint, files })
        })
        .await
        .map_err(UndoError::store)?
    }
}

/// Why nothing was undone.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UndoError {
    #[error("this session keeps no checkpoints (it has no data directory)")]
    NotKept,
    #[error("there is no checkpoint `{0}`; /checkpoints lists them")]
    NoSuchCheckpoint(String),
    #[error("there is nothing to undo: no turn of this session changed a file")]
    NothingToUndo,
    /// The snapshot store could not be read or the files not written back.
    #[error("{0}")]
    Store(String),
}

impl UndoError {
    pub(crate) fn store(error: impl std::fmt::Display) -> Self {
        Self::Store(error.to_string())
    }
}

impl State {
    fn snapshot(&mut self, root: &Path, store_dir: &Path, ignores: &snapshot::Ignores) -> Result<Snapshot, String> {
        if self.store.is_none() {
            // The project's files are private: only the user may enter the store's directory.
            if let Some(dir) = store_dir.parent() {
                use std::os::unix::fs::PermissionsExt;
                std::fs::create_dir_all(dir)
                    .and_then(|()| std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700)))
                    .map_err(|error| error.to_string())?;
            }
            let store = Repository::open_bare(store_dir)
                .or_else(|_| Repository::init_bare(store_dir))
                .map_err(|error| error.to_string())?;
            self.store = Some(store);
        }
        let store = self.store.as_ref().ok_or("no store")?;
        snapshot::take(store, root, ignores, &mut self.cache).map_err(|error| error.to_string())
    }

    fn save(&self, list_file: &Path) {
        match serde_json::to_vec(&self.list) {
            Ok(bytes) => {
                if let Err(error) = crate::workspace::write_private_file(list_file, &bytes) {
                    tracing::warn!(%error, "the checkpoint list could not be saved");
                }
            }
            Err(error) => tracing::warn!(%error, "the checkpoint list could not be written"),
        }
    }
}

fn changed_paths(old: &Files, new: &Files) -> Vec<PathBuf> {
    let paths: std::collections::BTreeSet<&PathBuf> = old.keys().chain(new.keys()).collect();
    paths.into_iter().filter(|path| old.get(*path) != new.get(*path)).cloned().collect()
}

/// The changes between two snapshots' files, with the texts of small text files.
fn changes(store: &Repository, root: &Path, old: &Files, new: &Files, ignores: &snapshot::Ignores) -> Vec<FileChange> {
    let text = |entry: Option<&snapshot::Entry>| -> Option<String> {
        let blob = store.find_blob(entry?.oid).ok()?;
        (blob.content().len() <= MAX_SHOWN_TEXT_BYTES && !blob.is_binary())
            .then(|| String::from_utf8(blob.content().to_vec()).ok())
            .flatten()
    };
    changed_paths(old, new)
        .into_iter()
        .map(|path| {
            let (before, after) = (old.get(&path), new.get(&path));
            let kind = match (before, after) {
                (None, _) => ChangeKind::Added,
                (_, None) => ChangeKind::Deleted,
                _ => ChangeKind::Modified,
            };
            let ignored = ignores.ignores(&path);
            FileChange { path: root.join(&path), kind, ignored, old_text: text(before), new_text: text(after) }
        })
        .collect()
}

#[cfg(test)]
mod tests;
