//! The permission mode, as sessions start in it and settings name it.

/// How much the agent may do without asking.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Mode {
    #[default]
    Default,
    AcceptEdits,
    Plan,
    Yolo,
}

impl Mode {
    pub const ALL: [Mode; 4] = [Mode::Default, Mode::AcceptEdits, Mode::Plan, Mode::Yolo];

    pub fn id(self) -> &'static str {
        match self {
            Mode::Default => "default",
            Mode::AcceptEdits => "accept-edits",
            Mode::Plan => "plan",
            Mode::Yolo => "yolo",
        }
    }

    pub fn from_id(id: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|mode| mode.id() == id)
    }

    /// A mode as settings files name it: Larik's ids, or Claude Code's `defaultMode` values
    /// (`default`, `acceptEdits`, `plan`, `bypassPermissions`).
    pub fn from_setting(value: &str) -> Option<Self> {
        match value {
            "acceptEdits" => Some(Mode::AcceptEdits),
            "bypassPermissions" => Some(Mode::Yolo),
            other => Self::from_id(other),
        }
    }

    /// How Claude Code's `defaultMode` names it, which both agents read.
    pub fn setting_name(self) -> &'static str {
        match self {
            Mode::AcceptEdits => "acceptEdits",
            Mode::Yolo => "bypassPermissions",
            other => other.id(),
        }
    }
}
