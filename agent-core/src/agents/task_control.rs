//! `task_wait` and `task_stop`: the model's hold on its background tasks. Neither changes
//! anything outside the session, so neither asks.

use schemars::JsonSchema;
use serde::Deserialize;

use crate::event::ToolKind;
use crate::tools::{CallDescription, Tool, ToolContext, ToolOutput};

#[derive(Deserialize, JsonSchema)]
pub struct TaskWaitInput {
    /// The tasks to wait for (`bg-1`, ...); all of them when empty.
    #[serde(default)]
    pub ids: Vec<String>,
}

/// Holds the session's background tasks.
pub struct TaskWait(pub std::sync::Arc<super::BackgroundTasks>);

impl Tool for TaskWait {
    type Input = TaskWaitInput;
    const NAME: &'static str = "task_wait";
    const DESCRIPTION: &'static str = "Wait for background tasks (started with task and run_in_background) to finish, and get their results. Without ids, waits for all of them. Only wait when you cannot go on without the results: they also arrive by themselves.";
    const KIND: ToolKind = ToolKind::Other;

    fn read_only(&self) -> bool {
        true
    }

    fn describe(&self, input: &TaskWaitInput, _ctx: &ToolContext) -> CallDescription {
        CallDescription::titled(if input.ids.is_empty() {
            "Wait for the background tasks".to_owned()
        } else {
            format!("Wait for {}", input.ids.join(", "))
        })
    }

    async fn run(&self, input: TaskWaitInput, ctx: &ToolContext) -> ToolOutput {
        match self.0.wait(&input.ids, &ctx.cancel).await {
            Ok(reports) if reports.is_empty() => {
                ToolOutput::text("No background task has a result that was not delivered already.")
            }
            Ok(reports) => ToolOutput::text(
                reports.iter().map(|report| report.notification().render()).collect::<Vec<_>>().join("\n\n"),
            ),
            Err(error) => ToolOutput::error(error.to_string()),
        }
    }
}

#[derive(Deserialize, JsonSchema)]
pub struct TaskStopInput {
    /// The background task to stop (`bg-1`).
    pub id: String,
}

/// Holds the session's background tasks.
pub struct TaskStop(pub std::sync::Arc<super::BackgroundTasks>);

impl Tool for TaskStop {
    type Input = TaskStopInput;
    const NAME: &'static str = "task_stop";
    const DESCRIPTION: &'static str = "Stop a background task that is no longer needed. Its changes so far stay.";
    const KIND: ToolKind = ToolKind::Other;

    fn read_only(&self) -> bool {
        true
    }

    fn describe(&self, input: &TaskStopInput, _ctx: &ToolContext) -> CallDescription {
        CallDescription::titled(format!("Stop {}", input.id))
    }

    async fn run(&self, input: TaskStopInput, _ctx: &ToolContext) -> ToolOutput {
        match self.0.stop(&input.id) {
            Ok(task) => ToolOutput::text(format!("Stopping the background task `{}` ({}).", task.id, task.label)),
            Err(error) => ToolOutput::error(error.to_string()),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use tokio_util::sync::CancellationToken;

    use super::{TaskStop, TaskWait};
    use crate::permission::rules::RuleSet;
    use crate::permission::{Decision, Mode, Permissions};
    use crate::tools::{CallDescription, DynTool};
    use crate::workspace::Workspace;

    /// Both only wait for or stop work the session already runs, so they are read-only: they
    /// never ask, run in plan mode and share a batch with reads; a deny rule still binds them.
    #[test]
    fn waiting_for_and_stopping_tasks_never_asks_even_in_plan_mode() {
        let dir = tempfile::tempdir().unwrap();
        let workspace = Workspace::new(dir.path());
        let tasks = Arc::new(super::super::BackgroundTasks::new(CancellationToken::new()));
        let tools: [Arc<dyn DynTool>; 2] = [Arc::new(TaskWait(Arc::clone(&tasks))), Arc::new(TaskStop(tasks))];
        let call = CallDescription::titled("Stop bg-1");
        let permissions = Permissions::default();
        for mode in [Mode::Default, Mode::Plan] {
            permissions.set_mode(mode).unwrap();
            for tool in &tools {
                let decision = permissions.decide(tool.as_ref(), &call, &workspace, None);
                assert!(matches!(decision, Decision::Allow), "{} in {mode:?}: {decision:?}", tool.name());
                assert!(tool.concurrency_safe(), "{} runs beside reads", tool.name());
            }
        }
        let denied = Permissions::new(RuleSet::from_lists(&[], &["task_stop".to_owned()], &[]), || false, None);
        let decision = denied.decide(tools[1].as_ref(), &call, &workspace, None);
        assert!(matches!(decision, Decision::Deny { .. }), "{decision:?}");
    }
}
