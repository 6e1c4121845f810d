//! The commands the bridge offers (`workspace/executeCommand`), one enum for both directions:
//! code actions are built from a [`Command`] and what the editor sends back is parsed into one,
//! so what an action carries and what its command reads cannot drift apart.

use larik_core::Mode;
use lsp_types::{Diagnostic, Range, Uri};
use serde_json::{Value, json};

/// What the editor asks for. Arguments are positional, as editors pass them (Helix's
/// `:lsp-workspace-command larik.ask Why is this slow?` sends the words one by one).
#[derive(Debug, Clone, PartialEq)]
pub enum Command {
    /// `larik.ask`, `larik.explain` or `larik.fix` with nothing to go on: tell the user how to ask.
    Help,
    /// `larik.ask` with words typed at the command line: the words are the prompt.
    Prompt(String),
    /// A code action on a place in a file (the whole file without a range).
    AboutCode {
        uri: Uri,
        range: Option<Range>,
        request: CodeRequest,
    },
    /// Send the prompt under the chat file's last heading.
    Send {
        uri: Uri,
    },
    Cancel,
    /// Switch to a mode, or to the next one (editors that cannot pass arguments).
    Mode(Option<Mode>),
    /// Accept (or reject) the whole edit under review, or else the pending question.
    Decide {
        accept: bool,
    },
    /// One hunk of an edit under review.
    Hunk {
        proposal: u64,
        hunk: usize,
        accept: bool,
    },
    /// An answer to a question; `question` names which, so a stale menu cannot answer a newer one.
    Permission {
        option: String,
        question: Option<u64>,
    },
}

/// What a code action on code asks of the agent.
#[derive(Debug, Clone, PartialEq)]
pub enum CodeRequest {
    /// Ask, with the user's request or a general review.
    Ask(Option<String>),
    Explain,
    /// Fix these diagnostics.
    Fix(Vec<Diagnostic>),
}

/// Every command name, as announced in `executeCommandProvider`.
pub const NAMES: [&str; 10] = [
    "larik.ask",
    "larik.explain",
    "larik.fix",
    "larik.send",
    "larik.cancel",
    "larik.mode",
    "larik.accept",
    "larik.reject",
    "larik.hunk",
    "larik.permission",
];

/// A command the bridge cannot run as sent; the editor shows the message.
#[derive(Debug, PartialEq)]
pub struct BadCommand(pub String);

impl Command {
    pub fn parse(name: &str, arguments: &[Value]) -> Result<Self, BadCommand> {
        let text = |index: usize| arguments.get(index).and_then(Value::as_str).map(str::to_owned);
        let bad = |message: &str| BadCommand(message.to_owned());
        match name {
            "larik.ask" | "larik.explain" | "larik.fix" => {
                let Some(first) = text(0) else { return Ok(Self::Help) };
                if !first.starts_with("file://") {
                    let words: Vec<&str> = arguments.iter().filter_map(Value::as_str).collect();
                    return Ok(Self::Prompt(words.join(" ")));
                }
                let uri = parse_uri(&first)?;
                let range = match arguments.get(1) {
                    None | Some(Value::Null) => None,
                    Some(range) => Some(
                        serde_json::from_value(range.clone())
                            .map_err(|error| BadCommand(format!("{name}: the range is not an LSP range: {error}")))?,
                    ),
                };
                let request = match name {
                    "larik.explain" => CodeRequest::Explain,
                    "larik.fix" => CodeRequest::Fix(match arguments.get(2) {
                        None | Some(Value::Null) => Vec::new(),
                        Some(list) => serde_json::from_value(list.clone()).map_err(|error| {
                            BadCommand(format!("larik.fix: the diagnostics are not LSP diagnostics: {error}"))
                        })?,
                    }),
                    _ => CodeRequest::Ask(text(2)),
                };
                Ok(Self::AboutCode { uri, range, request })
            }
            "larik.send" => {
                Ok(Self::Send { uri: parse_uri(&text(0).ok_or_else(|| bad("larik.send takes the chat file's URI"))?)? })
            }
            "larik.cancel" => Ok(Self::Cancel),
            "larik.mode" => match text(0) {
                None => Ok(Self::Mode(None)),
                Some(id) => Mode::from_id(&id)
                    .map(|mode| Self::Mode(Some(mode)))
                    .ok_or_else(|| bad("larik.mode takes default, accept-edits, plan or yolo")),
            },
            "larik.accept" => Ok(Self::Decide { accept: true }),
            "larik.reject" => Ok(Self::Decide { accept: false }),
            "larik.hunk" => {
                let proposal = arguments
                    .first()
                    .and_then(Value::as_u64)
                    .ok_or_else(|| bad("larik.hunk takes a proposal, a hunk and a decision"))?;
                let hunk =
                    arguments.get(1).and_then(Value::as_u64).and_then(|index| usize::try_from(index).ok()).unwrap_or(0);
                let accept = arguments.get(2).and_then(Value::as_bool).unwrap_or(false);
                Ok(Self::Hunk { proposal, hunk, accept })
            }
            "larik.permission" => Ok(Self::Permission {
                option: text(0).unwrap_or_default(),
                question: arguments.get(1).and_then(Value::as_u64),
            }),
            other => Err(BadCommand(format!("unknown command {other}"))),
        }
    }

    /// The command's name and arguments as [`Command::parse`] reads them back.
    fn encoded(&self) -> (&'static str, Vec<Value>) {
        match self {
            Self::Help => ("larik.ask", Vec::new()),
            Self::Prompt(words) => ("larik.ask", vec![json!(words)]),
            Self::AboutCode { uri, range, request } => {
                let mut arguments = vec![json!(uri.as_str()), json!(range)];
                match request {
                    CodeRequest::Ask(None) => ("larik.ask", arguments),
                    CodeRequest::Ask(Some(text)) => {
                        arguments.push(json!(text));
                        ("larik.ask", arguments)
                    }
                    CodeRequest::Explain => ("larik.explain", arguments),
                    CodeRequest::Fix(diagnostics) => {
                        arguments.push(json!(diagnostics));
                        ("larik.fix", arguments)
                    }
                }
            }
            Self::Send { uri } => ("larik.send", vec![json!(uri.as_str())]),
            Self::Cancel => ("larik.cancel", Vec::new()),
            Self::Mode(mode) => ("larik.mode", mode.iter().map(|mode| json!(mode.id())).collect()),
            Self::Decide { accept: true } => ("larik.accept", Vec::new()),
            Self::Decide { accept: false } => ("larik.reject", Vec::new()),
            Self::Hunk { proposal, hunk, accept } => ("larik.hunk", vec![json!(proposal), json!(hunk), json!(accept)]),
            Self::Permission { option, question } => ("larik.permission", vec![json!(option), json!(question)]),
        }
    }

    /// The LSP command a code action carries.
    pub fn to_lsp(&self, title: &str) -> lsp_types::Command {
        let (name, arguments) = self.encoded();
        lsp_types::Command { title: title.to_owned(), command: name.to_owned(), arguments: Some(arguments) }
    }
}

fn parse_uri(address: &str) -> Result<Uri, BadCommand> {
    address.parse().map_err(|_| BadCommand(format!("not a URI: {address}")))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use lsp_types::{DiagnosticSeverity, Position};

    fn round_trip(command: &Command) -> Command {
        let lsp = command.to_lsp("title");
        Command::parse(&lsp.command, &lsp.arguments.unwrap()).unwrap()
    }

    #[test]
    fn every_command_reads_back_what_its_action_carries() {
        let uri: Uri = "file:///p/a%20b.rs".parse().unwrap();
        let lines = Range::new(Position::new(1, 0), Position::new(3, 4));
        let range = Some(lines);
        let diagnostic = Diagnostic {
            range: lines,
            severity: Some(DiagnosticSeverity::ERROR),
            message: "boom".into(),
            ..Default::default()
        };
        let commands = [
            Command::Help,
            Command::Prompt("why is this slow".into()),
            Command::AboutCode { uri: uri.clone(), range, request: CodeRequest::Ask(None) },
            Command::AboutCode { uri: uri.clone(), range, request: CodeRequest::Ask(Some("Refactor".into())) },
            Command::AboutCode { uri: uri.clone(), range: None, request: CodeRequest::Explain },
            Command::AboutCode { uri: uri.clone(), range, request: CodeRequest::Fix(vec![diagnostic]) },
            Command::Send { uri },
            Command::Cancel,
            Command::Mode(None),
            Command::Mode(Some(Mode::Plan)),
            Command::Decide { accept: true },
            Command::Decide { accept: false },
            Command::Hunk { proposal: 7, hunk: 2, accept: true },
            Command::Permission { option: "allow_once".into(), question: Some(3) },
        ];
        let mut names: Vec<String> = Vec::new();
        for command in &commands {
            assert_eq!(&round_trip(command), command);
            names.push(command.to_lsp("t").command);
        }
        // Every announced name is one some command is sent as, and the other way round.
        names.sort();
        names.dedup();
        let mut announced = NAMES.map(str::to_owned).to_vec();
        announced.sort();
        assert_eq!(names, announced);
    }

    #[test]
    fn what_a_user_types_is_read_as_they_meant_it() {
        let words = [json!("why"), json!("is"), json!("this"), json!("slow?")];
        assert_eq!(Command::parse("larik.ask", &words).unwrap(), Command::Prompt("why is this slow?".into()));
        assert_eq!(Command::parse("larik.fix", &[]).unwrap(), Command::Help);
        assert_eq!(Command::parse("larik.mode", &[json!("yolo")]).unwrap(), Command::Mode(Some(Mode::Yolo)));
        assert!(
            Command::parse("larik.mode", &[json!("fast")])
                .unwrap_err()
                .0
                .contains("default, accept-edits, plan or yolo")
        );
        assert!(Command::parse("larik.send", &[]).unwrap_err().0.contains("chat file"));
        assert!(
            Command::parse("larik.ask", &[json!("file:///a.rs"), json!({"start": 1})])
                .unwrap_err()
                .0
                .contains("not an LSP range")
        );
        assert_eq!(Command::parse("larik.nope", &[]).unwrap_err(), BadCommand("unknown command larik.nope".into()));
    }
}
