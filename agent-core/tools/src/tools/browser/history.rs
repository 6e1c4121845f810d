//! `browser_back` and `browser_forward`: through the tab's history by entry.

use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;

use crate::browser::WebBrowser;
use crate::browser::page;
use crate::event::ToolKind;
use crate::tools::{CallDescription, Offer, Tool, ToolContext, ToolOutput};

#[derive(Deserialize, JsonSchema)]
pub struct HistoryInput {}

/// `browser_back` (`History<false>`) or `browser_forward` (`History<true>`): one entry through
/// the active tab's history.
pub struct History<const FORWARD: bool>(pub Arc<WebBrowser>);

impl<const FORWARD: bool> History<FORWARD> {
    const DIRECTION: &'static str = if FORWARD { "forward" } else { "back" };
}

impl<const FORWARD: bool> Tool for History<FORWARD> {
    type Input = HistoryInput;
    const NAME: &'static str = if FORWARD { "browser_forward" } else { "browser_back" };
    const DESCRIPTION: &'static str = if FORWARD {
        "Go forward one page in the browser's active tab."
    } else {
        "Go back one page in the browser's active tab."
    };
    const KIND: ToolKind = ToolKind::Other;
    const OFFER: Offer = Offer::OnDemand;

    fn read_only(&self) -> bool {
        true
    }

    fn concurrency_safe(&self) -> bool {
        false
    }

    fn describe(&self, _input: &HistoryInput, _ctx: &ToolContext) -> CallDescription {
        CallDescription::titled(format!("Go {} in the browser", Self::DIRECTION))
    }

    async fn run(&self, _input: HistoryInput, _ctx: &ToolContext) -> ToolOutput {
        let held = match super::held(&self.0).await {
            Ok(held) => held,
            Err(output) => return output,
        };
        let Ok(tab) = held.page() else { return ToolOutput::error("No tab is open.") };
        match page::go_in_history(tab, if FORWARD { 1 } else { -1 }).await {
            Ok(url) => {
                ToolOutput::text(format!("Went {} to {url}.\n{}", Self::DIRECTION, super::whereabouts(&held).await))
            }
            Err(error) => ToolOutput::error(error.to_string()),
        }
    }
}
