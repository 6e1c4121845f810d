//! The older HTTP + server-sent events MCP transport, which rmcp no longer has: a `GET` opens
//! the event stream, whose first `endpoint` event names where to `POST` messages; the server's
//! messages arrive as `message` events on the stream. The stream is read with the same SSE
//! decoder the model providers use.
//!
//! With a login, every request carries the token the login holds at that moment, so a login
//! (or a wider scope) that arrives while connected is used from the next request on; a `POST`
//! answered 401 or 403 fails with rmcp's own challenge errors, so a call refused for want of a
//! wider scope steps up exactly as over streamable HTTP.

use std::collections::BTreeMap;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use futures::StreamExt;
use futures::future::BoxFuture;
use rmcp::service::{RoleClient, RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::auth::{AuthorizationManager, WWWAuthenticateParams};
use rmcp::transport::sink_stream::SinkStreamTransport;
use rmcp::transport::streamable_http_client::{AuthRequiredError, InsufficientScopeError};
use tokio::sync::{mpsc, oneshot};

use super::connection::ConnectError;
use crate::llm::sse::SseDecoder;

/// How long the server may take to name its message endpoint.
const ENDPOINT_WAIT: Duration = Duration::from_secs(10);

/// A failed send on the SSE transport. The challenges are rmcp's own errors, found where rmcp
/// looks for them (the error's sources), so a refused call asks for the login it needs.
#[derive(Debug, thiserror::Error)]
pub enum SseError {
    #[error("{0}")]
    Failed(String),
    #[error("the server asks for a login")]
    AuthRequired(#[source] AuthRequiredError),
    #[error("the server asks for a wider scope")]
    InsufficientScope(#[source] InsufficientScopeError),
}

pub type Incoming = Pin<Box<dyn futures::Stream<Item = RxJsonRpcMessage<RoleClient>> + Send>>;

/// Where and how requests go: the HTTP client, the server's headers and, with a login, the
/// manager whose token each request carries.
struct Requests {
    client: reqwest::Client,
    headers: BTreeMap<String, String>,
    login: Option<AuthorizationManager>,
}

impl Requests {
    async fn build(&self, request: reqwest::RequestBuilder) -> reqwest::RequestBuilder {
        let mut request = request;
        for (key, value) in &self.headers {
            request = request.header(key, value);
        }
        if let Some(login) = &self.login {
            match login.get_access_token().await {
                Ok(token) => request = request.bearer_auth(token),
                // No login yet: the server's 401 says what it wants.
                Err(error) => tracing::debug!(%error, "no MCP login token for this request"),
            }
        }
        request
    }

    async fn post(&self, endpoint: &str, message: &TxJsonRpcMessage<RoleClient>) -> Result<(), SseError> {
        let response = self
            .build(self.client.post(endpoint).json(message))
            .await
            .send()
            .await
            .map_err(|error| SseError::Failed(format!("{endpoint}: {error}")))?;
        if let Some(refused) = refusal(&response, endpoint) {
            return Err(refused);
        }
        response.error_for_status().map(drop).map_err(|error| SseError::Failed(format!("{endpoint}: {error}")))
    }
}

/// A 401 or 403 as rmcp's challenge error; `None` for any other answer.
fn refusal(response: &reqwest::Response, url: &str) -> Option<SseError> {
    let challenge = || {
        response
            .headers()
            .get(reqwest::header::WWW_AUTHENTICATE)
            .and_then(|value| value.to_str().ok())
            .unwrap_or("Bearer")
            .to_owned()
    };
    match response.status() {
        reqwest::StatusCode::UNAUTHORIZED => Some(SseError::AuthRequired(AuthRequiredError::new(challenge()))),
        reqwest::StatusCode::FORBIDDEN => {
            let challenge = challenge();
            let params = reqwest::Url::parse(url).ok().map(|base| WWWAuthenticateParams::parse(&challenge, &base));
            params
                .filter(WWWAuthenticateParams::is_insufficient_scope)
                .map(|params| SseError::InsufficientScope(InsufficientScopeError::new(challenge, params.scope)))
        }
        _ => None,
    }
}

/// The sending half: one `POST` at a time, each carrying the token of the moment. A failed
/// `POST` fails that message only; the next one goes out as usual.
pub struct Poster {
    requests: Arc<Requests>,
    endpoint: Arc<str>,
    sending: Option<BoxFuture<'static, Result<(), SseError>>>,
}

impl futures::Sink<TxJsonRpcMessage<RoleClient>> for Poster {
    type Error = SseError;

    fn poll_ready(self: Pin<&mut Self>, context: &mut Context<'_>) -> Poll<Result<(), SseError>> {
        self.poll_flush(context)
    }

    fn start_send(mut self: Pin<&mut Self>, message: TxJsonRpcMessage<RoleClient>) -> Result<(), SseError> {
        let (requests, endpoint) = (Arc::clone(&self.requests), Arc::clone(&self.endpoint));
        self.sending = Some(Box::pin(async move { requests.post(&endpoint, &message).await }));
        Ok(())
    }

    fn poll_flush(mut self: Pin<&mut Self>, context: &mut Context<'_>) -> Poll<Result<(), SseError>> {
        let Some(sending) = self.sending.as_mut() else { return Poll::Ready(Ok(())) };
        let sent = futures::ready!(sending.as_mut().poll(context));
        self.sending = None;
        Poll::Ready(sent)
    }

    fn poll_close(self: Pin<&mut Self>, context: &mut Context<'_>) -> Poll<Result<(), SseError>> {
        self.poll_flush(context)
    }
}

/// Opens the event stream and waits for the endpoint; the transport then sends and receives.
/// `login`, when the server has one, gives every request its token.
pub async fn connect(
    url: &str,
    headers: &BTreeMap<String, String>,
    login: Option<AuthorizationManager>,
) -> Result<SinkStreamTransport<Poster, Incoming>, ConnectError> {
    let client = crate::http::client_builder().build().map_err(|error| ConnectError::Failed(error.to_string()))?;
    let requests = Arc::new(Requests { client, headers: headers.clone(), login });
    let response = requests
        .build(requests.client.get(url).header(reqwest::header::ACCEPT, "text/event-stream"))
        .await
        .send()
        .await
        .map_err(|error| format!("{url}: {error}"))?;
    match refusal(&response, url) {
        Some(SseError::AuthRequired(refused)) => {
            return Err(ConnectError::NeedsLogin { challenge: refused.www_authenticate_header });
        }
        Some(SseError::InsufficientScope(refused)) => {
            return Err(ConnectError::NeedsLogin { challenge: refused.www_authenticate_header });
        }
        _ => {}
    }
    let response = response.error_for_status().map_err(|error| format!("{url}: {error}"))?;
    let base = response.url().clone();
    let (endpoint_tx, endpoint_rx) = oneshot::channel::<String>();
    let (messages_tx, mut messages_rx) = mpsc::channel::<RxJsonRpcMessage<RoleClient>>(64);
    // The reader ends with the stream, or when the transport (the receiver) is gone.
    tokio::spawn(async move {
        let mut body = response.bytes_stream();
        let mut decoder = SseDecoder::default();
        let mut endpoint_tx = Some(endpoint_tx);
        while let Some(Ok(bytes)) = body.next().await {
            let mut received = Vec::new();
            let decoded = decoder.feed(&bytes, &mut |frame| match frame.event {
                Some("endpoint") => {
                    if let (Some(sender), Ok(endpoint)) = (endpoint_tx.take(), base.join(frame.data.trim())) {
                        let _ = sender.send(endpoint.to_string());
                    }
                }
                Some("message") | None => match serde_json::from_str::<RxJsonRpcMessage<RoleClient>>(&frame.data) {
                    Ok(message) => received.push(message),
                    Err(error) => tracing::warn!(%error, "an SSE message from an MCP server was not JSON-RPC"),
                },
                Some(_) => {}
            });
            if decoded.is_err() {
                break;
            }
            for message in received {
                if messages_tx.send(message).await.is_err() {
                    return;
                }
            }
        }
    });
    let endpoint = tokio::time::timeout(ENDPOINT_WAIT, endpoint_rx)
        .await
        .map_err(|_| {
            ConnectError::Failed(format!(
                "{url}: the server named no message endpoint within {} s",
                ENDPOINT_WAIT.as_secs()
            ))
        })?
        .map_err(|_| {
            ConnectError::Failed(format!("{url}: the event stream ended before it named a message endpoint"))
        })?;
    let outgoing = Poster { requests, endpoint: endpoint.into(), sending: None };
    let incoming = futures::stream::poll_fn(move |context| messages_rx.poll_recv(context));
    Ok(SinkStreamTransport::new(outgoing, Box::pin(incoming) as Incoming))
}

#[cfg(test)]
mod tests {
    use rmcp::ServiceExt;
    use rmcp::model::CallToolRequestParams;
    use serde_json::{Value, json};
    use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
    use tokio::net::TcpListener;

    use super::*;
    use crate::mcp::auth::tokens::TokenFile;

    const STEP_UP: &str = r#"Bearer error="insufficient_scope", scope="mcp:read mcp:write""#;

    /// The test server's authorization server: its metadata, and a token endpoint that grants
    /// `wide`; `None` for a request that is not for it.
    fn authorization_server(head: &str, address: std::net::SocketAddr) -> Option<String> {
        let base = format!("http://{address}");
        let body = if head.starts_with("GET /metadata") {
            json!({"authorization_endpoint": format!("{base}/authorize"), "token_endpoint": format!("{base}/token"), "response_types_supported": ["code"], "code_challenge_methods_supported": ["S256"]})
        } else if head.starts_with("POST /token") {
            json!({"access_token": "wide", "token_type": "Bearer"})
        } else {
            return None;
        };
        let body = body.to_string();
        Some(format!(
            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
            body.len()
        ))
    }

    /// A small MCP server on the SSE transport: `tools/call` wants the token `wide` and answers
    /// any other with 403 `insufficient_scope`; a stream opened without a token gets 401. It is
    /// its own authorization server too: metadata at `/metadata`, and `/token` grants `wide`.
    /// Returns its URL and the method and `Authorization` of every message `POST`.
    async fn server() -> (String, Arc<std::sync::Mutex<Vec<String>>>) {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap();
        let url = format!("http://{address}/sse");
        let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
        let (events, _) = tokio::sync::broadcast::channel::<String>(16);
        let log = Arc::clone(&seen);
        tokio::spawn(async move {
            loop {
                let (socket, _) = listener.accept().await.unwrap();
                let (events, log) = (events.clone(), Arc::clone(&log));
                tokio::spawn(async move {
                    let mut reader = BufReader::new(socket);
                    let mut head = String::new();
                    let (mut length, mut authorization) = (0, String::new());
                    loop {
                        let mut line = String::new();
                        reader.read_line(&mut line).await.unwrap();
                        if line == "\r\n" {
                            break;
                        }
                        let lower = line.to_ascii_lowercase();
                        if let Some(value) = lower.strip_prefix("content-length:") {
                            length = value.trim().parse().unwrap();
                        }
                        if lower.starts_with("authorization:") {
                            authorization = line["authorization:".len()..].trim().to_owned();
                        }
                        head.push_str(&line);
                    }
                    let mut body = vec![0; length];
                    reader.read_exact(&mut body).await.unwrap();
                    let mut socket = reader.into_inner();
                    if let Some(answer) = authorization_server(&head, address) {
                        socket.write_all(answer.as_bytes()).await.unwrap();
                        return;
                    }
                    if head.starts_with("GET") {
                        if authorization.is_empty() {
                            socket.write_all(b"HTTP/1.1 401 Unauthorized\r\nwww-authenticate: Bearer realm=\"mcp\"\r\ncontent-length: 0\r\n\r\n").await.unwrap();
                            return;
                        }
                        let mut stream = events.subscribe();
                        socket.write_all(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\r\nevent: endpoint\ndata: /messages?session=1\n\n").await.unwrap();
                        while let Ok(message) = stream.recv().await {
                            socket.write_all(format!("event: message\ndata: {message}\n\n").as_bytes()).await.unwrap();
                        }
                        return;
                    }
                    let message: Value = serde_json::from_slice(&body).unwrap();
                    log.lock()
                        .unwrap()
                        .push(format!("{} {authorization}", message["method"].as_str().unwrap_or("answer")));
                    let result = match message["method"].as_str() {
                        Some("initialize") => Some(
                            json!({"protocolVersion": message["params"]["protocolVersion"], "capabilities": {"tools": {}}, "serverInfo": {"name": "scoped", "version": "1"}}),
                        ),
                        Some("tools/call") if authorization != "Bearer wide" => {
                            let refusal = format!(
                                "HTTP/1.1 403 Forbidden\r\nwww-authenticate: {STEP_UP}\r\ncontent-length: 0\r\n\r\n"
                            );
                            socket.write_all(refusal.as_bytes()).await.unwrap();
                            return;
                        }
                        Some("tools/call") => Some(json!({"content": [{"type": "text", "text": "written"}]})),
                        _ => None,
                    };
                    socket.write_all(b"HTTP/1.1 202 Accepted\r\ncontent-length: 0\r\n\r\n").await.unwrap();
                    if let Some(result) = result {
                        let _ =
                            events.send(json!({"jsonrpc": "2.0", "id": message["id"], "result": result}).to_string());
                    }
                });
            }
        });
        (url, seen)
    }

    fn save_token(dir: &std::path::Path, url: &str, token: &str) {
        let tokens = TokenFile::new(dir, "scoped", url);
        let saved = json!({"client_id": "larik", "token_response": {"access_token": token, "token_type": "bearer"}, "granted_scopes": []});
        crate::workspace::write_private_file(tokens.path(), saved.to_string().as_bytes()).unwrap();
    }

    #[tokio::test]
    async fn a_call_refused_for_scope_says_so_and_the_next_request_carries_the_new_token() {
        let (url, seen) = server().await;
        let dir = tempfile::tempdir().unwrap();
        save_token(dir.path(), &url, "narrow");
        let tokens = TokenFile::new(dir.path(), "scoped", &url);
        let login = crate::mcp::auth::manager(&url, &tokens).await.unwrap();
        let transport = connect(&url, &BTreeMap::new(), Some(login)).await.unwrap();
        let client = ().serve(transport).await.unwrap();

        let refused = client.call_tool(CallToolRequestParams::new("write")).await.unwrap_err();
        assert_eq!(
            refused.auth_challenge(),
            Some(STEP_UP),
            "the 403's challenge, where the step-up looks for it: {refused}"
        );
        assert!(crate::mcp::auth::wants_wider_scope(refused.auth_challenge().unwrap(), &url));

        // The login with the wider scope lands in the token file; the same connection uses it.
        save_token(dir.path(), &url, "wide");
        tokens.reload();
        let answer = client.call_tool(CallToolRequestParams::new("write")).await.unwrap();
        assert_eq!(answer.content[0].as_text().unwrap().text, "written");
        let seen = seen.lock().unwrap().clone();
        assert_eq!(seen.first().map(String::as_str), Some("initialize Bearer narrow"));
        assert_eq!(seen.last().map(String::as_str), Some("tools/call Bearer wide"), "{seen:?}");
    }

    /// The user at the authorization page, who logs in at once: the browser comes back to the
    /// redirect with a code.
    #[derive(Default)]
    struct LoggingIn {
        opened: std::sync::Mutex<Vec<String>>,
    }

    #[async_trait::async_trait]
    impl crate::tools::LoginBrowser for LoggingIn {
        async fn open(&self, server: &str, url: &str) -> Result<(), crate::services::EditorError> {
            self.opened.lock().unwrap().push(server.to_owned());
            let page = reqwest::Url::parse(url).unwrap();
            let query: std::collections::HashMap<_, _> = page.query_pairs().into_owned().collect();
            let back = format!("{}?code=granted&state={}", query["redirect_uri"], query["state"]);
            // As a browser does, after the page was shown: the listener answers once this returned.
            tokio::spawn(async move { reqwest::get(back).await.unwrap() });
            Ok(())
        }
    }

    /// The seed has the SSE transport authorize on a 401 or 403 and resend the request itself;
    /// Larik's transport hands the refusal back, and the tool call, where the user is, sends them
    /// to log in with what the challenge asks and then goes once more.
    #[tokio::test]
    async fn a_refused_call_is_sent_once_more_after_the_user_logs_in() {
        let (url, seen) = server().await;
        let dir = tempfile::tempdir().unwrap();
        save_token(dir.path(), &url, "narrow");
        let metadata = url.replace("/sse", "/metadata");
        let config = crate::mcp::McpServerConfig {
            name: "scoped".into(),
            transport: crate::mcp::Transport::Sse { url: url.clone(), headers: BTreeMap::new() },
            scope: crate::mcp::ServerScope::User,
            source: "settings.json".into(),
            oauth: crate::mcp::config::OAuthSettings {
                client_id: Some("larik".into()),
                auth_server_metadata_url: Some(metadata),
                ..Default::default()
            },
        };
        let browser = Arc::new(LoggingIn::default());
        let server =
            crate::mcp::connection::Server::new(config, Some(dir.path()), Some(Arc::clone(&browser) as Arc<_>), None);
        let login = crate::mcp::auth::manager(&url, server.tokens.as_ref().unwrap()).await.unwrap();
        let client = ().serve(connect(&url, &BTreeMap::new(), Some(login)).await.unwrap()).await.unwrap();
        server.link.set(Some(client.peer().clone()));

        let cancel = tokio_util::sync::CancellationToken::new();
        let answer = server.link.call("write", serde_json::Map::new(), &cancel, None).await.unwrap();
        assert_eq!(answer["content"][0]["text"], "written", "{answer}");
        assert_eq!(*browser.opened.lock().unwrap(), ["scoped"], "the user logged in once");
        let calls: Vec<String> =
            seen.lock().unwrap().iter().filter(|post| post.starts_with("tools/call")).cloned().collect();
        assert_eq!(calls, ["tools/call Bearer narrow", "tools/call Bearer wide"], "refused, then sent once more");
    }

    #[tokio::test]
    async fn a_stream_that_wants_a_login_says_so() {
        let (url, _) = server().await;
        match connect(&url, &BTreeMap::new(), None).await {
            Err(ConnectError::NeedsLogin { challenge }) => assert_eq!(challenge, "Bearer realm=\"mcp\""),
            other => panic!("{:?}", other.err()),
        }
    }
}
