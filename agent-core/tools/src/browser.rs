//! The browser the `browser_*` tools drive: one Chromium per session, over the DevTools
//! Protocol (`chromiumoxide`, which never downloads a browser).
//!
//! Chromium is launched on the first call and lives with the session, not with any one call: a
//! call ending or being cancelled never closes it; the session's end does (its whole process
//! group). A browser the user closed is started again by the next call. The profile persists
//! under the user's data directory. Before each call the tabs are brought in line with the
//! browser's: tabs the user closed are dropped, tabs a page opened are adopted (the newest
//! becomes the active one).
//!
//! What the tools do in a page (snapshots and refs, real input, screenshots) is in [`page`].

mod chromium;
mod error;
pub mod page;
mod tab;

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

use chromiumoxide::Page;
use futures::StreamExt;
use tokio_util::sync::CancellationToken;

pub use self::chromium::find_executable as find_chromium;
use self::chromium::{Chromium, LaunchOptions};
pub use self::error::BrowserError;
pub use self::tab::Tab;
use larik_settings::BrowserSettings;

/// How long the browser has to answer a command and list its tabs before it counts as gone.
const ANSWER_WAIT: std::time::Duration = std::time::Duration::from_secs(5);

/// What starting the browser needs, gathered when the session starts.
#[derive(Debug, Clone)]
pub struct BrowserSetup {
    pub settings: BrowserSettings,
    pub env: HashMap<String, String>,
    /// The persistent profile's directory.
    pub profile: PathBuf,
}

/// The session's browser, started on first use.
pub struct WebBrowser {
    setup: BrowserSetup,
    running: tokio::sync::Mutex<Option<Running>>,
}

/// A started browser and its tabs.
pub struct Running {
    chromium: Chromium,
    browser: chromiumoxide::Browser,
    handler: tokio::task::JoinHandle<()>,
    pub tabs: Vec<Tab>,
    /// Index of the active tab in `tabs`.
    pub active: usize,
}

/// What an action started, as far as waiting for it goes.
enum Started {
    Navigation,
    Tab,
    Nothing,
}

/// The running browser, held for one call: calls on the browser take turns.
pub type Held<'a> = tokio::sync::MappedMutexGuard<'a, Running>;

impl WebBrowser {
    /// The session's browser; `session` is the session's cancellation, whose end closes it.
    pub fn new(setup: BrowserSetup, session: &CancellationToken) -> Arc<Self> {
        let browser = Arc::new(Self { setup, running: tokio::sync::Mutex::new(None) });
        let (closing, ended) = (Arc::downgrade(&browser), session.clone());
        let Ok(runtime) = tokio::runtime::Handle::try_current() else { return browser };
        runtime.spawn(async move {
            ended.cancelled().await;
            if let Some(browser) = closing.upgrade() {
                browser.close().await;
            }
        });
        browser
    }

    /// The running browser, started (again) if it is not, with its tabs brought up to date.
    /// A browser that stopped answering (the user quit it and it is still shutting down, or it
    /// hung) is replaced once, so no call waits on it.
    pub async fn hold(&self) -> Result<Held<'_>, BrowserError> {
        let mut running = self.running.lock().await;
        let mut fresh = false;
        loop {
            if let Some(current) = running.as_mut()
                && !current.is_alive()
            {
                tracing::info!("the browser was closed; starting it again");
                if let Some(gone) = running.take() {
                    gone.stop().await;
                }
            }
            if running.is_none() {
                *running = Some(Running::start(&self.setup).await?);
                fresh = true;
            }
            let Some(current) = running.as_mut() else { continue };
            // One round trip over the connection: the handler answers the tab list from what it
            // last heard, so only a command shows a browser that quit or hung.
            let answered = tokio::time::timeout(ANSWER_WAIT, async {
                current.browser.version().await.ok()?;
                Some(current.sync_tabs().await)
            })
            .await;
            match answered {
                Ok(Some(synced)) => {
                    synced?;
                    break;
                }
                _ if !fresh => {
                    tracing::warn!("the browser stopped answering; starting it again");
                    if let Some(gone) = running.take() {
                        gone.stop().await;
                    }
                }
                _ => return Err(BrowserError::Unavailable("the browser does not answer".to_owned())),
            }
        }
        tokio::sync::MutexGuard::try_map(running, Option::as_mut)
            .map_err(|_| BrowserError::Unavailable("the browser did not start".to_owned()))
    }

    /// Closes the browser (a later call starts a new one).
    pub async fn close(&self) -> bool {
        let Some(running) = self.running.lock().await.take() else { return false };
        running.stop().await;
        true
    }
}

impl Running {
    async fn start(setup: &BrowserSetup) -> Result<Self, BrowserError> {
        let executable = chromium::find_executable(setup.settings.executable.as_deref(), &setup.env)?;
        let options = LaunchOptions {
            executable,
            profile: setup.profile.clone(),
            headless: setup.settings.headless != Some(false),
        };
        let chromium = Chromium::start(&options).await?;
        // Certificate errors are errors, as in any browser; the window's own size is the viewport.
        let config = chromiumoxide::handler::HandlerConfig {
            ignore_https_errors: false,
            viewport: None,
            ..chromiumoxide::handler::HandlerConfig::default()
        };
        let (browser, mut handler) = chromiumoxide::Browser::connect_with_config(chromium.websocket.clone(), config)
            .await
            .map_err(|error| BrowserError::Unavailable(format!("could not reach the browser's DevTools: {error}")))?;
        // The handler must run as long as the connection does, and go on past events it cannot
        // parse: newer Chromium sends some this crate does not know. Once the connection has
        // failed it never reads again (the handler would go on answering from what it knew, and
        // a command would wait out its 30 s timeout): ending here drops every waiting command at
        // once and marks the browser as gone for the next call.
        let handler = tokio::spawn(async move {
            while let Some(event) = handler.next().await {
                match event {
                    Err(chromiumoxide::error::CdpError::Ws(error)) => {
                        tracing::info!(target: "larik::browser", %error, "the browser's DevTools connection ended");
                        break;
                    }
                    Err(error) => {
                        tracing::debug!(target: "larik::browser", %error, "a DevTools message was not understood");
                    }
                    Ok(()) => {}
                }
            }
        });
        tracing::info!(pid = chromium.pid(), "browser started");
        let mut running = Self { chromium, browser, handler, tabs: Vec::new(), active: 0 };
        // The window's first tab shows up once the handler has attached to it; a tab of our
        // own opened before then would leave that one behind it, never painted.
        let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(3);
        while running.tabs.is_empty() && tokio::time::Instant::now() < deadline {
            tokio::time::timeout(ANSWER_WAIT, running.sync_tabs())
                .await
                .map_err(|_| BrowserError::Unavailable("the browser does not answer".to_owned()))??;
            if running.tabs.is_empty() {
                tokio::time::sleep(std::time::Duration::from_millis(50)).await;
            }
        }
        if running.tabs.is_empty() {
            running.new_tab("about:blank").await?;
        }
        Ok(running)
    }

    /// Its process is there and its DevTools connection open.
    fn is_alive(&mut self) -> bool {
        self.chromium.is_running() && !self.handler.is_finished()
    }

    async fn stop(mut self) {
        let _ = tokio::time::timeout(std::time::Duration::from_secs(2), self.browser.close()).await;
        self.tabs.clear();
        self.handler.abort();
        self.chromium.stop().await;
        tracing::info!("browser closed");
    }

    /// The active tab.
    pub fn tab(&self) -> Result<&Tab, BrowserError> {
        self.tabs.get(self.active).ok_or_else(|| {
            BrowserError::NotOnPage(
                "No tab is open; open one with browser_tabs {\"action\": \"new\"} or browser_navigate.".to_owned(),
            )
        })
    }

    pub fn page(&self) -> Result<&Page, BrowserError> {
        self.tab().map(|tab| &tab.page)
    }

    /// Drops tabs that are gone and adopts the ones pages opened; a newly adopted tab becomes
    /// the active one.
    pub async fn sync_tabs(&mut self) -> Result<(), BrowserError> {
        let pages = self.browser.pages().await.map_err(BrowserError::not("the browser does not answer"))?;
        let active = self.tabs.get(self.active).map(|tab| tab.page.target_id().clone());
        self.tabs.retain(|tab| pages.iter().any(|page| page.target_id() == tab.page.target_id()));
        let mut adopted = None;
        for page in pages {
            if !self.tabs.iter().any(|tab| tab.page.target_id() == page.target_id()) {
                self.tabs.push(Tab::watch(page).await);
                adopted = Some(self.tabs.len() - 1);
            }
        }
        self.active = adopted
            .or_else(|| active.and_then(|id| self.tabs.iter().position(|tab| *tab.page.target_id() == id)))
            .unwrap_or(0);
        if adopted.is_some() {
            self.bring_forward().await;
        }
        Ok(())
    }

    /// Runs `action` on the active tab, then waits up to 300 ms for what it may have started: a
    /// navigation (then for the new document to load) or a new tab (then it is adopted, made
    /// active and waited for).
    pub async fn settle_after<T>(
        &mut self,
        action: impl Future<Output = Result<T, BrowserError>>,
    ) -> Result<T, BrowserError> {
        use chromiumoxide::cdp::browser_protocol::page::EventFrameStartedLoading;
        use chromiumoxide::cdp::browser_protocol::target::EventTargetCreated;
        let page = self.page()?.clone();
        let mut loading =
            page.event_listener::<EventFrameStartedLoading>().await.map_err(BrowserError::not("no page events"))?;
        let mut created = self
            .browser
            .event_listener::<EventTargetCreated>()
            .await
            .map_err(BrowserError::not("no browser events"))?;
        let outcome = action.await?;
        let started = tokio::time::timeout(page::NAVIGATION_START, async {
            tokio::select! {
                _ = loading.next() => Started::Navigation,
                Some(target) = created.next() => if target.target_info.r#type == "page" { Started::Tab } else { Started::Nothing },
            }
        })
        .await
        .unwrap_or(Started::Nothing);
        match started {
            Started::Navigation => page::wait_for_load(&page).await,
            Started::Tab => {
                // The handler attaches to the new tab a moment after it is created.
                let before = self.tabs.len();
                let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(3);
                while self.tabs.len() <= before && tokio::time::Instant::now() < deadline {
                    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                    self.sync_tabs().await?;
                }
                if let Ok(page) = self.page() {
                    page::wait_for_load(page).await;
                }
            }
            Started::Nothing => {}
        }
        Ok(outcome)
    }

    /// Shows the active tab in front: a tab behind another is not painted, so screenshots and
    /// animation frames would wait on it forever.
    pub async fn bring_forward(&self) {
        if let Ok(page) = self.page()
            && let Err(error) = page.bring_to_front().await
        {
            tracing::debug!(%error, "the tab could not be brought to the front");
        }
    }

    /// Opens a tab on `url` and makes it the active one.
    pub async fn new_tab(&mut self, url: &str) -> Result<(), BrowserError> {
        let page = self.browser.new_page(url).await.map_err(BrowserError::not("could not open a tab"))?;
        let id = page.target_id().clone();
        if !self.tabs.iter().any(|tab| *tab.page.target_id() == id) {
            self.tabs.push(Tab::watch(page).await);
        }
        self.active = self.tabs.iter().position(|tab| *tab.page.target_id() == id).unwrap_or(0);
        self.bring_forward().await;
        Ok(())
    }

    /// Closes tab `index`; the one before it becomes active.
    pub async fn close_tab(&mut self, index: usize) -> Result<(), BrowserError> {
        if index >= self.tabs.len() {
            return Err(BrowserError::NotOnPage(format!(
                "there is no tab {index}; browser_tabs {{\"action\": \"list\"}} lists them"
            )));
        }
        let tab = self.tabs.remove(index);
        tab.page.clone().close().await.map_err(BrowserError::not("could not close the tab"))?;
        if self.active >= index {
            self.active = self.active.saturating_sub(1);
        }
        self.bring_forward().await;
        Ok(())
    }
}
