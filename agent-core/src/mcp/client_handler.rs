//! Larik's side of an MCP connection (rmcp's `ClientHandler`): who it is, how the server's
//! questions to the user are answered, its progress reports, and re-reading its tools and prompts
//! when it says they changed.

use std::sync::Arc;

use rmcp::ClientHandler;
use rmcp::model::{
    ClientCapabilities, ClientConfig, ElicitRequestParams, ElicitResult, ElicitationAction, ElicitationCapability,
    FormElicitationCapability, Implementation, InitializeRequestParams, ProtocolVersion,
};
use rmcp::service::{NotificationContext, RequestContext, RoleClient};
use serde_json::Value;

use super::connection::Server;
use super::{Notices, Status};
use crate::tools::Registry;

/// What a server's questions to the user (`elicitation/create`) get.
pub(super) enum Questions {
    /// Shown to the user as a form in the editor.
    Ask(Arc<dyn crate::tools::ask_user::AskUser>),
    /// Declined, and the user told: the editor has no forms.
    Decline(Arc<Notices>),
    /// Accepted with the schema's defaults filled in (SEP-1034): for checking the client
    /// against the conformance suite, where no one is there to answer.
    AcceptDefaults,
}

/// Larik's side of an MCP connection: who it is, what it does when the server's tools change,
/// and how the server's questions are answered.
pub struct Handler {
    pub(super) server: Arc<Server>,
    pub(super) registry: Arc<Registry>,
    pub(super) questions: Questions,
}

impl ClientHandler for Handler {
    fn get_info(&self) -> ClientConfig {
        // The library's default is a protocol version without `initialize`, which servers that
        // expect it refuse.
        let mut capabilities = ClientCapabilities::default();
        let mut elicitation = ElicitationCapability::new();
        elicitation.form = Some(FormElicitationCapability::new());
        capabilities.elicitation = Some(elicitation);
        InitializeRequestParams::new(capabilities, Implementation::new("larik", env!("CARGO_PKG_VERSION")))
            .with_protocol_version(ProtocolVersion::LATEST_WITH_INITIALIZE)
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, rmcp::ErrorData> {
        match (&self.questions, &request) {
            (Questions::AcceptDefaults, ElicitRequestParams::FormElicitationParams { requested_schema, .. }) => {
                let schema = serde_json::to_value(requested_schema).unwrap_or_default();
                let mut result = ElicitResult::new(ElicitationAction::Accept);
                result.content = Some(Value::Object(defaults(&schema)));
                Ok(result)
            }
            (Questions::Ask(asker), ElicitRequestParams::FormElicitationParams { message, requested_schema, .. }) => {
                let schema = serde_json::to_value(requested_schema).unwrap_or_default();
                let message = format!("The MCP server `{}` asks: {message}", self.server.config.name);
                let answer = asker.form(&message, schema).await.map_err(|error| {
                    rmcp::ErrorData::internal_error(format!("the question could not be shown: {error}"), None)
                })?;
                Ok(match answer {
                    crate::tools::ask_user::FormAnswer::Accepted(content) => {
                        let mut result = ElicitResult::new(ElicitationAction::Accept);
                        result.content = Some(content);
                        result
                    }
                    crate::tools::ask_user::FormAnswer::Declined => ElicitResult::new(ElicitationAction::Decline),
                    crate::tools::ask_user::FormAnswer::Cancelled => ElicitResult::new(ElicitationAction::Cancel),
                })
            }
            (Questions::Decline(notices), _) => {
                notices.push(format!("The MCP server `{}` asked you a question, which this editor cannot show (it has no forms); it was declined.", self.server.config.name));
                Ok(ElicitResult::new(ElicitationAction::Decline))
            }
            _ => Ok(ElicitResult::new(ElicitationAction::Decline)),
        }
    }

    async fn on_progress(
        &self,
        params: rmcp::model::ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let Some(progress) = self.server.link.progress_for(&params.progress_token) else { return };
        let amount = match params.total {
            Some(total) => format!("{} of {}", params.progress, total),
            None => params.progress.to_string(),
        };
        let text = match params.message {
            Some(message) => format!("{message} ({amount})"),
            None => format!("Progress: {amount}"),
        };
        progress.note(text).await;
    }

    async fn on_prompt_list_changed(&self, context: NotificationContext<RoleClient>) {
        self.server.read_prompts(&context.peer).await;
    }

    async fn on_tool_list_changed(&self, context: NotificationContext<RoleClient>) {
        match self.server.register(&context.peer, &self.registry).await {
            // The count changes; the state does not: a change that arrives while the connection
            // is still being set up leaves it to say when it is done.
            Ok(tools) if matches!(self.server.status(), Status::Connected { .. }) => {
                self.server.set_status(Status::Connected { tools })
            }
            Ok(_) => {}
            Err(error) => tracing::warn!(server = %self.server.config.name, %error, "could not re-read the tools"),
        }
    }
}

/// The `default` of each property of an elicitation schema.
fn defaults(schema: &Value) -> serde_json::Map<String, Value> {
    schema["properties"]
        .as_object()
        .map(|properties| {
            properties
                .iter()
                .filter_map(|(name, property)| property.get("default").map(|value| (name.clone(), value.clone())))
                .collect()
        })
        .unwrap_or_default()
}
