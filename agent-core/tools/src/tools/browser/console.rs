//! `browser_console`: what the active tab logged: console messages, exceptions, dialogs.

use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;

use crate::browser::WebBrowser;
use crate::event::ToolKind;
use crate::tools::{CallDescription, Offer, Tool, ToolContext, ToolOutput};

pub struct Console(pub Arc<WebBrowser>);

#[derive(Deserialize, JsonSchema)]
pub struct ConsoleInput {
    /// At most this many of the latest lines (default 50, at most 200).
    #[serde(default)]
    pub limit: Option<usize>,
}

impl Tool for Console {
    type Input = ConsoleInput;
    const NAME: &'static str = "browser_console";
    const DESCRIPTION: &'static str = "The latest console messages, uncaught exceptions and dialogs (alerts are accepted, other dialogs dismissed) of the browser's active tab.";
    const KIND: ToolKind = ToolKind::Read;
    const OFFER: Offer = Offer::OnDemand;

    fn read_only(&self) -> bool {
        true
    }

    fn describe(&self, _input: &ConsoleInput, _ctx: &ToolContext) -> CallDescription {
        CallDescription::titled("Read the browser's console")
    }

    async fn run(&self, input: ConsoleInput, _ctx: &ToolContext) -> ToolOutput {
        let held = match super::held(&self.0).await {
            Ok(held) => held,
            Err(output) => return output,
        };
        let Ok(tab) = held.tab() else { return ToolOutput::error("No tab is open.") };
        let lines = tab.recent(input.limit.unwrap_or(50).min(200));
        if lines.is_empty() {
            ToolOutput::text("Nothing was logged in this tab.")
        } else {
            ToolOutput::text(lines.join("\n"))
        }
    }
}
