//! The token saver's sidecar: the exact output of a session's bash calls, one file per tool
//! call, under `<data_dir>/sessions/<session_id>.raw/` beside the session file. The directory is
//! the user's alone (mode 0700) and so is each file (0600), written whole and atomically, so a
//! reader never sees half an output. A session that is resumed keeps its id and so its sidecar;
//! a forked one gets a copy ([`copy`]).
//!
//! Ids name files: a session id is held to the session store's rule, and a tool call id may not
//! hold anything that leads out of the directory.

use std::io::{Read, Seek, SeekFrom};
use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// What goes wrong with stored output; the first three are told to the model as they are.
#[derive(Debug, thiserror::Error)]
pub enum SidecarError {
    #[error("`{0}` is not a tool call id (empty, longer than 200 bytes, or holding `/`, `\\` or control characters)")]
    BadCallId(String),
    #[error(
        "no exact output is stored for the tool call `{0}` in this session (only bash calls made while the token saver is on have one)"
    )]
    NotFound(String),
    #[error("offset {offset} is past the end of the output of `{call_id}` ({total} bytes)")]
    PastTheEnd { call_id: String, offset: u64, total: u64 },
    #[error("`{0}` cannot name a session's output directory")]
    BadSessionId(String),
    #[error("the stored output could not be read or written: {0}")]
    Io(#[from] std::io::Error),
}

/// One session's stored outputs.
#[derive(Debug, Clone)]
pub struct Sidecar {
    dir: PathBuf,
}

/// Part of a stored output.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Slice {
    pub bytes: Vec<u8>,
    /// Where `bytes` start in the output.
    pub offset: u64,
    /// The whole output's size.
    pub total: u64,
}

impl Slice {
    /// Where the next slice starts.
    pub fn end(&self) -> u64 {
        self.offset + self.bytes.len() as u64
    }
}

impl Sidecar {
    /// The sidecar of session `session_id` under `data_dir`; nothing is created until an output
    /// is stored.
    pub fn for_session(data_dir: &Path, session_id: &str) -> Result<Self, SidecarError> {
        Ok(Self { dir: directory(data_dir, session_id)? })
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Stores the exact output of `call_id`, replacing any earlier one.
    pub fn store(&self, call_id: &str, output: &[u8]) -> Result<(), SidecarError> {
        let path = self.file(call_id)?;
        private_dir(&self.dir)?;
        crate::workspace::write_private_file(&path, output)?;
        Ok(())
    }

    /// At most `limit` bytes of the output of `call_id` from `offset`. A slice that would end
    /// inside a UTF-8 character ends before it (unless that leaves nothing), so slices read one
    /// after another decode whole.
    pub fn read(&self, call_id: &str, offset: u64, limit: usize) -> Result<Slice, SidecarError> {
        let path = self.file(call_id)?;
        let mut file = match std::fs::File::open(&path) {
            Ok(file) => file,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
                return Err(SidecarError::NotFound(call_id.to_owned()));
            }
            Err(error) => return Err(error.into()),
        };
        let total = file.metadata()?.len();
        if offset > total || (offset == total && total > 0) {
            return Err(SidecarError::PastTheEnd { call_id: call_id.to_owned(), offset, total });
        }
        file.seek(SeekFrom::Start(offset))?;
        let mut bytes = Vec::with_capacity(limit.min(usize::try_from(total - offset).unwrap_or(limit)));
        file.take(limit as u64).read_to_end(&mut bytes)?;
        if offset + (bytes.len() as u64) < total {
            bytes.truncate(whole_characters(&bytes));
        }
        Ok(Slice { bytes, offset, total })
    }

    fn file(&self, call_id: &str) -> Result<PathBuf, SidecarError> {
        let climbs_out = call_id.is_empty()
            || call_id.len() > 200
            || call_id.chars().any(|c| c == '/' || c == '\\' || c.is_control());
        if climbs_out {
            return Err(SidecarError::BadCallId(call_id.to_owned()));
        }
        // The suffix keeps `.` and `..` ordinary names.
        Ok(self.dir.join(format!("{call_id}.out")))
    }
}

/// Copies the stored outputs of session `from` to session `to` (for a fork), as private as the
/// originals. A session without any is not an error: there is nothing to copy. Returns how many
/// outputs were copied.
pub fn copy(data_dir: &Path, from: &str, to: &str) -> Result<usize, SidecarError> {
    let source = directory(data_dir, from)?;
    let target = directory(data_dir, to)?;
    let entries = match std::fs::read_dir(&source) {
        Ok(entries) => entries,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(0),
        Err(error) => return Err(error.into()),
    };
    private_dir(&target)?;
    let mut copied = 0;
    for entry in entries {
        let entry = entry?;
        let name = entry.file_name();
        // Only what `store` wrote: not a temp file caught mid-write, nothing but plain files.
        if !entry.file_type()?.is_file() || !name.to_string_lossy().ends_with(".out") {
            continue;
        }
        let output = std::fs::read(entry.path())?;
        crate::workspace::write_private_file(&target.join(&name), &output)?;
        copied += 1;
    }
    Ok(copied)
}

/// Removes a session's stored outputs (with the session); none stored is not an error.
pub fn remove(data_dir: &Path, session_id: &str) -> Result<(), SidecarError> {
    match std::fs::remove_dir_all(directory(data_dir, session_id)?) {
        Ok(()) => Ok(()),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(error) => Err(error.into()),
    }
}

fn directory(data_dir: &Path, session_id: &str) -> Result<PathBuf, SidecarError> {
    // The session store's rule for ids that name files.
    if session_id.is_empty() || !session_id.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-') {
        return Err(SidecarError::BadSessionId(session_id.to_owned()));
    }
    Ok(data_dir.join("sessions").join(format!("{session_id}.raw")))
}

/// Creates `dir` as 0700 (its parents as usual), or makes an existing one 0700.
fn private_dir(dir: &Path) -> std::io::Result<()> {
    if let Some(parent) = dir.parent() {
        std::fs::create_dir_all(parent)?;
    }
    match std::fs::DirBuilder::new().mode(0o700).create(dir) {
        Ok(()) => Ok(()),
        Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists => {
            std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))
        }
        Err(error) => Err(error),
    }
}

/// How many leading bytes of `bytes` end on a character boundary: a UTF-8 sequence cut at the
/// end is left for the next slice. Bytes that are not UTF-8 at all are kept as they are.
fn whole_characters(bytes: &[u8]) -> usize {
    // The last lead byte within a character's length of the end.
    let tail = bytes.len().saturating_sub(4);
    let Some(lead) = (tail..bytes.len()).rev().find(|&index| bytes[index] & 0b1100_0000 != 0b1000_0000) else {
        return bytes.len();
    };
    let needs = match bytes[lead] {
        byte if byte >= 0b1111_0000 => 4,
        byte if byte >= 0b1110_0000 => 3,
        byte if byte >= 0b1100_0000 => 2,
        _ => 1,
    };
    if lead + needs > bytes.len() && lead > 0 { lead } else { bytes.len() }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mode(path: &Path) -> u32 {
        std::fs::metadata(path).unwrap().permissions().mode() & 0o777
    }

    #[test]
    fn outputs_are_private_and_read_back_in_slices() {
        let data = tempfile::tempdir().unwrap();
        let sidecar = Sidecar::for_session(data.path(), "session-1").unwrap();
        assert!(!sidecar.dir().exists(), "nothing is created before an output is stored");
        sidecar.store("toolu_01", b"0123456789").unwrap();
        assert_eq!(sidecar.dir(), data.path().join("sessions/session-1.raw"));
        assert_eq!(mode(sidecar.dir()), 0o700);
        assert_eq!(mode(&sidecar.dir().join("toolu_01.out")), 0o600);
        let first = sidecar.read("toolu_01", 0, 4).unwrap();
        assert_eq!((first.bytes.as_slice(), first.offset, first.total, first.end()), (&b"0123"[..], 0, 10, 4));
        assert_eq!(sidecar.read("toolu_01", 8, 20_000).unwrap().bytes, b"89");
        assert!(matches!(sidecar.read("toolu_01", 10, 4), Err(SidecarError::PastTheEnd { total: 10, .. })));
        assert!(matches!(sidecar.read("toolu_02", 0, 4), Err(SidecarError::NotFound(_))));
        sidecar.store("empty", b"").unwrap();
        assert_eq!(sidecar.read("empty", 0, 4).unwrap().total, 0, "an empty output reads as empty");
    }

    #[test]
    fn ids_cannot_climb_out() {
        let data = tempfile::tempdir().unwrap();
        let sidecar = Sidecar::for_session(data.path(), "s").unwrap();
        for id in ["../s2.raw/x", "a/b", "..\\x", "", "a\nb", &"x".repeat(201)] {
            assert!(matches!(sidecar.store(id, b"x"), Err(SidecarError::BadCallId(_))), "{id:?}");
            assert!(matches!(sidecar.read(id, 0, 1), Err(SidecarError::BadCallId(_))), "{id:?}");
        }
        // Dots and colons are ordinary (some providers' ids have them); `..` stays inside.
        sidecar.store("..", b"dots").unwrap();
        sidecar.store("functions.bash:0", b"kimi").unwrap();
        assert_eq!(sidecar.read("..", 0, 10).unwrap().bytes, b"dots");
        assert!(sidecar.dir().join("...out").exists());
        for session in ["../x", "a.b", ""] {
            assert!(
                matches!(Sidecar::for_session(data.path(), session), Err(SidecarError::BadSessionId(_))),
                "{session:?}"
            );
        }
    }

    #[test]
    fn a_slice_does_not_end_inside_a_character() {
        let data = tempfile::tempdir().unwrap();
        let sidecar = Sidecar::for_session(data.path(), "s").unwrap();
        sidecar.store("t", "aé€😀z".as_bytes()).unwrap();
        // `é` is 2 bytes at 1..3; a limit of 2 would cut it.
        let first = sidecar.read("t", 0, 2).unwrap();
        assert_eq!(first.bytes, b"a");
        let second = sidecar.read("t", first.end(), 4).unwrap();
        assert_eq!(std::str::from_utf8(&second.bytes).unwrap(), "é");
        let rest = sidecar.read("t", second.end(), 20_000).unwrap();
        assert_eq!(std::str::from_utf8(&rest.bytes).unwrap(), "€😀z");
        assert_eq!(rest.end(), rest.total);
    }

    #[test]
    fn a_fork_gets_a_private_copy() {
        let data = tempfile::tempdir().unwrap();
        let parent = Sidecar::for_session(data.path(), "parent").unwrap();
        parent.store("t1", b"one").unwrap();
        parent.store("t2", b"two").unwrap();
        assert_eq!(copy(data.path(), "parent", "fork").unwrap(), 2);
        let fork = Sidecar::for_session(data.path(), "fork").unwrap();
        assert_eq!(fork.read("t2", 0, 10).unwrap().bytes, b"two");
        assert_eq!(mode(fork.dir()), 0o700);
        assert_eq!(mode(&fork.dir().join("t1.out")), 0o600);
        fork.store("t3", b"three").unwrap();
        assert!(matches!(parent.read("t3", 0, 10), Err(SidecarError::NotFound(_))), "the copies are apart");
        assert_eq!(copy(data.path(), "never-ran-bash", "fork2").unwrap(), 0);
        assert!(!data.path().join("sessions/fork2.raw").exists());
        assert!(matches!(copy(data.path(), "parent", "../x"), Err(SidecarError::BadSessionId(_))));
        remove(data.path(), "fork").unwrap();
        assert!(!fork.dir().exists());
        remove(data.path(), "fork").unwrap();
    }
}
