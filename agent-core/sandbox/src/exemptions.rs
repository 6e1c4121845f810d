//! Which command lines run outside the sandbox: those the user's settings exclude (Claude Code's
//! `sandbox.excludedCommands`, for tools that cannot work confined, such as `docker`), and those
//! the model asked to run outside it, unless the settings take that choice away
//! (`sandbox.allowUnsandboxedCommands: false`). A command outside the sandbox is decided as any
//! unsandboxed one: it asks, unless a rule allows it.

/// The settings' exemptions from the sandbox.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Exemptions {
    /// Commands that run outside: a program (`docker`), a program and its first words
    /// (`git push`), or either with Claude Code's `:*` or ` *` suffix.
    pub excluded_commands: Vec<String>,
    /// Whether a call may ask to run outside the sandbox.
    pub model_may_opt_out: bool,
}

impl Default for Exemptions {
    fn default() -> Self {
        Self { excluded_commands: Vec::new(), model_may_opt_out: true }
    }
}

impl Exemptions {
    /// Whether `line` runs confined, the call having asked for the sandbox (`asked`) or not.
    pub fn confines(&self, line: &str, asked: bool) -> bool {
        if self.excludes(line) {
            return false;
        }
        asked || !self.model_may_opt_out
    }

    /// Whether a command of `line` is an excluded one. A line the grammar cannot read is judged
    /// as written.
    fn excludes(&self, line: &str) -> bool {
        if self.excluded_commands.is_empty() {
            return false;
        }
        let parsed = larik_host::shell::parse(line);
        let mut commands = parsed.commands;
        if parsed.unparsable {
            commands.push(line.trim().to_owned());
        }
        commands.iter().any(|command| {
            self.excluded_commands.iter().any(|excluded| {
                let prefix = excluded.trim().trim_end_matches(":*").trim_end_matches(" *").trim();
                !prefix.is_empty()
                    && (command == prefix || command.strip_prefix(prefix).is_some_and(|rest| rest.starts_with(' ')))
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn excluded_commands_run_outside_and_the_opt_out_can_be_taken_away() {
        let exemptions = Exemptions {
            excluded_commands: vec!["docker".into(), "git push:*".into(), "make *".into()],
            model_may_opt_out: true,
        };
        assert!(!exemptions.confines("docker ps", true));
        assert!(!exemptions.confines("cd app && docker compose up", true), "any command of the line");
        assert!(!exemptions.confines("git push origin main", true));
        assert!(exemptions.confines("git status", true));
        assert!(exemptions.confines("dockerd-rootless", true), "a whole word, not a prefix of one");
        assert!(!exemptions.confines("make", true));
        assert!(!exemptions.confines("ls", false), "the call opted out");
        let strict = Exemptions { model_may_opt_out: false, ..exemptions.clone() };
        assert!(strict.confines("ls", false), "the opt-out is taken away");
        assert!(!strict.confines("docker ps", false), "an excluded command still runs outside");
    }
}
