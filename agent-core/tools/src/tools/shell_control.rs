//! `bash_output` and `kill_shell`: reading from and stopping background shells.

use schemars::JsonSchema;
use serde::Deserialize;

use super::background::ShellStatus;
use super::truncate::{MAX_OUTPUT_BYTES, truncate_middle};
use super::{CallDescription, Tool, ToolContext, ToolOutput};
use crate::event::ToolKind;

#[derive(Deserialize, JsonSchema)]
pub struct ShellInput {
    /// The id `bash` returned when it started the shell.
    pub shell_id: String,
}

pub struct BashOutput;

impl Tool for BashOutput {
    type Input = ShellInput;
    const NAME: &'static str = "bash_output";
    const DESCRIPTION: &'static str = "Read what a background shell (started by bash with run_in_background) printed since the last read, and whether it is still running.";
    const KIND: ToolKind = ToolKind::Execute;

    fn read_only(&self) -> bool {
        true
    }

    fn describe(&self, input: &ShellInput, _ctx: &ToolContext) -> CallDescription {
        CallDescription::titled(format!("Output of {}", input.shell_id))
    }

    async fn run(&self, input: ShellInput, ctx: &ToolContext) -> ToolOutput {
        let Some(report) = ctx.env.shells.read(&input.shell_id) else {
            return ToolOutput::error(format!("no background shell `{}` in this session", input.shell_id));
        };
        let status = match report.status {
            ShellStatus::Running => "still running".to_owned(),
            ShellStatus::Exited(code) => format!("exited with code {code}"),
            ShellStatus::Killed => "killed".to_owned(),
        };
        let output = if report.new_output.is_empty() {
            "(no new output)".to_owned()
        } else {
            truncate_middle(&report.new_output, MAX_OUTPUT_BYTES)
        };
        ToolOutput::text(format!("{output}\n[{}: `{}` {status}]", input.shell_id, report.command))
    }
}

pub struct KillShell;

impl Tool for KillShell {
    type Input = ShellInput;
    const NAME: &'static str = "kill_shell";
    const DESCRIPTION: &'static str = "Stop a background shell and everything it started.";
    const KIND: ToolKind = ToolKind::Execute;

    fn read_only(&self) -> bool {
        // It only stops what this session started.
        true
    }

    fn describe(&self, input: &ShellInput, _ctx: &ToolContext) -> CallDescription {
        CallDescription::titled(format!("Stop {}", input.shell_id))
    }

    async fn run(&self, input: ShellInput, ctx: &ToolContext) -> ToolOutput {
        if ctx.env.shells.kill(&input.shell_id) {
            ToolOutput::text(format!("{} stopped", input.shell_id))
        } else {
            ToolOutput::error(format!("no background shell `{}` in this session", input.shell_id))
        }
    }
}
