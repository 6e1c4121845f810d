//! The filters of `filters.rs`, compiled once and applied: which format a command line prints,
//! and that format's output shortened. A line that is not one plain command (a pipeline, a
//! compound, a substitution, output sent to a file) prints no known format; `cd dir && cmd`
//! counts as `cmd`. Output that does not look like its format, or holds a line of unknown shape
//! where every line is accounted for (a record), is not filtered.

use std::sync::LazyLock;

use regex::Regex;

use super::filters::{ALWAYS_KEEP, FORMATS, Format, Shape};

/// A format with its patterns compiled.
pub(super) struct Compiled {
    pub source: &'static Format,
    signature: Regex,
    shape: CompiledShape,
}

enum CompiledShape {
    Lines { drop: Vec<Regex> },
    Records { start: Regex, name_chars: usize, title: Regex, known: Vec<Regex> },
}

struct Filters {
    always_keep: Regex,
    formats: Vec<Compiled>,
}

static FILTERS: LazyLock<Option<Filters>> = LazyLock::new(compile_all);

/// Every format whose patterns compile; a bad pattern is a bug, and leaves out its format only,
/// so a mistake in one table entry never filters output by a half-compiled rule.
fn compile_all() -> Option<Filters> {
    let always_keep = match Regex::new(ALWAYS_KEEP) {
        Ok(regex) => regex,
        Err(error) => {
            tracing::error!(%error, "the token saver's keep pattern does not compile; nothing is filtered");
            return None;
        }
    };
    let formats = FORMATS
        .iter()
        .filter_map(|format| match compile(format) {
            Ok(compiled) => Some(compiled),
            Err(error) => {
                tracing::error!(format = format.name, %error, "a token saver filter does not compile; it is left out");
                None
            }
        })
        .collect();
    Some(Filters { always_keep, formats })
}

fn compile(format: &'static Format) -> Result<Compiled, regex::Error> {
    let all = |patterns: &[&str]| patterns.iter().map(|pattern| Regex::new(pattern)).collect::<Result<Vec<_>, _>>();
    let shape = match &format.shape {
        Shape::Lines { drop } => CompiledShape::Lines { drop: all(drop)? },
        Shape::Records { start, name_chars, title, known } => CompiledShape::Records {
            start: Regex::new(start)?,
            name_chars: *name_chars,
            title: Regex::new(title)?,
            known: all(known)?,
        },
    };
    Ok(Compiled { source: format, signature: Regex::new(format.signature)?, shape })
}

/// How many formats compiled, for the test that every table entry does.
#[cfg(test)]
pub(super) fn compiled_count() -> usize {
    FILTERS.as_ref().map_or(0, |filters| filters.formats.len())
}

/// The format `command_line` prints, when it is one known command.
pub(super) fn recognise(command_line: &str) -> Option<&'static Compiled> {
    let words = single_command(command_line)?;
    FILTERS.as_ref()?.formats.iter().find(|format| format.source.commands.iter().any(|pattern| runs(&words, pattern)))
}

/// The words of the one command the line runs, after any `cd`s before it.
fn single_command(command_line: &str) -> Option<Vec<String>> {
    let parsed = crate::shell::parse(command_line);
    if parsed.has_substitution || parsed.writes_file || parsed.unparsable {
        return None;
    }
    let (last, before) = parsed.commands.split_last()?;
    // Only changing directory may come first: anything else (a pipeline's other end, a second
    // command) prints output of its own, or changes what this one prints.
    if !before.iter().all(|command| command == "cd" || command.starts_with("cd ")) {
        return None;
    }
    Some(last.split_whitespace().map(str::to_owned).collect())
}

/// Whether `words` run `pattern`: the program by file name, then each word of the pattern in
/// order, with options before a word passed over.
fn runs(words: &[String], pattern: &[&str]) -> bool {
    let (Some((program, wanted)), Some((first, mut rest))) = (pattern.split_first(), words.split_first()) else {
        return false;
    };
    if std::path::Path::new(first).file_name().and_then(|name| name.to_str()) != Some(*program) {
        return false;
    }
    for word in wanted {
        loop {
            match rest.split_first() {
                Some((next, after)) if next == word => {
                    rest = after;
                    break;
                }
                Some((next, after)) if next.starts_with('-') => rest = after,
                _ => return false,
            }
        }
    }
    true
}

impl Compiled {
    /// The output shortened by the format's rules; `None` when it does not look like the
    /// format, or holds something the rules cannot account for.
    pub fn apply(&self, output: &str) -> Option<String> {
        let filters = FILTERS.as_ref()?;
        if !output.lines().any(|line| self.signature.is_match(line)) {
            return None;
        }
        let mut filtered = match &self.shape {
            CompiledShape::Lines { drop } => lines(output, drop, &filters.always_keep),
            CompiledShape::Records { start, name_chars, title, known } => {
                records(output, start, *name_chars, title, known)?
            }
        };
        if output.ends_with('\n') && !filtered.is_empty() {
            filtered.push('\n');
        }
        Some(filtered)
    }
}

fn lines(output: &str, drop: &[Regex], always_keep: &Regex) -> String {
    let mut kept: Vec<&str> = Vec::new();
    for line in output.lines() {
        if drop.iter().any(|pattern| pattern.is_match(line)) && !always_keep.is_match(line) {
            continue;
        }
        // The blank lines around what went would pile up.
        if line.trim().is_empty() && kept.last().is_some_and(|previous| previous.trim().is_empty()) {
            continue;
        }
        kept.push(line);
    }
    kept.join("\n")
}

/// One line per record: its name and title.
fn records(output: &str, start: &Regex, name_chars: usize, title: &Regex, known: &[Regex]) -> Option<String> {
    let mut summaries: Vec<String> = Vec::new();
    let mut titled = false;
    for line in output.lines() {
        if let Some(opened) = start.captures(line) {
            let name: String = opened.get(1)?.as_str().chars().take(name_chars).collect();
            let extra = opened.get(2).map_or("", |extra| extra.as_str());
            summaries.push(format!("{name}{extra}"));
            titled = false;
            continue;
        }
        let Some(summary) = summaries.last_mut() else {
            // Nothing but blank lines may come before the first record.
            if line.trim().is_empty() {
                continue;
            }
            return None;
        };
        if !known.iter().any(|pattern| pattern.is_match(line)) {
            return None;
        }
        if !titled && let Some(found) = title.captures(line).and_then(|captures| captures.get(1)) {
            summary.push(' ');
            summary.push_str(found.as_str());
            titled = true;
        }
    }
    Some(summaries.join("\n"))
}
