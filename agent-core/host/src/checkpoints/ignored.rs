//! The files a command changed that the project ignores (bytecode, build output, installed
//! packages), said as one line: how many, in which directories. Listing each would bury the
//! files the user keeps under caches nobody reads.

use std::collections::BTreeMap;
use std::fmt;
use std::path::Path;

use super::FileChange;

/// At most this many directories are named; the rest are counted.
const MAX_NAMED_DIRS: usize = 5;

/// The ignored files among a command's changes, grouped by directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IgnoredChanges {
    /// Project-relative directories (`src/__pycache__/`; `./` for the root) and how many
    /// ignored files changed in each, most first.
    pub dirs: Vec<(String, usize)>,
    pub count: usize,
}

impl IgnoredChanges {
    /// The ignored files among `changes` (paths under `root`), or `None` when there are none.
    pub fn of(changes: &[FileChange], root: &Path) -> Option<Self> {
        let mut dirs: BTreeMap<String, usize> = BTreeMap::new();
        for change in changes.iter().filter(|change| change.ignored) {
            let relative = change.path.strip_prefix(root).unwrap_or(&change.path);
            let dir = match relative.parent().filter(|parent| !parent.as_os_str().is_empty()) {
                Some(parent) => format!("{}/", parent.display()),
                None => "./".to_owned(),
            };
            *dirs.entry(dir).or_default() += 1;
        }
        let count = dirs.values().sum();
        let mut dirs: Vec<(String, usize)> = dirs.into_iter().collect();
        dirs.sort_by(|one, other| other.1.cmp(&one.1).then_with(|| one.0.cmp(&other.0)));
        (count > 0).then_some(Self { dirs, count })
    }
}

/// "14 files in `src/__pycache__/` (9), `tests/__pycache__/` (5)": paths as code, since the
/// line is Markdown where `__pycache__` would read as bold.
impl fmt::Display for IgnoredChanges {
    fn fmt(&self, out: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(out, "{} file{} in ", self.count, if self.count == 1 { "" } else { "s" })?;
        for (index, (dir, count)) in self.dirs.iter().take(MAX_NAMED_DIRS).enumerate() {
            if index > 0 {
                out.write_str(", ")?;
            }
            write!(out, "{} ({count})", code_span(dir))?;
        }
        let more = self.dirs.len().saturating_sub(MAX_NAMED_DIRS);
        if more > 0 {
            write!(out, " and {more} more director{}", if more == 1 { "y" } else { "ies" })?;
        }
        Ok(())
    }
}

/// `text` as a Markdown code span, fenced with more backticks than it holds in a row.
pub fn code_span(text: &str) -> String {
    let longest = text.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest + 1);
    let pad = if text.starts_with('`') || text.ends_with('`') { " " } else { "" };
    format!("{fence}{pad}{text}{pad}{fence}")
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::super::ChangeKind;
    use super::*;

    fn change(path: &str, ignored: bool) -> FileChange {
        FileChange {
            path: PathBuf::from("/p").join(path),
            kind: ChangeKind::Added,
            ignored,
            old_text: None,
            new_text: None,
        }
    }

    #[test]
    fn ignored_files_are_counted_by_directory_and_the_kept_ones_left_out() {
        let changes = [
            change("calc.py", false),
            change("__pycache__/calc.cpython-312.pyc", true),
            change("tests/__pycache__/test_calc.cpython-312.pyc", true),
            change("tests/__pycache__/conftest.cpython-312.pyc", true),
            change(".tests-passed", true),
        ];
        let ignored = IgnoredChanges::of(&changes, Path::new("/p")).unwrap();
        assert_eq!(ignored.count, 4);
        assert_eq!(ignored.to_string(), "4 files in `tests/__pycache__/` (2), `./` (1), `__pycache__/` (1)");
        assert_eq!(IgnoredChanges::of(&changes[..1], Path::new("/p")), None);
    }

    #[test]
    fn many_directories_are_named_up_to_five() {
        let changes: Vec<FileChange> = (0..7).map(|n| change(&format!("pkg{n}/__pycache__/m.pyc"), true)).collect();
        let said = IgnoredChanges::of(&changes, Path::new("/p")).unwrap().to_string();
        assert!(said.starts_with("7 files in `pkg0/__pycache__/` (1), "), "{said}");
        assert!(said.ends_with(" and 2 more directories"), "{said}");
    }

    #[test]
    fn a_code_span_holds_any_path() {
        assert_eq!(code_span("__pycache__"), "`__pycache__`");
        assert_eq!(code_span("a`b"), "``a`b``");
        assert_eq!(code_span("`x"), "`` `x ``");
    }
}
