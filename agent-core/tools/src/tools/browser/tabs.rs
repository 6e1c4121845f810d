//! `browser_tabs` (list, new, switch, close) and `browser_close` (the whole browser).

use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;

use crate::browser::WebBrowser;
use crate::event::ToolKind;
use crate::tools::{CallDescription, Offer, Tool, ToolContext, ToolOutput};

pub struct Tabs(pub Arc<WebBrowser>);

#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum TabAction {
    List,
    /// Opens an empty tab and makes it active (then browser_navigate).
    New,
    Switch,
    Close,
}

#[derive(Deserialize, JsonSchema)]
pub struct TabsInput {
    pub action: TabAction,
    /// The tab's number from the list, for `switch` and `close` (the active one if left out).
    #[serde(default)]
    pub index: Option<usize>,
}

impl Tool for Tabs {
    type Input = TabsInput;
    const NAME: &'static str = "browser_tabs";
    const DESCRIPTION: &'static str = "List the browser's tabs, open a new empty one, switch to one, or close one. A tab a page opened (a link with target=_blank) becomes the active tab by itself.";
    const KIND: ToolKind = ToolKind::Other;
    const OFFER: Offer = Offer::OnDemand;

    fn read_only(&self) -> bool {
        true
    }

    fn concurrency_safe(&self) -> bool {
        false
    }

    fn describe(&self, input: &TabsInput, _ctx: &ToolContext) -> CallDescription {
        let what = match input.action {
            TabAction::List => "List the browser's tabs",
            TabAction::New => "Open a browser tab",
            TabAction::Switch => "Switch browser tabs",
            TabAction::Close => "Close a browser tab",
        };
        CallDescription::titled(what)
    }

    async fn run(&self, input: TabsInput, _ctx: &ToolContext) -> ToolOutput {
        let mut held = match super::held(&self.0).await {
            Ok(held) => held,
            Err(output) => return output,
        };
        let index = input.index.unwrap_or(held.active);
        let changed = match input.action {
            TabAction::List => Ok(()),
            TabAction::New => held.new_tab("about:blank").await,
            TabAction::Switch if index < held.tabs.len() => {
                held.active = index;
                held.bring_forward().await;
                Ok(())
            }
            TabAction::Switch => Err(crate::browser::BrowserError::NotOnPage(format!("There is no tab {index}."))),
            TabAction::Close => held.close_tab(index).await,
        };
        if let Err(error) = changed {
            return ToolOutput::error(error.to_string());
        }
        let mut lines = Vec::new();
        for (number, tab) in held.tabs.iter().enumerate() {
            let url = tab.page.url().await.ok().flatten().unwrap_or_default();
            let title = crate::browser::page::evaluate(&tab.page, "document.title")
                .await
                .ok()
                .and_then(|title| title.as_str().map(str::to_owned))
                .unwrap_or_default();
            lines.push(format!("{number}{} {title} ({url})", if number == held.active { " (active)" } else { "" }));
        }
        if lines.is_empty() {
            lines.push("No tabs are open.".into());
        }
        ToolOutput::text(lines.join("\n"))
    }
}

pub struct Close(pub Arc<WebBrowser>);

#[derive(Deserialize, JsonSchema)]
pub struct CloseInput {}

impl Tool for Close {
    type Input = CloseInput;
    const NAME: &'static str = "browser_close";
    const DESCRIPTION: &'static str = "Close the browser and all its tabs; the next browser tool starts it again.";
    const KIND: ToolKind = ToolKind::Other;
    const OFFER: Offer = Offer::OnDemand;

    fn read_only(&self) -> bool {
        true
    }

    fn concurrency_safe(&self) -> bool {
        false
    }

    fn describe(&self, _input: &CloseInput, _ctx: &ToolContext) -> CallDescription {
        CallDescription::titled("Close the browser")
    }

    async fn run(&self, _input: CloseInput, _ctx: &ToolContext) -> ToolOutput {
        if self.0.close().await {
            ToolOutput::text("Closed the browser.")
        } else {
            ToolOutput::text("The browser was not open.")
        }
    }
}
