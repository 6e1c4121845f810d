//! MCP resources, offered once a connected server has any: the read-only `list_mcp_resources`
//! and `read_mcp_resource` tools. Like every tool they take the one dispatch pipeline.

use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use super::connection::Server;
use super::report::McpError;
use crate::event::ToolKind;
use crate::tools::{CallDescription, Tool, ToolContext, ToolOutput};

/// Resource contents shown to the model, at most; the pipeline caps tool output too.
const MAX_TEXT: usize = 100_000;

#[derive(Deserialize, JsonSchema)]
pub struct ListInput {
    /// Only this server's resources (its name as in the tool names, `mcp__<server>__...`).
    #[serde(default)]
    pub server: Option<String>,
}

#[derive(Deserialize, JsonSchema)]
pub struct ReadInput {
    /// The server that has the resource.
    pub server: String,
    /// The resource's URI, as `list_mcp_resources` gave it.
    pub uri: String,
}

pub struct ListResources {
    pub servers: Arc<[Arc<Server>]>,
}

impl ListResources {
    pub const NAME_STR: &'static str = <Self as Tool>::NAME;
}

pub struct ReadResource {
    pub servers: Arc<[Arc<Server>]>,
}

impl Tool for ListResources {
    type Input = ListInput;
    const NAME: &'static str = "list_mcp_resources";
    const DESCRIPTION: &'static str = "List the resources (documents, files, records) the connected MCP servers offer, with their URIs; read one with read_mcp_resource.";
    const KIND: ToolKind = ToolKind::Read;
    const OFFER: crate::tools::Offer = crate::tools::Offer::WithinBudget;

    fn read_only(&self) -> bool {
        true
    }

    fn describe(&self, input: &ListInput, _ctx: &ToolContext) -> CallDescription {
        CallDescription::titled(match &input.server {
            Some(server) => format!("MCP resources of {server}"),
            None => "MCP resources".into(),
        })
    }

    async fn run(&self, input: ListInput, _ctx: &ToolContext) -> ToolOutput {
        let mut lines = Vec::new();
        for server in self
            .servers
            .iter()
            .filter(|server| input.server.as_ref().is_none_or(|wanted| *wanted == server.config.name))
        {
            let Some(peer) = server.link.peer() else { continue };
            match peer.list_all_resources().await {
                Ok(resources) => lines.extend(resources.iter().map(|resource| {
                    let resource = serde_json::to_value(resource).unwrap_or_default();
                    let mime = resource["mimeType"].as_str().map(|mime| format!(" ({mime})")).unwrap_or_default();
                    format!(
                        "{}: {} — {}{mime}",
                        server.config.name,
                        resource["uri"].as_str().unwrap_or_default(),
                        resource["name"].as_str().unwrap_or_default()
                    )
                })),
                Err(error) => lines.push(format!("{}: could not list resources: {error}", server.config.name)),
            }
        }
        if lines.is_empty() {
            return ToolOutput::text("No connected MCP server offers resources.");
        }
        ToolOutput::text(lines.join("\n"))
    }
}

impl Tool for ReadResource {
    type Input = ReadInput;
    const NAME: &'static str = "read_mcp_resource";
    const DESCRIPTION: &'static str =
        "Read one resource of a connected MCP server by its URI (see list_mcp_resources).";
    const KIND: ToolKind = ToolKind::Read;
    const OFFER: crate::tools::Offer = crate::tools::Offer::WithinBudget;

    fn read_only(&self) -> bool {
        true
    }

    fn describe(&self, input: &ReadInput, _ctx: &ToolContext) -> CallDescription {
        CallDescription::titled(format!("Read {} from {}", input.uri, input.server))
    }

    async fn run(&self, input: ReadInput, _ctx: &ToolContext) -> ToolOutput {
        match read(&self.servers, &input.server, &input.uri).await {
            Ok(text) => ToolOutput::text(text),
            Err(error) => ToolOutput::error(error.to_string()),
        }
    }
}

/// A resource's contents as text: text parts as they are, binary parts summarised.
pub async fn read(servers: &[Arc<Server>], server: &str, uri: &str) -> Result<String, McpError> {
    let found = servers
        .iter()
        .find(|candidate| candidate.config.name == server)
        .ok_or_else(|| McpError::NoSuchServer(server.to_owned()))?;
    let peer = found.link.peer().ok_or_else(|| McpError::NotConnected(server.to_owned()))?;
    let result = peer.read_resource(rmcp::model::ReadResourceRequestParams::new(uri)).await.map_err(|error| {
        McpError::ResourceFailed { server: server.to_owned(), uri: uri.to_owned(), reason: error.to_string() }
    })?;
    let result = serde_json::to_value(result).unwrap_or_default();
    let parts: Vec<String> = result["contents"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default()
        .iter()
        .map(|content: &Value| match content["text"].as_str() {
            Some(text) => text.chars().take(MAX_TEXT).collect(),
            None => format!(
                "[binary contents of {} ({})]",
                content["uri"].as_str().unwrap_or(uri),
                content["mimeType"].as_str().unwrap_or("unknown type")
            ),
        })
        .collect();
    Ok(parts.join("\n"))
}
