//! The YAML frontmatter of the Markdown files Claude Code's formats use (agents, skills,
//! commands): found here, parsed by each reader into its own type.

/// The frontmatter and the body of a Markdown file that starts with `---`.
pub fn split(text: &str) -> Option<(&str, &str)> {
    let rest = text.strip_prefix("---")?.trim_start_matches([' ', '\t']);
    let rest = rest.strip_prefix("\r\n").or_else(|| rest.strip_prefix('\n'))?;
    let mut offset = 0;
    for line in rest.split_inclusive('\n') {
        if line.trim_end() == "---" {
            return Some((&rest[..offset], &rest[offset + line.len()..]));
        }
        offset += line.len();
    }
    None
}
