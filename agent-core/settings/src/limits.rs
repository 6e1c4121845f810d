//! `budget` and `compaction` in settings: what a session may spend, and when its conversation
//! is summarized.

use serde::Deserialize;

/// `budget` in settings.
#[derive(Debug, Clone, Copy, Default, PartialEq, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", default)]
pub struct Budget {
    /// US dollars the session may spend (models without a known price cannot count towards it).
    pub max_cost_usd: Option<f64>,
    /// Tokens the session may use, input (cached included) and output.
    pub max_tokens: Option<u64>,
}

impl Budget {
    /// Both budgets at once: each limit the lower of the two.
    pub fn tighter(one: Option<Budget>, other: Option<Budget>) -> Option<Budget> {
        let lower = |a: Option<f64>, b: Option<f64>| match (a, b) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        match (one, other) {
            (Some(one), Some(other)) => Some(Budget {
                max_cost_usd: lower(one.max_cost_usd, other.max_cost_usd),
                max_tokens: match (one.max_tokens, other.max_tokens) {
                    (Some(a), Some(b)) => Some(a.min(b)),
                    (a, b) => a.or(b),
                },
            }),
            (one, other) => one.or(other),
        }
    }
}

/// `compaction` in settings.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", default)]
pub struct CompactionSettings {
    /// Compact on its own when the context nears the window (default on).
    pub auto: bool,
    /// The share of the window at which it does (default 0.8).
    pub threshold: f64,
}

impl Default for CompactionSettings {
    fn default() -> Self {
        Self { auto: true, threshold: 0.8 }
    }
}

impl CompactionSettings {
    /// The threshold as the settings give it, kept where compaction still makes sense.
    pub fn threshold(&self) -> f64 {
        if self.threshold.is_finite() { self.threshold.clamp(0.2, 0.95) } else { 0.8 }
    }
}
