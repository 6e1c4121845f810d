//! The names MCP tools go by: `mcp__<server>__<tool>`, made to fit the providers' rules for tool
//! names (letters, digits, `_` and `-`, at most 64 characters) and kept apart when two would
//! come out the same. Permission rules and hooks name tools this way too.

use std::collections::BTreeSet;

/// The longest tool name the providers accept.
const MAX_NAME: usize = 64;

/// Only the characters tool names may hold; anything else becomes `_`.
pub fn sanitise(part: &str) -> String {
    let cleaned: String =
        part.chars().map(|c| if c.is_ascii_alphanumeric() || c == '_' || c == '-' { c } else { '_' }).collect();
    if cleaned.is_empty() { "_".into() } else { cleaned }
}

/// `mcp__<server>__<tool>` for each of a server's tools, in order, unique among themselves and
/// among `taken`. A name too long is cut and given a short hash of the full name, so two long
/// names with the same start stay apart.
pub fn tool_names(server: &str, tools: &[&str], taken: &BTreeSet<String>) -> Vec<String> {
    let mut used: BTreeSet<String> = taken.clone();
    tools
        .iter()
        .map(|tool| {
            let full = format!("mcp__{}__{}", sanitise(server), sanitise(tool));
            let mut name = fit(&full);
            let mut suffix = 2;
            while used.contains(&name) {
                name = fit(&format!("{full}_{suffix}"));
                suffix += 1;
            }
            used.insert(name.clone());
            name
        })
        .collect()
}

fn fit(name: &str) -> String {
    if name.len() <= MAX_NAME {
        return name.to_owned();
    }
    let digest = ring::digest::digest(&ring::digest::SHA256, name.as_bytes());
    let hash: String = digest.as_ref().iter().take(4).map(|byte| format!("{byte:02x}")).collect();
    format!("{}_{hash}", &name[..MAX_NAME - hash.len() - 1])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_fit_the_rules_and_stay_apart() {
        let names = tool_names("my server", &["get-sum", "read.file", "read_file", "x"], &BTreeSet::new());
        assert_eq!(
            names,
            [
                "mcp__my_server__get-sum",
                "mcp__my_server__read_file",
                "mcp__my_server__read_file_2",
                "mcp__my_server__x"
            ]
        );
        let long = "a".repeat(80);
        let two = tool_names("s", &[&format!("{long}1"), &format!("{long}2")], &BTreeSet::new());
        assert!(
            two.iter().all(|name| name.len() <= MAX_NAME
                && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')),
            "{two:?}"
        );
        assert_ne!(two[0], two[1]);
        let taken: BTreeSet<String> = ["mcp__s__t".to_owned()].into();
        assert_eq!(tool_names("s", &["t"], &taken), ["mcp__s__t_2"]);
    }
}
