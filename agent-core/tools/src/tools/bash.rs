//! `bash`: run a command line in the project root, in its own process group. Output from stdout
//! and stderr is interleaved as it arrives and streamed to the editor; a timeout or a cancel kills
//! the whole group. When the editor hosts terminals, the command runs in one of them instead
//! (still through the sandbox helper), so the user watches it there.

use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use schemars::JsonSchema;
use serde::Deserialize;
use tokio::io::AsyncReadExt;

use super::network_prompt::CommandNetwork;
use super::terminal::{EDITOR_OUTPUT_LIMIT, TerminalCommand, run_in_editor};
use super::truncate::{MAX_OUTPUT_BYTES, truncate_middle};
use super::{CallDescription, CallSubject, ClaudeCodeAlias, HookResponse, Tool, ToolContext, ToolOutput, ToolProgress};
use crate::event::{Display, ToolKind};
use crate::sandbox::network::proxy::NetworkProxy;
use crate::sandbox::{PreparedCommand, Sandbox};

const DEFAULT_TIMEOUT: Duration = Duration::from_secs(120);
const MAX_TIMEOUT: Duration = Duration::from_secs(600);
/// Output streamed to the editor per call; beyond it the editor gets the result only, so a
/// command that prints gigabytes does not flood the client.
const MAX_STREAMED_BYTES: usize = 1 << 20;

#[derive(Deserialize, JsonSchema)]
pub struct BashInput {
    /// The command line to run with bash.
    pub command: String,
    /// Timeout in milliseconds (default 120000, at most 600000).
    #[serde(default)]
    pub timeout: Option<u64>,
    /// A few words saying what the command does, shown to the user.
    #[serde(default)]
    pub description: Option<String>,
    /// Start the command in the background and return at once with a shell id; read its output
    /// with bash_output and stop it with kill_shell. For servers and watchers.
    #[serde(default)]
    pub run_in_background: bool,
    /// Run inside the sandbox (default true). Set false only for a command that needs to write
    /// outside the project; the user is then asked. The network works inside the sandbox, through
    /// a proxy that lets listed domains through and asks the user about others.
    #[serde(default = "sandbox_default")]
    pub sandbox: bool,
    /// Bypass the token saver: the output comes back exactly as the command printed it, never
    /// filtered. Only matters when the user turned the token saver on.
    #[serde(default)]
    pub raw_output: bool,
}

fn sandbox_default() -> bool {
    true
}

pub struct Bash;

impl Tool for Bash {
    type Input = BashInput;
    const NAME: &'static str = "bash";
    const CLAUDE_CODE: Option<&'static ClaudeCodeAlias> =
        Some(&ClaudeCodeAlias { name: "Bash", fields: &[], response: HookResponse::Command });
    const DESCRIPTION: &'static str = include_str!("bash.md");
    const KIND: ToolKind = ToolKind::Execute;

    fn read_only(&self) -> bool {
        false
    }

    fn streams_output(&self, input: &BashInput) -> bool {
        !input.run_in_background
    }

    fn describe(&self, input: &BashInput, ctx: &ToolContext) -> CallDescription {
        let title = match &input.description {
            Some(description) if !description.trim().is_empty() => {
                format!("{} (`{}`)", description.trim(), first_line(&input.command))
            }
            _ => format!("`{}`", first_line(&input.command)),
        };
        CallDescription {
            title,
            locations: Vec::new(),
            subject: CallSubject::Command {
                line: input.command.clone(),
                sandboxed: wants_sandbox(input, ctx),
                foreground: !input.run_in_background,
            },
        }
    }

    async fn preview(&self, input: &BashInput, _ctx: &ToolContext) -> Option<Display> {
        Some(Display::command(input.command.clone(), String::new(), None, None))
    }

    async fn run(&self, input: BashInput, ctx: &ToolContext) -> ToolOutput {
        // A call that opted out of the sandbox was approved as such.
        // Confined only where the sandbox holds on this machine; elsewhere the call was decided
        // as an unsandboxed one (it asked, unless a rule allowed it).
        let sandbox =
            ctx.env.sandbox.as_deref().filter(|sandbox| wants_sandbox(&input, ctx) && sandbox.holds().is_ok());
        if input.run_in_background {
            // No one answers a background command's questions: the lists alone decide.
            let network = CommandNetwork { progress: None, ..command_network(&input.command, ctx) };
            let record = Arc::clone(&ctx.env.network_log);
            return match ctx.env.shells.start(&input.command, ctx.env.workspace.root(), sandbox, network, record) {
                Ok(id) => ToolOutput::text(format!(
                    "Started in the background as {id}. Read its output with bash_output, stop it with kill_shell."
                )),
                Err(error) => ToolOutput::error(format!("could not start bash: {error}")),
            };
        }
        let timeout = input.timeout.map(Duration::from_millis).unwrap_or(DEFAULT_TIMEOUT).min(MAX_TIMEOUT);
        let Ran { run, terminal, notes } = match run_anywhere(&input.command, ctx, sandbox, timeout).await {
            Ok(ran) => ran,
            Err(error) => return ToolOutput::error(format!("could not start bash: {error}")),
        };
        let exact = String::from_utf8_lossy(&run.output).into_owned();
        let succeeded = matches!(run.end, CommandEnd::Exited(0));
        let mut output = for_the_model(&input, exact, run.output, succeeded, ctx).await;
        if let Some(note) = sandbox.and_then(|sandbox| sandbox.explain(&input.command, &output)) {
            output = format!("{output}\n{note}");
        }
        for note in notes {
            output = format!("{output}\n{note}");
        }
        let (status_line, is_error) = match run.end {
            CommandEnd::Exited(0) => (String::new(), false),
            CommandEnd::Exited(code) => (format!("\n[exit code {code}]"), true),
            CommandEnd::Signalled => ("\n[killed by a signal]".to_owned(), true),
            CommandEnd::TimedOut => {
                (format!("\n[timed out after {} s; the command was killed]", timeout.as_secs()), true)
            }
            CommandEnd::Cancelled => ("\n[cancelled by the user; the command was killed]".to_owned(), true),
        };
        let shown = if output.is_empty() && status_line.is_empty() {
            "(no output)".to_owned()
        } else {
            format!("{output}{status_line}")
        };
        let exit_code = match run.end {
            CommandEnd::Exited(code) => Some(code),
            _ => None,
        };
        let display = Display::command(input.command, shown.clone(), exit_code, terminal);
        ToolOutput { is_error, ..ToolOutput::text(shown) }.with_display(display)
    }
}

/// The output as the model gets it: capped, and with the token saver on, filtered when the
/// command succeeded and its exact bytes are stored (the note says how to read them back).
async fn for_the_model(input: &BashInput, exact: String, bytes: Vec<u8>, succeeded: bool, ctx: &ToolContext) -> String {
    let Some(saver) = ctx.env.token_saver.as_deref() else { return truncate_middle(&exact, MAX_OUTPUT_BYTES) };
    // A call outside any turn has no id to store its output under.
    if ctx.call_id.is_empty() || !saver.keep(&ctx.call_id, bytes).await {
        return truncate_middle(&exact, MAX_OUTPUT_BYTES);
    }
    let filtered = (succeeded && !input.raw_output)
        .then(|| crate::token_saver::shrink(&input.command, &exact, &ctx.call_id))
        .flatten();
    match filtered {
        Some(filtered) => truncate_middle(&filtered, MAX_OUTPUT_BYTES),
        // Cut to fit, the output is all there still.
        None if exact.len() > MAX_OUTPUT_BYTES => format!(
            "{}\n[the exact output: {}]",
            truncate_middle(&exact, MAX_OUTPUT_BYTES),
            crate::token_saver::pointer(&ctx.call_id)
        ),
        None => exact,
    }
}

pub enum CommandEnd {
    Exited(i32),
    Signalled,
    TimedOut,
    Cancelled,
}

pub struct CommandRun {
    pub output: Vec<u8>,
    pub end: CommandEnd,
}

/// A command that ran: how, in which editor terminal if any, and the sandbox's notes (what it
/// undid, what the command reached over the network).
struct Ran {
    run: CommandRun,
    terminal: Option<String>,
    notes: Vec<String>,
}

/// Runs the command in an editor terminal when the editor hosts them, else here. An editor that
/// fails to create one is not fatal: the command then runs here.
async fn run_anywhere(
    command: &str,
    ctx: &ToolContext,
    sandbox: Option<&Sandbox>,
    timeout: Duration,
) -> std::io::Result<Ran> {
    // Kept until the command has ended, wherever it runs: it relies on the stand-ins and the proxy.
    let Confined { command: prepared, proxy } = prepare(command, sandbox, command_network(command, ctx))?;
    let mut terminal = None;
    let mut run = None;
    if let (Some(terminals), Some(progress)) = (&ctx.env.services.terminals, &ctx.progress) {
        let hosted = TerminalCommand {
            program: prepared.program.clone(),
            args: prepared.args.clone(),
            cwd: ctx.env.workspace.root().to_path_buf(),
            output_limit: EDITOR_OUTPUT_LIMIT,
        };
        match run_in_editor(terminals.as_ref(), progress, hosted, timeout, &ctx.cancel).await {
            Ok(ran) => (run, terminal) = (Some(ran.run), Some(ran.terminal_id)),
            Err(error) => tracing::warn!(%error, "the editor could not host the command; running it here"),
        }
    }
    let run = match run {
        Some(run) => run,
        None => run_command(&prepared, ctx, timeout).await?,
    };
    let mut notes: Vec<String> = prepared.finish().into_iter().collect();
    if let Some(log) = proxy.map(|proxy| proxy.log()) {
        notes.extend(log.summary());
        if let Ok(mut session) = ctx.env.network_log.lock() {
            session.merge(&log);
        }
    }
    Ok(Ran { run, terminal, notes })
}

/// Who decides where `command` may connect: the session's rules, and the user through this call.
fn command_network(command: &str, ctx: &ToolContext) -> CommandNetwork {
    CommandNetwork {
        rules: ctx.env.domain_rules.clone(),
        progress: ctx.progress.clone(),
        cancel: ctx.cancel.clone(),
        command: command.to_owned(),
    }
}

/// Whether the call runs in the sandbox: as it asked, but for the settings' exemptions.
fn wants_sandbox(input: &BashInput, ctx: &ToolContext) -> bool {
    ctx.env.sandbox.as_deref().map_or(input.sandbox, |sandbox| sandbox.confines(&input.command, input.sandbox))
}

/// A command ready to start and, where the sandbox proxies its network, the proxy it reaches;
/// both must be kept until the command has ended.
pub struct Confined {
    pub command: PreparedCommand,
    pub proxy: Option<NetworkProxy>,
}

/// `command` with bash, confined when there is a sandbox, `network` deciding its connections.
pub fn prepare(command: &str, sandbox: Option<&Sandbox>, network: CommandNetwork) -> std::io::Result<Confined> {
    let Some(sandbox) = sandbox else {
        return Ok(Confined { command: PreparedCommand::unconfined(command), proxy: None });
    };
    let proxy = sandbox.domains().map(|policy| NetworkProxy::start(policy.clone(), Arc::new(network))).transpose()?;
    let prepared = sandbox.confine(command, proxy.as_ref())?;
    Ok(Confined { command: prepared, proxy })
}

/// Starts the prepared command in its own process group with stdout and stderr on one pipe, so
/// the output interleaves exactly as the command wrote it. Returns the child and the pipe's
/// read end; the prepared command must be kept until the child has ended.
pub fn spawn_shell(
    prepared: &PreparedCommand,
    cwd: &std::path::Path,
) -> std::io::Result<(tokio::process::Child, tokio::net::unix::pipe::Receiver)> {
    let (reader, writer) = std::io::pipe()?;
    let child = {
        // The command holds the write ends until it is dropped; dropping it here lets the reader
        // see end-of-file once the command's processes have exited.
        let mut shell = tokio::process::Command::new(&prepared.program);
        shell
            .args(&prepared.args)
            .current_dir(cwd)
            .stdin(Stdio::null())
            .stdout(Stdio::from(writer.try_clone()?))
            .stderr(Stdio::from(writer))
            .process_group(0)
            .kill_on_drop(true);
        crate::child_process::dies_with_agent(&mut shell);
        shell.spawn()?
    };
    let output = tokio::net::unix::pipe::Receiver::from_owned_fd(std::os::fd::OwnedFd::from(reader))?;
    Ok((child, output))
}

async fn run_command(prepared: &PreparedCommand, ctx: &ToolContext, timeout: Duration) -> std::io::Result<CommandRun> {
    let (mut child, mut pipe) = spawn_shell(prepared, ctx.env.workspace.root())?;
    let group = child.id().and_then(|pid| i32::try_from(pid).ok());
    let mut output = Vec::new();
    let mut buffer = vec![0u8; 8192];
    let deadline = tokio::time::sleep(timeout);
    tokio::pin!(deadline);
    let mut open = true;
    let mut streamed = 0;
    let mut exited: Option<std::process::ExitStatus> = None;
    // After the shell exits, output still in the pipe is collected for a moment; a background
    // child that keeps the pipe open does not hold the call until its timeout.
    let grace = tokio::time::sleep(Duration::from_secs(3600));
    tokio::pin!(grace);
    let end = loop {
        if let Some(status) = exited.filter(|_| !open) {
            break status.code().map_or(CommandEnd::Signalled, CommandEnd::Exited);
        }
        tokio::select! {
            read = pipe.read(&mut buffer), if open => match read {
                Ok(0) | Err(_) => open = false,
                Ok(read) => {
                    output.extend_from_slice(&buffer[..read]);
                    if let Some(progress) = ctx.progress.as_ref().filter(|_| streamed < MAX_STREAMED_BYTES) {
                        streamed = stream(progress, &output, streamed).await;
                    }
                }
            },
            status = child.wait(), if exited.is_none() => {
                exited = Some(status?);
                grace.as_mut().reset(tokio::time::Instant::now() + Duration::from_millis(200));
            }
            () = &mut grace, if exited.is_some() => open = false,
            () = &mut deadline => break CommandEnd::TimedOut,
            () = ctx.cancel.cancelled() => break CommandEnd::Cancelled,
        }
    };
    // Whatever the command left running in its group (a stray background child) goes with it.
    kill_group(group);
    if matches!(end, CommandEnd::TimedOut | CommandEnd::Cancelled) {
        let _ = child.wait().await;
    }
    Ok(CommandRun { output, end })
}

/// Sends the output after `from` that ends on a whole UTF-8 character; returns where it stopped.
async fn stream(progress: &ToolProgress, output: &[u8], from: usize) -> usize {
    let fresh = &output[from..];
    let whole = match std::str::from_utf8(fresh) {
        Ok(text) => text.len(),
        // An invalid sequence (not a split character) goes out replaced, or it would hold the
        // stream forever.
        Err(error) if error.error_len().is_some() => fresh.len(),
        Err(error) => error.valid_up_to(),
    };
    if whole > 0 {
        progress.output(String::from_utf8_lossy(&fresh[..whole]).into_owned()).await;
    }
    from + whole
}

/// Kills every process in the group the command started.
pub fn kill_group(group: Option<i32>) {
    if let Some(pgid) = group {
        let _ = nix::sys::signal::killpg(nix::unistd::Pid::from_raw(pgid), nix::sys::signal::Signal::SIGKILL);
    }
}

fn first_line(command: &str) -> &str {
    command.lines().next().unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::workspace::Workspace;

    fn context(dir: &std::path::Path) -> ToolContext {
        ToolContext::standalone(Arc::new(Workspace::new(dir)))
    }

    fn input(command: &str, timeout: Option<u64>) -> BashInput {
        BashInput {
            command: command.into(),
            timeout,
            description: None,
            run_in_background: false,
            sandbox: true,
            raw_output: false,
        }
    }

    #[tokio::test]
    async fn reports_interleaved_output_and_exit_code() {
        let dir = tempfile::tempdir().unwrap();
        let ctx = context(dir.path());
        let output =
            Bash.run(input("echo out; sleep 0.05; echo err >&2; sleep 0.05; echo out2; exit 3", None), &ctx).await;
        assert!(output.is_error);
        assert_eq!(output.text_content(), "out\nerr\nout2\n\n[exit code 3]");
        let ok = Bash.run(input("pwd", None), &ctx).await;
        assert_eq!(ok.text_content().trim(), dir.path().canonicalize().unwrap().display().to_string());
    }

    #[tokio::test]
    async fn a_background_child_does_not_hold_the_call() {
        let dir = tempfile::tempdir().unwrap();
        let ctx = context(dir.path());
        let started = std::time::Instant::now();
        let output = Bash.run(input("sleep 30 & echo launched", None), &ctx).await;
        assert_eq!(output.text_content(), "launched\n");
        assert!(started.elapsed() < Duration::from_secs(10), "returned when the shell exited");
    }

    #[tokio::test]
    async fn timeout_kills_the_whole_group() {
        let dir = tempfile::tempdir().unwrap();
        let ctx = context(dir.path());
        let marker = dir.path().join("survived");
        let command = format!("(sleep 1; touch {}) & echo started; sleep 30", marker.display());
        let output = Bash.run(input(&command, Some(200)), &ctx).await;
        assert!(output.text_content().contains("started"));
        assert!(output.text_content().contains("timed out"));
        tokio::time::sleep(Duration::from_millis(1500)).await;
        assert!(!marker.exists(), "the background child was killed with the group");
    }

    #[tokio::test]
    async fn cancel_stops_a_running_command() {
        let dir = tempfile::tempdir().unwrap();
        let ctx = context(dir.path());
        let cancel = ctx.cancel.clone();
        let run = tokio::spawn({
            let ctx = ctx.clone();
            async move { Bash.run(input("echo begun; sleep 60", None), &ctx).await }
        });
        tokio::time::sleep(Duration::from_millis(200)).await;
        cancel.cancel();
        let output = tokio::time::timeout(Duration::from_secs(5), run).await.unwrap().unwrap();
        assert!(output.text_content().contains("cancelled by the user"), "{}", output.text_content());
    }
}

#[cfg(test)]
mod token_saver_tests {
    use std::sync::Arc;

    use super::*;
    use crate::token_saver::{Sidecar, TokenSaver};
    use crate::tools::ToolEnv;
    use crate::workspace::Workspace;

    const LOG: &str = include_str!("../token_saver/fixtures/git_log.txt");

    /// A project with a stand-in `git` that prints a real `git log` (and fails when told to),
    /// and a context with the token saver on.
    fn setup(dir: &std::path::Path) -> (ToolContext, String) {
        use std::os::unix::fs::PermissionsExt;
        std::fs::write(dir.join("log.txt"), LOG).unwrap();
        let git = dir.join("git");
        std::fs::write(&git, "#!/bin/sh\ncat \"$(dirname \"$0\")/log.txt\"\ncase \"$*\" in *--fail*) exit 1;; esac\n")
            .unwrap();
        std::fs::set_permissions(&git, std::fs::Permissions::from_mode(0o755)).unwrap();
        let mut env = ToolEnv::standalone(Arc::new(Workspace::new(dir)));
        env.token_saver = Some(Arc::new(TokenSaver::new(Sidecar::for_session(&dir.join("data"), "s").unwrap())));
        let ctx = ToolContext {
            env: Arc::new(env),
            call_id: "toolu_b".into(),
            ..ToolContext::standalone(Arc::new(Workspace::new(dir)))
        };
        (ctx, git.display().to_string())
    }

    fn stored(ctx: &ToolContext) -> String {
        let slice = ctx.env.token_saver.as_ref().unwrap().sidecar().read("toolu_b", 0, 1 << 20).unwrap();
        String::from_utf8(slice.bytes).unwrap()
    }

    fn call(command: String, raw_output: bool) -> BashInput {
        BashInput { command, timeout: None, description: None, run_in_background: false, sandbox: true, raw_output }
    }

    #[tokio::test]
    async fn a_recognised_success_is_filtered_and_kept_exactly() {
        let dir = tempfile::tempdir().unwrap();
        let (ctx, git) = setup(dir.path());
        let output = Bash.run(call(format!("{git} log"), false), &ctx).await;
        let text = output.text_content();
        assert!(!output.is_error);
        assert!(text.starts_with("c12fd592ceaf Errors: one enum for the reader"), "{text}");
        assert!(text.ends_with(r#"the exact output: raw_output {"tool_call_id": "toolu_b"}]"#), "{text}");
        assert_eq!(stored(&ctx), LOG);
    }

    #[tokio::test]
    async fn raw_output_failures_and_pipelines_are_not_filtered() {
        let dir = tempfile::tempdir().unwrap();
        let (ctx, git) = setup(dir.path());
        let raw = Bash.run(call(format!("{git} log"), true), &ctx).await.text_content();
        assert_eq!(raw, LOG, "raw_output: true bypasses the filter");
        let failed = Bash.run(call(format!("{git} log --fail"), false), &ctx).await.text_content();
        assert_eq!(failed, format!("{LOG}\n[exit code 1]"));
        assert_eq!(stored(&ctx), LOG, "a failure's output is kept too");
        let piped = Bash.run(call(format!("{git} log | cat"), false), &ctx).await.text_content();
        assert_eq!(piped, LOG);
        let outside_a_turn = ToolContext { call_id: String::new(), ..ctx.clone() };
        assert_eq!(
            Bash.run(call(format!("{git} log"), false), &outside_a_turn).await.text_content(),
            LOG,
            "no id to keep it under: not filtered"
        );
    }

    #[tokio::test]
    async fn output_cut_to_fit_says_where_the_rest_is() {
        let dir = tempfile::tempdir().unwrap();
        let (ctx, _) = setup(dir.path());
        let text = Bash.run(call("seq 1 20000".into(), false), &ctx).await.text_content();
        assert!(
            text.contains("bytes cut from the middle")
                && text.ends_with(r#"[the exact output: raw_output {"tool_call_id": "toolu_b"}]"#),
            "{}",
            &text[text.len() - 200..]
        );
        assert_eq!(stored(&ctx).lines().count(), 20_000);
    }
}

#[cfg(test)]
mod background_tests {
    use std::sync::Arc;

    use super::*;
    use crate::tools::shell_control::{BashOutput, KillShell, ShellInput};
    use crate::workspace::Workspace;

    #[tokio::test]
    async fn background_shells_are_read_and_killed() {
        let dir = tempfile::tempdir().unwrap();
        let ctx = ToolContext::standalone(Arc::new(Workspace::new(dir.path())));
        let command = "echo first; read -t 30 line < /dev/zero || sleep 30".to_owned();
        let started = Bash
            .run(
                BashInput {
                    command,
                    timeout: None,
                    description: None,
                    run_in_background: true,
                    sandbox: true,
                    raw_output: false,
                },
                &ctx,
            )
            .await;
        assert!(started.text_content().contains("shell_1"), "{}", started.text_content());
        let shell = || ShellInput { shell_id: "shell_1".into() };
        let mut seen = String::new();
        for _ in 0..100 {
            seen = BashOutput.run(shell(), &ctx).await.text_content();
            if seen.contains("first") {
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        assert!(seen.contains("first") && seen.contains("still running"), "{seen}");
        let again = BashOutput.run(shell(), &ctx).await.text_content();
        assert!(again.contains("(no new output)"), "output is returned once: {again}");
        assert!(!KillShell.run(shell(), &ctx).await.is_error);
        let after = BashOutput.run(shell(), &ctx).await.text_content();
        assert!(after.contains("killed"), "{after}");
        assert!(KillShell.run(ShellInput { shell_id: "shell_9".into() }, &ctx).await.is_error);
    }

    #[tokio::test]
    async fn ending_the_session_kills_background_shells() {
        let dir = tempfile::tempdir().unwrap();
        let marker = dir.path().join("survived");
        let ctx = ToolContext::standalone(Arc::new(Workspace::new(dir.path())));
        let command = format!("sleep 1; touch {}", marker.display());
        Bash.run(
            BashInput {
                command,
                timeout: None,
                description: None,
                run_in_background: true,
                sandbox: true,
                raw_output: false,
            },
            &ctx,
        )
        .await;
        drop(ctx);
        tokio::time::sleep(Duration::from_millis(1500)).await;
        assert!(!marker.exists());
    }
}
