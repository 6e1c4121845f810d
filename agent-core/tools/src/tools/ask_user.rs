//! `ask_user`: a question for the user in the middle of a turn, answered in the editor (a form),
//! for when the model cannot go on without a decision. Editors that cannot take questions get the
//! model told to ask in its reply instead.

use larik_host::editor::EditorError;
use schemars::JsonSchema;
use serde::Deserialize;

use super::{CallDescription, Tool, ToolContext, ToolOutput};
use crate::event::ToolKind;

/// The editor's way of putting a question to the user.
#[async_trait::async_trait]
pub trait AskUser: Send + Sync {
    /// The answer, `Ok(None)` when the user declined, or why the question could not be asked.
    async fn ask(&self, question: &str, choices: &[String]) -> Result<Option<String>, EditorError>;

    /// A form: `schema` is a flat JSON Schema object (MCP's and ACP's elicitation schema, with
    /// its `default`s for the editor to fill in). The user's answer, or why it could not be shown.
    async fn form(&self, message: &str, schema: serde_json::Value) -> Result<FormAnswer, EditorError>;
}

/// What the user did with a form.
#[derive(Debug, Clone, PartialEq)]
pub enum FormAnswer {
    /// Filled in and sent: the values by property name.
    Accepted(serde_json::Value),
    Declined,
    Cancelled,
}

#[derive(Deserialize, JsonSchema)]
pub struct AskUserInput {
    /// The question, short and specific.
    pub question: String,
    /// Answers to choose from, when there are only a few sensible ones.
    #[serde(default)]
    pub choices: Vec<String>,
}

pub struct AskUserTool;

impl Tool for AskUserTool {
    type Input = AskUserInput;
    const NAME: &'static str = "ask_user";
    const DESCRIPTION: &'static str = "Ask the user a question when you cannot go on without their decision (which of two designs, a name, a missing detail). Do not ask for permission to use tools; just use them.";
    const KIND: ToolKind = ToolKind::Other;

    fn read_only(&self) -> bool {
        true
    }

    fn describe(&self, input: &AskUserInput, _ctx: &ToolContext) -> CallDescription {
        CallDescription::titled(format!("Question: {}", input.question))
    }

    async fn run(&self, input: AskUserInput, ctx: &ToolContext) -> ToolOutput {
        let Some(asker) = &ctx.env.services.ask_user else {
            return ToolOutput::text(
                "This editor cannot take questions during a turn. Ask the user in your reply and end your turn; they will answer in their next message.",
            );
        };
        let answer = tokio::select! {
            answer = asker.ask(&input.question, &input.choices) => answer,
            () = ctx.cancel.cancelled() => return ToolOutput::error("The turn was cancelled before the user answered."),
        };
        match answer {
            Ok(Some(answer)) => ToolOutput::text(format!("The user answered: {answer}")),
            Ok(None) => ToolOutput::text(
                "The user declined to answer. Go on with your best judgement, or stop and explain what you need.",
            ),
            Err(reason) => {
                ToolOutput::error(format!("The question could not be asked: {reason}. Ask in your reply instead."))
            }
        }
    }
}
