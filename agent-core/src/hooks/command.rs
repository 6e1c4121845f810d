//! Running one command hook: `bash -c COMMAND` in the project directory, the payload on stdin,
//! stdout and stderr captured (bounded), in its own process group, under a timeout and the
//! turn's cancellation token. Then reading what it said by Claude Code's exit-code rules.
//!
//! The hook gets no terminal: stdin is a pipe closed after the payload, so a hook that prompts
//! reads end-of-file instead of hanging the turn.

use std::process::{ExitStatus, Stdio};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};

use super::reply::{Reply, cap, parse_output, short};
use super::{HookEvent, HookHandler, HookRunEnv};

/// Each of stdout and stderr is kept up to this size; the rest is read and dropped so the hook
/// never blocks on a full pipe.
const MAX_CAPTURE_BYTES: usize = 1 << 20;
/// After the shell exits, output still in the pipes is collected this long. A background child
/// that keeps them open must not hold the turn until the timeout.
const EXIT_GRACE: Duration = Duration::from_millis(200);

/// How a command hook ended.
#[derive(Debug)]
pub(crate) enum CommandEnd {
    Exited { status: ExitStatus, stdout: String, stderr: String },
    TimedOut(Duration),
    Cancelled,
    NotStarted(std::io::Error),
}

/// Runs `command` with `payload` on stdin.
pub(crate) async fn run(command: &str, handler: &HookHandler, payload: &str, env: &HookRunEnv<'_>) -> CommandEnd {
    let timeout = handler.timeout;
    let mut shell = tokio::process::Command::new("bash");
    shell
        .arg("-c")
        .arg(command)
        .current_dir(env.project_dir)
        .env("LARIK_PROJECT_DIR", env.project_dir)
        .env("CLAUDE_PROJECT_DIR", env.project_dir)
        .envs(handler.plugin.iter().flat_map(|plugin| plugin.env()))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        // Its own group, so a timeout or cancel can kill whatever the hook started too.
        .process_group(0)
        .kill_on_drop(true);
    crate::child_process::dies_with_agent(&mut shell);
    let mut child = match shell.spawn() {
        Ok(child) => child,
        Err(error) => return CommandEnd::NotStarted(error),
    };
    let group = child.id().and_then(|pid| i32::try_from(pid).ok());
    let (Some(mut stdin), Some(stdout), Some(stderr)) = (child.stdin.take(), child.stdout.take(), child.stderr.take())
    else {
        kill_group(group);
        return CommandEnd::NotStarted(std::io::Error::other("the hook's pipes were not set up"));
    };
    let mut out = Vec::new();
    let mut err = Vec::new();
    let ended = {
        let io = async {
            let feed = async {
                // A hook that exits without reading its stdin makes this fail; that is its choice.
                let _ = stdin.write_all(payload.as_bytes()).await;
                drop(stdin);
            };
            tokio::join!(feed, read_bounded(stdout, &mut out), read_bounded(stderr, &mut err));
        };
        tokio::pin!(io);
        let deadline = tokio::time::sleep(timeout);
        tokio::pin!(deadline);
        let grace = tokio::time::sleep(Duration::from_secs(3600));
        tokio::pin!(grace);
        let mut io_done = false;
        let mut exited: Option<std::io::Result<ExitStatus>> = None;
        loop {
            if io_done && let Some(status) = exited.take() {
                break Ended::Exited(status);
            }
            tokio::select! {
                () = &mut io, if !io_done => io_done = true,
                status = child.wait(), if exited.is_none() => {
                    exited = Some(status);
                    grace.as_mut().reset(tokio::time::Instant::now() + EXIT_GRACE);
                }
                () = &mut grace, if exited.is_some() => break Ended::Exited(exited.take().unwrap_or_else(|| Err(std::io::Error::other("no exit status")))),
                () = &mut deadline => break Ended::TimedOut,
                () = env.cancel.cancelled() => break Ended::Cancelled,
            }
        }
    };
    match ended {
        Ended::Exited(Ok(status)) => CommandEnd::Exited { status, stdout: lossy(out), stderr: lossy(err) },
        Ended::Exited(Err(error)) => CommandEnd::NotStarted(error),
        Ended::TimedOut | Ended::Cancelled => {
            kill_group(group);
            // Reaped so no zombie is left; the group is dead, so this returns at once.
            let _ = child.wait().await;
            if matches!(ended, Ended::TimedOut) { CommandEnd::TimedOut(timeout) } else { CommandEnd::Cancelled }
        }
    }
}

/// Kills every process in the hook's group, whatever it started in the background. The bash
/// tool has the same helper; it is private to the tools.
fn kill_group(group: Option<i32>) {
    if let Some(pgid) = group {
        let _ = nix::sys::signal::killpg(nix::unistd::Pid::from_raw(pgid), nix::sys::signal::Signal::SIGKILL);
    }
}

enum Ended {
    Exited(std::io::Result<ExitStatus>),
    TimedOut,
    Cancelled,
}

async fn read_bounded(mut reader: impl AsyncRead + Unpin, into: &mut Vec<u8>) {
    let mut buffer = vec![0u8; 8192];
    loop {
        match reader.read(&mut buffer).await {
            Ok(0) | Err(_) => return,
            Ok(read) => {
                let room = MAX_CAPTURE_BYTES.saturating_sub(into.len());
                into.extend_from_slice(&buffer[..read.min(room)]);
            }
        }
    }
}

fn lossy(bytes: Vec<u8>) -> String {
    String::from_utf8(bytes).unwrap_or_else(|error| String::from_utf8_lossy(error.as_bytes()).into_owned())
}

impl CommandEnd {
    /// What the hook said, by Claude Code's rules: exit 0 is success and its stdout may be JSON;
    /// exit 2 blocks with stderr as the reason, whatever the JSON says; any other end is a
    /// non-blocking error unless valid JSON was printed, which then decides.
    pub fn reply(self, event: HookEvent, command: &str) -> Reply {
        let mut reply = Reply::new(command);
        let label = short(command);
        let (status, stdout, stderr) = match self {
            CommandEnd::Exited { status, stdout, stderr } => (status, stdout, stderr),
            CommandEnd::TimedOut(after) => {
                reply
                    .messages
                    .push(format!("hook `{label}` timed out after {} s and was stopped", after.as_secs_f64()));
                return reply;
            }
            CommandEnd::Cancelled => {
                reply.messages.push(format!("hook `{label}` was stopped: the turn was cancelled"));
                return reply;
            }
            CommandEnd::NotStarted(error) => {
                reply.messages.push(format!("hook `{label}` could not run: {error}"));
                return reply;
            }
        };
        let json = parse_output(&stdout);
        match status.code() {
            Some(0) => match json {
                Some(Ok(output)) => reply.apply(event, output),
                Some(Err(error)) => {
                    reply.messages.push(format!("hook `{label}` printed invalid JSON ({error}); its output is ignored"))
                }
                None => {
                    let text = stdout.trim();
                    if event.plain_stdout_is_context() && !text.is_empty() {
                        reply.context.push(cap(text.to_owned()));
                    }
                }
            },
            Some(2) => {
                if let Some(Ok(output)) = json {
                    let reason = output.reason.clone();
                    reply.apply(event, output);
                    // The JSON is read, but cannot undo the block: exit 2 decides.
                    reply.block = None;
                    reply.block(event, Some(stderr.trim()).filter(|text| !text.is_empty()).or(reason.as_deref()));
                } else {
                    reply.block(event, Some(&stderr));
                }
            }
            code => match json {
                Some(Ok(output)) => reply.apply(event, output),
                _ => {
                    let how = code.map_or_else(|| "killed by a signal".to_owned(), |code| format!("exit {code}"));
                    let first = stderr.lines().map(str::trim).find(|line| !line.is_empty());
                    reply.messages.push(match first {
                        Some(line) => format!("hook `{label}` failed ({how}): {line}"),
                        None => format!("hook `{label}` failed ({how})"),
                    });
                }
            },
        }
        reply
    }
}
