//! `browser_evaluate`: a script run in the active tab, its value returned as JSON. It can do
//! anything the page can, so it asks every time unless a rule allows it.

use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;

use crate::browser::WebBrowser;
use crate::browser::page;
use crate::event::ToolKind;
use crate::tools::{CallDescription, Offer, Tool, ToolContext, ToolOutput};

/// Results longer than this are cut.
const MAX_RESULT: usize = 20_000;

pub struct Evaluate(pub Arc<WebBrowser>);

#[derive(Deserialize, JsonSchema)]
pub struct EvaluateInput {
    /// A JavaScript expression (promises are awaited); its value comes back as JSON.
    pub script: String,
}

impl Tool for Evaluate {
    type Input = EvaluateInput;
    const NAME: &'static str = "browser_evaluate";
    const DESCRIPTION: &'static str = "Run a JavaScript expression in the browser's active tab and return its value as JSON. Prefer browser_snapshot and the input tools; use this for what they cannot do.";
    const KIND: ToolKind = ToolKind::Execute;
    const OFFER: Offer = Offer::OnDemand;

    fn read_only(&self) -> bool {
        false
    }

    fn describe(&self, input: &EvaluateInput, _ctx: &ToolContext) -> CallDescription {
        let first: String = input.script.lines().next().unwrap_or_default().chars().take(60).collect();
        CallDescription::titled(format!("Run in the browser: {first}"))
    }

    async fn run(&self, input: EvaluateInput, _ctx: &ToolContext) -> ToolOutput {
        let mut held = match super::held(&self.0).await {
            Ok(held) => held,
            Err(output) => return output,
        };
        let Ok(tab) = held.page().cloned() else { return ToolOutput::error("No tab is open.") };
        match held.settle_after(page::evaluate(&tab, &input.script)).await {
            Ok(value) => {
                let mut text = serde_json::to_string_pretty(&value).unwrap_or_default();
                if text.len() > MAX_RESULT {
                    let cut = (0..=MAX_RESULT).rev().find(|index| text.is_char_boundary(*index)).unwrap_or(0);
                    text.truncate(cut);
                    text.push_str("\n[result cut at 20000 characters]");
                }
                ToolOutput::text(text)
            }
            Err(error) => ToolOutput::error(error.to_string()),
        }
    }
}
