//! Skills and custom commands, in Claude Code's formats: Agent Skills (`<name>/SKILL.md` with
//! bundled files) and commands (`commands/<name>.md`), one set by name. Progressive disclosure:
//! only an index of `name: description` lines goes into the system prompt, the `skill` tool
//! loads a body when the model wants it, and `/name args` runs one directly. The set is read
//! again before each prompt, so an added or edited skill needs no restart: the index in the
//! system prompt (the cached prefix) stays as it was until the conversation starts over, and a
//! note in the prompt tells the model what changed.
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
    /// The plugin that brought it (its name is then `plugin:name`).
    pub plugin: Option<crate::config::plugins::PluginDirs>,
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
        // The files as they are now: a reload is for what changed since.
        let files = crate::config::SettingsFiles::default();
        let (found, problems) = discovery::discover(&files, &source.project, &source.env);
        if let Ok(mut current) = self.current.write() {
            *current = Arc::new(found);
        }
        problems
    }

    /// Reads the roots again between prompts: what changed since the last read, `None` when
    /// nothing the model or the menu sees did (a changed body is picked up all the same).
    pub fn refresh(&self) -> Option<Changes> {
        let before = self.all();
        let problems = self.reload();
        let after = self.all();
        let offered = |skills: &BTreeMap<String, Skill>, name: &str| {
            skills.get(name).filter(|skill| skill.model_invocable).map(|skill| skill.description.clone())
        };
        let added: Vec<(String, String)> = after
            .values()
            .filter(|skill| skill.model_invocable)
            .filter(|skill| offered(&before, &skill.name).as_ref() != Some(&skill.description))
            .map(|skill| (skill.name.clone(), skill.description.clone()))
            .collect();
        let removed: Vec<String> = before
            .values()
            .filter(|skill| skill.model_invocable && offered(&after, &skill.name).is_none())
            .map(|skill| skill.name.clone())
            .collect();
        let menu = |skills: &BTreeMap<String, Skill>| -> Vec<SlashCommand> {
            skills.values().filter(|skill| skill.user_invocable).map(SlashCommand::from).collect()
        };
        let menu_changed = menu(&before) != menu(&after);
        (!added.is_empty() || !removed.is_empty() || menu_changed).then_some(Changes {
            added,
            removed,
            menu_changed,
            problems,
        })
    }

    /// Every skill and command, by name.
    pub fn all(&self) -> Arc<BTreeMap<String, Skill>> {
        self.current.read().map(|current| Arc::clone(&current)).unwrap_or_default()
    }

    /// The skill or command named `name`; a plugin's also by its name without the plugin's,
    /// as Claude Code allows, where no other has that name.
    pub fn get(&self, name: &str) -> Option<Skill> {
        let all = self.all();
        if let Some(skill) = all.get(name) {
            return Some(skill.clone());
        }
        let unscoped = |skill: &&Skill| skill.name.split_once(':').is_some_and(|(_, rest)| rest == name);
        let mut plugins = all.values().filter(|skill| skill.plugin.is_some()).filter(unscoped);
        match (plugins.next(), plugins.next()) {
            (Some(only), None) => Some(only.clone()),
            _ => None,
        }
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
        self.all().values().filter(|skill| skill.user_invocable).map(SlashCommand::from).collect()
    }
}

impl From<&Skill> for SlashCommand {
    fn from(skill: &Skill) -> Self {
        SlashCommand {
            name: skill.name.clone(),
            description: skill.description.clone(),
            hint: skill.argument_hint.clone(),
        }
    }
}

/// What reading the skills again changed.
#[derive(Debug, PartialEq)]
pub struct Changes {
    /// Skills the model may load that are new, or whose description changed: name, description.
    pub added: Vec<(String, String)>,
    /// Skills the model could load and no longer can.
    pub removed: Vec<String>,
    /// The commands the user may type are not the same.
    pub menu_changed: bool,
    /// Files left out, and why.
    pub problems: Vec<String>,
}

impl Changes {
    /// What the model is told, after the cached prefix (the system prompt's index stays as it
    /// was until the conversation starts over); `None` when nothing it may load changed.
    pub fn note(&self) -> Option<String> {
        if self.added.is_empty() && self.removed.is_empty() {
            return None;
        }
        let mut text = String::from("The skills changed since the list in the system prompt.");
        if !self.added.is_empty() {
            text.push_str(" Now available (load one with the skill tool):");
            for (name, description) in &self.added {
                text.push_str(&format!(
                    "\n- {name}: {}",
                    crate::event::one_line(description, index::MAX_DESCRIPTION_CHARS)
                ));
            }
        }
        if !self.removed.is_empty() {
            text.push_str(&format!("\nNo longer available: {}.", self.removed.join(", ")));
        }
        Some(text)
    }
}

/// `/name args` split into the name and the arguments (trimmed); `None` for other text.
pub fn slash_command(typed: &str) -> Option<(&str, &str)> {
    let rest = typed.trim().strip_prefix('/')?;
    let (name, args) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
    Some((name, args.trim()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_model_hears_of_skills_it_may_load_and_nothing_else() {
        let changes = |added: Vec<(String, String)>, removed: Vec<String>| Changes {
            added,
            removed,
            menu_changed: true,
            problems: Vec::new(),
        };
        assert_eq!(changes(Vec::new(), Vec::new()).note(), None, "a menu-only change is the editor's");
        let note = changes(vec![("deploy".into(), "Ships it\nsafely".into())], vec!["old".into()]).note().unwrap();
        assert_eq!(
            note,
            "The skills changed since the list in the system prompt. Now available (load one with the skill tool):\n- deploy: Ships it safely\nNo longer available: old."
        );
    }
}
