//! Splits a bash command line into the simple commands it runs, with a real shell grammar
//! (tree-sitter-bash), so permission rules see every command: across `;`, `&&`, `||`, pipes,
//! background `&`, subshells, `bash -c '...'`, and the commands that `xargs` and `find -exec`
//! run. Wrappers (`env X=1`, `timeout`, `nohup`, `nice`, `time`, `command`, `exec`) are looked
//! through. It also reports what no prefix rule can vouch for: command substitution and
//! redirection into a file.

use tree_sitter::{Node, Parser};

/// What a command line would do, as far as rules are concerned.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CommandLine {
    /// Each simple command, words joined by single spaces, quotes removed.
    pub commands: Vec<String>,
    /// `$(...)`, backticks or `<(...)` appear somewhere.
    pub has_substitution: bool,
    /// Output is redirected into a file (`2>&1` and `>/dev/null` do not count).
    pub writes_file: bool,
    /// The grammar could not make sense of part of the line.
    pub unparsable: bool,
}

impl CommandLine {
    /// One plain command: no operators, substitutions or redirections.
    pub fn is_single_plain_command(&self) -> bool {
        self.commands.len() == 1 && !self.has_substitution && !self.writes_file && !self.unparsable
    }
}

const SHELLS: &[&str] = &["bash", "sh", "zsh", "dash"];
/// How deep `bash -c "bash -c '...'"` is followed before giving up (and asking).
const MAX_DEPTH: usize = 4;

pub fn parse(line: &str) -> CommandLine {
    let mut result = CommandLine::default();
    parse_into(line, &mut result, 0);
    // Bash splits words on spaces and tabs only: a form feed or carriage return is part of a
    // word (`ls\r` is another program), where the grammar may see a blank. Such a line is
    // judged as written, never as the commands the grammar found.
    if line.chars().any(|c| c.is_ascii_control() && !matches!(c, '\t' | '\n')) {
        result.unparsable = true;
    }
    result
}

fn parse_into(line: &str, out: &mut CommandLine, depth: usize) {
    if depth > MAX_DEPTH {
        out.unparsable = true;
        return;
    }
    let mut parser = Parser::new();
    if parser.set_language(&tree_sitter_bash::LANGUAGE.into()).is_err() {
        out.unparsable = true;
        return;
    }
    let Some(tree) = parser.parse(line, None) else {
        out.unparsable = true;
        return;
    };
    let root = tree.root_node();
    if root.has_error() || skips_escaped_blank(root, line.as_bytes()) {
        out.unparsable = true;
    }
    walk(root, line.as_bytes(), out, depth);
}

/// Whether the grammar passed over a `\` before a blank as if it were a blank: bash reads it
/// as a blank inside a word, so `\ ls` runs a program named ` ls`, not `ls`; and a line
/// continuation between two words' letters joins them (`ls\` newline `$-l` is one word). Inside
/// a word (`my\ file`) or a string the grammar has it right, and a continuation after a blank
/// (`ls \` newline `-la`) separates as the grammar thinks. A continuation that opens a line is
/// passed over too: the grammar joins the line to the one before (`ls`, newline, `\` newline
/// `rm x` read as `ls rm x`), where bash ends the command at the newline; so is one before a
/// blank line (`ls \` newline newline `-l` read as `ls -l`, where bash runs `-l` alone).
fn skips_escaped_blank(root: Node<'_>, source: &[u8]) -> bool {
    let blank = |byte: Option<&u8>| byte.is_none_or(|byte| matches!(byte, b' ' | b'\t' | b'\n'));
    let opens_a_line = |at: usize| {
        source[..at].iter().rev().find(|byte| !matches!(byte, b' ' | b'\t')).is_none_or(|byte| *byte == b'\n')
    };
    let before_a_blank_line = |at: usize| {
        source[at + 2..].iter().find(|byte| !matches!(byte, b' ' | b'\t')).is_none_or(|byte| *byte == b'\n')
    };
    let joins_letters =
        |at: usize| !blank(at.checked_sub(1).and_then(|before| source.get(before))) && !blank(source.get(at + 2));
    source
        .windows(2)
        .enumerate()
        .filter(|(at, pair)| {
            pair[0] == b'\\'
                && (matches!(pair[1], b' ' | b'\t')
                    || (pair[1] == b'\n' && (joins_letters(*at) || opens_a_line(*at) || before_a_blank_line(*at))))
        })
        .any(|(at, _)| {
            let holder = root.descendant_for_byte_range(at, at + 2);
            !holder.is_some_and(|node| {
                matches!(
                    node.kind(),
                    "word" | "string" | "string_content" | "raw_string" | "ansi_c_string" | "heredoc_body" | "comment"
                )
            })
        })
}

fn walk(node: Node<'_>, source: &[u8], out: &mut CommandLine, depth: usize) {
    match node.kind() {
        "command_substitution" | "process_substitution" => out.has_substitution = true,
        "file_redirect" if writes_to_file(node, source) => out.writes_file = true,
        "command" => command(node, source, out, depth),
        // `66E=` is no assignment to bash (the name starts with a digit) but a program, wherever
        // the grammar put it, even as a statement of its own.
        "variable_assignment" if !is_assignment(node, source) => out.unparsable = true,
        // `{ls; }` is a program named `{ls` to bash, which opens a group only at a `{` that
        // stands alone, and `!"ls"` one named `!ls` (`!` negates only as a word of its own);
        // the grammar opens a group or negates anyway.
        "compound_statement" | "negated_command" if !stands_alone(node, source) => out.unparsable = true,
        // A descriptor is digits to bash (`-668>&6` is a word, the program, then `>&6`); the
        // grammar takes other words for one.
        "file_descriptor"
            if !node
                .utf8_text(source)
                .is_ok_and(|text| !text.is_empty() && text.bytes().all(|byte| byte.is_ascii_digit())) =>
        {
            out.unparsable = true
        }
        _ => {}
    }
    // A word ends at an unquoted blank to bash; one the grammar let run across a newline (`ls`
    // newline `\$-l` read as `ls` and one argument, `ls < $` newline `r` as a redirection from
    // `$r`) is not what bash runs.
    if matches!(node.kind(), "command" | "file_redirect")
        && (spans_a_blank(node, source) || passes_over_text(node, source))
    {
        out.unparsable = true;
    }
    // A redirection takes one word to bash. The grammar lets one after an expansion take more
    // (`<$l rm x` read as a redirection from `$l rm x`): at the start of a command, bash runs
    // the next word as the program.
    if node.kind() == "file_redirect" && node.children_by_field_name("destination", &mut node.walk()).nth(1).is_some() {
        out.unparsable = true;
    }
    let mut cursor = node.walk();
    for child in node.children(&mut cursor) {
        walk(child, source, out, depth);
    }
}

fn command(node: Node<'_>, source: &[u8], out: &mut CommandLine, depth: usize) {
    let mut words = Vec::new();
    let mut cursor = node.walk();
    for child in node.children(&mut cursor) {
        match child.kind() {
            // `X=1 cmd`: the assignment is not part of the command. Only a real one: bash runs
            // `@X=1 cmd` as a program of that name, whatever the grammar thinks.
            "variable_assignment" if is_assignment(child, source) => {}
            "file_redirect" | "heredoc_redirect" | "herestring_redirect" => {}
            "command_name" => words.push(word(child, source)),
            _ if child.is_named() => words.push(word(child, source)),
            _ => {}
        }
    }
    let words = strip_wrappers(&words);
    if words.is_empty() {
        return;
    }
    // `"ls  " x` runs a program named `ls  `: joined with the other words it would read as
    // `ls`. A program name with a blank in it (or none at all) is judged as written.
    if words[0].is_empty() || words[0].chars().any(char::is_whitespace) {
        out.unparsable = true;
    }
    // `bash -c '...'` runs the string: judge what it runs, not the shell.
    if SHELLS.contains(&words[0].as_str())
        && let Some(index) = words.iter().position(|word| word == "-c")
        && let Some(script) = words.get(index + 1)
    {
        parse_into(script, out, depth + 1);
        return;
    }
    out.commands.push(words.join(" "));
    // Commands that run other commands: judge those too.
    match words[0].as_str() {
        "xargs" => {
            if let Some(start) = words.iter().skip(1).position(|word| !word.starts_with('-')) {
                out.commands.push(words[start + 1..].join(" "));
            }
        }
        "find" => {
            let mut rest = words
                .iter()
                .skip_while(|word| !matches!(word.as_str(), "-exec" | "-execdir" | "-ok" | "-okdir"))
                .skip(1);
            let inner: Vec<&str> = rest
                .by_ref()
                .take_while(|word| !matches!(word.as_str(), ";" | "\\;" | "+"))
                .map(String::as_str)
                .collect();
            if !inner.is_empty() {
                out.commands.push(inner.join(" "));
            }
        }
        _ => {}
    }
}

/// Whether bash takes this as an assignment: a name of letters, digits and `_`, not starting
/// with a digit, then `=` or `+=`.
fn is_assignment(node: Node<'_>, source: &[u8]) -> bool {
    let text = node.utf8_text(source).unwrap_or_default();
    let Some((name, _)) = text.split_once('=') else { return false };
    let name = name.strip_suffix('+').unwrap_or(name);
    name.starts_with(|c: char| c == '_' || c.is_ascii_alphabetic())
        && name.chars().all(|c| c == '_' || c.is_ascii_alphanumeric())
}

/// The text of a word with its quotes removed when nothing is expanded inside.
fn word(node: Node<'_>, source: &[u8]) -> String {
    let text = node.utf8_text(source).unwrap_or_default();
    match node.kind() {
        "raw_string" => text.trim_matches('\'').to_owned(),
        "string"
            if node.named_child_count()
                == node.children(&mut node.walk()).filter(|child| child.kind() == "string_content").count() =>
        {
            text.trim_matches('"').to_owned()
        }
        "command_name" => node.named_child(0).map(|inner| word(inner, source)).unwrap_or_else(|| text.to_owned()),
        "word" => unescape(text),
        _ => text.to_owned(),
    }
}

/// An unquoted word as bash reads it: `\x` is `x` (so `l\\s` is `l\s`, not `ls`), and a `\`
/// before a newline joins the lines.
fn unescape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('\n') => {}
            Some(escaped) => out.push(escaped),
            None => out.push('\\'),
        }
    }
    out
}

/// Whether the node's opening character (`{`, `!`) is a word of its own, as bash needs it to be.
fn stands_alone(node: Node<'_>, source: &[u8]) -> bool {
    source.get(node.start_byte() + 1).is_none_or(|next| matches!(next, b' ' | b'\t' | b'\n'))
}

/// Whether one of the command's words (or a redirection's target) holds a blank bash would
/// split at: one outside quotes and without a `\\` before it. Substitutions and here-documents
/// hold whole scripts, blanks and all.
fn spans_a_blank(node: Node<'_>, source: &[u8]) -> bool {
    let mut cursor = node.walk();
    node.named_children(&mut cursor)
        .filter(|word| {
            !matches!(
                word.kind(),
                "command_substitution"
                    | "process_substitution"
                    | "heredoc_redirect"
                    | "herestring_redirect"
                    | "file_redirect"
                    | "file_descriptor"
            )
        })
        .any(|word| has_unquoted_blank(word.utf8_text(source).unwrap_or_default()))
}

/// Whether the grammar left text between a node's children out of the tree: `A=1 - p= ls` has
/// no `-` in it, so `ls` looks like the program where bash runs `-`. Blanks and line
/// continuations are all that may stand between the parts of a command.
fn passes_over_text(node: Node<'_>, source: &[u8]) -> bool {
    let skipped = |from: usize, to: usize| {
        source
            .get(from..to)
            .is_some_and(|gap| gap.iter().any(|byte| !matches!(byte, b' ' | b'\t' | b'\n' | b'\r' | b'\\')))
    };
    let mut at = node.start_byte();
    let mut cursor = node.walk();
    for child in node.children(&mut cursor) {
        if skipped(at, child.start_byte()) {
            return true;
        }
        at = child.end_byte();
    }
    skipped(at, node.end_byte())
}

/// Whether a blank in the text stands outside quotes and without a `\\` before it.
fn has_unquoted_blank(text: &str) -> bool {
    let mut chars = text.chars();
    let mut quote = None;
    while let Some(c) = chars.next() {
        match (quote, c) {
            (Some('\''), '\'') | (Some('"'), '"') => quote = None,
            (Some('\''), _) => {}
            (_, '\\') => {
                chars.next();
            }
            (Some(_), _) => {}
            (None, '\'' | '"') => quote = Some(c),
            (None, ' ' | '\t' | '\n') => return true,
            (None, _) => {}
        }
    }
    false
}

/// Drops `env VAR=x`, `timeout 10`, `nohup`, `nice -n 5`, `time`, `command`, `exec` in front.
fn strip_wrappers(words: &[String]) -> Vec<String> {
    let mut rest = words;
    loop {
        let Some(first) = rest.first() else { return Vec::new() };
        let skip = match first.as_str() {
            "nohup" | "time" | "command" | "exec" | "builtin" => 1,
            "env" => 1 + rest[1..].iter().take_while(|word| word.contains('=') || word.starts_with('-')).count(),
            "timeout" => {
                // Options, some taking a value (`-s KILL`, `-k 5`), then the duration.
                let mut index = 1;
                while let Some(option) = rest.get(index).filter(|word| word.starts_with('-')) {
                    index += if matches!(option.as_str(), "-s" | "-k" | "--signal" | "--kill-after") { 2 } else { 1 };
                }
                index + 1
            }
            "nice" => {
                let flags = rest[1..].iter().take_while(|word| word.starts_with('-')).count();
                // `nice -n 5 cmd`: the -n takes a value.
                if rest.get(1).is_some_and(|flag| flag == "-n") { 3 } else { 1 + flags }
            }
            _ => return rest.to_vec(),
        };
        rest = rest.get(skip.min(rest.len())..).unwrap_or_default();
    }
}

/// `> file`, `>> file`, `&> file`, `>| file`; not `2>&1`, `>&2` or `> /dev/null`.
fn writes_to_file(node: Node<'_>, source: &[u8]) -> bool {
    let mut cursor = node.walk();
    let children: Vec<Node<'_>> = node.children(&mut cursor).collect();
    let Some(operator) = children.iter().find(|child| !child.is_named()).and_then(|child| child.utf8_text(source).ok())
    else {
        return false;
    };
    if !operator.contains('>') {
        return false;
    }
    let destination = children.iter().rev().find(|child| child.is_named() && child.kind() != "file_descriptor");
    let Some(destination) = destination else { return false };
    let target = word(*destination, source);
    // `>6` and `> -` write files of those names; only `>&` duplicates (or closes) a descriptor.
    let duplicates_descriptor = operator.ends_with('&') || operator == ">&";
    !(duplicates_descriptor && target.chars().all(|c| c.is_ascii_digit() || c == '-')) && target != "/dev/null"
}
