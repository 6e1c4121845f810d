//! Claude Code's matcher rules. `*`, an empty string or no matcher match everything. A matcher
//! made only of letters, digits, `_`, `-`, spaces, `,` and `|` is an exact name or a list of
//! names split on `|` and `,`. Anything else is an unanchored regular expression, so `Edit.*`
//! also matches `NotebookEdit` and `^Edit$` matches only `Edit`.
//!
//! Larik compares case-insensitively, in both forms: a matcher names Claude Code's tools
//! (`Bash`) and the caller also offers Larik's names (`bash`), and a user who writes `bash`
//! means the same tool.

use regex::{Regex, RegexBuilder};

#[derive(Debug, Clone)]
pub(crate) enum Matcher {
    All,
    Names(Vec<String>),
    Pattern(Regex),
}

impl Matcher {
    /// Reads a matcher as written in settings; the error is the regex's complaint.
    pub fn parse(matcher: Option<&str>) -> Result<Matcher, regex::Error> {
        let text = matcher.map(str::trim).unwrap_or_default();
        if text.is_empty() || text == "*" {
            return Ok(Matcher::All);
        }
        let plain = text.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | ' ' | ',' | '|'));
        if plain {
            let names =
                text.split(['|', ',']).map(str::trim).filter(|name| !name.is_empty()).map(str::to_lowercase).collect();
            return Ok(Matcher::Names(names));
        }
        RegexBuilder::new(text).case_insensitive(true).build().map(Matcher::Pattern)
    }

    /// Whether any of `targets` is accepted.
    pub fn accepts_any(&self, targets: &[&str]) -> bool {
        match self {
            Matcher::All => true,
            Matcher::Names(names) => {
                targets.iter().any(|target| names.iter().any(|name| name.eq_ignore_ascii_case(target)))
            }
            Matcher::Pattern(pattern) => targets.iter().any(|target| pattern.is_match(target)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn accepts(matcher: Option<&str>, target: &str) -> bool {
        match Matcher::parse(matcher) {
            Ok(matcher) => matcher.accepts_any(&[target]),
            Err(error) => panic!("{matcher:?} did not parse: {error}"),
        }
    }

    #[test]
    fn matchers_read_as_claude_code_reads_them() {
        let cases: &[(Option<&str>, &str, bool)] = &[
            (None, "Bash", true),
            (Some(""), "anything", true),
            (Some("*"), "mcp__github__create_issue", true),
            (Some("  * "), "Read", true),
            // Exact names, case-insensitively.
            (Some("Bash"), "Bash", true),
            (Some("Bash"), "bash", true),
            (Some("bash"), "Bash", true),
            (Some("Bash"), "BashOutput", false),
            (Some("Bash"), "bash_output", false),
            // Lists on `|` and `,`, spaces tolerated.
            (Some("Edit|Write"), "Write", true),
            (Some("Edit|Write"), "MultiEdit", false),
            (Some("Edit, MultiEdit ,Write"), "multiedit", true),
            (Some("Edit | Write"), "edit", true),
            (Some("startup|resume"), "resume", true),
            (Some("startup|resume"), "clear", false),
            (Some("manual"), "auto", false),
            // No regex characters: exact, so an MCP server prefix matches nothing.
            (Some("mcp__memory"), "mcp__memory__create", false),
            (Some("mcp__memory__.*"), "mcp__memory__create", true),
            // Regexes are unanchored and case-insensitive.
            (Some("Edit.*"), "NotebookEdit", true),
            (Some("Edit.*"), "Edit", true),
            (Some("^Edit$"), "NotebookEdit", false),
            (Some("^Edit$"), "edit", true),
            (Some("Notebook.*"), "notebookedit", true),
            (Some("Web(Fetch|Search)"), "WebSearch", true),
            (Some("Web(Fetch|Search)"), "Write", false),
            (Some("mcp__.*__write.*"), "mcp__fs__write_file", true),
        ];
        for &(matcher, target, expected) in cases {
            assert_eq!(accepts(matcher, target), expected, "{matcher:?} on {target}");
        }
    }

    #[test]
    fn any_target_may_match() {
        let Ok(matcher) = Matcher::parse(Some("Bash")) else { panic!("Bash did not parse") };
        assert!(matcher.accepts_any(&["bash_output", "bash"]));
        assert!(!matcher.accepts_any(&[]));
        assert!(Matcher::parse(Some("*")).is_ok_and(|matcher| matcher.accepts_any(&[])));
    }

    #[test]
    fn a_broken_regex_is_an_error() {
        assert!(Matcher::parse(Some("Edit(")).is_err());
        // JavaScript lookahead is not supported by the regex crate, and must not silently match.
        assert!(Matcher::parse(Some("^(?!Read).*")).is_err());
    }
}
