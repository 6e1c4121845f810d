//! Subagents: the `task` tool lets the model hand a self-contained piece of work to a child
//! agent with a fresh context, a definition's system prompt and a subset of the parent's tools.
//! The child runs through the same turn loop and dispatch pipeline as the session (its calls are
//! checked on their own, with the parent's permissions, hooks and sandbox); only its final report
//! comes back. Its tool calls and permission prompts reach the editor labelled with the task.
//! With `isolation: worktree` it works in a git worktree of its own (`worktree.rs`); with
//! `run_in_background` it runs apart from the turn (`background.rs`, `task_wait`, `task_stop`).

pub mod background;
pub mod definitions;
pub mod relay;
pub mod roles;
pub mod runner;
pub mod task;
pub mod task_control;
mod worktree;

pub use background::BackgroundTasks;
pub use definitions::{Definition, NOT_IN_A_WORKTREE};
pub use runner::{ChildError, ChildRun, SubagentOutcome, SubagentRunner};
pub use task::{ParentSession, TaskTool};
