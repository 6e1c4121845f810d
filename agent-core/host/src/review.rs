//! Per-hunk review of a proposed change: the change split into hunks (runs of changed lines with
//! no unchanged line between them), and the file rebuilt from only the hunks the user accepted.

use similar::{Algorithm, DiffTag};

/// One hunk of a change, with 1-based line numbers as in a unified diff.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hunk {
    pub index: usize,
    pub old_start: usize,
    pub old_lines: usize,
    pub new_start: usize,
    pub new_lines: usize,
    pub old_text: String,
    pub new_text: String,
}

/// The changed regions of `old` -> `new`, as index ranges into their lines.
fn changed_regions(old_lines: &[&str], new_lines: &[&str]) -> Vec<(std::ops::Range<usize>, std::ops::Range<usize>)> {
    let ops = similar::capture_diff_slices(Algorithm::Myers, old_lines, new_lines);
    let mut regions: Vec<(std::ops::Range<usize>, std::ops::Range<usize>)> = Vec::new();
    let mut open = false;
    for op in &ops {
        let (tag, old, new) = op.as_tag_tuple();
        if tag == DiffTag::Equal {
            open = false;
            continue;
        }
        match regions.last_mut() {
            Some((old_range, new_range)) if open => {
                old_range.end = old.end.max(old_range.end);
                new_range.end = new.end.max(new_range.end);
            }
            _ => regions.push((old, new)),
        }
        open = true;
    }
    regions
}

fn lines(text: &str) -> Vec<&str> {
    text.split_inclusive('\n').collect()
}

pub fn hunks(old: &str, new: &str) -> Vec<Hunk> {
    let (old_lines, new_lines) = (lines(old), lines(new));
    changed_regions(&old_lines, &new_lines)
        .into_iter()
        .enumerate()
        .map(|(index, (old_range, new_range))| Hunk {
            index,
            // A pure insertion names the line it follows, as unified diffs do.
            old_start: if old_range.is_empty() { old_range.start } else { old_range.start + 1 },
            old_lines: old_range.len(),
            new_start: if new_range.is_empty() { new_range.start } else { new_range.start + 1 },
            new_lines: new_range.len(),
            old_text: old_lines[old_range].concat(),
            new_text: new_lines[new_range].concat(),
        })
        .collect()
}

/// `old` with only the accepted hunks of `old` -> `new` applied.
pub fn apply_accepted(old: &str, new: &str, accepted: &[usize]) -> String {
    let (old_lines, new_lines) = (lines(old), lines(new));
    let mut out = String::with_capacity(new.len().max(old.len()));
    let mut old_cursor = 0;
    for (index, (old_range, new_range)) in changed_regions(&old_lines, &new_lines).into_iter().enumerate() {
        out.push_str(&old_lines[old_cursor..old_range.start].concat());
        if accepted.contains(&index) {
            out.push_str(&new_lines[new_range].concat());
        } else {
            out.push_str(&old_lines[old_range.clone()].concat());
        }
        old_cursor = old_range.end;
    }
    out.push_str(&old_lines[old_cursor..].concat());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const OLD: &str = "a\nb\nc\nd\ne\nf\n";
    const NEW: &str = "a\nB\nc\nd\ne\nf\ng\n";

    #[test]
    fn splits_a_change_into_hunks() {
        let hunks = hunks(OLD, NEW);
        assert_eq!(hunks.len(), 2);
        assert_eq!((hunks[0].old_start, hunks[0].old_lines, hunks[0].new_start, hunks[0].new_lines), (2, 1, 2, 1));
        assert_eq!((hunks[0].old_text.as_str(), hunks[0].new_text.as_str()), ("b\n", "B\n"));
        assert_eq!((hunks[1].old_start, hunks[1].old_lines, hunks[1].new_start, hunks[1].new_lines), (6, 0, 7, 1));
        assert_eq!(hunks[1].new_text, "g\n");
    }

    #[test]
    fn applies_only_accepted_hunks() {
        assert_eq!(apply_accepted(OLD, NEW, &[0, 1]), NEW);
        assert_eq!(apply_accepted(OLD, NEW, &[]), OLD);
        assert_eq!(apply_accepted(OLD, NEW, &[0]), "a\nB\nc\nd\ne\nf\n");
        assert_eq!(apply_accepted(OLD, NEW, &[1]), "a\nb\nc\nd\ne\nf\ng\n");
    }
}
