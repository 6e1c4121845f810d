//! `glob`: files whose path matches a glob, .gitignore-aware, newest first, capped.

use std::path::PathBuf;
use std::time::SystemTime;

use schemars::JsonSchema;
use serde::Deserialize;

use super::{CallDescription, ClaudeCodeAlias, HookResponse, Tool, ToolContext, ToolOutput};
use crate::event::ToolKind;

const MAX_RESULTS: usize = 100;

#[derive(Deserialize, JsonSchema)]
pub struct GlobInput {
    /// A glob such as `**/*.rs` or `src/**/test_*.py`, matched against paths relative to `path`.
    pub pattern: String,
    /// The directory to search (default: the project root).
    #[serde(default)]
    pub path: Option<String>,
}

pub struct Glob;

impl Tool for Glob {
    type Input = GlobInput;
    const NAME: &'static str = "glob";
    const CLAUDE_CODE: Option<&'static ClaudeCodeAlias> =
        Some(&ClaudeCodeAlias { name: "Glob", fields: &[], response: HookResponse::Output });
    const DESCRIPTION: &'static str = "Find files by path pattern (e.g. `**/*.rs`, `src/**/*.test.ts`). Respects .gitignore. Returns paths relative to the project, newest first, at most 100.";
    const KIND: ToolKind = ToolKind::Search;

    fn read_only(&self) -> bool {
        true
    }

    fn describe(&self, input: &GlobInput, _ctx: &ToolContext) -> CallDescription {
        CallDescription::titled(format!("Find `{}`", input.pattern))
    }

    async fn run(&self, input: GlobInput, ctx: &ToolContext) -> ToolOutput {
        let base = input
            .path
            .as_deref()
            .map(|path| ctx.env.workspace.absolute(path))
            .unwrap_or_else(|| ctx.env.workspace.root().to_path_buf());
        if !base.is_dir() {
            return ToolOutput::error(format!("{} is not a directory", base.display()));
        }
        let project = ctx.env.workspace.root().to_path_buf();
        let cancel = ctx.cancel.clone();
        let found = tokio::task::spawn_blocking(move || find(&input.pattern, &base, &project, &cancel)).await;
        match found {
            Ok(Ok(text)) => ToolOutput::text(text),
            Ok(Err(message)) => ToolOutput::error(message),
            Err(error) => ToolOutput::error(format!("glob failed: {error}")),
        }
    }
}

fn find(
    pattern: &str,
    base: &std::path::Path,
    project: &std::path::Path,
    cancel: &tokio_util::sync::CancellationToken,
) -> Result<String, String> {
    let matcher = globset::GlobBuilder::new(pattern)
        .literal_separator(true)
        .build()
        .map_err(|error| format!("invalid glob: {error}"))?
        .compile_matcher();
    let found = std::sync::Mutex::new(Vec::<(SystemTime, PathBuf)>::new());
    ignore::WalkBuilder::new(base).build_parallel().run(|| {
        let matcher = matcher.clone();
        let found = &found;
        Box::new(move |entry| {
            if cancel.is_cancelled() {
                return ignore::WalkState::Quit;
            }
            let Ok(entry) = entry else { return ignore::WalkState::Continue };
            if !entry.file_type().is_some_and(|kind| kind.is_file()) {
                return ignore::WalkState::Continue;
            }
            let relative = entry.path().strip_prefix(base).unwrap_or(entry.path());
            if matcher.is_match(relative) {
                let modified =
                    entry.metadata().ok().and_then(|meta| meta.modified().ok()).unwrap_or(SystemTime::UNIX_EPOCH);
                let shown = entry.path().strip_prefix(project).unwrap_or(entry.path()).to_path_buf();
                if let Ok(mut found) = found.lock() {
                    found.push((modified, shown));
                }
            }
            ignore::WalkState::Continue
        })
    });
    let mut found = found.into_inner().map_err(|_| "glob state poisoned".to_owned())?;
    if found.is_empty() {
        return Ok("No files found.".into());
    }
    // Newest first; the path breaks ties so the answer is stable.
    found.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    let total = found.len();
    let mut out: Vec<String> =
        found.into_iter().take(MAX_RESULTS).map(|(_, path)| path.display().to_string()).collect();
    if total > MAX_RESULTS {
        out.push(format!("[{} more files not shown; use a narrower pattern]", total - MAX_RESULTS));
    }
    Ok(out.join("\n"))
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn newest_first_gitignore_aware_and_capped() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join(".git")).unwrap();
        std::fs::write(dir.path().join(".gitignore"), "target/\n").unwrap();
        std::fs::create_dir_all(dir.path().join("src/deep")).unwrap();
        std::fs::create_dir_all(dir.path().join("target")).unwrap();
        let now = SystemTime::now();
        for (index, name) in ["src/old.rs", "src/deep/new.rs", "target/built.rs", "notes.md"].iter().enumerate() {
            let path = dir.path().join(name);
            std::fs::write(&path, "x").unwrap();
            let age = Duration::from_secs(100 - index as u64 * 10);
            std::fs::File::options().write(true).open(&path).unwrap().set_modified(now - age).unwrap();
        }
        let cancel = tokio_util::sync::CancellationToken::new();
        assert_eq!(find("**/*.rs", dir.path(), dir.path(), &cancel).unwrap(), "src/deep/new.rs\nsrc/old.rs");
        assert_eq!(
            find("*.rs", dir.path(), dir.path(), &cancel).unwrap(),
            "No files found.",
            "`*` does not cross directories"
        );
        for index in 0..(MAX_RESULTS + 5) {
            std::fs::write(dir.path().join(format!("f{index}.txt")), "").unwrap();
        }
        let many = find("*.txt", dir.path(), dir.path(), &cancel).unwrap();
        assert!(many.ends_with("[5 more files not shown; use a narrower pattern]"), "{many}");
        assert!(find("[", dir.path(), dir.path(), &cancel).unwrap_err().contains("invalid glob"));
    }
}
