//! Commands run in a terminal the editor hosts, for editors that embed terminals in the chat.
//! The agent still decides what runs and how: the command line it hands over is the sandbox
//! helper's when the sandbox is on, the timeout and cancellation are the agent's, and every
//! terminal it creates is released, whatever the outcome.

use std::path::PathBuf;
use std::time::Duration;

use larik_host::editor::EditorError;

use super::ToolProgress;
use super::bash::{CommandEnd, CommandRun};
use super::truncate::MAX_OUTPUT_BYTES;
use tokio_util::sync::CancellationToken;

/// What to start: a program with its arguments, in a directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TerminalCommand {
    pub program: PathBuf,
    pub args: Vec<String>,
    pub cwd: PathBuf,
    /// The most output the editor should keep; it drops the oldest beyond that.
    pub output_limit: u64,
}

/// How a command in an editor terminal ended.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TerminalExit {
    pub code: Option<i32>,
    pub signal: Option<String>,
}

/// What a terminal printed, and whether the editor dropped the beginning of it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TerminalOutput {
    pub text: String,
    pub truncated: bool,
}

/// The editor's terminals.
#[async_trait::async_trait]
pub trait EditorTerminals: Send + Sync {
    async fn create(&self, command: &TerminalCommand) -> Result<Box<dyn EditorTerminal>, EditorError>;
}

/// One terminal the editor created. `release` must be called once it is no longer needed.
#[async_trait::async_trait]
pub trait EditorTerminal: Send + Sync {
    fn id(&self) -> &str;
    async fn wait_for_exit(&self) -> Result<TerminalExit, EditorError>;
    async fn output(&self) -> Result<TerminalOutput, EditorError>;
    async fn kill(&self) -> Result<(), EditorError>;
    async fn release(&self);
}

/// A command run in an editor terminal: what it printed, how it ended, and the terminal's id
/// (released by then, but still shown by the editor).
pub struct EditorRun {
    pub run: CommandRun,
    pub terminal_id: String,
}

/// Runs `command` in a new editor terminal, shown in the call as soon as it exists, until it
/// exits, times out or is cancelled; then collects its output and releases the terminal. `Err`
/// means no terminal could be created.
pub async fn run_in_editor(
    terminals: &dyn EditorTerminals,
    progress: &ToolProgress,
    command: TerminalCommand,
    timeout: Duration,
    cancel: &CancellationToken,
) -> Result<EditorRun, EditorError> {
    let terminal = terminals.create(&command).await?;
    progress.terminal(terminal.id()).await;
    let waited = tokio::select! {
        exit = terminal.wait_for_exit() => exit.map(Some),
        () = tokio::time::sleep(timeout) => Ok(None),
        () = cancel.cancelled() => Ok(None),
    };
    let end = match waited {
        Ok(Some(exit)) => match (exit.code, exit.signal) {
            (Some(code), _) => CommandEnd::Exited(code),
            _ => CommandEnd::Signalled,
        },
        Ok(None) => {
            if let Err(error) = terminal.kill().await {
                tracing::warn!(%error, terminal = terminal.id(), "the editor could not kill its terminal");
            }
            if cancel.is_cancelled() { CommandEnd::Cancelled } else { CommandEnd::TimedOut }
        }
        Err(error) => {
            tracing::warn!(%error, terminal = terminal.id(), "waiting for the editor's terminal failed");
            CommandEnd::Signalled
        }
    };
    let output = terminal.output().await.unwrap_or_else(|error| TerminalOutput {
        text: format!("(the editor did not return the output: {error})"),
        truncated: false,
    });
    terminal.release().await;
    let mut text = output.text;
    if output.truncated {
        text.insert_str(0, "[the beginning of the output was dropped by the editor]\n");
    }
    Ok(EditorRun { run: CommandRun { output: text.into_bytes(), end }, terminal_id: terminal.id().to_owned() })
}

/// How much output an editor terminal keeps for the model: a little more than the model is
/// shown, so the cut in the middle still has both ends.
pub const EDITOR_OUTPUT_LIMIT: u64 = (MAX_OUTPUT_BYTES as u64) * 4;

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use super::*;

    /// An editor whose terminals run nothing: each call is logged, and the "command" ends as
    /// scripted (exits with a code, or never).
    #[derive(Default)]
    struct ScriptedEditor {
        log: Arc<Mutex<Vec<String>>>,
        exit: Option<i32>,
    }

    struct ScriptedTerminal {
        log: Arc<Mutex<Vec<String>>>,
        exit: Option<i32>,
        killed: CancellationToken,
    }

    #[async_trait::async_trait]
    impl EditorTerminals for ScriptedEditor {
        async fn create(&self, command: &TerminalCommand) -> Result<Box<dyn EditorTerminal>, EditorError> {
            self.log.lock().unwrap().push(format!("create {}", command.args.join(" ")));
            Ok(Box::new(ScriptedTerminal {
                log: Arc::clone(&self.log),
                exit: self.exit,
                killed: CancellationToken::new(),
            }))
        }
    }

    #[async_trait::async_trait]
    impl EditorTerminal for ScriptedTerminal {
        fn id(&self) -> &str {
            "term_1"
        }
        async fn wait_for_exit(&self) -> Result<TerminalExit, EditorError> {
            match self.exit {
                Some(code) => Ok(TerminalExit { code: Some(code), signal: None }),
                None => {
                    self.killed.cancelled().await;
                    Ok(TerminalExit { code: None, signal: Some("SIGKILL".into()) })
                }
            }
        }
        async fn output(&self) -> Result<TerminalOutput, EditorError> {
            self.log.lock().unwrap().push("output".into());
            Ok(TerminalOutput { text: "tail\n".into(), truncated: true })
        }
        async fn kill(&self) -> Result<(), EditorError> {
            self.log.lock().unwrap().push("kill".into());
            self.killed.cancel();
            Ok(())
        }
        async fn release(&self) {
            self.log.lock().unwrap().push("release".into());
        }
    }

    fn command() -> TerminalCommand {
        TerminalCommand {
            program: "bash".into(),
            args: vec!["-c".into(), "true".into()],
            cwd: "/".into(),
            output_limit: 1024,
        }
    }

    fn progress(call_id: &str) -> (ToolProgress, tokio::sync::mpsc::Receiver<crate::event::AgentEvent>) {
        let (events, received) = tokio::sync::mpsc::channel(16);
        (ToolProgress { call_id: call_id.into(), events }, received)
    }

    #[tokio::test]
    async fn an_exited_command_is_read_then_released() {
        let editor = ScriptedEditor { exit: Some(2), ..Default::default() };
        let (progress, mut events) = progress("call_1");
        let run = run_in_editor(&editor, &progress, command(), Duration::from_secs(5), &CancellationToken::new())
            .await
            .unwrap();
        assert!(matches!(run.run.end, CommandEnd::Exited(2)));
        assert_eq!(
            String::from_utf8(run.run.output).unwrap(),
            "[the beginning of the output was dropped by the editor]\ntail\n"
        );
        assert_eq!(*editor.log.lock().unwrap(), ["create -c true", "output", "release"]);
        let shown = events.try_recv().unwrap();
        assert!(
            matches!(shown, crate::event::AgentEvent::ToolTerminal { id, terminal_id } if id == "call_1" && terminal_id == "term_1")
        );
    }

    #[tokio::test]
    async fn a_timeout_or_cancel_kills_before_releasing() {
        let editor = ScriptedEditor::default();
        let (progress, _events) = progress("call_1");
        let run = run_in_editor(&editor, &progress, command(), Duration::from_millis(20), &CancellationToken::new())
            .await
            .unwrap();
        assert!(matches!(run.run.end, CommandEnd::TimedOut));
        let cancel = CancellationToken::new();
        cancel.cancel();
        let run = run_in_editor(&editor, &progress, command(), Duration::from_secs(60), &cancel).await.unwrap();
        assert!(matches!(run.run.end, CommandEnd::Cancelled));
        let log = editor.log.lock().unwrap().clone();
        assert_eq!(log, ["create -c true", "kill", "output", "release", "create -c true", "kill", "output", "release"]);
    }
}
