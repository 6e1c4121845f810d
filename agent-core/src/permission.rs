//! Every permission decision goes through [`decide`], which fails closed. Steps, in order:
//! a write outside the project (or through a symlink, or to a protected file) is denied in every
//! mode; yolo allows; read-only tools are allowed; plan mode denies changes; an allow rule allows;
//! write/edit in accept-edits mode inside the project is allowed; anything else asks the user.

use std::sync::Mutex;

use crate::tools::{CallDescription, DynTool};
use crate::workspace::Workspace;

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
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    Allow,
    Deny { reason: String },
    Ask { reason: String },
}

/// The session's permission state: mode and the rules added by "always allow".
#[derive(Default)]
pub struct Permissions {
    mode: Mutex<Mode>,
    allow_rules: Mutex<Vec<String>>,
}

impl Permissions {
    pub fn mode(&self) -> Mode {
        self.mode.lock().map(|mode| *mode).unwrap_or_default()
    }

    pub fn set_mode(&self, mode: Mode) {
        if let Ok(mut current) = self.mode.lock() {
            *current = mode;
        }
    }

    /// Adds a rule for the rest of the session.
    pub fn allow(&self, rule: String) {
        if let Ok(mut rules) = self.allow_rules.lock()
            && !rules.contains(&rule)
        {
            rules.push(rule);
        }
    }

    fn allowed_by_rule(&self, tool: &str) -> bool {
        self.allow_rules.lock().map(|rules| rules.iter().any(|rule| rule == tool)).unwrap_or(false)
    }

    pub fn decide(&self, tool: &dyn DynTool, call: &CallDescription, workspace: &Workspace) -> Decision {
        // 1. Writes must stay inside the project and off protected files, whatever the mode.
        if let Some(target) = &call.target_path
            && let Err(error) = workspace.writable(target)
        {
            return Decision::Deny { reason: error.to_string() };
        }
        let mode = self.mode();
        if mode == Mode::Yolo {
            return Decision::Allow;
        }
        if tool.read_only() {
            return Decision::Allow;
        }
        if mode == Mode::Plan {
            return Decision::Deny { reason: format!("plan mode is on: {} changes things, so it cannot run until plan mode ends", tool.name()) };
        }
        if self.allowed_by_rule(tool.name()) {
            return Decision::Allow;
        }
        if mode == Mode::AcceptEdits && call.target_path.is_some() {
            return Decision::Allow;
        }
        Decision::Ask { reason: format!("{} needs your approval", tool.name()) }
    }
}

/// The rule "always allow" proposes for a call.
pub fn suggested_rule(tool: &dyn DynTool) -> String {
    tool.name().to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::Registry;

    #[test]
    fn follows_the_decision_order() {
        let dir = tempfile::tempdir().unwrap();
        let workspace = Workspace::new(dir.path());
        let registry = Registry::builtin(None);
        let write = registry.get("write").unwrap();
        let read = registry.get("read").unwrap();
        let inside = CallDescription { target_path: Some("a.txt".into()), ..CallDescription::titled("w") };
        let outside = CallDescription { target_path: Some("../a.txt".into()), ..CallDescription::titled("w") };
        let permissions = Permissions::default();
        assert!(matches!(permissions.decide(write.as_ref(), &inside, &workspace), Decision::Ask { .. }));
        assert_eq!(permissions.decide(read.as_ref(), &CallDescription::titled("r"), &workspace), Decision::Allow);
        permissions.set_mode(Mode::Yolo);
        assert_eq!(permissions.decide(write.as_ref(), &inside, &workspace), Decision::Allow);
        assert!(matches!(permissions.decide(write.as_ref(), &outside, &workspace), Decision::Deny { .. }), "even in yolo");
        permissions.set_mode(Mode::Plan);
        assert!(matches!(permissions.decide(write.as_ref(), &inside, &workspace), Decision::Deny { .. }));
        permissions.set_mode(Mode::AcceptEdits);
        assert_eq!(permissions.decide(write.as_ref(), &inside, &workspace), Decision::Allow);
        permissions.set_mode(Mode::Default);
        permissions.allow("write".into());
        assert_eq!(permissions.decide(write.as_ref(), &inside, &workspace), Decision::Allow);
    }
}
