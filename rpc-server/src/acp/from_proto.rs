//! Conversions from ACP v1 wire types to the core's types.

use larik_core::event::PermissionAnswer;
use larik_core::{Note, Part};
use larik_protocol::acp;
use larik_protocol::extensions::{META_KEY, PermissionResponseMeta};

/// Option ids Larik offers in every permission request.
pub const ALLOW_ONCE: &str = "allow_once";
pub const ALLOW_ALWAYS: &str = "allow_always";
pub const REJECT_ONCE: &str = "reject_once";

/// Turns a prompt's content blocks into message parts. Embedded resources (files the user
/// mentioned, with their unsaved content) become text the model can read, unless `read_denied`
/// (the session's read deny rules) withholds the file.
pub fn prompt_parts(
    blocks: Vec<acp::ContentBlock>,
    read_denied: impl Fn(&std::path::Path) -> Option<String>,
) -> Vec<Part> {
    let withheld = |uri: &str| {
        let path = uri.strip_prefix("file://")?;
        read_denied(std::path::Path::new(path))
            .map(|reason| Part::Text { text: format!("[@{uri} was not attached: {reason}]") })
    };
    blocks
        .into_iter()
        .filter_map(|block| match block {
            acp::ContentBlock::Text(text) => Some(Part::Text { text: text.text }),
            acp::ContentBlock::Image(image) => Some(Part::Image { media_type: image.mime_type, data: image.data }),
            acp::ContentBlock::ResourceLink(link) => Some(
                withheld(&link.uri).unwrap_or_else(|| Part::Text { text: format!("[@{}]({})", link.name, link.uri) }),
            ),
            acp::ContentBlock::Resource(resource) => match resource.resource {
                acp::EmbeddedResourceResource::TextResourceContents(contents) => Some(
                    withheld(&contents.uri)
                        .unwrap_or(Part::Note(Note::Attachment { uri: contents.uri, text: contents.text })),
                ),
                _ => None,
            },
            _ => None,
        })
        .collect()
}

/// Reads the client's answer to a permission request. Anything unexpected counts as a rejection:
/// permissions fail closed.
pub fn permission_answer(response: Result<acp::RequestPermissionResponse, String>) -> PermissionAnswer {
    let response = match response {
        Ok(response) => response,
        Err(reason) => {
            tracing::warn!(%reason, "permission request failed; treating it as rejected");
            return PermissionAnswer::Reject { feedback: None };
        }
    };
    let extension = response
        .meta
        .as_ref()
        .and_then(|meta| meta.get(META_KEY))
        .and_then(|value| serde_json::from_value::<PermissionResponseMeta>(value.clone()).ok())
        .unwrap_or_default();
    let feedback = extension.feedback;
    match response.outcome {
        acp::RequestPermissionOutcome::Cancelled => PermissionAnswer::Cancelled,
        acp::RequestPermissionOutcome::Selected(selected) => match &*selected.option_id.0 {
            ALLOW_ONCE => match extension.accepted_hunks {
                Some(hunks) => PermissionAnswer::AllowHunks(hunks),
                None => PermissionAnswer::AllowOnce,
            },
            ALLOW_ALWAYS => PermissionAnswer::AllowAlways,
            _ => PermissionAnswer::Reject { feedback },
        },
        _ => PermissionAnswer::Reject { feedback },
    }
}

/// The MCP servers a client passes in `session/new`, `load` or `resume`: the user (or their
/// editor) chose them, so they connect without asking.
pub fn mcp_servers(servers: &[acp::McpServer]) -> Vec<larik_core::McpServerConfig> {
    use larik_core::{McpServerConfig, McpServerScope, McpTransport};
    let headers = |headers: &[acp::HttpHeader]| {
        headers.iter().map(|header| (header.name.clone(), header.value.clone())).collect()
    };
    servers
        .iter()
        .filter_map(|server| {
            let (name, transport) = match server {
                acp::McpServer::Stdio(stdio) => (
                    stdio.name.clone(),
                    McpTransport::Stdio {
                        command: stdio.command.display().to_string(),
                        args: stdio.args.clone(),
                        env: stdio.env.iter().map(|variable| (variable.name.clone(), variable.value.clone())).collect(),
                    },
                ),
                acp::McpServer::Http(http) => {
                    (http.name.clone(), McpTransport::Http { url: http.url.clone(), headers: headers(&http.headers) })
                }
                acp::McpServer::Sse(sse) => {
                    (sse.name.clone(), McpTransport::Sse { url: sse.url.clone(), headers: headers(&sse.headers) })
                }
                _ => return None,
            };
            Some(McpServerConfig {
                name,
                transport,
                scope: McpServerScope::Client,
                source: "the editor".into(),
                oauth: Default::default(),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn answer(value: serde_json::Value) -> PermissionAnswer {
        permission_answer(serde_json::from_value(value).map_err(|error| error.to_string()))
    }

    #[test]
    fn reads_choices_and_feedback_and_fails_closed() {
        assert_eq!(
            answer(json!({"outcome": {"outcome": "selected", "optionId": "allow_once"}})),
            PermissionAnswer::AllowOnce
        );
        assert_eq!(answer(json!({"outcome": {"outcome": "cancelled"}})), PermissionAnswer::Cancelled);
        assert_eq!(
            answer(
                json!({"outcome": {"outcome": "selected", "optionId": "reject_once"}, "_meta": {"larik": {"feedback": "use tabs"}}})
            ),
            PermissionAnswer::Reject { feedback: Some("use tabs".into()) }
        );
        assert_eq!(
            answer(json!({"outcome": {"outcome": "selected", "optionId": "whatever"}})),
            PermissionAnswer::Reject { feedback: None }
        );
        assert_eq!(answer(json!({"nonsense": true})), PermissionAnswer::Reject { feedback: None });
        assert_eq!(
            answer(
                json!({"outcome": {"outcome": "selected", "optionId": "allow_once"}, "_meta": {"larik": {"acceptedHunks": [1]}}})
            ),
            PermissionAnswer::AllowHunks(vec![1])
        );
    }
}
