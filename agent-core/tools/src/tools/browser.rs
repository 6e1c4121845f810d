//! The `browser_*` tools: a real Chromium driven over the DevTools Protocol ([`crate::browser`]).
//! Each tool holds the session's one [`WebBrowser`]; a call holds the browser while it runs,
//! so calls on it take turns whatever the batch. Navigation asks like `web_fetch` (rules by
//! domain); acting on a page (click, type, press, select, evaluate) asks unless allowed;
//! looking (snapshot, screenshot, console, scroll, history, tabs) does not.

mod console;
mod evaluate;
mod history;
mod input;
mod navigate;
mod screenshot;
mod snapshot;
mod tabs;

use std::sync::Arc;

use super::{DynTool, ToolOutput};
use crate::browser::{Held, WebBrowser};

/// Every browser tool, sharing `browser`.
pub fn all(browser: &Arc<WebBrowser>) -> Vec<Arc<dyn DynTool>> {
    let shared = || Arc::clone(browser);
    vec![
        Arc::new(navigate::Navigate(shared())),
        Arc::new(snapshot::Snapshot(shared())),
        Arc::new(input::Click(shared())),
        Arc::new(input::Type(shared())),
        Arc::new(input::Press(shared())),
        Arc::new(input::Select(shared())),
        Arc::new(input::Scroll(shared())),
        Arc::new(history::History::<false>(shared())), // browser_back
        Arc::new(history::History::<true>(shared())),  // browser_forward
        Arc::new(tabs::Tabs(shared())),
        Arc::new(screenshot::Screenshot(shared())),
        Arc::new(console::Console(shared())),
        Arc::new(evaluate::Evaluate(shared())),
        Arc::new(tabs::Close(shared())),
    ]
}

/// The browser held for a call, or the error result saying why there is none.
async fn held(browser: &WebBrowser) -> Result<Held<'_>, ToolOutput> {
    browser.hold().await.map_err(|error| ToolOutput::error(format!("The browser could not be used: {error}")))
}

/// Where the active tab is now, for a call's result: `Page: title (url)`.
async fn whereabouts(held: &Held<'_>) -> String {
    let Ok(page) = held.page() else { return "No tab is open.".into() };
    let title = crate::browser::page::evaluate(page, "document.title")
        .await
        .ok()
        .and_then(|title| title.as_str().map(str::to_owned))
        .unwrap_or_default();
    let url = page.url().await.ok().flatten().unwrap_or_default();
    format!("Page: {title} ({url})")
}
