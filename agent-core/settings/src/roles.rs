//! `roles` in settings: a subagent role's model and how its children run.

use serde::Deserialize;

/// One role in settings: a model name alone, or the whole object.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, schemars::JsonSchema)]
#[serde(from = "RoleEntry")]
#[schemars(with = "RoleEntry")]
pub struct RoleSettings {
    pub model: Option<String>,
    pub max_turns: Option<u32>,
    pub context: Option<ContextSize>,
    pub isolation: Option<String>,
}

/// How much shared context a role's children get besides their definition's prompt.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ContextSize {
    /// The environment block, the user's instructions and the project's.
    Full,
    /// The environment block and the project's own AGENTS.md/CLAUDE.md only.
    Minimal,
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(untagged)]
enum RoleEntry {
    Model(String),
    #[serde(rename_all = "camelCase")]
    Full {
        model: Option<String>,
        max_turns: Option<u32>,
        context: Option<ContextSize>,
        isolation: Option<String>,
    },
}

impl From<RoleEntry> for RoleSettings {
    fn from(entry: RoleEntry) -> Self {
        match entry {
            RoleEntry::Model(model) => Self { model: Some(model), ..Self::default() },
            RoleEntry::Full { model, max_turns, context, isolation } => Self { model, max_turns, context, isolation },
        }
    }
}
