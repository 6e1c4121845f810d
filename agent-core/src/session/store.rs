//! Session persistence: one append-only JSON Lines file per session under the user's data
//! directory. Every record is written whole, with one `write` call, as it happens, so a process
//! killed mid-turn loses at most the record being written; a torn last line is skipped on load.
//!
//! Records: `meta` (first line: id, cwd, creation time), `title`, `message` (the conversation as
//! sent to the model), `rewind`, `compaction` (the summary the model continues from) and `tool`
//! (how a finished tool call looked, for replaying it to an editor).

mod cleanup;

use std::collections::{HashMap, HashSet};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use crate::llm::{Message, Part};

/// Tool output kept for replay is cut to this, so a long session does not flood the editor.
pub const MAX_REPLAY_OUTPUT_BYTES: usize = 4 * 1024;
/// Diffs larger than this are not kept for replay.
const MAX_REPLAY_DIFF_BYTES: usize = 64 * 1024;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Record {
    Meta {
        id: String,
        cwd: PathBuf,
        created_at: u64,
    },
    Title {
        title: String,
    },
    Message {
        message: Message,
    },
    /// The conversation was cut back to its first `to` messages (a refused or failed prompt).
    Rewind {
        to: usize,
    },
    Tool(Box<ToolRecord>),
    /// The conversation was compacted: from here on the model sees `messages` (the summary's
    /// opening and the latest messages kept), while the records before stay for replay.
    Compaction {
        id: String,
        summary: String,
        messages: Vec<Message>,
    },
}

/// A finished tool call as the editor saw it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolRecord {
    pub id: String,
    pub name: String,
    pub title: String,
    pub kind: crate::event::ToolKind,
    pub failed: bool,
    pub output: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub diff: Option<StoredDiff>,
    /// The files and lines the call touched, for links in the editor.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub locations: Vec<(PathBuf, Option<u32>)>,
    /// The call's input, when small enough to keep.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input: Option<serde_json::Value>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StoredDiff {
    pub path: PathBuf,
    pub old_text: Option<String>,
    pub new_text: String,
}

impl StoredDiff {
    /// A diff worth keeping for replay, or none when it is too large.
    pub fn bounded(path: PathBuf, old_text: Option<String>, new_text: String) -> Option<Self> {
        let size = old_text.as_ref().map_or(0, String::len) + new_text.len();
        (size <= MAX_REPLAY_DIFF_BYTES).then_some(Self { path, old_text, new_text })
    }
}

/// A session read back from disk.
#[derive(Debug, Clone, Default)]
pub struct StoredSession {
    pub id: String,
    pub cwd: PathBuf,
    pub title: Option<String>,
    pub records: Vec<Record>,
    /// Lines that did not parse (a torn end of a killed write, bytes that are not UTF-8),
    /// left out while every intact line around them loads.
    pub skipped_lines: usize,
}

/// A file written before notes were typed holds them as tagged text in the user's messages:
/// they are read as the notes they are, which the model reads as the same bytes.
fn notes_from_legacy_text(message: &mut Message) {
    if message.role != crate::llm::Role::User {
        return;
    }
    for part in &mut message.content {
        if let Part::Text { text } = part
            && let Some(note) = crate::llm::Note::from_legacy_text(text)
        {
            *part = Part::Note(note);
        }
    }
}

impl StoredSession {
    /// The records of a session file's bytes, line by line: each line stands on its own, so a
    /// damaged one costs only itself.
    pub fn from_bytes(id: &str, bytes: &[u8]) -> Self {
        let mut session = StoredSession { id: id.to_owned(), ..StoredSession::default() };
        for line in bytes.split(|byte| *byte == b'\n').filter(|line| !line.trim_ascii().is_empty()) {
            let Ok(mut record) = serde_json::from_slice::<Record>(line) else {
                session.skipped_lines += 1;
                continue;
            };
            match &mut record {
                Record::Message { message } => notes_from_legacy_text(message),
                Record::Compaction { messages, .. } => messages.iter_mut().for_each(notes_from_legacy_text),
                Record::Meta { cwd, .. } => session.cwd = cwd.clone(),
                Record::Title { title } => session.title = Some(title.clone()),
                _ => {}
            }
            session.records.push(record);
        }
        session
    }

    /// The conversation as the model will see it next.
    pub fn messages(&self) -> Vec<Message> {
        let mut messages = Vec::new();
        for record in &self.records {
            match record {
                Record::Message { message } => messages.push(message.clone()),
                Record::Rewind { to } => messages.truncate(*to),
                Record::Compaction { messages: compacted, .. } => messages.clone_from(compacted),
                _ => {}
            }
        }
        messages
    }
}

/// One line of `session/list`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionSummary {
    pub id: String,
    pub cwd: PathBuf,
    pub title: Option<String>,
    /// Seconds since the epoch of the last write.
    pub updated_at: u64,
}

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("session {0} not found")]
    NotFound(String),
    #[error("session store: {0}")]
    Io(String),
}

/// The directory holding every session file.
#[derive(Debug, Clone)]
pub struct SessionStore {
    dir: PathBuf,
    /// What each file said for the list, with the size and time it had then: an editor pages
    /// through thousands of sessions, and each page reads again only the files that changed.
    summaries: Arc<Mutex<HashMap<PathBuf, ListedFile>>>,
}

/// A session file as the list last read it.
#[derive(Debug)]
struct ListedFile {
    len: u64,
    modified: SystemTime,
    /// The project directory and title; `None` for a file without a readable first record.
    summary: Option<(PathBuf, Option<String>)>,
}

impl SessionStore {
    pub fn new(dir: PathBuf) -> Self {
        Self { dir, summaries: Arc::default() }
    }

    /// `$XDG_DATA_HOME/larik/sessions`, or `~/.local/share/larik/sessions`.
    pub fn from_env(env: &HashMap<String, String>) -> Option<Self> {
        Some(Self::new(larik_settings::paths::user_data_dir(env)?.join("sessions")))
    }

    fn file(&self, id: &str) -> Result<PathBuf, StoreError> {
        // Ids name files: nothing that could climb out of the directory.
        if id.is_empty() || !id.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-') {
            return Err(StoreError::NotFound(id.to_owned()));
        }
        Ok(self.dir.join(format!("{id}.jsonl")))
    }

    /// Starts a session file with its meta record.
    pub fn create(&self, id: &str, cwd: &Path) -> Result<SessionLog, StoreError> {
        let io = |error: std::io::Error| StoreError::Io(error.to_string());
        std::fs::create_dir_all(&self.dir).map_err(io)?;
        // Conversations are private: the directory as much as the files.
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&self.dir, std::fs::Permissions::from_mode(0o700)).map_err(io)?;
        let path = self.file(id)?;
        let log = SessionLog::open(&path).map_err(io)?;
        log.append(&Record::Meta { id: id.to_owned(), cwd: cwd.to_path_buf(), created_at: crate::clock::now_secs() });
        Ok(log)
    }

    /// Opens an existing session for appending.
    pub fn reopen(&self, id: &str) -> Result<SessionLog, StoreError> {
        let path = self.file(id)?;
        if !path.exists() {
            return Err(StoreError::NotFound(id.to_owned()));
        }
        SessionLog::open(&path).map_err(|error| StoreError::Io(error.to_string()))
    }

    pub fn load(&self, id: &str) -> Result<StoredSession, StoreError> {
        let bytes = std::fs::read(self.file(id)?).map_err(|_| StoreError::NotFound(id.to_owned()))?;
        let session = StoredSession::from_bytes(id, &bytes);
        if session.skipped_lines > 0 {
            tracing::warn!(
                session = id,
                skipped = session.skipped_lines,
                "lines of the session file that do not parse were left out"
            );
        }
        Ok(session)
    }

    /// Every stored session that holds a conversation (a session never prompted has nothing to
    /// go back to), optionally only those of one directory, most recent first.
    pub fn list(&self, cwd: Option<&Path>) -> Vec<SessionSummary> {
        let Ok(entries) = std::fs::read_dir(&self.dir) else { return Vec::new() };
        let Ok(mut listed) = self.summaries.lock() else { return Vec::new() };
        let mut present = HashSet::new();
        let mut sessions: Vec<SessionSummary> = entries
            .filter_map(Result::ok)
            .filter_map(|entry| {
                let id = entry.path().file_stem()?.to_string_lossy().into_owned();
                let path = entry.path();
                if path.extension().is_none_or(|ext| ext != "jsonl") {
                    return None;
                }
                let metadata = entry.metadata().ok()?;
                let modified = metadata.modified().ok()?;
                let updated_at = modified.duration_since(UNIX_EPOCH).ok()?.as_secs();
                present.insert(path.clone());
                let known = listed.get(&path).is_some_and(|file| file.len == metadata.len() && file.modified == modified);
                if !known {
                    let summary = summarize(&path);
                    if summary.is_none() {
                        // One damaged file costs its own listing, never the others'.
                        tracing::warn!(path = %path.display(), "a session file without a readable first record is left out of the list");
                    }
                    listed.insert(path.clone(), ListedFile { len: metadata.len(), modified, summary });
                }
                let (cwd, title) = listed.get(&path)?.summary.clone()?;
                Some(SessionSummary { id, cwd, title, updated_at })
            })
            .filter(|session| session.title.is_some() && cwd.is_none_or(|cwd| session.cwd == cwd))
            .collect();
        listed.retain(|path, _| present.contains(path));
        sessions.sort_by(|a, b| b.updated_at.cmp(&a.updated_at).then_with(|| a.id.cmp(&b.id)));
        sessions
    }

    /// A new session `to` with the history of `from` up to now, and its own future: the session
    /// file copied under a meta record of its own, the subagents' transcripts and the token
    /// saver's stored outputs with it. Written whole before it is named, so a fork is complete
    /// or absent.
    pub fn fork(&self, from: &str, to: &str, cwd: &Path) -> Result<(), StoreError> {
        let io = |error: std::io::Error| StoreError::Io(error.to_string());
        let source = self.load(from)?;
        let target = self.file(to)?;
        if target.exists() {
            return Err(StoreError::Io(format!("session {to} exists already")));
        }
        let mut text = String::new();
        let records = std::iter::once(Record::Meta {
            id: to.to_owned(),
            cwd: cwd.to_path_buf(),
            created_at: crate::clock::now_secs(),
        })
        .chain(source.records.into_iter().filter(|record| !matches!(record, Record::Meta { .. })));
        for record in records {
            text.push_str(&serde_json::to_string(&record).map_err(|error| StoreError::Io(error.to_string()))?);
            text.push('\n');
        }
        let agents = |id: &str| self.dir.join(format!("{id}-agents"));
        if let Ok(entries) = std::fs::read_dir(agents(from)) {
            for entry in entries
                .filter_map(Result::ok)
                .filter(|entry| entry.path().extension().is_some_and(|ext| ext == "jsonl"))
            {
                let content = std::fs::read(entry.path()).map_err(io)?;
                crate::workspace::write_private_file(&agents(to).join(entry.file_name()), &content).map_err(io)?;
            }
        }
        if let Some(data_dir) = self.dir.parent() {
            crate::token_saver::sidecar::copy(data_dir, from, to).map_err(|error| StoreError::Io(error.to_string()))?;
        }
        crate::workspace::write_private_file(&target, text.as_bytes()).map_err(io)
    }

    /// Removes a session; removing one that does not exist is not an error.
    /// What goes with it: its subagents' transcripts and the token saver's stored outputs.
    pub fn delete(&self, id: &str) -> Result<(), StoreError> {
        let file = self.file(id)?;
        let gone = |result: std::io::Result<()>| match result {
            Err(error) if error.kind() != std::io::ErrorKind::NotFound => Err(StoreError::Io(error.to_string())),
            _ => Ok(()),
        };
        gone(std::fs::remove_dir_all(self.dir.join(format!("{id}-agents"))))?;
        if let Some(data_dir) = self.dir.parent() {
            crate::token_saver::sidecar::remove(data_dir, id).map_err(|error| StoreError::Io(error.to_string()))?;
        }
        gone(std::fs::remove_file(file))
    }
}

/// The cwd and title of a session file, read from its first lines and title records only.
fn summarize(path: &Path) -> Option<(PathBuf, Option<String>)> {
    use std::io::BufRead;
    let file = std::fs::File::open(path).ok()?;
    let mut cwd = None;
    let mut title = None;
    // Split on bytes: a line that is not UTF-8 is skipped like any other, not the end.
    for line in std::io::BufReader::new(file).split(b'\n').map_while(Result::ok) {
        // Only meta and title records matter; message lines are skipped without parsing.
        if !(line.starts_with(b"{\"type\":\"meta\"") || line.starts_with(b"{\"type\":\"title\"")) {
            continue;
        }
        match serde_json::from_slice::<Record>(&line).ok()? {
            Record::Meta { cwd: dir, .. } => cwd = Some(dir),
            Record::Title { title: text } => {
                title = Some(text);
                break;
            }
            _ => {}
        }
    }
    Some((cwd?, title))
}

/// An open session file; appends whole records.
pub struct SessionLog {
    file: Mutex<std::fs::File>,
    path: std::path::PathBuf,
    /// The first append that failed, until it is told to the user (once per session).
    failure: Mutex<Option<String>>,
    told: std::sync::atomic::AtomicBool,
}

impl SessionLog {
    fn open(path: &Path) -> std::io::Result<Self> {
        use std::os::unix::fs::OpenOptionsExt;
        let file = std::fs::OpenOptions::new().create(true).append(true).mode(0o600).open(path)?;
        Ok(Self {
            file: Mutex::new(file),
            path: path.to_path_buf(),
            failure: Mutex::new(None),
            told: std::sync::atomic::AtomicBool::new(false),
        })
    }

    /// The session file, as hooks are told it (`transcript_path`).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends one record as one line. A failure (a full disk) is not fatal: the conversation
    /// goes on in memory, the part of the line written is cut off again so later records still
    /// start on a line of their own, and the first failure waits to be told to the user.
    pub fn append(&self, record: &Record) {
        let Ok(mut line) = serde_json::to_string(record) else { return };
        line.push('\n');
        let Ok(mut file) = self.file.lock() else { return };
        let before = file.metadata().map(|meta| meta.len()).ok();
        if let Err(error) = file.write_all(line.as_bytes()) {
            tracing::warn!(%error, path = %self.path.display(), "could not append to the session file");
            if let Some(before) = before {
                let _ = file.set_len(before);
            }
            if let Ok(mut failure) = self.failure.lock()
                && failure.is_none()
            {
                *failure = Some(error.to_string());
            }
        }
    }

    /// The first failed append, the first time it is asked for.
    pub fn untold_failure(&self) -> Option<String> {
        use std::sync::atomic::Ordering;
        if self.told.load(Ordering::Relaxed) {
            return None;
        }
        let failure = self.failure.lock().ok()?.clone()?;
        (!self.told.swap(true, Ordering::Relaxed)).then(|| format!("The session could not be saved to {} ({failure}); it goes on in memory, and what is not saved will be missing if you load it later.", self.path.display()))
    }
}

/// A title from the first prompt: its first line, cut at a word near 60 characters.
pub fn title_from(prompt: &str) -> String {
    let line = prompt.lines().map(str::trim).find(|line| !line.is_empty()).unwrap_or("Untitled");
    if line.chars().count() <= 60 {
        return line.to_owned();
    }
    let cut: String = line.chars().take(60).collect();
    let cut = cut.rsplit_once(' ').map(|(head, _)| head).unwrap_or(&cut);
    format!("{cut}…")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::ToolKind;
    use crate::llm::Role;

    /// A session file from before notes were typed: its tagged texts come back as notes, which
    /// the providers send as the very same text; the user's words stay text.
    #[test]
    fn an_old_files_tagged_text_loads_as_notes_that_render_the_same_bytes() {
        let old = [
            "<editor-context>\nActive file: /p/a.rs\n</editor-context>",
            "fix <this> bug",
            "<system-note>Plan mode is on.</system-note>",
            "<file uri=\"file:///p/b.rs\">\nfn b() {}\n</file>",
        ];
        let parts: Vec<Part> = old.iter().map(|text| Part::Text { text: (*text).to_owned() }).collect();
        let line = serde_json::to_string(&Record::Message { message: Message { role: Role::User, content: parts } });
        let stored = StoredSession::from_bytes("s", line.unwrap().as_bytes());
        let content = &stored.messages()[0].content;
        assert!(
            matches!(&content[0], Part::Note(crate::llm::Note::EditorContext { text }) if text == "Active file: /p/a.rs")
        );
        assert_eq!(content[1], Part::Text { text: old[1].to_owned() });
        assert!(matches!(&content[2], Part::Note(crate::llm::Note::SystemNote { .. })));
        assert!(matches!(&content[3], Part::Note(crate::llm::Note::Attachment { uri, .. }) if uri == "file:///p/b.rs"));
        for (part, text) in content.iter().zip(old) {
            let sent = match part {
                Part::Note(note) => note.render(),
                Part::Text { text } => text.clone(),
                other => panic!("{other:?}"),
            };
            assert_eq!(sent, text);
        }
    }

    #[test]
    fn a_tool_records_kind_is_stored_by_name_and_an_unknown_one_reads_as_other() {
        let record = |kind: &str| {
            format!(
                r#"{{"id":"t","name":"bash","title":"t","kind":"{kind}","failed":false,"output":"","locations":[]}}"#
            )
        };
        let read: ToolRecord = serde_json::from_str(&record("execute")).unwrap();
        assert_eq!(read.kind, ToolKind::Execute);
        assert!(
            serde_json::to_string(&read).unwrap().contains(r#""kind":"execute""#),
            "written as files always had it"
        );
        let newer: ToolRecord = serde_json::from_str(&record("switch_mode")).unwrap();
        assert_eq!(newer.kind, ToolKind::Other, "a kind a later version wrote still loads");
    }

    #[test]
    fn the_list_reads_again_what_changed_since_and_forgets_what_is_gone() {
        let dir = tempfile::tempdir().unwrap();
        let store = SessionStore::new(dir.path().join("sessions"));
        let untitled = store.create("sess_a", Path::new("/p")).unwrap();
        store.create("sess_b", Path::new("/p")).unwrap().append(&Record::Title { title: "First".into() });
        let ids = |store: &SessionStore| {
            store.list(None).into_iter().map(|session| (session.id, session.title)).collect::<Vec<_>>()
        };
        assert_eq!(ids(&store), [("sess_b".to_owned(), Some("First".to_owned()))], "an untitled session is not listed");
        // Titled after the first list: the file grew, so it is read again.
        untitled.append(&Record::Title { title: "Later".into() });
        let mut listed = ids(&store);
        listed.sort();
        assert_eq!(
            listed,
            [("sess_a".to_owned(), Some("Later".to_owned())), ("sess_b".to_owned(), Some("First".to_owned()))]
        );
        store.delete("sess_b").unwrap();
        assert_eq!(ids(&store), [("sess_a".to_owned(), Some("Later".to_owned()))]);
        assert_eq!(store.summaries.lock().unwrap().len(), 1, "a deleted file leaves the remembered list");
    }

    #[test]
    fn appends_loads_lists_and_survives_a_torn_line() {
        let dir = tempfile::tempdir().unwrap();
        let store = SessionStore::new(dir.path().join("sessions"));
        let log = store.create("sess_a", Path::new("/p")).unwrap();
        store.create("sess_empty", Path::new("/p")).unwrap();
        log.append(&Record::Title { title: "Fix the parser".into() });
        log.append(&Record::Message { message: Message::user_text("fix it") });
        log.append(&Record::Message { message: Message { role: Role::Assistant, content: vec![] } });
        drop(log);
        // A write cut off by a kill.
        let path = dir.path().join("sessions/sess_a.jsonl");
        let mut file = std::fs::OpenOptions::new().append(true).open(&path).unwrap();
        file.write_all(b"{\"type\":\"message\",\"message\":{\"ro").unwrap();
        let loaded = store.load("sess_a").unwrap();
        assert_eq!(loaded.cwd, PathBuf::from("/p"));
        assert_eq!(loaded.title.as_deref(), Some("Fix the parser"));
        assert_eq!(loaded.messages().len(), 2);
        store.create("sess_b", Path::new("/q")).unwrap().append(&Record::Title { title: "Other".into() });
        let all = store.list(None);
        assert_eq!(all.len(), 2, "the session never prompted is not listed");
        let mine = store.list(Some(Path::new("/p")));
        assert_eq!((mine[0].id.as_str(), mine[0].title.as_deref()), ("sess_a", Some("Fix the parser")));
        store.delete("sess_a").unwrap();
        store.delete("sess_a").unwrap();
        assert!(matches!(store.load("sess_a"), Err(StoreError::NotFound(_))));
        assert!(matches!(store.load("../etc/passwd"), Err(StoreError::NotFound(_))));
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(dir.path().join("sessions/sess_b.jsonl")).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }

    #[test]
    fn a_fork_takes_the_history_transcripts_and_exact_outputs_and_a_delete_takes_them_away() {
        let data = tempfile::tempdir().unwrap();
        let store = SessionStore::new(data.path().join("sessions"));
        let log = store.create("sess_a", Path::new("/p")).unwrap();
        log.append(&Record::Title { title: "Parser".into() });
        log.append(&Record::Message { message: Message::user_text("fix it") });
        store.create("child_1", Path::new("/p")).unwrap();
        let agents = data.path().join("sessions/sess_a-agents");
        std::fs::create_dir_all(&agents).unwrap();
        std::fs::write(agents.join("child_1.jsonl"), "{}\n").unwrap();
        crate::token_saver::sidecar::Sidecar::for_session(data.path(), "sess_a")
            .unwrap()
            .store("toolu_1", b"exact")
            .unwrap();
        store.fork("sess_a", "sess_b", Path::new("/p")).unwrap();
        let forked = store.load("sess_b").unwrap();
        assert_eq!(forked.messages(), store.load("sess_a").unwrap().messages());
        assert_eq!(forked.title.as_deref(), Some("Parser"));
        assert!(matches!(&forked.records[0], Record::Meta { id, .. } if id == "sess_b"));
        assert!(data.path().join("sessions/sess_b-agents/child_1.jsonl").exists());
        assert!(data.path().join("sessions/sess_b.raw/toolu_1.out").exists());
        assert!(store.fork("sess_a", "sess_b", Path::new("/p")).is_err(), "a fork never overwrites a session");
        assert!(matches!(store.fork("sess_none", "sess_c", Path::new("/p")), Err(StoreError::NotFound(_))));
        store.delete("sess_b").unwrap();
        assert!(
            !data.path().join("sessions/sess_b-agents").exists() && !data.path().join("sessions/sess_b.raw").exists()
        );
        assert!(data.path().join("sessions/sess_a.raw/toolu_1.out").exists(), "the source keeps its own");
    }

    #[test]
    fn titles_come_from_the_first_line() {
        assert_eq!(title_from("\n  Fix the off-by-one in the parser\nmore"), "Fix the off-by-one in the parser");
        let long = "word ".repeat(30);
        let title = title_from(&long);
        assert!(title.ends_with('…') && title.chars().count() <= 61, "{title}");
    }
}
