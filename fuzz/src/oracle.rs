//! A second reading of a bash line, written apart from the splitter the permission rules use
//! (`larik_core`'s tree-sitter one) and deliberately simple: quotes, escapes and comments are
//! honoured, every control operator (`;`, `&`, `|`, newlines, parentheses) starts a new
//! command, and the first word of each is the program it runs. Where it cannot tell (a here
//! document, a wrapper or shell that runs another command, a `for` or `case` header) it stays
//! silent rather than guess. It is the reference the fuzzer holds the splitter to: whatever it
//! names as run, an allow rule for another program must not cover.

/// Words that open or close a compound command, not programs.
const KEYWORDS: &[&str] =
    &["if", "then", "else", "elif", "fi", "do", "done", "while", "until", "!", "{", "}", "esac", "time"];
/// Headers whose words are not commands.
const HEADERS: &[&str] = &["for", "case", "select", "[[", "function"];
/// Programs that run another command given as arguments: the splitter looks through them and
/// this reading does not, so it judges nothing behind them.
const RUNNERS: &[&str] = &[
    "env", "timeout", "nohup", "nice", "command", "exec", "builtin", "bash", "sh", "zsh", "dash", "xargs", "find",
    "sudo", "stdbuf", "ionice", "setsid", "chrt", "taskset", "eval",
];

/// A program the line runs that is not `allowed`, if this reading finds one.
pub fn command_other_than(line: &str, allowed: &str) -> Option<String> {
    if line.contains("<<") {
        return None;
    }
    for segment in segments(line)? {
        let mut words =
            segment.iter().map(String::as_str).skip_while(|word| is_assignment(word) || KEYWORDS.contains(word));
        let Some(program) = words.next() else { continue };
        if HEADERS.contains(&program) || RUNNERS.contains(&program) {
            continue;
        }
        if program != allowed {
            return Some(segment.join(" "));
        }
    }
    None
}

fn is_assignment(word: &str) -> bool {
    // `NAME=value` or `NAME+=value`.
    word.split_once('=').map(|(name, _)| name.strip_suffix('+').unwrap_or(name)).is_some_and(|name| {
        !name.is_empty()
            && name.chars().all(|c| c == '_' || c.is_ascii_alphanumeric())
            && !name.starts_with(|c: char| c.is_ascii_digit())
    })
}

/// The line's commands as words, quotes removed; `None` when it holds a substitution, which
/// runs commands this reading does not follow.
fn segments(line: &str) -> Option<Vec<Vec<String>>> {
    let mut segments = vec![Vec::new()];
    let mut word: Option<String> = None;
    let mut chars = line.chars().peekable();
    let end_word = |word: &mut Option<String>, segments: &mut Vec<Vec<String>>| {
        if let (Some(done), Some(segment)) = (word.take(), segments.last_mut()) {
            segment.push(done);
        }
    };
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some('\n') | None => {}
                Some(escaped) => word.get_or_insert_with(String::new).push(escaped),
            },
            '\'' => single_quoted(&mut chars, word.get_or_insert_with(String::new)),
            '"' => double_quoted(&mut chars, word.get_or_insert_with(String::new))?,
            '`' => return None,
            '$' if chars.peek() == Some(&'(') => return None,
            // An ANSI-C string: `\'` does not end it. Its escapes (`\x6c`) are not followed:
            // with one, this reading stays silent.
            '$' if chars.peek() == Some(&'\'') => {
                chars.next();
                let text = word.get_or_insert_with(String::new);
                for quoted in chars.by_ref() {
                    match quoted {
                        '\'' => break,
                        '\\' => return None,
                        other => text.push(other),
                    }
                }
            }
            '<' | '>' if chars.peek() == Some(&'(') => return None,
            '#' if word.is_none() => {
                for skipped in chars.by_ref() {
                    if skipped == '\n' {
                        break;
                    }
                }
                end_word(&mut word, &mut segments);
                segments.push(Vec::new());
            }
            ';' | '&' | '|' | '\n' | '(' | ')' => {
                end_word(&mut word, &mut segments);
                segments.push(Vec::new());
            }
            // A redirection: its target is a file, not a command; it ends the word before it.
            '<' | '>' => {
                let before = word.take();
                if let Some(before) = before.filter(|before| !before.chars().all(|c| c.is_ascii_digit())) {
                    segments.last_mut()?.push(before);
                }
                while chars.peek().is_some_and(|next| matches!(next, '<' | '>' | '&' | '|')) {
                    chars.next();
                }
                // Blanks, and line continuations, which bash removes before it reads the target.
                loop {
                    let mut ahead = chars.clone();
                    match (ahead.next(), ahead.next()) {
                        (Some(' ' | '\t'), _) => {
                            chars.next();
                        }
                        (Some('\\'), Some('\n')) => {
                            chars.next();
                            chars.next();
                        }
                        _ => break,
                    }
                }
                // No target before the line ends: bash stops at the syntax error, and what
                // this reading would take for the next command may be anything.
                // A `#` there opens a comment, so there is no target either.
                if chars.peek().is_none_or(|next| matches!(next, '\n' | '#')) {
                    return None;
                }
                skip_target(&mut chars)?;
            }
            ' ' | '\t' | '\r' => end_word(&mut word, &mut segments),
            other => word.get_or_insert_with(String::new).push(other),
        }
    }
    end_word(&mut word, &mut segments);
    Some(segments)
}

type Chars<'a> = std::iter::Peekable<std::str::Chars<'a>>;

/// Reads a single-quoted string's text, after its opening quote, into `text`.
fn single_quoted(chars: &mut Chars<'_>, text: &mut String) {
    for quoted in chars.by_ref() {
        if quoted == '\'' {
            break;
        }
        text.push(quoted);
    }
}

/// Reads a double-quoted string's text, after its opening quote, into `text`; `None` when it
/// holds a substitution.
fn double_quoted(chars: &mut Chars<'_>, text: &mut String) -> Option<()> {
    while let Some(quoted) = chars.next() {
        match quoted {
            '"' => break,
            '\\' => {
                if let Some(escaped) = chars.next() {
                    text.push(escaped);
                }
            }
            '`' => return None,
            '$' if chars.peek() == Some(&'(') => return None,
            other => text.push(other),
        }
    }
    Some(())
}

/// Skips a redirection's target word, quotes and escapes included (`<a" b"` is one file); another
/// redirection ends it (`<?<` is `?`, then a `<` that needs a target of its own). `None` when
/// it holds a substitution.
fn skip_target(chars: &mut Chars<'_>) -> Option<()> {
    while let Some(&next) = chars.peek() {
        if next.is_whitespace() || matches!(next, ';' | '&' | '|' | '(' | ')' | '<' | '>') {
            break;
        }
        chars.next();
        match next {
            '\\' => {
                chars.next();
            }
            '\'' => single_quoted(chars, &mut String::new()),
            '"' => double_quoted(chars, &mut String::new())?,
            '`' => return None,
            '$' if chars.peek() == Some(&'(') => return None,
            '$' if chars.peek() == Some(&'\'') => {
                chars.next();
                while let Some(quoted) = chars.next() {
                    match quoted {
                        '\'' => break,
                        '\\' => {
                            chars.next();
                        }
                        _ => {}
                    }
                }
            }
            _ => {}
        }
    }
    Some(())
}

#[cfg(test)]
mod tests {
    use super::command_other_than;

    #[test]
    fn it_names_what_runs_besides_ls() {
        assert_eq!(command_other_than("ls -la", "ls"), None);
        assert_eq!(command_other_than("ls && ls src | ls", "ls"), None);
        assert_eq!(command_other_than("ls 'a;rm b' \"c|d\" e\\;f", "ls"), None);
        assert_eq!(command_other_than("ls; rm -rf x", "ls").as_deref(), Some("rm -rf x"));
        assert_eq!(command_other_than("ls\nrm x", "ls").as_deref(), Some("rm x"));
        assert_eq!(command_other_than("X=1 ls || (cat y)", "ls").as_deref(), Some("cat y"));
        assert_eq!(command_other_than("l\\s # ; rm x", "ls"), None);
        assert_eq!(command_other_than("if ls; then touch x; fi", "ls").as_deref(), Some("then touch x"));
        assert_eq!(command_other_than("ls 2>/dev/null>out", "ls"), None);
        assert_eq!(command_other_than("A+=1 ls", "ls"), None, "an appending assignment");
        assert_eq!(command_other_than("ls <?<\nrm x", "ls"), None, "a redirection without a target: bash runs nothing");
        assert_eq!(command_other_than("ls <ls\"ls( -\"= ", "ls"), None, "a quoted target is one file");
        assert_eq!(
            command_other_than("ls <\\\n\nrm x", "ls"),
            None,
            "a continuation is no target: bash stops at the syntax error"
        );
        assert_eq!(command_other_than("ls<ls$'\\'r;'", "ls"), None, "an ANSI-C string's \\' does not end it");
        assert_eq!(command_other_than("$'rm' x", "ls").as_deref(), Some("rm x"));
        assert_eq!(
            command_other_than("ls\nls<#\n\no", "ls"),
            None,
            "<# opens a comment: bash stops at the syntax error"
        );
        assert_eq!(command_other_than("$'ls'; rm x", "ls").as_deref(), Some("rm x"));
        assert_eq!(command_other_than("ls <'a;b' ;rm x", "ls").as_deref(), Some("rm x"));
        assert_eq!(command_other_than("ls $(rm x)", "ls"), None, "a substitution: not judged here");
    }
}
