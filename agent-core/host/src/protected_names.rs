//! The names inside a project that decide what runs later outside the agent's control, or what
//! another tool may do: this agent's and other agents' settings, editors' workspace
//! configuration that starts programs, git hook managers, submodules, MCP server lists, shell
//! start-up files. One list, read by the write tools' check (`workspace`) and by the
//! sandbox (`sandbox`), so the two refuse the same names. `protocol-spec/spec/settings.md`
//! says why each is here; a file that only holds code the user reviews before running it (a
//! `Makefile`) is not.

/// One protected name, directly under a project root (and, for the write tools, anywhere).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProtectedName {
    pub name: &'static str,
    pub why: &'static str,
    pub when_absent: Absent,
}

/// Whether a name is kept absent too, or protected only once it exists.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Absent {
    /// A command may not create it.
    KeptAbsent,
    /// Protected only when it exists: shell start-up files (a project that is a home directory)
    /// and `.npmrc`, which npm inside the sandbox reads and could not read as the directory that
    /// stands in for an absent file.
    MayBeCreated,
}

const AGENT: &str = "agent settings that run code or grant permissions";
const EDITOR: &str = "editor configuration that starts programs";
const OTHER_AGENT: &str = "another agent's configuration: its approval policy, MCP servers and hooks";
const GIT: &str = "git configuration that runs programs (hooks, submodules)";
const SHELL: &str = "shell, git or npm configuration that runs programs";

const fn kept(name: &'static str, why: &'static str) -> ProtectedName {
    ProtectedName { name, why, when_absent: Absent::KeptAbsent }
}

const fn existing(name: &'static str) -> ProtectedName {
    ProtectedName { name, why: SHELL, when_absent: Absent::MayBeCreated }
}

/// Every protected name but `.git`, which the sandbox treats entry by entry.
pub const NAMES: &[ProtectedName] = &[
    kept(".larik", AGENT),
    kept(".claude", AGENT),
    kept(".mcp.json", "MCP servers that agents start"),
    kept(".vscode", EDITOR),
    kept(".idea", EDITOR),
    kept(".helix", EDITOR),
    kept(".zed", EDITOR),
    kept(".nvim.lua", EDITOR),
    kept(".exrc", EDITOR),
    kept(".envrc", "direnv runs it when a shell enters the directory"),
    kept(".codex", OTHER_AGENT),
    kept(".gemini", OTHER_AGENT),
    kept(".opencode", OTHER_AGENT),
    kept("opencode.json", OTHER_AGENT),
    kept(".cursor", OTHER_AGENT),
    kept(".windsurf", OTHER_AGENT),
    kept(".continue", OTHER_AGENT),
    kept(".amazonq", OTHER_AGENT),
    kept(".roo", OTHER_AGENT),
    kept(".clinerules", OTHER_AGENT),
    kept(".aider.conf.yml", OTHER_AGENT),
    kept(".husky", GIT),
    kept(".gitmodules", GIT),
    existing(".npmrc"),
    existing(".bashrc"),
    existing(".bash_profile"),
    existing(".zshrc"),
    existing(".zprofile"),
    existing(".profile"),
    existing(".gitconfig"),
];

/// The protected name `name` is, if any (case-insensitively: a case-insensitive file system
/// opens `.VSCode` as `.vscode`).
pub fn protected(name: &str) -> Option<&'static ProtectedName> {
    if name.eq_ignore_ascii_case(".git") {
        return Some(&GIT_DIR);
    }
    NAMES.iter().find(|protected| protected.name.eq_ignore_ascii_case(name))
}

const GIT_DIR: ProtectedName = kept(".git", GIT);
