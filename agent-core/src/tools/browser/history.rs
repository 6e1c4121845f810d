//! `browser_back` and `browser_forward`: through the tab's history by entry.

use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;

use crate::browser::WebBrowser;
use crate::browser::page;
use crate::event::ToolKind;
use crate::tools::{CallDescription, Tool, ToolContext, ToolOutput};

#[derive(Deserialize, JsonSchema)]
pub struct HistoryInput {}

async fn go(browser: &WebBrowser, step: i64) -> ToolOutput {
    let held = match super::held(browser).await {
        Ok(held) => held,
        Err(output) => return output,
    };
    let Ok(tab) = held.page() else { return ToolOutput::error("No tab is open.") };
    match page::go_in_history(tab, step).await {
        Ok(url) => ToolOutput::text(format!("Went {} to {url}.\n{}", if step < 0 { "back" } else { "forward" }, super::whereabouts(&held).await)),
        Err(error) => ToolOutput::error(error),
    }
}

pub struct Back(pub Arc<WebBrowser>);

impl Tool for Back {
    type Input = HistoryInput;
    const NAME: &'static str = "browser_back";
    const DESCRIPTION: &'static str = "Go back one page in the browser's active tab.";
    const KIND: ToolKind = ToolKind::Other;

    fn read_only(&self) -> bool {
        true
    }

    fn concurrency_safe(&self) -> bool {
        false
    }

    fn describe(&self, _input: &HistoryInput, _ctx: &ToolContext) -> CallDescription {
        CallDescription::titled("Go back in the browser")
    }

    async fn run(&self, _input: HistoryInput, _ctx: &ToolContext) -> ToolOutput {
        go(&self.0, -1).await
    }
}

pub struct Forward(pub Arc<WebBrowser>);

impl Tool for Forward {
    type Input = HistoryInput;
    const NAME: &'static str = "browser_forward";
    const DESCRIPTION: &'static str = "Go forward one page in the browser's active tab.";
    const KIND: ToolKind = ToolKind::Other;

    fn read_only(&self) -> bool {
        true
    }

    fn concurrency_safe(&self) -> bool {
        false
    }

    fn describe(&self, _input: &HistoryInput, _ctx: &ToolContext) -> CallDescription {
        CallDescription::titled("Go forward in the browser")
    }

    async fn run(&self, _input: HistoryInput, _ctx: &ToolContext) -> ToolOutput {
        go(&self.0, 1).await
    }
}
