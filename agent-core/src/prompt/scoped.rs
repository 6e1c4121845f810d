//! Memory that applies where the model works, read when it first gets there: a `CLAUDE.md` (or
//! `AGENTS.md`) in a subdirectory of the project, the first time the model touches a file
//! below it, and a rule whose `paths` or `globs` frontmatter matches a touched file, the first
//! time one does. Each reaches the model once per conversation, appended to the result of the
//! call that touched it: after the cached prefix, which never changes for it.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

use globset::{Glob, GlobSet, GlobSetBuilder};

use super::memory::{self, MemoryFile};

/// The names a subdirectory's memory file has.
const NESTED_NAMES: [&str; 2] = ["AGENTS.md", "CLAUDE.md"];

/// A session's scoped memory, and what of it the model has read.
pub struct ScopedMemory {
    root: PathBuf,
    home: Option<PathBuf>,
    excluded: memory::Excluded,
    /// As written, for a child's.
    excluded_globs: Vec<String>,
    /// Read at the first touch, not when the session opens.
    rules: OnceLock<Vec<(memory::ScopedRule, GlobSet)>>,
    /// Labels already given in this conversation.
    given: Mutex<HashSet<String>>,
}

impl ScopedMemory {
    /// The scoped memory of the project at `root` and of the user, but for the files the user's
    /// `claudeMdExcludes` leaves out.
    pub fn new(root: &Path, user: &larik_settings::paths::UserInstructions) -> Self {
        Self::with(root, user.home.as_deref(), &user.claude_md_excludes)
    }

    fn with(root: &Path, home: Option<&Path>, excluded: &[String]) -> Self {
        let root = std::fs::canonicalize(root).unwrap_or_else(|_| root.to_path_buf());
        Self {
            root,
            home: home.map(Path::to_path_buf),
            excluded: memory::Excluded::new(excluded),
            excluded_globs: excluded.to_vec(),
            rules: OnceLock::new(),
            given: Mutex::default(),
        }
    }

    /// The same memory for an agent working in `root` (a child), which has read none of it.
    pub fn for_root(&self, root: &Path) -> Self {
        Self::with(root, self.home.as_deref(), &self.excluded_globs)
    }

    /// The path-scoped rules; one whose globs do not parse is left out.
    fn rules(&self) -> &[(memory::ScopedRule, GlobSet)] {
        self.rules.get_or_init(|| {
            memory::scoped_rules(&self.root, self.home.as_deref(), &self.excluded)
                .into_iter()
                .filter_map(|rule| {
                    let mut set = GlobSetBuilder::new();
                    for glob in &rule.globs {
                        set.add(Glob::new(glob).ok()?);
                    }
                    let globs = set.build().ok()?;
                    Some((rule, globs))
                })
                .collect()
        })
    }

    /// What touching `path` (absolute) brings that this conversation has not read yet, each
    /// rendered for the call's result.
    pub fn touched(&self, path: &Path) -> Vec<String> {
        let Ok(relative) = path.strip_prefix(&self.root) else { return Vec::new() };
        let Ok(mut given) = self.given.lock() else { return Vec::new() };
        let mut out = Vec::new();
        // The subdirectories from the root down to the file's, the root's own files excepted
        // (the system prompt has them).
        let mut dir = self.root.clone();
        let parents: Vec<_> = relative.parent().map(|parent| parent.components().collect()).unwrap_or_default();
        for part in parents {
            dir.push(part);
            for name in NESTED_NAMES {
                let file = dir.join(name);
                if !file.is_file() {
                    continue;
                }
                for found in memory::nested_project_file(&self.root, &file, &self.excluded) {
                    if given.insert(found.label.clone()) {
                        out.push(render(&found, &format!("applies to files under {}", label_of(&dir, &self.root))));
                    }
                }
            }
        }
        for (rule, globs) in self.rules() {
            if globs.is_match(relative) && given.insert(rule.label.clone()) {
                let file = MemoryFile { label: rule.label.clone(), text: rule.text.clone(), imported_by: None };
                out.push(render(&file, &format!("applies to {}", rule.globs.join(", "))));
            }
        }
        out
    }

    /// The conversation started over (`/clear`, a compaction): everything may be given again.
    pub fn forget(&self) {
        if let Ok(mut given) = self.given.lock() {
            given.clear();
        }
    }
}

fn label_of(dir: &Path, root: &Path) -> String {
    dir.strip_prefix(root).map_or_else(|_| dir.display().to_string(), |relative| format!("{}/", relative.display()))
}

fn render(file: &MemoryFile, scope: &str) -> String {
    let imported_by = file.imported_by.as_ref().map(|by| format!(" imported-by=\"{by}\"")).unwrap_or_default();
    format!(
        "<project-instructions file=\"{}\"{imported_by} scope=\"{scope}\">\n{}\n</project-instructions>",
        file.label,
        file.text.trim()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::test_files::write;

    #[test]
    fn nested_files_and_matching_rules_come_once_when_their_files_are_touched() {
        let project = tempfile::tempdir().unwrap();
        let home = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(project.path()).unwrap();
        write(&root.join("CLAUDE.md"), "ROOT MEMORY");
        write(&root.join("services/api/CLAUDE.md"), "API MEMORY @notes.md");
        write(&root.join("services/api/notes.md"), "API NOTES");
        write(&root.join("services/web/AGENTS.md"), "WEB MEMORY");
        write(&root.join(".claude/rules/ts.md"), "---\nglobs: \"**/*.ts, **/*.tsx\"\n---\nTS RULE");
        write(&root.join(".claude/rules/always.md"), "ALWAYS RULE");
        write(&home.path().join(".claude/rules/sql.md"), "---\npaths:\n  - \"**/*.sql\"\n---\nSQL RULE");
        write(&root.join("vendor/lib/CLAUDE.md"), "VENDORED MEMORY");
        let memory = ScopedMemory::with(&root, Some(home.path()), &["**/vendor/**".to_owned()]);
        assert!(memory.touched(&root.join("vendor/lib/x.rs")).is_empty(), "claudeMdExcludes leaves it out");

        let said = memory.touched(&root.join("services/api/src/main.rs")).join("\n");
        assert!(said.contains("API MEMORY") && said.contains("API NOTES"), "{said}");
        assert!(said.contains("scope=\"applies to files under services/api/\""), "{said}");
        assert!(!said.contains("ROOT MEMORY") && !said.contains("WEB MEMORY") && !said.contains("RULE"), "{said}");
        assert!(memory.touched(&root.join("services/api/other.rs")).is_empty(), "once per conversation");

        let said = memory.touched(&root.join("services/web/app.tsx")).join("\n");
        assert!(said.contains("WEB MEMORY") && said.contains("TS RULE") && !said.contains("globs"), "{said}");
        assert!(memory.touched(&root.join("db/schema.sql")).join("\n").contains("SQL RULE"));
        assert!(memory.touched(Path::new("/elsewhere/x.ts")).is_empty(), "outside the project");
        memory.forget();
        assert!(
            memory.touched(&root.join("services/api/x.rs")).join("\n").contains("API MEMORY"),
            "again after /clear"
        );
    }
}
