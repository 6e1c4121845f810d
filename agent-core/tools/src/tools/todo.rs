//! `todo`: the model's task list. The whole list is replaced on each call and shown in the
//! editor as the session's plan.

use schemars::JsonSchema;
use serde::Deserialize;

use super::{CallDescription, ClaudeCodeAlias, HookResponse, Tool, ToolContext, ToolOutput};
use crate::event::{Display, PlanEntry, PlanPriority, PlanStatus, ToolKind};

#[derive(Deserialize, JsonSchema)]
pub struct TodoItem {
    /// What to do, in a few words.
    pub content: String,
    pub status: PlanStatus,
    #[serde(default)]
    pub priority: Option<PlanPriority>,
}

#[derive(Deserialize, JsonSchema)]
pub struct TodoInput {
    /// The complete list; it replaces the previous one.
    pub todos: Vec<TodoItem>,
}

pub struct Todo;

impl Tool for Todo {
    type Input = TodoInput;
    const NAME: &'static str = "todo";
    const CLAUDE_CODE: Option<&'static ClaudeCodeAlias> =
        Some(&ClaudeCodeAlias { name: "TodoWrite", fields: &[], response: HookResponse::Output });
    const DESCRIPTION: &'static str = "Keep a task list for multi-step work, shown to the user as the plan. Send the whole list each time; mark one item in_progress while you work on it and completed as soon as it is done.";
    const KIND: ToolKind = ToolKind::Think;

    fn read_only(&self) -> bool {
        true
    }

    fn report_only(&self) -> bool {
        true
    }

    fn describe(&self, input: &TodoInput, _ctx: &ToolContext) -> CallDescription {
        let done = input.todos.iter().filter(|item| item.status == PlanStatus::Completed).count();
        CallDescription::titled(format!("Plan: {done} of {} done", input.todos.len()))
    }

    async fn run(&self, input: TodoInput, _ctx: &ToolContext) -> ToolOutput {
        let entries: Vec<PlanEntry> = input
            .todos
            .into_iter()
            .map(|item| PlanEntry {
                content: item.content,
                status: item.status,
                priority: item.priority.unwrap_or(PlanPriority::Medium),
            })
            .collect();
        let summary: String = entries
            .iter()
            .map(|entry| {
                let mark = match entry.status {
                    PlanStatus::Completed => "[x]",
                    PlanStatus::InProgress => "[>]",
                    PlanStatus::Pending => "[ ]",
                };
                format!("{mark} {}\n", entry.content)
            })
            .collect();
        ToolOutput::text(format!("Plan updated:\n{summary}")).with_display(Display::Plan(entries))
    }
}
