//! A subagent's own checkout: a git worktree under the user's data directory
//! (`worktrees/<repo>-task-xxxxxx`), from the current HEAD on a branch `larik/task-xxxxxx`, so
//! the child's changes stay apart from the user's checkout (whose uncommitted changes it does not
//! see). When the child is done, what it left uncommitted is committed (no hooks run: libgit2
//! runs none); a worktree with no commits is removed with its branch, one with commits is kept
//! and the report says how to review and merge it. Git operations on one repository are
//! serialized, so tasks running side by side start and finish safely.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use git2::{
    BranchType, IndexAddOption, Repository, Signature, StatusOptions, WorktreeAddOptions, WorktreePruneOptions,
};

use crate::checkpoints::code_span;

/// The report names at most this many changed files, then counts the rest.
const MAX_FILES_NAMED: usize = 20;

/// A worktree made for one task.
pub struct TaskWorktree {
    /// The worktree's root.
    pub path: PathBuf,
    /// Where the parent's working directory is in it.
    pub cwd: PathBuf,
    /// The repository's shared git directory (objects, refs), which commits in the worktree write.
    pub shared_git: PathBuf,
    pub branch: String,
    name: String,
    base: git2::Oid,
}

/// One lock per repository (by its shared git directory), for everything that changes it.
fn repository_lock(shared_git: &Path) -> Arc<Mutex<()>> {
    static LOCKS: OnceLock<Mutex<HashMap<PathBuf, Arc<Mutex<()>>>>> = OnceLock::new();
    let locks = LOCKS.get_or_init(Mutex::default);
    let mut locks = locks.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    Arc::clone(locks.entry(shared_git.to_path_buf()).or_default())
}

/// A step of making or finishing a task's worktree that failed: the task runs in place, or its
/// report says what is left behind.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{step}: {reason}")]
pub struct WorktreeError {
    /// What was being done, as the user reads it (`could not add the worktree`).
    pub step: String,
    pub reason: String,
}

fn failed(step: &str) -> impl Fn(git2::Error) -> WorktreeError + '_ {
    move |error| WorktreeError { step: step.to_owned(), reason: error.message().to_owned() }
}

/// A new name, unique enough for the worktrees of one repository.
fn fresh_name() -> String {
    use std::sync::atomic::{AtomicU32, Ordering};
    static COUNTER: AtomicU32 = AtomicU32::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|time| time.subsec_nanos())
        .unwrap_or_default();
    let mixed = (nanos
        ^ COUNTER.fetch_add(1, Ordering::Relaxed).wrapping_mul(0x9e37_79b9)
        ^ std::process::id().rotate_left(16))
        & 0xff_ffff;
    format!("task-{mixed:06x}")
}

impl TaskWorktree {
    /// Makes a worktree for a task started in `cwd`; `None` when `cwd` is not in a git
    /// repository (or the repository has no commit yet to start from).
    pub fn create(cwd: &Path, data_dir: &Path) -> Result<Option<Self>, WorktreeError> {
        let Ok(repo) = Repository::discover(cwd) else { return Ok(None) };
        let Some(workdir) = repo.workdir().map(Path::to_path_buf) else { return Ok(None) };
        let Ok(head) = repo.head().and_then(|head| head.peel_to_commit()) else { return Ok(None) };
        let shared_git = repo.commondir().to_path_buf();
        let lock = repository_lock(&shared_git);
        let _serialized = lock.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let name = fresh_name();
        let branch = format!("larik/{name}");
        let reference = repo.branch(&branch, &head, false).map_err(failed("could not make the task's branch"))?;
        let project = workdir.file_name().and_then(|name| name.to_str()).unwrap_or("repository");
        let path = data_dir.join("worktrees").join(format!("{project}-{name}"));
        std::fs::create_dir_all(data_dir.join("worktrees")).map_err(|error| WorktreeError {
            step: format!("could not make {}", data_dir.display()),
            reason: error.to_string(),
        })?;
        let mut options = WorktreeAddOptions::new();
        options.reference(Some(reference.get()));
        repo.worktree(&name, &path, Some(&options)).map_err(failed("could not add the worktree"))?;
        let relative = cwd.strip_prefix(&workdir).unwrap_or(Path::new(""));
        Ok(Some(Self { cwd: path.join(relative), path, shared_git, branch, name, base: head.id() }))
    }

    /// Commits what the child left uncommitted, then keeps or removes the worktree; the report
    /// for the parent.
    pub fn finish(self, label: &str) -> Result<String, WorktreeError> {
        let lock = repository_lock(&self.shared_git);
        let _serialized = lock.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let repo = Repository::open(&self.path).map_err(failed("could not open the worktree"))?;
        let leftovers = commit_leftovers(&repo, label)?;
        let mut walk = repo.revwalk().map_err(failed("could not read the branch"))?;
        walk.push_head().map_err(failed("could not read the branch"))?;
        walk.hide(self.base).map_err(failed("could not read the branch"))?;
        let commits = walk.count();
        if commits == 0 {
            drop(repo);
            self.remove()?;
            return Ok("The subagent changed nothing in its worktree; the worktree and its branch were removed.".into());
        }
        let base = self.base.to_string();
        let short = &base[..base.len().min(10)];
        let leftovers = if leftovers { " (what it left uncommitted is in the last one)" } else { "" };
        let files = changed_files(&repo, self.base)?;
        let shown: Vec<String> = files.iter().take(MAX_FILES_NAMED).map(|file| code_span(file)).collect();
        let more = files.len().saturating_sub(shown.len());
        let more = if more > 0 { format!(" and {more} more") } else { String::new() };
        Ok(format!(
            "The subagent worked in its own git worktree at {} on branch `{}`: {commits} commit(s){leftovers}, changing {}{more}. Review with `git diff {short}...{}` and merge with `git merge {}`; remove both with `git worktree remove {}` and `git branch -D {}`.",
            self.path.display(),
            self.branch,
            shown.join(", "),
            self.branch,
            self.branch,
            self.path.display(),
            self.branch
        ))
    }

    fn remove(self) -> Result<(), WorktreeError> {
        let repo = Repository::open(&self.shared_git).map_err(failed("could not open the repository"))?;
        let worktree = repo.find_worktree(&self.name).map_err(failed("could not find the worktree"))?;
        let mut options = WorktreePruneOptions::new();
        options.valid(true).working_tree(true);
        worktree.prune(Some(&mut options)).map_err(failed("could not remove the worktree"))?;
        repo.find_branch(&self.branch, BranchType::Local)
            .and_then(|mut branch| branch.delete())
            .map_err(failed("could not remove the branch"))
    }
}

/// The files the branch changed since `base`, repository-relative.
fn changed_files(repo: &Repository, base: git2::Oid) -> Result<Vec<String>, WorktreeError> {
    let old = repo.find_commit(base).and_then(|commit| commit.tree()).map_err(failed("could not read the base"))?;
    let new = repo.head().and_then(|head| head.peel_to_tree()).map_err(failed("could not read HEAD"))?;
    let diff = repo.diff_tree_to_tree(Some(&old), Some(&new), None).map_err(failed("could not compare the branch"))?;
    Ok(diff
        .deltas()
        .filter_map(|delta| delta.new_file().path().or_else(|| delta.old_file().path()))
        .map(|path| path.display().to_string())
        .collect())
}

/// Commits every change in the worktree, untracked files included; whether there was any.
fn commit_leftovers(repo: &Repository, label: &str) -> Result<bool, WorktreeError> {
    let mut options = StatusOptions::new();
    options.include_untracked(true).recurse_untracked_dirs(true).include_ignored(false);
    let changed = repo
        .statuses(Some(&mut options))
        .map_err(failed("could not read the worktree's state"))?
        .iter()
        .any(|entry| !entry.status().is_empty());
    if !changed {
        return Ok(false);
    }
    let mut index = repo.index().map_err(failed("could not read the index"))?;
    index.add_all(["*"], IndexAddOption::DEFAULT, None).map_err(failed("could not stage the changes"))?;
    index.update_all(["*"], None).map_err(failed("could not stage the changes"))?;
    index.write().map_err(failed("could not write the index"))?;
    let tree = repo
        .find_tree(index.write_tree().map_err(failed("could not write the tree"))?)
        .map_err(failed("could not read the tree"))?;
    // The user's identity when git has one, else Larik's own.
    let signature = repo
        .signature()
        .or_else(|_| Signature::now("Larik", "larik@localhost"))
        .map_err(failed("could not sign the commit"))?;
    let parent = repo.head().and_then(|head| head.peel_to_commit()).map_err(failed("could not read HEAD"))?;
    repo.commit(
        Some("HEAD"),
        &signature,
        &signature,
        &format!("Changes left by the subagent `{label}`"),
        &tree,
        &[&parent],
    )
    .map_err(failed("could not commit the changes"))?;
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn git(dir: &Path, args: &[&str]) -> String {
        let output = std::process::Command::new("git")
            .args(args)
            .current_dir(dir)
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .output()
            .unwrap();
        assert!(output.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&output.stderr));
        String::from_utf8_lossy(&output.stdout).into_owned()
    }

    fn repository() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        git(dir.path(), &["init", "-q", "-b", "main"]);
        git(dir.path(), &["config", "user.name", "Test"]);
        git(dir.path(), &["config", "user.email", "test@example.com"]);
        std::fs::create_dir_all(dir.path().join("src")).unwrap();
        std::fs::write(dir.path().join("src/lib.rs"), "fn a() {}\n").unwrap();
        git(dir.path(), &["add", "-A"]);
        git(dir.path(), &["commit", "-q", "-m", "first"]);
        dir
    }

    #[test]
    fn a_worktree_with_work_is_kept_with_its_commit_and_one_without_is_removed() {
        let repo = repository();
        let data = tempfile::tempdir().unwrap();
        // The user's uncommitted change stays theirs.
        std::fs::write(repo.path().join("src/lib.rs"), "fn a() { todo!() }\n").unwrap();
        let worktree = TaskWorktree::create(&repo.path().join("src"), data.path()).unwrap().unwrap();
        assert!(worktree.path.starts_with(data.path().join("worktrees")));
        assert_eq!(worktree.cwd, worktree.path.join("src"));
        assert_eq!(
            std::fs::read_to_string(worktree.cwd.join("lib.rs")).unwrap(),
            "fn a() {}\n",
            "from HEAD, not the user's edit"
        );
        std::fs::write(worktree.cwd.join("new.rs"), "fn b() {}\n").unwrap();
        let branch = worktree.branch.clone();
        let path = worktree.path.clone();
        let report = worktree.finish("general-purpose: add b").unwrap();
        assert!(
            report.contains(&format!("branch `{branch}`"))
                && report.contains("1 commit(s) (what it left uncommitted is in the last one), changing `src/new.rs`.")
                && report.contains("git merge"),
            "{report}"
        );
        assert!(path.join("src/new.rs").exists(), "kept");
        let log = git(repo.path(), &["log", "--format=%s %an", &branch]);
        assert!(log.starts_with("Changes left by the subagent `general-purpose: add b` Test"), "{log}");
        assert_eq!(std::fs::read_to_string(repo.path().join("src/lib.rs")).unwrap(), "fn a() { todo!() }\n");

        let idle = TaskWorktree::create(repo.path(), data.path()).unwrap().unwrap();
        let (idle_path, idle_branch) = (idle.path.clone(), idle.branch.clone());
        assert!(idle.finish("explore: look").unwrap().contains("removed"));
        assert!(!idle_path.exists());
        assert!(!git(repo.path(), &["branch", "--list"]).contains(&idle_branch));
        assert!(TaskWorktree::create(data.path(), data.path()).unwrap().is_none(), "not a repository");
    }

    #[test]
    fn parallel_worktrees_of_one_repository_do_not_collide() {
        let repo = repository();
        let data = tempfile::tempdir().unwrap();
        let made: Vec<TaskWorktree> = std::thread::scope(|scope| {
            let handles: Vec<_> = (0..4)
                .map(|_| scope.spawn(|| TaskWorktree::create(repo.path(), data.path()).unwrap().unwrap()))
                .collect();
            handles.into_iter().map(|handle| handle.join().unwrap()).collect()
        });
        let mut branches: Vec<&str> = made.iter().map(|worktree| worktree.branch.as_str()).collect();
        branches.sort();
        branches.dedup();
        assert_eq!(branches.len(), 4);
        std::thread::scope(|scope| {
            for (index, worktree) in made.into_iter().enumerate() {
                scope.spawn(move || {
                    std::fs::write(worktree.path.join(format!("f{index}.txt")), "x\n").unwrap();
                    worktree.finish("task").unwrap()
                });
            }
        });
        assert_eq!(git(repo.path(), &["branch", "--list", "larik/*"]).lines().count(), 4);
    }
}
