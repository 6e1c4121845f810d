//! `grep`: ripgrep's engine (grep-searcher, grep-regex) over ripgrep's parallel, .gitignore-aware
//! walker (ignore). Results are sorted by path so the model sees the same answer every time.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use grep_regex::RegexMatcherBuilder;
use grep_searcher::{BinaryDetection, Searcher, SearcherBuilder, Sink, SinkContext, SinkContextKind, SinkMatch};
use ignore::WalkState;
use schemars::JsonSchema;
use serde::Deserialize;

use super::{CallDescription, ClaudeCodeAlias, FieldRename, HookResponse, Tool, ToolContext, ToolOutput, display_path};
use crate::event::{Location, ToolKind};

const DEFAULT_HEAD_LIMIT: usize = 250;

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum OutputMode {
    /// Matching lines with file and line number.
    Content,
    /// Only the paths of files that match (default).
    #[default]
    FilesWithMatches,
    /// The number of matching lines per file.
    Count,
}

#[derive(Deserialize, JsonSchema)]
pub struct GrepInput {
    /// A regular expression (Rust regex syntax, as in ripgrep).
    pub pattern: String,
    /// File or directory to search (default: the project root).
    #[serde(default)]
    pub path: Option<String>,
    /// Only files matching this glob, e.g. `*.rs` or `src/**/*.ts`.
    #[serde(default)]
    pub glob: Option<String>,
    /// Only files of this type, as ripgrep names them: `rust`, `py`, `js`, `go`...
    #[serde(default, rename = "type")]
    pub file_type: Option<String>,
    #[serde(default)]
    pub case_insensitive: bool,
    /// Let `.` match newlines and patterns span lines.
    #[serde(default)]
    pub multiline: bool,
    #[serde(default)]
    pub output_mode: OutputMode,
    /// Lines of context before and after each match (content mode).
    #[serde(default)]
    pub context: Option<usize>,
    #[serde(default)]
    pub before_context: Option<usize>,
    #[serde(default)]
    pub after_context: Option<usize>,
    /// At most this many output lines or files (default 250).
    #[serde(default)]
    pub head_limit: Option<usize>,
}

pub struct Grep;

/// ripgrep's flags, as Claude Code's Grep spells them. Larik reads `type` already; a `file_type`
/// only appears in an input built by hand.
const GREP_FLAGS: &[FieldRename] = &[
    FieldRename::both_ways("case_insensitive", "-i"),
    FieldRename::both_ways("context", "-C"),
    FieldRename::both_ways("before_context", "-B"),
    FieldRename::both_ways("after_context", "-A"),
    FieldRename { larik: "file_type", claude_code: "type", maps_back: false },
];

impl Tool for Grep {
    type Input = GrepInput;
    const NAME: &'static str = "grep";
    const CLAUDE_CODE: Option<&'static ClaudeCodeAlias> =
        Some(&ClaudeCodeAlias { name: "Grep", fields: GREP_FLAGS, response: HookResponse::Output });
    const DESCRIPTION: &'static str = include_str!("grep.md");
    const KIND: ToolKind = ToolKind::Search;

    fn read_only(&self) -> bool {
        true
    }

    fn describe(&self, input: &GrepInput, ctx: &ToolContext) -> CallDescription {
        let root = input
            .path
            .as_deref()
            .map(|path| ctx.env.workspace.absolute(path))
            .unwrap_or_else(|| ctx.env.workspace.root().to_path_buf());
        let place = display_path(ctx, &root);
        let place = if place.is_empty() { String::new() } else { format!(" in {place}") };
        CallDescription {
            locations: vec![Location { path: root, line: None }],
            ..CallDescription::titled(format!("Search `{}`{place}", input.pattern))
        }
    }

    async fn run(&self, input: GrepInput, ctx: &ToolContext) -> ToolOutput {
        let root = input
            .path
            .as_deref()
            .map(|path| ctx.env.workspace.absolute(path))
            .unwrap_or_else(|| ctx.env.workspace.root().to_path_buf());
        if !root.exists() {
            return ToolOutput::error(format!("{} does not exist", root.display()));
        }
        let project = ctx.env.workspace.root().to_path_buf();
        let cancel = ctx.cancel.clone();
        let result = tokio::task::spawn_blocking(move || search(&input, &root, &project, &cancel)).await;
        match result {
            Ok(Ok(text)) => ToolOutput::text(text),
            Ok(Err(message)) => ToolOutput::error(message),
            Err(error) => ToolOutput::error(format!("search failed: {error}")),
        }
    }
}

/// What one file produced.
struct FileResult {
    path: PathBuf,
    lines: Vec<String>,
    count: usize,
}

fn search(
    input: &GrepInput,
    root: &Path,
    project: &Path,
    cancel: &tokio_util::sync::CancellationToken,
) -> Result<String, String> {
    let matcher = RegexMatcherBuilder::new()
        .case_insensitive(input.case_insensitive)
        .multi_line(true)
        .dot_matches_new_line(input.multiline)
        .line_terminator(if input.multiline { None } else { Some(b'\n') })
        .build(&input.pattern)
        .map_err(|error| format!("invalid regex: {error}"))?;
    let mut walker = ignore::WalkBuilder::new(root);
    walker.threads(std::thread::available_parallelism().map(usize::from).unwrap_or(2));
    // A glob filters what the walk finds; unlike ripgrep's -g it never brings back ignored files.
    let glob = match &input.glob {
        Some(glob) => Some(
            globset::GlobBuilder::new(glob)
                .literal_separator(true)
                .build()
                .map_err(|error| format!("invalid glob: {error}"))?
                .compile_matcher(),
        ),
        None => None,
    };
    let by_name = input.glob.as_deref().is_some_and(|glob| !glob.contains('/'));
    if let Some(file_type) = &input.file_type {
        let mut types = ignore::types::TypesBuilder::new();
        types.add_defaults();
        types.select(file_type);
        walker.types(types.build().map_err(|error| format!("unknown file type `{file_type}`: {error}"))?);
    }
    let (before, after) = match input.output_mode {
        OutputMode::Content => {
            (input.before_context.or(input.context).unwrap_or(0), input.after_context.or(input.context).unwrap_or(0))
        }
        _ => (0, 0),
    };
    let results = Mutex::new(Vec::new());
    walker.build_parallel().run(|| {
        let mut searcher = SearcherBuilder::new()
            .binary_detection(BinaryDetection::quit(0))
            .line_number(true)
            .multi_line(input.multiline)
            .before_context(before)
            .after_context(after)
            .build();
        let matcher = matcher.clone();
        let results = &results;
        let glob = glob.clone();
        Box::new(move |entry| {
            if cancel.is_cancelled() {
                return WalkState::Quit;
            }
            let Ok(entry) = entry else { return WalkState::Continue };
            if !entry.file_type().is_some_and(|kind| kind.is_file()) {
                return WalkState::Continue;
            }
            if let Some(glob) = &glob {
                let relative = entry.path().strip_prefix(root).unwrap_or(entry.path());
                let subject = if by_name { std::path::Path::new(entry.file_name()) } else { relative };
                if !glob.is_match(subject) {
                    return WalkState::Continue;
                }
            }
            let mut sink = Collect { lines: Vec::new(), count: 0, last_line: None };
            if searcher.search_path(&matcher, entry.path(), &mut sink).is_ok() && sink.count > 0 {
                let path = entry.path().strip_prefix(project).unwrap_or(entry.path()).to_path_buf();
                if let Ok(mut results) = results.lock() {
                    results.push(FileResult { path, lines: sink.lines, count: sink.count });
                }
            }
            WalkState::Continue
        })
    });
    if cancel.is_cancelled() {
        return Err("the search was cancelled".into());
    }
    let mut results = results.into_inner().map_err(|_| "search state poisoned".to_owned())?;
    results.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(render(&results, input.output_mode, input.head_limit.unwrap_or(DEFAULT_HEAD_LIMIT)))
}

fn render(results: &[FileResult], mode: OutputMode, limit: usize) -> String {
    if results.is_empty() {
        return "No matches found.".into();
    }
    let lines: Vec<String> = match mode {
        OutputMode::FilesWithMatches => results.iter().map(|result| result.path.display().to_string()).collect(),
        OutputMode::Count => {
            results.iter().map(|result| format!("{}:{}", result.path.display(), result.count)).collect()
        }
        OutputMode::Content => results
            .iter()
            .flat_map(|result| {
                result.lines.iter().map(move |line| {
                    if line == "--" { line.clone() } else { format!("{}{line}", result.path.display()) }
                })
            })
            .collect(),
    };
    let total = lines.len();
    let mut out = lines.into_iter().take(limit).collect::<Vec<_>>().join("\n");
    if total > limit {
        out.push_str(&format!("\n[{} more results not shown; narrow the search or raise head_limit]", total - limit));
    }
    out
}

/// Collects matching and context lines of one file, `:` after the number for matches and `-`
/// for context, `--` between separate groups, as ripgrep prints them.
struct Collect {
    lines: Vec<String>,
    count: usize,
    last_line: Option<u64>,
}

impl Collect {
    fn push(&mut self, number: Option<u64>, separator: char, bytes: &[u8]) {
        let number = number.unwrap_or(0);
        if let Some(last) = self.last_line
            && number > last + 1
        {
            self.lines.push("--".into());
        }
        let text = String::from_utf8_lossy(bytes);
        for (offset, line) in text.trim_end_matches('\n').split('\n').enumerate() {
            let line_number = number + offset as u64;
            let clipped: String = line.trim_end_matches('\r').chars().take(500).collect();
            self.lines.push(format!("{separator}{line_number}{separator}{clipped}"));
            self.last_line = Some(line_number);
        }
    }
}

impl Sink for Collect {
    type Error = std::io::Error;

    fn matched(&mut self, _searcher: &Searcher, found: &SinkMatch<'_>) -> Result<bool, Self::Error> {
        self.count += 1;
        self.push(found.line_number(), ':', found.bytes());
        Ok(true)
    }

    fn context(&mut self, _searcher: &Searcher, context: &SinkContext<'_>) -> Result<bool, Self::Error> {
        if matches!(context.kind(), SinkContextKind::Before | SinkContextKind::After) {
            self.push(context.line_number(), '-', context.bytes());
        }
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input(pattern: &str) -> GrepInput {
        GrepInput {
            pattern: pattern.into(),
            path: None,
            glob: None,
            file_type: None,
            case_insensitive: false,
            multiline: false,
            output_mode: OutputMode::Content,
            context: None,
            before_context: None,
            after_context: None,
            head_limit: None,
        }
    }

    fn project() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("src")).unwrap();
        std::fs::write(dir.path().join("src/a.rs"), "fn main() {\n    let x = 1;\n    Hello();\n}\n").unwrap();
        std::fs::write(dir.path().join("src/b.py"), "def hello():\n    pass\n").unwrap();
        std::fs::write(dir.path().join("ignored.rs"), "fn main() {}\n").unwrap();
        std::fs::write(dir.path().join(".gitignore"), "ignored.rs\n").unwrap();
        std::fs::create_dir(dir.path().join(".git")).unwrap();
        std::fs::write(dir.path().join("bin.dat"), b"fn main\x00\x01").unwrap();
        dir
    }

    fn run(dir: &Path, input: &GrepInput) -> String {
        search(input, dir, dir, &tokio_util::sync::CancellationToken::new()).unwrap()
    }

    #[test]
    fn content_with_line_numbers_respecting_gitignore_and_binaries() {
        let dir = project();
        assert_eq!(run(dir.path(), &input("fn main")), "src/a.rs:1:fn main() {");
    }

    #[test]
    fn modes_filters_and_case() {
        let dir = project();
        let files = GrepInput { output_mode: OutputMode::FilesWithMatches, case_insensitive: true, ..input("hello") };
        assert_eq!(run(dir.path(), &files), "src/a.rs\nsrc/b.py");
        let typed = GrepInput { file_type: Some("py".into()), ..files };
        assert_eq!(run(dir.path(), &typed), "src/b.py");
        let globbed = GrepInput {
            glob: Some("*.rs".into()),
            output_mode: OutputMode::Count,
            case_insensitive: true,
            ..input("hello|main")
        };
        assert_eq!(run(dir.path(), &globbed), "src/a.rs:2");
    }

    #[test]
    fn context_lines_and_multiline() {
        let dir = project();
        let context = GrepInput { context: Some(1), ..input("let x") };
        assert_eq!(
            run(dir.path(), &context),
            "src/a.rs-1-fn main() {\nsrc/a.rs:2:    let x = 1;\nsrc/a.rs-3-    Hello();"
        );
        let multi =
            GrepInput { multiline: true, output_mode: OutputMode::FilesWithMatches, ..input(r"hello\(\):\n\s+pass") };
        assert_eq!(run(dir.path(), &multi), "src/b.py");
    }

    #[test]
    fn head_limit_and_errors() {
        let dir = project();
        let limited =
            GrepInput { head_limit: Some(1), output_mode: OutputMode::FilesWithMatches, ..input("(?i)hello") };
        assert_eq!(
            run(dir.path(), &limited),
            "src/a.rs\n[1 more results not shown; narrow the search or raise head_limit]"
        );
        let bad = search(&input("(unclosed"), dir.path(), dir.path(), &tokio_util::sync::CancellationToken::new());
        assert!(bad.unwrap_err().contains("invalid regex"));
        assert_eq!(run(dir.path(), &input("nothing-matches-this")), "No matches found.");
    }
}
