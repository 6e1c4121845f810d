//! A call parsed once. The dispatch pipeline prepares each call as it arrives: the input is
//! read into the tool's own type a single time, and the same value is described, previewed in a
//! permission prompt and run. A hook that rewrites the input has it prepared again.

use std::sync::Arc;

use super::{CallDescription, DynTool, InputError, Tool, ToolContext, ToolOutput, parse_input};
use crate::event::Display;

/// A call whose input was parsed: what it does, shown and decided on, then run once.
#[async_trait::async_trait]
pub trait PreparedCall: Send + Sync {
    /// What the call acts on, for its title, the permission decision and the pipeline.
    fn description(&self) -> &CallDescription;
    /// Whether the call streams output while it runs (a command in the foreground), so an
    /// editor can give it a terminal.
    fn streams_output(&self) -> bool {
        false
    }
    /// What the call would change, shown in permission prompts (an edit's diff).
    async fn preview(&self, _ctx: &ToolContext) -> Option<Display> {
        None
    }
    async fn run(self: Box<Self>, ctx: &ToolContext) -> ToolOutput;
}

/// Prepares and runs a call at once, outside the pipeline (benchmarks, tests): a malformed input
/// is the error result.
pub async fn run_now(tool: Arc<dyn DynTool>, input: &serde_json::Value, ctx: &ToolContext) -> ToolOutput {
    match tool.prepare(input, ctx) {
        Ok(call) => call.run(ctx).await,
        Err(error) => ToolOutput::error(error.to_string()),
    }
}

/// A call of a [`Tool`]: its typed input, kept from the one parse.
pub(super) struct Typed<T: Tool> {
    tool: Arc<T>,
    input: T::Input,
    description: CallDescription,
}

impl<T: Tool> Typed<T> {
    pub(super) fn prepare(
        tool: Arc<T>,
        input: &serde_json::Value,
        ctx: &ToolContext,
    ) -> Result<Box<dyn PreparedCall>, InputError> {
        let input: T::Input = parse_input(T::NAME, input)?;
        let description = tool.describe(&input, ctx);
        Ok(Box::new(Self { tool, input, description }))
    }
}

#[async_trait::async_trait]
impl<T: Tool> PreparedCall for Typed<T> {
    fn description(&self) -> &CallDescription {
        &self.description
    }

    fn streams_output(&self) -> bool {
        self.tool.streams_output(&self.input)
    }

    async fn preview(&self, ctx: &ToolContext) -> Option<Display> {
        self.tool.preview(&self.input, ctx).await
    }

    async fn run(self: Box<Self>, ctx: &ToolContext) -> ToolOutput {
        let Self { tool, input, .. } = *self;
        tool.run(input, ctx).await
    }
}
