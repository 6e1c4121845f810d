//! One tab: its page, and what it said. Listeners log console messages, exceptions and dialogs
//! in a bounded buffer, and answer dialogs at once (an alert is accepted, anything else
//! dismissed), since an open dialog would block the page and every later call.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use chromiumoxide::Page;
use chromiumoxide::cdp::browser_protocol::page::{
    DialogType, EventJavascriptDialogOpening, HandleJavaScriptDialogParams,
};
use chromiumoxide::cdp::js_protocol::runtime::{EventConsoleApiCalled, EventExceptionThrown, RemoteObject};
use futures::StreamExt;

/// Lines kept per tab.
const LOG_LINES: usize = 200;

pub struct Tab {
    pub page: Page,
    log: Arc<Mutex<VecDeque<String>>>,
    listeners: Vec<tokio::task::JoinHandle<()>>,
}

impl Tab {
    /// The page, with its listeners started.
    pub async fn watch(page: Page) -> Self {
        let log: Arc<Mutex<VecDeque<String>>> = Arc::default();
        let mut listeners = Vec::new();
        if let Ok(mut console) = page.event_listener::<EventConsoleApiCalled>().await {
            let log = Arc::clone(&log);
            listeners.push(tokio::spawn(async move {
                while let Some(event) = console.next().await {
                    let text: Vec<String> = event.args.iter().map(describe).collect();
                    push(&log, format!("[{}] {}", event.r#type.as_ref(), text.join(" ")));
                }
            }));
        }
        if let Ok(mut exceptions) = page.event_listener::<EventExceptionThrown>().await {
            let log = Arc::clone(&log);
            listeners.push(tokio::spawn(async move {
                while let Some(event) = exceptions.next().await {
                    let details = &event.exception_details;
                    let what = details
                        .exception
                        .as_ref()
                        .and_then(|exception| exception.description.clone())
                        .unwrap_or_else(|| details.text.clone());
                    let place = details
                        .url
                        .as_deref()
                        .map(|url| format!(" ({url}:{}:{})", details.line_number + 1, details.column_number + 1))
                        .unwrap_or_default();
                    push(&log, format!("[exception] {what}{place}"));
                }
            }));
        }
        if let Ok(mut dialogs) = page.event_listener::<EventJavascriptDialogOpening>().await {
            let (log, page) = (Arc::clone(&log), page.clone());
            listeners.push(tokio::spawn(async move {
                while let Some(event) = dialogs.next().await {
                    let accept = event.r#type == DialogType::Alert;
                    push(
                        &log,
                        format!(
                            "[dialog] {} \"{}\": {}",
                            event.r#type.as_ref(),
                            event.message,
                            if accept { "accepted" } else { "dismissed" }
                        ),
                    );
                    if let Err(error) = page.execute(HandleJavaScriptDialogParams::new(accept)).await {
                        tracing::debug!(%error, "a dialog could not be answered");
                    }
                }
            }));
        }
        Self { page, log, listeners }
    }

    /// The last `count` lines the tab logged, oldest first.
    pub fn recent(&self, count: usize) -> Vec<String> {
        let Ok(log) = self.log.lock() else { return Vec::new() };
        log.iter().skip(log.len().saturating_sub(count)).cloned().collect()
    }
}

impl Drop for Tab {
    fn drop(&mut self) {
        for listener in &self.listeners {
            listener.abort();
        }
    }
}

fn push(log: &Mutex<VecDeque<String>>, line: String) {
    if let Ok(mut log) = log.lock() {
        if log.len() == LOG_LINES {
            log.pop_front();
        }
        log.push_back(line);
    }
}

/// A console argument as the page's console would print it.
fn describe(object: &RemoteObject) -> String {
    match &object.value {
        Some(serde_json::Value::String(text)) => text.clone(),
        Some(value) => value.to_string(),
        None => object.description.clone().unwrap_or_else(|| object.r#type.as_ref().to_owned()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tabs_log_keeps_its_last_200_lines() {
        let log = Mutex::new(VecDeque::new());
        for n in 0..250 {
            push(&log, format!("line {n}"));
        }
        let kept = log.lock().unwrap();
        assert_eq!(kept.len(), LOG_LINES);
        assert_eq!(kept.front().map(String::as_str), Some("line 50"), "the oldest went first");
        assert_eq!(kept.back().map(String::as_str), Some("line 249"));
    }
}
