//! `browser_screenshot`: the viewport, the full page or one element, as an image for the model
//! (and the editor).

use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;

use crate::browser::WebBrowser;
use crate::browser::page::{self, Capture};
use crate::event::{Display, ToolKind};
use crate::llm::ResultPart;
use crate::tools::{CallDescription, Offer, Tool, ToolContext, ToolOutput};

pub struct Screenshot(pub Arc<WebBrowser>);

#[derive(Deserialize, JsonSchema)]
pub struct ScreenshotInput {
    /// The whole page rather than the viewport (cut at 5000 CSS pixels).
    #[serde(default)]
    pub full_page: bool,
    /// Only this element (its ref from browser_snapshot), with a little space around it.
    #[serde(rename = "ref", default)]
    pub reference: Option<String>,
    /// Outline each element that has a ref and tag it with the ref, for this image only.
    #[serde(default)]
    pub labels: bool,
}

impl Tool for Screenshot {
    type Input = ScreenshotInput;
    const NAME: &'static str = "browser_screenshot";
    const DESCRIPTION: &'static str = "A screenshot of the browser's active tab: the viewport, the full page (`full_page`), or one element (`ref`). With `labels`, each element that has a ref is outlined and tagged with it, so what you see can be acted on.";
    const KIND: ToolKind = ToolKind::Read;
    const OFFER: Offer = Offer::OnDemand;

    fn read_only(&self) -> bool {
        true
    }

    fn describe(&self, input: &ScreenshotInput, _ctx: &ToolContext) -> CallDescription {
        let what = match (&input.reference, input.full_page) {
            (Some(reference), _) => format!("Screenshot {reference} in the browser"),
            (None, true) => "Screenshot the whole page in the browser".into(),
            (None, false) => "Screenshot the browser".into(),
        };
        CallDescription::titled(what)
    }

    async fn run(&self, input: ScreenshotInput, _ctx: &ToolContext) -> ToolOutput {
        let held = match super::held(&self.0).await {
            Ok(held) => held,
            Err(output) => return output,
        };
        let Ok(tab) = held.page() else { return ToolOutput::error("No tab is open.") };
        let capture = match (&input.reference, input.full_page) {
            (Some(reference), _) => Capture::Element(reference),
            (None, true) => Capture::FullPage,
            (None, false) => Capture::Viewport,
        };
        page::wait_for_load(tab).await;
        held.bring_forward().await;
        match page::screenshot(tab, capture, input.labels).await {
            Ok((data, width, height)) => {
                let text = format!("Screenshot, {width}×{height}.\n{}", super::whereabouts(&held).await);
                let images = vec![("image/jpeg".to_owned(), data.clone())];
                let content = vec![
                    ResultPart::Text { text: text.clone() },
                    ResultPart::Image { media_type: "image/jpeg".into(), data },
                ];
                ToolOutput { content, is_error: false, display: Some(Display::Media { text, images }) }
            }
            Err(error) => ToolOutput::error(error.to_string()),
        }
    }
}
