//! What bounds a session: its budget (a cost or token limit, checked before each model request,
//! subagents' spending included since they add to the same totals), the model's context window
//! when settings say it (local models' windows are whatever their server was started with), when
//! compaction steps in, and how long a silent model stream is waited for.

pub use larik_settings::{Budget, CompactionSettings};

pub use crate::spending::{Spending, SpendingLimits, Spent};

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Limits {
    pub budget: Budget,
    /// The model's window, when settings name it; otherwise the catalog's.
    pub context_window: Option<u64>,
    pub compaction: CompactionSettings,
    /// How long a model stream may send nothing (or a request go unanswered) before it is
    /// given up as stalled (`streamIdleTimeoutMs`, 5 minutes by default as in Codex).
    pub stream_idle_timeout: std::time::Duration,
    /// Keep the cached prompt an hour instead of five minutes (`promptCacheTtl: "1h"`).
    pub long_cache: bool,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            budget: Budget::default(),
            context_window: None,
            compaction: CompactionSettings::default(),
            stream_idle_timeout: DEFAULT_STREAM_IDLE_TIMEOUT,
            long_cache: false,
        }
    }
}

pub const DEFAULT_STREAM_IDLE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(300);
