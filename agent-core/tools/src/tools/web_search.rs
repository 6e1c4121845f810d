//! `web_search`: a web search through Brave, Tavily or SearXNG, whichever settings or the
//! environment configure. Without one, the error says what to set.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use super::{CallDescription, CallSubject, ClaudeCodeAlias, HookResponse, Tool, ToolContext, ToolOutput};
use crate::event::ToolKind;
use larik_settings::SearchBackend;

const DEFAULT_RESULTS: usize = 8;

#[derive(Deserialize, JsonSchema)]
pub struct WebSearchInput {
    pub query: String,
    /// How many results (default 8, at most 20).
    #[serde(default)]
    pub max_results: Option<usize>,
}

pub struct WebSearch {
    pub backend: Option<SearchBackend>,
}

struct Hit {
    title: String,
    url: String,
    snippet: String,
}

impl Tool for WebSearch {
    type Input = WebSearchInput;
    const NAME: &'static str = "web_search";
    const CLAUDE_CODE: Option<&'static ClaudeCodeAlias> =
        Some(&ClaudeCodeAlias { name: "WebSearch", fields: &[], response: HookResponse::Output });
    const DESCRIPTION: &'static str =
        "Search the web. Returns titles, URLs and snippets; use web_fetch to read a result.";
    const KIND: ToolKind = ToolKind::Fetch;

    fn read_only(&self) -> bool {
        false
    }

    fn concurrency_safe(&self) -> bool {
        true
    }

    fn describe(&self, input: &WebSearchInput, _ctx: &ToolContext) -> CallDescription {
        CallDescription {
            subject: CallSubject::Search(input.query.clone()),
            ..CallDescription::titled(format!("Search the web for \"{}\"", input.query))
        }
    }

    async fn run(&self, input: WebSearchInput, ctx: &ToolContext) -> ToolOutput {
        let Some(backend) = &self.backend else {
            return ToolOutput::error(
                "web search is not configured: set BRAVE_API_KEY or TAVILY_API_KEY, or SEARXNG_URL for a SearXNG instance, \
                 or \"webSearch\": {\"provider\": ..., \"url\": ...} in settings",
            );
        };
        let count = input.max_results.unwrap_or(DEFAULT_RESULTS).clamp(1, 20);
        let searched = tokio::select! {
            searched = search(backend, &input.query, count) => searched,
            () = ctx.cancel.cancelled() => return ToolOutput::error("the search was cancelled"),
        };
        match searched {
            Ok(hits) if hits.is_empty() => ToolOutput::text(format!("No results for \"{}\".", input.query)),
            Ok(hits) => ToolOutput::text(
                hits.iter()
                    .take(count)
                    .enumerate()
                    .map(|(index, hit)| format!("{}. {}\n   {}\n   {}\n", index + 1, hit.title, hit.url, hit.snippet))
                    .collect::<String>(),
            ),
            Err(message) => ToolOutput::error(message),
        }
    }
}

async fn search(backend: &SearchBackend, query: &str, count: usize) -> Result<Vec<Hit>, String> {
    let client = crate::http::client_builder()
        .timeout(std::time::Duration::from_secs(20))
        .build()
        .map_err(|error| error.to_string())?;
    let request = match backend {
        SearchBackend::Brave { api_key, base_url } => client
            .get(format!("{}/res/v1/web/search", base_url.trim_end_matches('/')))
            .query(&[("q", query), ("count", &count.to_string())])
            .header("X-Subscription-Token", api_key)
            .header("accept", "application/json"),
        SearchBackend::Tavily { api_key, base_url } => client
            .post(format!("{}/search", base_url.trim_end_matches('/')))
            .json(&json!({"api_key": api_key, "query": query, "max_results": count})),
        SearchBackend::Searxng { base_url } => {
            client.get(format!("{}/search", base_url.trim_end_matches('/'))).query(&[("q", query), ("format", "json")])
        }
    };
    let response = request.send().await.map_err(|error| format!("the search service could not be reached: {error}"))?;
    let status = response.status();
    if !status.is_success() {
        return Err(format!("the search service answered HTTP {status}"));
    }
    let body: Value = response.json().await.map_err(|error| format!("unreadable search results: {error}"))?;
    let (list, title, url, snippet) = match backend {
        SearchBackend::Brave { .. } => ("/web/results", "title", "url", "description"),
        SearchBackend::Tavily { .. } => ("/results", "title", "url", "content"),
        SearchBackend::Searxng { .. } => ("/results", "title", "url", "content"),
    };
    let text = |item: &Value, key: &str| item.get(key).and_then(Value::as_str).unwrap_or_default().to_owned();
    Ok(body
        .pointer(list)
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|item| Hit { title: text(item, title), url: text(item, url), snippet: text(item, snippet) })
        .collect())
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    use super::*;
    use crate::workspace::Workspace;

    /// Serves one JSON body for every request and hands back each request's head.
    async fn service(body: Value) -> (String, tokio::sync::mpsc::Receiver<String>) {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap();
        let (heads, received) = tokio::sync::mpsc::channel(8);
        tokio::spawn(async move {
            while let Ok((mut stream, _)) = listener.accept().await {
                let mut buffer = vec![0u8; 8192];
                let read = stream.read(&mut buffer).await.unwrap_or(0);
                let _ = heads.send(String::from_utf8_lossy(&buffer[..read]).to_string()).await;
                let text = body.to_string();
                let response = format!(
                    "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{text}",
                    text.len()
                );
                let _ = stream.write_all(response.as_bytes()).await;
            }
        });
        (format!("http://{address}"), received)
    }

    fn ctx() -> (tempfile::TempDir, ToolContext) {
        let dir = tempfile::tempdir().unwrap();
        let ctx = ToolContext::standalone(Arc::new(Workspace::new(dir.path())));
        (dir, ctx)
    }

    fn query() -> WebSearchInput {
        WebSearchInput { query: "rust atomics".into(), max_results: Some(2) }
    }

    #[tokio::test]
    async fn each_backend_speaks_its_format() {
        let (_dir, ctx) = ctx();
        let (url, mut heads) = service(json!({"web": {"results": [{"title": "Atomics", "url": "https://a.example/1", "description": "About atomics"}]}})).await;
        let brave = WebSearch { backend: Some(SearchBackend::Brave { api_key: "k1".into(), base_url: url }) };
        let text = brave.run(query(), &ctx).await.text_content();
        assert_eq!(text, "1. Atomics\n   https://a.example/1\n   About atomics\n");
        let head = heads.recv().await.unwrap();
        assert!(
            head.starts_with("GET /res/v1/web/search?q=rust+atomics&count=2")
                && head.to_lowercase().contains("x-subscription-token: k1"),
            "{head}"
        );

        let (url, mut heads) =
            service(json!({"results": [{"title": "T", "url": "https://t.example", "content": "tavily says"}]})).await;
        let tavily = WebSearch { backend: Some(SearchBackend::Tavily { api_key: "k2".into(), base_url: url }) };
        assert!(tavily.run(query(), &ctx).await.text_content().contains("tavily says"));
        let head = heads.recv().await.unwrap();
        assert!(head.starts_with("POST /search") && head.contains("\"api_key\":\"k2\""), "{head}");

        let (url, mut heads) = service(json!({"results": []})).await;
        let searx = WebSearch { backend: Some(SearchBackend::Searxng { base_url: url }) };
        assert_eq!(searx.run(query(), &ctx).await.text_content(), "No results for \"rust atomics\".");
        assert!(heads.recv().await.unwrap().starts_with("GET /search?q=rust+atomics&format=json"));
    }

    #[tokio::test]
    async fn without_a_backend_the_error_says_what_to_configure() {
        let (_dir, ctx) = ctx();
        let output = WebSearch { backend: None }.run(query(), &ctx).await;
        assert!(output.is_error && output.text_content().contains("BRAVE_API_KEY"));
    }
}
