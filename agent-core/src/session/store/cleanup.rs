//! Removing sessions nobody has written to for a while (`cleanupPeriodDays`), as Claude Code
//! does at startup: each goes whole, with its subagents' transcripts and the token saver's
//! stored outputs ([`SessionStore::delete`]).

use std::time::{Duration, SystemTime};

use super::SessionStore;

impl SessionStore {
    /// Removes every session whose file was last written more than `days` days ago; returns how
    /// many went. A file that cannot be read or removed stays, logged.
    pub fn remove_older_than(&self, days: u32) -> usize {
        let Some(cutoff) = SystemTime::now().checked_sub(Duration::from_secs(u64::from(days) * 24 * 60 * 60)) else {
            return 0;
        };
        let Ok(entries) = std::fs::read_dir(&self.dir) else { return 0 };
        let mut removed = 0;
        for entry in entries.filter_map(Result::ok) {
            let path = entry.path();
            if path.extension().is_none_or(|ext| ext != "jsonl") {
                continue;
            }
            let Some(id) = path.file_stem().and_then(|stem| stem.to_str()) else { continue };
            let stale = entry.metadata().and_then(|metadata| metadata.modified()).is_ok_and(|at| at < cutoff);
            if !stale {
                continue;
            }
            match self.delete(id) {
                Ok(()) => removed += 1,
                Err(error) => tracing::warn!(%error, session = id, "an expired session could not be removed"),
            }
        }
        if removed > 0 {
            tracing::info!(removed, days, "sessions older than cleanupPeriodDays removed");
        }
        removed
    }
}
