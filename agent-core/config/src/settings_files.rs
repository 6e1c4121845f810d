//! The files a session's configuration is read from, as one session open reads them: each file
//! (settings, managed policy, plugin registries and manifests) and each folder listing is read
//! once, and every loader (the settings, the permission rules, the hooks, the MCP servers, the
//! plugins, the subagents, the skills) asks this snapshot. So they agree on what the files said,
//! even when the user saves one while the session opens, and a file is not read once per loader.
//!
//! A snapshot lives as long as the reading it serves: what reads the settings again later (a
//! changed role, a prompt hook's model) takes a new one, and so sees the files as they are then.

use std::collections::HashMap;
use std::io::ErrorKind;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// What reading one file gave.
#[derive(Clone)]
enum Read {
    Text(Arc<str>),
    Missing,
    Failed(ErrorKind, String),
}

/// The files read so far, by the path they were asked for.
#[derive(Default)]
pub struct SettingsFiles {
    read: Mutex<HashMap<PathBuf, Read>>,
    listed: Mutex<HashMap<PathBuf, Vec<PathBuf>>>,
}

impl SettingsFiles {
    /// What `path` holds: `Ok(None)` where there is no such file (or a file stands where a
    /// folder on its path should), an error where it exists and cannot be read.
    pub fn read(&self, path: &Path) -> std::io::Result<Option<Arc<str>>> {
        let known = self.read.lock().ok().and_then(|read| read.get(path).cloned());
        let result = known.unwrap_or_else(|| {
            let result = match std::fs::read_to_string(path) {
                Ok(text) => Read::Text(text.into()),
                Err(error) if matches!(error.kind(), ErrorKind::NotFound | ErrorKind::NotADirectory) => Read::Missing,
                Err(error) => Read::Failed(error.kind(), error.to_string()),
            };
            if let Ok(mut read) = self.read.lock() {
                read.insert(path.to_path_buf(), result.clone());
            }
            result
        });
        match result {
            Read::Text(text) => Ok(Some(text)),
            Read::Missing => Ok(None),
            Read::Failed(kind, message) => Err(std::io::Error::new(kind, message)),
        }
    }

    /// What `path` holds, where it exists and can be read.
    pub fn text(&self, path: &Path) -> Option<Arc<str>> {
        self.read(path).ok().flatten()
    }

    /// The paths in the folder `dir`, sorted; none where there is no such folder.
    pub fn entries(&self, dir: &Path) -> Vec<PathBuf> {
        if let Some(known) = self.listed.lock().ok().and_then(|listed| listed.get(dir).cloned()) {
            return known;
        }
        let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
            .map(|entries| entries.filter_map(Result::ok).map(|entry| entry.path()).collect())
            .unwrap_or_default();
        entries.sort();
        if let Ok(mut listed) = self.listed.lock() {
            listed.insert(dir.to_path_buf(), entries.clone());
        }
        entries
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_is_read_once_so_every_loader_sees_the_same_text() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("settings.json");
        std::fs::write(&path, "{\"model\": \"a\"}").unwrap();
        let files = SettingsFiles::default();
        assert_eq!(files.text(&path).as_deref(), Some("{\"model\": \"a\"}"));
        std::fs::write(&path, "{\"model\": \"b\"}").unwrap();
        assert_eq!(files.text(&path).as_deref(), Some("{\"model\": \"a\"}"), "the snapshot holds");
        assert_eq!(
            SettingsFiles::default().text(&path).as_deref(),
            Some("{\"model\": \"b\"}"),
            "a new one reads again"
        );
    }

    #[test]
    fn a_missing_file_is_none_and_an_unreadable_one_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let files = SettingsFiles::default();
        assert!(files.read(&dir.path().join("absent.json")).unwrap().is_none());
        let blocked = dir.path().join("file");
        std::fs::write(&blocked, "").unwrap();
        assert!(files.read(&blocked.join("under-a-file.json")).unwrap().is_none());
        let folder = dir.path().join("a-folder.json");
        std::fs::create_dir(&folder).unwrap();
        assert!(files.read(&folder).is_err(), "a folder where a file should be cannot be read");
        assert!(files.read(&folder).is_err(), "and says so again from the snapshot");
    }

    #[test]
    fn a_folder_is_listed_once_sorted() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("b.json"), "").unwrap();
        std::fs::write(dir.path().join("a.json"), "").unwrap();
        let files = SettingsFiles::default();
        let names = |entries: Vec<PathBuf>| {
            entries.iter().map(|path| path.file_name().unwrap().to_string_lossy().into_owned()).collect::<Vec<_>>()
        };
        assert_eq!(names(files.entries(dir.path())), ["a.json", "b.json"]);
        std::fs::write(dir.path().join("c.json"), "").unwrap();
        assert_eq!(names(files.entries(dir.path())), ["a.json", "b.json"]);
        assert!(files.entries(&dir.path().join("absent")).is_empty());
    }
}
