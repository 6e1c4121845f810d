//! `larik demo`: copies a small sample project to a temp directory and replays a shipped recording
//! of the model's side against it. The tools run for real (the edit changes the copy, the tests
//! run), so the transcript shows the whole pipeline offline, with no key.

use std::io::Write;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use crate::side_by_side::side_by_side;
use larik_core::Part;
use larik_core::event::{AgentEvent, Display, PermissionAnswer, ToolStatus};
use larik_core::replay::{Recording, ReplayProvider};
use larik_core::session::{ModelSettings, Session, SessionConfig};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

const RECORDING: &str = include_str!("../demo/recording.json");
const PROJECT: &[(&str, &str)] = &[
    ("README.md", include_str!("../demo/project/README.md")),
    ("greet.py", include_str!("../demo/project/greet.py")),
    ("test_greet.py", include_str!("../demo/project/test_greet.py")),
];
const PROMPT: &str = "The greeting test fails. Find out why and fix it.";

pub async fn run(fast: bool) -> anyhow::Result<()> {
    let project = tempfile::Builder::new().prefix("larik-demo-").tempdir()?;
    for (name, content) in PROJECT {
        std::fs::write(project.path().join(name), content)?;
    }
    let recording: Recording = serde_json::from_str(RECORDING)?;
    let pace = if fast { Duration::ZERO } else { Duration::from_millis(25) };
    let provider = Arc::new(ReplayProvider::new(recording, pace));
    let cancel = CancellationToken::new();
    let model = ModelSettings { model: "replay".into(), max_tokens: 4096, max_turn_requests: 20, thought_level: None };
    let config = SessionConfig::plain(project.path().to_path_buf(), Ok(provider), model);
    let session = Session::new(config, &cancel);
    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "larik demo: a recorded session replayed against a scratch project in {}\n",
        project.path().display()
    )?;
    writeln!(out, "> {PROMPT}\n")?;
    drop(out);
    let (events_tx, mut events_rx) = mpsc::channel(64);
    let turn = session.prompt(vec![Part::Text { text: PROMPT.into() }], events_tx, cancel.child_token());
    let show = async {
        while let Some(event) = events_rx.recv().await {
            show_event(event, session.cwd());
        }
    };
    let outcome = side_by_side(turn, show).await;
    let stop = outcome?;
    let mut out = std::io::stdout().lock();
    writeln!(out, "\n\n[turn ended: {stop:?}]")?;
    Ok(())
}

fn show_event(event: AgentEvent, root: &Path) {
    let Some(event) = larik_core::subagents::flattened(event) else { return };
    let mut out = std::io::stdout().lock();
    let _ = match event {
        AgentEvent::TextDelta(text) => write!(out, "{text}"),
        AgentEvent::ThinkingDelta(text) => write!(out, "({text})"),
        AgentEvent::ToolCallStarted(view) => write!(out, "\n\n● {}", view.title),
        AgentEvent::PermissionRequested(request) => {
            let _ = request.reply.send(PermissionAnswer::AllowOnce);
            write!(out, "\n  [permission asked for {}: allowed by the demo]", request.tool_call.name)
        }
        AgentEvent::ToolCallUpdated {
            status: status @ (ToolStatus::Completed | ToolStatus::Failed),
            output,
            display,
            ..
        } => {
            let mark = if status == ToolStatus::Completed { "done" } else { "failed" };
            let body = match display {
                Some(Display::Diff { path, old_text, new_text }) => {
                    unified_diff(root, &path, old_text.as_deref().unwrap_or(""), &new_text)
                }
                Some(Display::Command { output, .. }) => output,
                _ => output.unwrap_or_default(),
            };
            let indented: String = body.lines().take(40).map(|line| format!("\n  │ {line}")).collect();
            write!(out, "  ({mark}){indented}\n\n")
        }
        AgentEvent::ToolCallUpdated { .. }
        | AgentEvent::ToolOutput { .. }
        | AgentEvent::ToolTerminal { .. }
        | AgentEvent::ToolProgressNote { .. }
        | AgentEvent::Usage { .. }
        | AgentEvent::Notice(_)
        | AgentEvent::TitleChanged(_)
        | AgentEvent::CommandsChanged { .. }
        | AgentEvent::Compaction { .. } => Ok(()),
        AgentEvent::ChildStarted { .. } | AgentEvent::Child { .. } | AgentEvent::ChildEnded { .. } => Ok(()),
    };
    let _ = out.flush();
}

fn unified_diff(root: &Path, path: &Path, old: &str, new: &str) -> String {
    let name = path.strip_prefix(root).unwrap_or(path).display().to_string();
    similar::TextDiff::from_lines(old, new)
        .unified_diff()
        .context_radius(2)
        .header(&format!("a/{name}"), &format!("b/{name}"))
        .to_string()
}
