//! An MCP server's tool as one of the session's tools: the same `DynTool` every tool is, so it
//! takes the one dispatch pipeline (hooks, permissions, cancellation) like a built-in. A call
//! while its server is away is an error result at once, never a hang.

use std::sync::Arc;

use serde_json::Value;

use super::connection::Link;
use crate::event::{Display, ToolKind};
use crate::llm::ToolSpec;
use crate::tools::{CallDescription, CallSubject, DynTool, InputError, PreparedCall, ToolContext, ToolOutput};

pub struct McpTool {
    /// `mcp__<server>__<tool>`, as the model and permission rules name it.
    pub name: String,
    /// The tool's name on its server.
    pub remote: String,
    pub server: String,
    pub description: String,
    pub input_schema: Value,
    /// The server says it changes nothing and reaches nothing outside (`readOnlyHint: true`,
    /// `openWorldHint: false`).
    pub read_only: bool,
    pub link: Arc<Link>,
}

impl McpTool {
    /// Reads one entry of `tools/list` (its JSON form).
    pub fn from_listing(name: String, server: &str, listed: &Value, link: Arc<Link>) -> Self {
        let annotations = &listed["annotations"];
        let read_only = annotations["readOnlyHint"].as_bool() == Some(true)
            && annotations["openWorldHint"].as_bool() == Some(false);
        let mut input_schema = listed["inputSchema"].clone();
        match input_schema.as_object_mut() {
            // The meta key names the draft, which the model does not need: bytes in every request.
            Some(schema) => _ = schema.remove("$schema"),
            None => input_schema = serde_json::json!({"type": "object"}),
        }
        Self {
            name,
            remote: listed["name"].as_str().unwrap_or_default().to_owned(),
            server: server.to_owned(),
            description: listed["description"].as_str().unwrap_or_default().to_owned(),
            input_schema,
            read_only,
            link,
        }
    }
}

impl DynTool for McpTool {
    fn spec(&self) -> ToolSpec {
        let description = if self.description.is_empty() {
            format!("The `{}` tool of the MCP server `{}`.", self.remote, self.server)
        } else {
            self.description.clone()
        };
        ToolSpec { name: self.name.clone(), description, input_schema: self.input_schema.clone() }
    }

    fn name(&self) -> &str {
        &self.name
    }

    fn offer(&self) -> crate::tools::Offer {
        crate::tools::Offer::WithinBudget
    }

    fn kind(&self) -> ToolKind {
        if self.read_only { ToolKind::Read } else { ToolKind::Other }
    }

    fn read_only(&self) -> bool {
        self.read_only
    }

    fn concurrency_safe(&self) -> bool {
        self.read_only
    }

    fn report_only(&self) -> bool {
        false
    }

    fn prepare(self: Arc<Self>, input: &Value, _ctx: &ToolContext) -> Result<Box<dyn PreparedCall>, InputError> {
        let Some(arguments) = input.as_object().cloned() else {
            let reason = "the arguments must be a JSON object".to_owned();
            return Err(InputError { tool: self.name.clone(), reason });
        };
        let description = CallDescription {
            title: format!("{} ({})", self.remote, self.server),
            locations: Vec::new(),
            subject: CallSubject::None,
        };
        Ok(Box::new(McpCall { tool: self, arguments, description }))
    }
}

/// One call of a server's tool: the arguments it is sent as they are (the server checks them
/// against its own schema).
struct McpCall {
    tool: Arc<McpTool>,
    arguments: serde_json::Map<String, Value>,
    description: CallDescription,
}

#[async_trait::async_trait]
impl PreparedCall for McpCall {
    fn description(&self) -> &CallDescription {
        &self.description
    }

    async fn preview(&self, _ctx: &ToolContext) -> Option<Display> {
        Some(Display::Text(serde_json::to_string_pretty(&self.arguments).unwrap_or_default()))
    }

    async fn run(self: Box<Self>, ctx: &ToolContext) -> ToolOutput {
        let Self { tool, arguments, .. } = *self;
        match tool.link.call(&tool.remote, arguments, &ctx.cancel, ctx.progress.as_ref()).await {
            Ok(result) => super::content::tool_output(&result),
            Err(error) => ToolOutput::error(error.to_string()),
        }
    }
}
