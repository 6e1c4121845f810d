//! Skills and custom commands, in Claude Code's formats: Agent Skills (`<name>/SKILL.md` with
//! bundled files) and commands (`commands/<name>.md`), one set by name. Progressive disclosure:
//! only an index of `name: description` lines goes into the system prompt, the `skill` tool
//! loads a body when the model wants it, and `/name args` runs one directly. The set is read
//! again at each fresh context (a new session, `/clear`), so an edited skill needs no restart.
//!
//! Nothing in a skill widens permissions: `allowed-tools` is not read, and the inline commands
//! and `@file`s of a command the user runs go through the same permission decision as the
//! model's calls, taking only what it allows without asking (`expand.rs`).

pub(crate) mod discovery;
pub mod expand;
mod index;
pub mod tool;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::{Arc, RwLock};

use serde_json::Value;

use crate::config::SettingsSource;

pub use crate::event::SlashCommand;
pub use index::index;

/// One skill or command.
#[derive(Debug, Clone, PartialEq)]
pub struct Skill {
    pub name: String,
    pub description: String,
    /// The instructions, frontmatter removed.
    pub body: String,
    /// What `/name` takes, as written (`[file] [focus]`).
    pub argument_hint: Option<String>,
    /// In the index and loadable with the `skill` tool.
    pub model_invocable: bool,
    /// Offered as a slash command.
    pub user_invocable: bool,
    /// The portable Agent Skills fields, read and kept.
    pub license: Option<String>,
    pub compatibility: Option<String>,
    pub metadata: Option<Value>,
    pub kind: Kind,
    /// The file it came from.
    pub path: PathBuf,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Kind {
    /// A skill, with its directory of bundled files.
    Skill {
        dir: PathBuf,
    },
    Command,
}

/// The session's skills and commands, replaced as a whole when read again.
#[derive(Default)]
pub struct Skills {
    source: Option<SettingsSource>,
    current: RwLock<Arc<BTreeMap<String, Skill>>>,
}

impl Skills {
    /// The skills for the project and user `source` describes; what the user should hear about
    /// files left out.
    pub fn load(source: Option<SettingsSource>) -> (Self, Vec<String>) {
        let skills = Self { source, current: RwLock::default() };
        let problems = skills.reload();
        (skills, problems)
    }

    /// Reads the roots again; returns the files left out, and why.
    pub fn reload(&self) -> Vec<String> {
        let Some(source) = &self.source else { return Vec::new() };
        let (found, problems) = discovery::discover(&source.project, &source.env);
        if let Ok(mut current) = self.current.write() {
            *current = Arc::new(found);
        }
        problems
    }

    /// Every skill and command, by name.
    pub fn all(&self) -> Arc<BTreeMap<String, Skill>> {
        self.current.read().map(|current| Arc::clone(&current)).unwrap_or_default()
    }

    pub fn get(&self, name: &str) -> Option<Skill> {
        self.all().get(name).cloned()
    }

    /// The skill or command the user may run that `typed` calls (`/name args`), with its
    /// arguments.
    pub fn typed(&self, typed: &str) -> Option<(Skill, String)> {
        let (name, args) = slash_command(typed)?;
        let skill = self.get(name).filter(|skill| skill.user_invocable)?;
        Some((skill, args.to_owned()))
    }

    /// The ones the user may run, as slash commands.
    pub fn commands(&self) -> Vec<SlashCommand> {
        self.all()
            .values()
            .filter(|skill| skill.user_invocable)
            .map(|skill| SlashCommand {
                name: skill.name.clone(),
                description: skill.description.clone(),
                hint: skill.argument_hint.clone(),
            })
            .collect()
    }
}

/// `/name args` split into the name and the arguments (trimmed); `None` for other text.
pub fn slash_command(typed: &str) -> Option<(&str, &str)> {
    let rest = typed.trim().strip_prefix('/')?;
    let (name, args) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
    Some((name, args.trim()))
}
