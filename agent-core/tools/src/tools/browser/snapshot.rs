//! `browser_snapshot`: the outline of the active tab, with refs for the input tools.

use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;

use crate::browser::WebBrowser;
use crate::browser::page;
use crate::event::ToolKind;
use crate::tools::{CallDescription, Offer, Tool, ToolContext, ToolOutput};

pub struct Snapshot(pub Arc<WebBrowser>);

#[derive(Deserialize, JsonSchema)]
pub struct SnapshotInput {}

impl Tool for Snapshot {
    type Input = SnapshotInput;
    const NAME: &'static str = "browser_snapshot";
    const DESCRIPTION: &'static str = "An outline of what the browser's active tab shows: headings, text, and every element one can act on, each with a ref (`[ref=e12]`) to pass to browser_click, browser_type, browser_select or browser_screenshot. Refs stay the same across snapshots of the same page; take a new snapshot after the page changed.";
    const KIND: ToolKind = ToolKind::Read;
    const OFFER: Offer = Offer::OnDemand;

    fn read_only(&self) -> bool {
        true
    }

    fn describe(&self, _input: &SnapshotInput, _ctx: &ToolContext) -> CallDescription {
        CallDescription::titled("Look at the browser's page")
    }

    async fn run(&self, _input: SnapshotInput, _ctx: &ToolContext) -> ToolOutput {
        let held = match super::held(&self.0).await {
            Ok(held) => held,
            Err(output) => return output,
        };
        let Ok(tab) = held.page() else { return ToolOutput::error("No tab is open.") };
        page::wait_for_load(tab).await;
        match page::snapshot(tab).await {
            Ok(outline) => ToolOutput::text(outline),
            Err(error) => ToolOutput::error(format!("Could not read the page: {error}")),
        }
    }
}
