//! Memory files, read as Claude Code reads them: the project's `AGENTS.md`, `CLAUDE.md`,
//! `.claude/CLAUDE.md` and `CLAUDE.local.md` and its `.claude/rules/*.md`; the user's own
//! instruction files and `~/.claude/rules/*.md`. Each may import others with `@path` (relative
//! to the file, `~/`, or absolute; up to five levels deep; not inside code spans or fenced
//! blocks). A missing import is noted in place of its text. A rule with `paths` (or `globs`) in
//! its frontmatter applies only to some files, and is not part of this always-read memory.
//!
//! A repository's files are not trusted: what they import is read only from inside the project
//! (through no symbolic link out of it), so a cloned repository cannot pull the user's secrets
//! into the prompt. The user's own files may import from anywhere.

use std::path::{Path, PathBuf};

/// How deep imports go, as in Claude Code.
const MAX_DEPTH: usize = 5;

/// One file of memory, with the text to put in the prompt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemoryFile {
    /// How the prompt names it: relative to the project for the project's files.
    pub label: String,
    pub text: String,
    /// The file that imported it, by label; `None` for a file read on its own.
    pub imported_by: Option<String>,
}

/// Where a file's imports may come from.
#[derive(Clone, Copy)]
struct Reach<'a> {
    /// Imports must lie under this directory (the project's files), or anywhere (`None`).
    confined_to: Option<&'a Path>,
    home: Option<&'a Path>,
    /// Labels are made relative to this directory.
    label_root: Option<&'a Path>,
    /// The user's `claudeMdExcludes`.
    excluded: &'a Excluded,
}

/// The user's `claudeMdExcludes`: globs of memory files (matched against their real, absolute
/// paths) that are never read, imports of them included.
#[derive(Debug, Default)]
pub struct Excluded(Option<globset::GlobSet>);

impl Excluded {
    /// From the globs as written; one that does not parse excludes nothing.
    pub fn new(globs: &[String]) -> Self {
        // Most users have none: no matcher is built (building even an empty one costs).
        if globs.is_empty() {
            return Self(None);
        }
        let mut set = globset::GlobSetBuilder::new();
        for glob in globs {
            if let Ok(glob) = globset::Glob::new(glob) {
                set.add(glob);
            }
        }
        Self(set.build().ok().filter(|set| !set.is_empty()))
    }

    fn excludes(&self, path: &Path) -> bool {
        self.0.as_ref().is_some_and(|set| {
            let real = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
            set.is_match(&real)
        })
    }
}

/// The project's memory files, in the order the prompt gives them, with their imports.
pub fn project_files(root: &Path, excluded: &Excluded) -> Vec<MemoryFile> {
    let root = std::fs::canonicalize(root).unwrap_or_else(|_| root.to_path_buf());
    let mut paths: Vec<PathBuf> =
        ["AGENTS.md", "CLAUDE.md", ".claude/CLAUDE.md", "CLAUDE.local.md"].iter().map(|name| root.join(name)).collect();
    paths.extend(rule_files(&root.join(".claude").join("rules")));
    // `~/` leads out of the project, so a project's file has no home to import from.
    let reach = Reach { confined_to: Some(&root), home: None, label_root: Some(&root), excluded };
    read_all(&paths, reach)
}

/// A memory file of the project found below its root (a subdirectory's `CLAUDE.md`), with its
/// imports, confined to the project as the root's are.
pub fn nested_project_file(root: &Path, path: &Path, excluded: &Excluded) -> Vec<MemoryFile> {
    let root = std::fs::canonicalize(root).unwrap_or_else(|_| root.to_path_buf());
    read_all(&[path.to_path_buf()], Reach { confined_to: Some(&root), home: None, label_root: Some(&root), excluded })
}

/// A rule that applies only to some files: its label, its text (frontmatter removed) and the
/// globs its `paths` or `globs` frontmatter names, relative to the project.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScopedRule {
    pub label: String,
    pub text: String,
    pub globs: Vec<String>,
}

/// The path-scoped rules: the project's `.claude/rules/` (confined to it), then the user's
/// `~/.claude/rules/`.
pub fn scoped_rules(root: &Path, home: Option<&Path>, excluded: &Excluded) -> Vec<ScopedRule> {
    let root = std::fs::canonicalize(root).unwrap_or_else(|_| root.to_path_buf());
    let project = Reach { confined_to: Some(&root), home: None, label_root: Some(&root), excluded };
    let user = Reach { confined_to: None, home, label_root: None, excluded };
    let mut sources: Vec<(PathBuf, Reach<'_>)> =
        rule_files(&root.join(".claude").join("rules")).into_iter().map(|path| (path, project)).collect();
    if let Some(home) = home {
        sources.extend(rule_files(&home.join(".claude").join("rules")).into_iter().map(|path| (path, user)));
    }
    sources
        .into_iter()
        .filter_map(|(path, reach)| {
            let text = read_within(&path, reach)?;
            let globs = scope_of(&text)?;
            let body = crate::frontmatter::split(&text).map_or(text.as_str(), |(_, body)| body).trim().to_owned();
            Some(ScopedRule { label: label(&path, reach), text: body, globs })
        })
        .collect()
}

/// The globs of a rule's `paths` or `globs` frontmatter: a list, or one string of
/// comma-separated globs, as Claude Code reads them.
fn scope_of(text: &str) -> Option<Vec<String>> {
    let (front, _) = crate::frontmatter::split(text)?;
    let fields: std::collections::BTreeMap<String, serde_json::Value> = serde_saphyr::from_str(front).ok()?;
    let value = fields.get("paths").or_else(|| fields.get("globs"))?;
    let globs: Vec<String> = match value {
        serde_json::Value::String(list) => list.split(',').map(|glob| glob.trim().to_owned()).collect(),
        serde_json::Value::Array(list) => {
            list.iter().filter_map(serde_json::Value::as_str).map(str::to_owned).collect()
        }
        _ => return None,
    };
    Some(globs.into_iter().filter(|glob| !glob.is_empty()).collect())
}

/// The user's own memory files (`files`, then `~/.claude/rules/*.md`), with their imports.
pub fn user_files(files: &[PathBuf], home: Option<&Path>, excluded: &Excluded) -> Vec<MemoryFile> {
    let mut paths = files.to_vec();
    if let Some(home) = home {
        paths.extend(rule_files(&home.join(".claude").join("rules")));
    }
    read_all(&paths, Reach { confined_to: None, home, label_root: None, excluded })
}

/// The rule files of `dir` (subdirectories included), in name order.
fn rule_files(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else { return Vec::new() };
    let mut files: Vec<PathBuf> = Vec::new();
    for path in entries.filter_map(Result::ok).map(|entry| entry.path()) {
        if path.is_dir() {
            files.extend(rule_files(&path));
        } else if path.extension().is_some_and(|extension| extension == "md") {
            files.push(path);
        }
    }
    files.sort();
    files
}

fn read_all(paths: &[PathBuf], reach: Reach<'_>) -> Vec<MemoryFile> {
    let mut out = Vec::new();
    let mut seen = Vec::new();
    for path in paths {
        let Some(text) = read_within(path, reach) else { continue };
        // A path-scoped rule applies only where its files are touched.
        if is_path_scoped(&text) {
            continue;
        }
        let real = std::fs::canonicalize(path).unwrap_or_else(|_| path.clone());
        if seen.contains(&real) {
            continue;
        }
        seen.push(real);
        add(path, text, None, 0, reach, &mut seen, &mut out);
    }
    out
}

/// Adds the file and, after it, what it imports.
fn add(
    path: &Path,
    text: String,
    imported_by: Option<String>,
    depth: usize,
    reach: Reach<'_>,
    seen: &mut Vec<PathBuf>,
    out: &mut Vec<MemoryFile>,
) {
    let label = label(path, reach);
    let mut notes = Vec::new();
    let mut imported = Vec::new();
    for target in imports(&text) {
        let Some(resolved) = resolve(&target, path, reach) else {
            notes.push(format!("@{target} was not read: it is outside the project"));
            continue;
        };
        if depth + 1 > MAX_DEPTH {
            notes.push(format!("@{target} was not read: imports go at most {MAX_DEPTH} levels deep"));
            continue;
        }
        let real = std::fs::canonicalize(&resolved).unwrap_or_else(|_| resolved.clone());
        if seen.contains(&real) || reach.excluded.excludes(&real) {
            continue;
        }
        match read_within(&resolved, reach) {
            Some(imported_text) => {
                seen.push(real);
                imported.push((resolved, imported_text));
            }
            None if resolved.exists() => notes.push(format!("@{target} was not read: it is outside the project")),
            None => notes.push(format!("@{target} was not found")),
        }
    }
    let text = if notes.is_empty() { text } else { format!("{}\n\n({})", text.trim_end(), notes.join("; ")) };
    out.push(MemoryFile { label: label.clone(), text, imported_by });
    for (resolved, imported_text) in imported {
        add(&resolved, imported_text, Some(label.clone()), depth + 1, reach, seen, out);
    }
}

/// The file's text, if it exists and lies where `reach` allows (its real path, links followed).
fn read_within(path: &Path, reach: Reach<'_>) -> Option<String> {
    if reach.excluded.excludes(path) {
        return None;
    }
    if let Some(root) = reach.confined_to {
        let real = std::fs::canonicalize(path).ok()?;
        if !real.starts_with(root) {
            return None;
        }
    }
    std::fs::read_to_string(path).ok()
}

/// Where `@target`, written in the file at `from`, points; `None` where it may not point.
fn resolve(target: &str, from: &Path, reach: Reach<'_>) -> Option<PathBuf> {
    let path = match target.strip_prefix("~/") {
        Some(rest) => reach.home?.join(rest),
        None if Path::new(target).is_absolute() => PathBuf::from(target),
        None => from.parent()?.join(target),
    };
    match reach.confined_to {
        // Checked by its real path when read; here the written path must not leave either.
        Some(root) if !normalize(&path).starts_with(root) => None,
        _ => Some(path),
    }
}

/// `path` with `.` and `..` taken out, without touching the disk.
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            std::path::Component::ParentDir => {
                out.pop();
            }
            std::path::Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

fn label(path: &Path, reach: Reach<'_>) -> String {
    let real = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    match reach.label_root.and_then(|root| real.strip_prefix(root).ok()) {
        Some(relative) => relative.display().to_string(),
        None => path.display().to_string(),
    }
}

/// Whether a rule's frontmatter names the files it applies to.
fn is_path_scoped(text: &str) -> bool {
    let Some(rest) = text.strip_prefix("---\n") else { return false };
    let Some(end) = rest.find("\n---") else { return false };
    rest[..end].lines().any(|line| line.starts_with("paths:") || line.starts_with("globs:"))
}

/// The `@path` imports of a memory file, in order: an `@` at the start of a word, outside code
/// spans and fenced blocks, followed by a path.
pub fn imports(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut fenced = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") || line.trim_start().starts_with("~~~") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            continue;
        }
        // Outside code spans: the even-numbered pieces between backticks.
        for (index, piece) in line.split('`').enumerate() {
            if index % 2 == 1 {
                continue;
            }
            for word in piece.split_whitespace() {
                let Some(target) = word.strip_prefix('@') else { continue };
                let target = target.trim_end_matches([',', ';', ':', ')', '.', '!', '?']);
                let looks_like_path = target.contains('/') || target.contains('.');
                if !target.is_empty() && looks_like_path && !found.iter().any(|seen| seen == target) {
                    found.push(target.to_owned());
                }
            }
        }
    }
    found
}

#[cfg(test)]
mod tests;
