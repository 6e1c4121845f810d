//! `web_fetch`: a page as Markdown (scripts, navigation, headers and footers stripped, links made
//! absolute), paged with `start`/`max_length`, cached for 15 minutes. A redirect to another host
//! is reported, not followed, so the user sees where a link really leads.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use futures::StreamExt;
use reqwest::Url;
use schemars::JsonSchema;
use serde::Deserialize;

use super::{CallDescription, CallSubject, ClaudeCodeAlias, HookResponse, Tool, ToolContext, ToolOutput};
use crate::event::ToolKind;

const CACHE_TTL: Duration = Duration::from_secs(15 * 60);
const MAX_BODY_BYTES: usize = 5 * 1024 * 1024;
const TIMEOUT: Duration = Duration::from_secs(30);
const DEFAULT_MAX_LENGTH: usize = 20_000;
const SKIPPED_TAGS: &[&str] = &["script", "style", "nav", "header", "footer", "noscript", "iframe", "svg", "form"];

#[derive(Deserialize, JsonSchema)]
pub struct WebFetchInput {
    /// The http or https URL to fetch.
    pub url: String,
    /// Character offset to start from, for reading a long page in parts.
    #[serde(default)]
    pub start: Option<usize>,
    /// At most this many characters (default 20000).
    #[serde(default)]
    pub max_length: Option<usize>,
}

/// Why a fetch produced no page.
enum FetchFailure {
    Redirected { to: String },
    Failed(String),
}

#[derive(Default)]
pub struct WebFetch {
    cache: Mutex<HashMap<String, (Instant, String)>>,
}

impl WebFetch {
    fn cached(&self, url: &str) -> Option<String> {
        let cache = self.cache.lock().ok()?;
        cache.get(url).filter(|(at, _)| at.elapsed() < CACHE_TTL).map(|(_, page)| page.clone())
    }

    fn remember(&self, url: &str, page: &str) {
        if let Ok(mut cache) = self.cache.lock() {
            cache.retain(|_, (at, _)| at.elapsed() < CACHE_TTL);
            cache.insert(url.to_owned(), (Instant::now(), page.to_owned()));
        }
    }
}

impl Tool for WebFetch {
    type Input = WebFetchInput;
    const NAME: &'static str = "web_fetch";
    const CLAUDE_CODE: Option<&'static ClaudeCodeAlias> =
        Some(&ClaudeCodeAlias { name: "WebFetch", fields: &[], response: HookResponse::Output });
    const DESCRIPTION: &'static str = include_str!("web_fetch.md");
    const KIND: ToolKind = ToolKind::Fetch;

    fn read_only(&self) -> bool {
        false
    }

    fn concurrency_safe(&self) -> bool {
        true
    }

    fn describe(&self, input: &WebFetchInput, _ctx: &ToolContext) -> CallDescription {
        CallDescription {
            subject: CallSubject::Url(input.url.clone()),
            ..CallDescription::titled(format!("Fetch {}", input.url))
        }
    }

    async fn run(&self, input: WebFetchInput, ctx: &ToolContext) -> ToolOutput {
        let url = match Url::parse(&input.url) {
            Ok(url) if matches!(url.scheme(), "http" | "https") => url,
            Ok(url) => {
                return ToolOutput::error(format!("only http and https URLs can be fetched, not {}", url.scheme()));
            }
            Err(error) => return ToolOutput::error(format!("not a URL: {error}")),
        };
        let page = match self.cached(url.as_str()) {
            Some(page) => page,
            None => {
                let fetched = tokio::select! {
                    fetched = fetch(&url) => fetched,
                    () = ctx.cancel.cancelled() => return ToolOutput::error("the fetch was cancelled"),
                };
                match fetched {
                    Ok(page) => {
                        self.remember(url.as_str(), &page);
                        page
                    }
                    Err(FetchFailure::Redirected { to }) => {
                        return ToolOutput::text(format!(
                            "{url} redirects to another host: {to}\nIt was not followed. Fetch that URL if it is the page you want."
                        ));
                    }
                    Err(FetchFailure::Failed(message)) => return ToolOutput::error(message),
                }
            }
        };
        ToolOutput::text(window(
            url.as_str(),
            &page,
            input.start.unwrap_or(0),
            input.max_length.unwrap_or(DEFAULT_MAX_LENGTH),
        ))
    }
}

/// A part of the page, with a header saying where it is and how to continue.
fn window(url: &str, page: &str, start: usize, max_length: usize) -> String {
    let total = page.chars().count();
    if start >= total && total > 0 {
        return format!("{url}: the page has {total} characters; start {start} is past the end.");
    }
    let part: String = page.chars().skip(start).take(max_length.max(1)).collect();
    let end = start + part.chars().count();
    let mut header = format!("URL: {url}\n");
    if end < total || start > 0 {
        header.push_str(&format!("Characters {start}-{end} of {total}."));
        if end < total {
            header.push_str(&format!(" Continue with start={end}."));
        }
        header.push('\n');
    }
    format!("{header}\n{part}")
}

async fn fetch(url: &Url) -> Result<String, FetchFailure> {
    let failed = |message: String| FetchFailure::Failed(message);
    let origin_host = url.host_str().unwrap_or_default().to_owned();
    let client = crate::http::client_builder()
        .timeout(TIMEOUT)
        .redirect(reqwest::redirect::Policy::custom(move |attempt| {
            if attempt.previous().len() >= 10 {
                attempt.error("too many redirects")
            } else if attempt.url().host_str() == Some(origin_host.as_str()) {
                attempt.follow()
            } else {
                attempt.stop()
            }
        }))
        .build()
        .map_err(|error| failed(error.to_string()))?;
    let response = client
        .get(url.clone())
        .header("accept", "text/html, text/markdown, text/plain, application/json;q=0.9, */*;q=0.5")
        .send()
        .await;
    let response = response.map_err(|error| failed(format!("could not fetch {url}: {error}")))?;
    let status = response.status();
    if status.is_redirection() {
        let to = response.headers().get("location").and_then(|value| value.to_str().ok()).unwrap_or_default();
        let to = response.url().join(to).map(|target| target.to_string()).unwrap_or_else(|_| to.to_owned());
        return Err(FetchFailure::Redirected { to });
    }
    if !status.is_success() {
        return Err(failed(format!("{url} answered HTTP {status}")));
    }
    let final_url = response.url().clone();
    let content_type =
        response.headers().get("content-type").and_then(|value| value.to_str().ok()).unwrap_or_default().to_lowercase();
    let mut body = Vec::new();
    let mut chunks = response.bytes_stream();
    while let Some(chunk) = chunks.next().await {
        let chunk = chunk.map_err(|error| failed(format!("reading {url} failed: {error}")))?;
        if body.len() + chunk.len() > MAX_BODY_BYTES {
            return Err(failed(format!("{url} is larger than {} MB; not fetched", MAX_BODY_BYTES / (1024 * 1024))));
        }
        body.extend_from_slice(&chunk);
    }
    let text = String::from_utf8(body).map_err(|_| failed(format!("{url} is not text ({content_type})")))?;
    if content_type.contains("html") || (content_type.is_empty() && text.trim_start().starts_with('<')) {
        html_to_markdown(&text, &final_url).map_err(failed)
    } else {
        Ok(text)
    }
}

fn html_to_markdown(html: &str, base: &Url) -> Result<String, String> {
    let converter = htmd::HtmlToMarkdown::builder().skip_tags(SKIPPED_TAGS.to_vec()).build();
    let markdown = converter.convert(html).map_err(|error| format!("could not read the page: {error}"))?;
    let title = title(html).map(|title| format!("# {title}\n\n")).unwrap_or_default();
    Ok(format!("{title}{}", absolute_links(&markdown, base)))
}

fn title(html: &str) -> Option<String> {
    let lower = html.to_lowercase();
    let start = lower.find("<title")?;
    let open_end = start + lower[start..].find('>')? + 1;
    let close = open_end + lower[open_end..].find("</title>")?;
    let title = html[open_end..close].trim();
    (!title.is_empty()).then(|| title.to_owned())
}

/// Rewrites `](target)` link and image targets that are relative into absolute URLs.
fn absolute_links(markdown: &str, base: &Url) -> String {
    let mut out = String::with_capacity(markdown.len());
    let mut rest = markdown;
    while let Some(index) = rest.find("](") {
        let (before, after) = rest.split_at(index + 2);
        out.push_str(before);
        let Some(end) = after.find(')') else {
            rest = after;
            break;
        };
        let target = &after[..end];
        let (link, suffix) = match target.split_once(' ') {
            Some((link, title)) => (link, format!(" {title}")),
            None => (target, String::new()),
        };
        let resolved = if link.contains("://") || link.starts_with("mailto:") || link.starts_with('#') {
            link.to_owned()
        } else {
            base.join(link).map(|url| url.to_string()).unwrap_or_else(|_| link.to_owned())
        };
        out.push_str(&resolved);
        out.push_str(&suffix);
        rest = &after[end..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    use super::*;
    use crate::workspace::Workspace;

    const PAGE: &str = "<html><head><title>Docs</title><script>track()</script></head><body><nav>Home | About</nav><header>Site</header>\
        <h1>Install</h1><p>Run <code>make</code>. See <a href=\"/guide/next\">the guide</a>.</p><footer>(c) site</footer></body></html>";

    /// A real HTTP server on 127.0.0.1: `/page`, `/away` (redirect to another host), `/moved` (same host), `/big`.
    /// The paths it was asked for, in order, go to the log it returns.
    async fn serve() -> (String, Arc<Mutex<Vec<String>>>) {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap();
        let log = Arc::new(Mutex::new(Vec::new()));
        let asked = Arc::clone(&log);
        tokio::spawn(async move {
            while let Ok((mut stream, _)) = listener.accept().await {
                let mut buffer = vec![0u8; 4096];
                let read = stream.read(&mut buffer).await.unwrap_or(0);
                let request = String::from_utf8_lossy(&buffer[..read]).to_string();
                let path = request.split_whitespace().nth(1).unwrap_or("/").to_owned();
                asked.lock().unwrap().push(path.clone());
                let response = match path.as_str() {
                    "/page" => format!("HTTP/1.1 200 OK\r\ncontent-type: text/html\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{PAGE}", PAGE.len()),
                    "/away" => "HTTP/1.1 302 Found\r\nlocation: http://example.invalid/landing\r\ncontent-length: 0\r\nconnection: close\r\n\r\n".to_owned(),
                    "/moved" => "HTTP/1.1 301 Moved\r\nlocation: /page\r\ncontent-length: 0\r\nconnection: close\r\n\r\n".to_owned(),
                    "/big" => {
                        let body = "x".repeat(MAX_BODY_BYTES + 10);
                        format!("HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}", body.len())
                    }
                    _ => "HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\nconnection: close\r\n\r\n".to_owned(),
                };
                let _ = stream.write_all(response.as_bytes()).await;
            }
        });
        (format!("http://{address}"), log)
    }

    fn input(url: String) -> WebFetchInput {
        WebFetchInput { url, start: None, max_length: None }
    }

    #[tokio::test]
    async fn converts_pages_follows_same_host_and_reports_other_hosts() {
        let (base, _) = serve().await;
        let dir = tempfile::tempdir().unwrap();
        let ctx = ToolContext::standalone(Arc::new(Workspace::new(dir.path())));
        let tool = WebFetch::default();
        let page = tool.run(input(format!("{base}/page")), &ctx).await.text_content();
        assert!(page.contains("# Docs") && page.contains("Install") && page.contains("Run `make`"), "{page}");
        assert!(page.contains(&format!("[the guide]({base}/guide/next)")), "links are absolute: {page}");
        assert!(!page.contains("track()") && !page.contains("Home | About") && !page.contains("(c) site"), "{page}");
        let moved = tool.run(input(format!("{base}/moved")), &ctx).await.text_content();
        assert!(moved.contains("Install"), "same-host redirects are followed: {moved}");
        let away = tool.run(input(format!("{base}/away")), &ctx).await;
        assert!(
            !away.is_error && away.text_content().contains("redirects to another host: http://example.invalid/landing"),
            "{}",
            away.text_content()
        );
        assert!(tool.run(input(format!("{base}/big")), &ctx).await.text_content().contains("larger than 5 MB"));
        assert!(tool.run(input(format!("{base}/missing")), &ctx).await.text_content().contains("404"));
        assert!(tool.run(input("file:///etc/passwd".into()), &ctx).await.is_error);
    }

    #[tokio::test]
    async fn a_page_is_fetched_once_in_fifteen_minutes_and_a_failure_is_not_kept() {
        let (base, log) = serve().await;
        let asked = |path: &str| log.lock().unwrap().iter().filter(|asked| *asked == path).count();
        let dir = tempfile::tempdir().unwrap();
        let ctx = ToolContext::standalone(Arc::new(Workspace::new(dir.path())));
        let tool = WebFetch::default();
        let url = format!("{base}/page");
        // Ages the cached page by `minutes`, as if that much time had passed since the fetch.
        let age = |minutes: u64| {
            let mut cache = tool.cache.lock().unwrap();
            let (at, _) = cache.get_mut(&url).unwrap();
            *at = at.checked_sub(Duration::from_secs(minutes * 60)).unwrap();
        };
        let first = tool.run(input(url.clone()), &ctx).await.text_content();
        assert!(first.contains("Install"), "{first}");
        let part = WebFetchInput { url: url.clone(), start: Some(0), max_length: Some(9) };
        let again = tool.run(part, &ctx).await.text_content();
        assert!(again.contains("Characters 0-9 of"), "another part of the same page: {again}");
        age(14);
        assert!(tool.run(input(url.clone()), &ctx).await.text_content().contains("Install"));
        assert_eq!(asked("/page"), 1, "fetched again within 15 minutes: {:?}", log.lock().unwrap());
        age(1);
        assert!(tool.run(input(url.clone()), &ctx).await.text_content().contains("Install"));
        assert_eq!(asked("/page"), 2, "15 minutes on, the page is fetched afresh");
        for _ in 0..2 {
            assert!(tool.run(input(format!("{base}/missing")), &ctx).await.is_error);
        }
        assert_eq!(asked("/missing"), 2, "a failed fetch is tried again");
    }

    #[test]
    fn pages_through_long_content() {
        let page = "abcdefghij";
        assert_eq!(window("u", page, 0, 4), "URL: u\nCharacters 0-4 of 10. Continue with start=4.\n\nabcd");
        assert_eq!(window("u", page, 8, 4), "URL: u\nCharacters 8-10 of 10.\n\nij");
        assert_eq!(window("u", page, 0, 100), "URL: u\n\nabcdefghij");
    }
}
