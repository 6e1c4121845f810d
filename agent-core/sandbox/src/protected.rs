//! Which paths inside a writable project root a sandboxed command must not change: the files
//! that decide what code runs later outside the sandbox (git hooks and config, the directory
//! `core.hooksPath` names, the names of [`larik_host::protected_names`]) and the user's
//! `protectedPaths`. The write tools refuse the same names through the workspace; this list is
//! what the sandbox enforces for shell commands.
//!
//! The list is computed from the file system as it is when a command starts, because a git
//! checkout may be a directory, a `gitdir:` pointer file or absent.

use std::path::{Path, PathBuf};

use larik_host::protected_names::{Absent, NAMES};
/// Inside a git directory: what git reads to decide which programs it runs. `config` holds
/// aliases, `core.hooksPath`, `core.fsmonitor`, filter and diff drivers; `modules/` holds the
/// submodules' own git directories. Objects, refs, the index, HEAD and logs stay writable so
/// commits work.
const GIT_ENTRIES: &[&str] = &["hooks", "config", "config.worktree", "info/attributes", "modules"];
/// `commondir` would point git at another directory's config and hooks. Git fails on any
/// stand-in for it (it reads whatever is there), so a `commondir` a command creates is removed
/// when the command ends instead.
const GIT_REMOVED_AFTER: &[&str] = &["commondir"];

/// One path the sandbox keeps read-only.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProtectedPath {
    pub path: PathBuf,
    /// Why it is protected, in words for the model and the user.
    pub why: &'static str,
    pub when_absent: WhenAbsent,
}

/// What keeps a protected path absent while a command runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WhenAbsent {
    /// A read-only stand-in, so the command cannot create it.
    StandIn,
    /// Nothing can stand in for it: one the command created is removed when it ends.
    RemovedAfter,
    /// Protected only when it exists.
    Nothing,
}

/// The protected paths under `root`, shallowest first. `extra` are the project-relative
/// `protectedPaths` from settings.
pub fn protected_paths(root: &Path, extra: &[PathBuf]) -> Vec<ProtectedPath> {
    let mut paths = Vec::new();
    let mut add = |path: PathBuf, why: &'static str, when_absent: WhenAbsent| {
        paths.push(ProtectedPath { path, why, when_absent })
    };
    let git = root.join(".git");
    match std::fs::symlink_metadata(&git) {
        Ok(meta) if meta.is_dir() => {
            for entry in GIT_ENTRIES {
                add(git.join(entry), "git reads it to decide which programs to run", WhenAbsent::StandIn);
            }
            for entry in GIT_REMOVED_AFTER {
                add(git.join(entry), "git reads it to decide which programs to run", WhenAbsent::RemovedAfter);
            }
        }
        // A `gitdir:` pointer (worktrees, submodules) or a symlink: the pointer itself is kept,
        // so a command cannot aim git at a directory of its own making.
        Ok(_) => add(git, "it tells git where the repository and its hooks are", WhenAbsent::StandIn),
        // No repository yet: `.git` is kept absent, or a command could create one with hooks
        // that run at the user's first commit.
        Err(_) => add(git, "a new repository's hooks would run at the user's next commit", WhenAbsent::StandIn),
    }
    if let Some(hooks) = hooks_path_inside(root) {
        add(hooks, "git runs the hooks in the directory core.hooksPath names", WhenAbsent::StandIn);
    }
    for protected in NAMES {
        let path = root.join(protected.name);
        match protected.when_absent {
            Absent::KeptAbsent => add(path, protected.why, WhenAbsent::StandIn),
            Absent::MayBeCreated if path.symlink_metadata().is_ok() => add(path, protected.why, WhenAbsent::Nothing),
            Absent::MayBeCreated => {}
        }
    }
    for relative in extra {
        add(root.join(relative), "listed in permissions.protectedPaths", WhenAbsent::StandIn);
    }
    paths.sort_by_key(|protected| protected.path.components().count());
    paths.dedup_by(|later, earlier| later.path == earlier.path);
    paths
}

/// The directory git runs hooks from when `core.hooksPath` (in the repository's or the user's
/// git configuration) points inside the project; `.git/hooks` is protected anyway.
fn hooks_path_inside(root: &Path) -> Option<PathBuf> {
    let repository = git2::Repository::open(root).ok()?;
    let configured = repository.config().ok()?.get_path("core.hooksPath").ok()?;
    // A relative hooksPath is taken from the top of the working tree, where hooks run.
    let top = repository.workdir().unwrap_or(root);
    let absolute = larik_host::workspace::normalize(&top.join(configured));
    let inside = absolute.starts_with(root) && absolute != root;
    inside.then_some(absolute)
}

/// What stays read-only in a repository's shared git directory when a worktree of it is
/// writable (a subagent's): the same entries as in a checkout's `.git`, and in the worktree's
/// own git directory (`worktrees/<name>/`) the pointers back to the repository (`commondir`,
/// `gitdir`) and its `config.worktree`.
pub fn shared_git_paths(shared: &Path, worktree_git: Option<&Path>) -> Vec<ProtectedPath> {
    let why = "git reads it to decide which programs to run";
    let mut paths: Vec<ProtectedPath> = GIT_ENTRIES
        .iter()
        .map(|entry| ProtectedPath { path: shared.join(entry), why, when_absent: WhenAbsent::StandIn })
        .collect();
    paths.extend(GIT_REMOVED_AFTER.iter().map(|entry| ProtectedPath {
        path: shared.join(entry),
        why,
        when_absent: WhenAbsent::RemovedAfter,
    }));
    if let Some(own) = worktree_git {
        paths.extend(["commondir", "gitdir"].iter().map(|entry| ProtectedPath {
            path: own.join(entry),
            why: "it tells git where the repository and its hooks are",
            when_absent: WhenAbsent::RemovedAfter,
        }));
        paths.push(ProtectedPath { path: own.join("config.worktree"), why, when_absent: WhenAbsent::StandIn });
    }
    paths.sort_by_key(|protected| protected.path.components().count());
    paths
}

/// The directories between `root` (included) and each protected path (excluded). The sandbox
/// makes each a mount point, and a mount point cannot be renamed or removed, so no command can
/// swap a protected path's parent for a folder of its own.
pub fn pinned_ancestors(root: &Path, protected: &[PathBuf]) -> Vec<PathBuf> {
    let mut pinned = vec![root.to_path_buf()];
    for protected in protected {
        let mut ancestor = protected.parent();
        while let Some(dir) = ancestor.filter(|dir| dir.starts_with(root) && *dir != root) {
            pinned.push(dir.to_path_buf());
            ancestor = dir.parent();
        }
    }
    pinned.sort_by_key(|path| path.components().count());
    pinned.dedup();
    pinned
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_repository_keeps_hooks_and_config_but_not_objects() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join(".git/objects")).unwrap();
        let paths: Vec<PathBuf> =
            protected_paths(dir.path(), &[]).into_iter().map(|protected| protected.path).collect();
        for kept in
            [".git/hooks", ".git/config", ".git/info/attributes", ".git/commondir", ".mcp.json", ".claude", ".larik"]
        {
            assert!(paths.contains(&dir.path().join(kept)), "{kept} is protected: {paths:?}");
        }
        assert!(
            !paths.iter().any(|path| path.ends_with("objects") || path.ends_with("HEAD") || path.ends_with(".git"))
        );
        let pinned = pinned_ancestors(dir.path(), &paths);
        assert_eq!(pinned, [dir.path().to_path_buf(), dir.path().join(".git"), dir.path().join(".git/info")]);
    }

    #[test]
    fn without_a_repository_git_itself_is_kept_and_settings_paths_join() {
        let dir = tempfile::tempdir().unwrap();
        let paths = protected_paths(dir.path(), &[PathBuf::from("secrets/keys")]);
        assert!(
            paths
                .iter()
                .any(|protected| protected.path == dir.path().join(".git")
                    && protected.when_absent == WhenAbsent::StandIn)
        );
        assert!(paths.iter().any(|protected| protected.path == dir.path().join("secrets/keys")));
        assert!(
            !paths.iter().any(|protected| protected.path.ends_with(".bashrc")),
            "absent start-up files are not stood in for"
        );
        let paths: Vec<PathBuf> = paths.into_iter().map(|protected| protected.path).collect();
        assert!(pinned_ancestors(dir.path(), &paths).contains(&dir.path().join("secrets")));
    }
}
