//! `browser_navigate`: opens a URL in the active tab and waits for it to load.

use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;

use crate::browser::WebBrowser;
use crate::browser::page;
use crate::event::ToolKind;
use crate::tools::{CallDescription, CallSubject, Offer, Tool, ToolContext, ToolOutput};

pub struct Navigate(pub Arc<WebBrowser>);

#[derive(Deserialize, JsonSchema)]
pub struct NavigateInput {
    /// The http or https URL to open in the active tab.
    pub url: String,
}

impl Tool for Navigate {
    type Input = NavigateInput;
    const NAME: &'static str = "browser_navigate";
    const DESCRIPTION: &'static str = "Open a URL in the browser's active tab (a real Chromium, started on first use) and wait for the page to load. Then use browser_snapshot to see the page and get refs for browser_click, browser_type and the other input tools.";
    const KIND: ToolKind = ToolKind::Fetch;
    const OFFER: Offer = Offer::OnDemand;

    fn read_only(&self) -> bool {
        false
    }

    fn describe(&self, input: &NavigateInput, _ctx: &ToolContext) -> CallDescription {
        CallDescription {
            subject: CallSubject::Url(input.url.clone()),
            ..CallDescription::titled(format!("Open {} in the browser", input.url))
        }
    }

    async fn run(&self, input: NavigateInput, _ctx: &ToolContext) -> ToolOutput {
        // Only the web: a file:// or chrome:// page would read what no rule has allowed.
        match reqwest::Url::parse(&input.url) {
            Ok(url) if matches!(url.scheme(), "http" | "https") => {}
            Ok(url) => {
                return ToolOutput::error(format!(
                    "browser_navigate opens http and https URLs only, not {}:",
                    url.scheme()
                ));
            }
            Err(error) => return ToolOutput::error(format!("`{}` is not a URL: {error}", input.url)),
        }
        let held = match super::held(&self.0).await {
            Ok(held) => held,
            Err(output) => return output,
        };
        let Ok(tab) = held.page() else { return ToolOutput::error("No tab is open.") };
        if let Err(error) = tab.goto(input.url.as_str()).await {
            return ToolOutput::error(format!("Could not open {}: {error}", input.url));
        }
        page::wait_for_load(tab).await;
        ToolOutput::text(format!("Opened {}.\n{}", input.url, super::whereabouts(&held).await))
    }
}
