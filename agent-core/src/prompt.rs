//! The system prompt: who the agent is, an environment block (cwd, platform, date, git), the
//! user's own instruction files (`~/.claude/CLAUDE.md`, `~/.config/larik/AGENTS.md`, their
//! rules) and the project's memory files (`memory`), imports included. It is built once per
//! session so the prompt prefix stays cacheable.

mod memory;
mod scoped;

pub use scoped::ScopedMemory;

use std::path::{Path, PathBuf};

use larik_settings::paths::UserInstructions;

const BASE: &str = include_str!("prompt/base.md");
/// Memory files larger than this are cut, so one huge file cannot crowd out the conversation.
const MAX_MEMORY_BYTES: usize = 40 * 1024;

pub fn system_prompt(place: Place<'_>, today: &str, user: &UserInstructions, skills_index: &str) -> String {
    format!("{}\n\n{}", BASE.trim(), context(place, today, user, skills_index))
}

/// Where an agent works: the project, and the directories outside it the user opened too.
#[derive(Clone, Copy)]
pub struct Place<'a> {
    pub cwd: &'a Path,
    pub additional: &'a [PathBuf],
}

/// What every agent of the session is told about where it works: the environment block, the
/// user's instruction files, the project's memory files and the skills index. A subagent gets
/// it after its definition's prompt.
pub fn context(place: Place<'_>, today: &str, user: &UserInstructions, skills_index: &str) -> String {
    let excluded = memory::Excluded::new(&user.claude_md_excludes);
    let mut prompt = environment(place, today);
    for file in memory::user_files(&user.files, user.home.as_deref(), &excluded) {
        push_file(&mut prompt, "user-instructions", &file);
    }
    push_attribution(&mut prompt, &user.attribution);
    push_project_files(&mut prompt, place.cwd, &excluded);
    if !skills_index.is_empty() {
        prompt.push('\n');
        prompt.push_str(skills_index);
        prompt.push('\n');
    }
    prompt
}

/// The smaller context of a subagent whose role asks for it: the environment block and the
/// project's own memory files (but those the user's `claudeMdExcludes` leaves out), without the
/// user's instruction files or the skills index.
pub fn minimal_context(place: Place<'_>, today: &str, user: &UserInstructions) -> String {
    let mut prompt = environment(place, today);
    push_project_files(&mut prompt, place.cwd, &memory::Excluded::new(&user.claude_md_excludes));
    prompt
}

/// What the user's settings ask commits and pull requests to end with.
fn push_attribution(prompt: &mut String, attribution: &larik_settings::paths::Attribution) {
    let parts = [("commit message", &attribution.commit), ("pull request description", &attribution.pr)];
    for (what, text) in parts {
        if let Some(text) = text.as_deref().map(str::trim).filter(|text| !text.is_empty()) {
            prompt.push_str(&format!(
                "\n<attribution>\nWhen you write a {what}, end it with these lines, as written:\n{text}\n</attribution>\n"
            ));
        }
    }
}

fn environment(place: Place<'_>, today: &str) -> String {
    let cwd = place.cwd;
    let mut prompt = String::new();
    prompt.push_str("<environment>\n");
    prompt.push_str(&format!("Working directory: {}\n", cwd.display()));
    if !place.additional.is_empty() {
        let dirs: Vec<String> = place.additional.iter().map(|dir| dir.display().to_string()).collect();
        prompt.push_str(&format!("Additional working directories: {}\n", dirs.join(", ")));
    }
    prompt.push_str(&format!("Platform: {} ({})\n", std::env::consts::OS, std::env::consts::ARCH));
    prompt.push_str(&format!("Date: {today}\n"));
    match git_branch(cwd) {
        Some(branch) => prompt.push_str(&format!("Git repository: yes, branch {branch}\n")),
        None if find_git_dir(cwd).is_some() => prompt.push_str("Git repository: yes (detached HEAD)\n"),
        None => prompt.push_str("Git repository: no\n"),
    }
    prompt.push_str("</environment>\n");
    prompt
}

fn push_project_files(prompt: &mut String, cwd: &Path, excluded: &memory::Excluded) {
    for file in memory::project_files(cwd, excluded) {
        push_file(prompt, "project-instructions", &file);
    }
}

fn push_file(prompt: &mut String, tag: &str, file: &memory::MemoryFile) {
    let text = crate::tools::truncate::truncate_middle(&file.text, MAX_MEMORY_BYTES);
    let imported_by = file.imported_by.as_ref().map(|by| format!(" imported-by=\"{by}\"")).unwrap_or_default();
    prompt.push_str(&format!("\n<{tag} file=\"{}\"{imported_by}>\n{}\n</{tag}>\n", file.label, text.trim()));
}

fn find_git_dir(cwd: &Path) -> Option<std::path::PathBuf> {
    cwd.ancestors().map(|dir| dir.join(".git")).find(|git| git.exists())
}

fn git_branch(cwd: &Path) -> Option<String> {
    let git = find_git_dir(cwd)?;
    // A worktree or submodule has a `.git` file pointing at the real git dir.
    let git_dir = if git.is_file() {
        let pointer = std::fs::read_to_string(&git).ok()?;
        let target = pointer.strip_prefix("gitdir:")?.trim();
        git.parent()?.join(target)
    } else {
        git
    };
    let head = std::fs::read_to_string(git_dir.join("HEAD")).ok()?;
    head.trim().strip_prefix("ref: refs/heads/").map(str::to_owned)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn environment_block_and_memory_files() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join(".git")).unwrap();
        std::fs::write(dir.path().join(".git/HEAD"), "ref: refs/heads/feature/x\n").unwrap();
        std::fs::write(dir.path().join("AGENTS.md"), "Use tabs.\n").unwrap();
        let home = tempfile::tempdir().unwrap();
        let user_file = home.path().join("CLAUDE.md");
        std::fs::write(&user_file, "Answer in French.\n").unwrap();
        let user = UserInstructions {
            files: vec![user_file.clone(), home.path().join("missing/AGENTS.md")],
            ..Default::default()
        };
        let prompt = system_prompt(
            Place { cwd: dir.path(), additional: &[] },
            "2026-11-30",
            &user,
            "<skills>\n- review: Review a change\n</skills>",
        );
        assert!(prompt.contains("<skills>\n- review: Review a change\n</skills>"));
        assert!(prompt.contains("Git repository: yes, branch feature/x"));
        assert!(prompt.contains("Date: 2026-11-30"));
        assert!(prompt.contains("<project-instructions file=\"AGENTS.md\">\nUse tabs.\n"));
        assert!(prompt.contains(&format!("<user-instructions file=\"{}\">\nAnswer in French.\n", user_file.display())));
        assert!(!prompt.contains("<project-instructions file=\"CLAUDE.md\">"), "the project has no CLAUDE.md");
        let minimal =
            minimal_context(Place { cwd: dir.path(), additional: &[] }, "2026-11-30", &UserInstructions::default());
        assert!(minimal.contains("Use tabs.") && minimal.contains("Date: 2026-11-30"));
        assert!(
            !minimal.contains("Answer in French.") && !minimal.contains("<skills>"),
            "the user's own files and the skills are left out"
        );
    }
}
