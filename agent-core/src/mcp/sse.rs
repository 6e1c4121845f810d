//! The older HTTP + server-sent events MCP transport, which rmcp no longer has: a `GET` opens
//! the event stream, whose first `endpoint` event names where to `POST` messages; the server's
//! messages arrive as `message` events on the stream. The stream is read with the same SSE
//! decoder the model providers use.

use std::collections::BTreeMap;
use std::time::Duration;

use futures::StreamExt;
use rmcp::service::{RoleClient, RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::sink_stream::SinkStreamTransport;
use tokio::sync::{mpsc, oneshot};

use super::connection::ConnectError;
use crate::llm::sse::SseDecoder;

/// How long the server may take to name its message endpoint.
const ENDPOINT_WAIT: Duration = Duration::from_secs(10);

/// A failed send on the SSE transport.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct SseError(String);

type Outgoing = std::pin::Pin<Box<dyn futures::Sink<TxJsonRpcMessage<RoleClient>, Error = SseError> + Send>>;
type Incoming = std::pin::Pin<Box<dyn futures::Stream<Item = RxJsonRpcMessage<RoleClient>> + Send>>;

/// Opens the event stream and waits for the endpoint; the transport then sends and receives.
pub async fn connect(url: &str, headers: &BTreeMap<String, String>) -> Result<SinkStreamTransport<Outgoing, Incoming>, ConnectError> {
    let client = crate::http::client_builder().build().map_err(|error| ConnectError::Failed(error.to_string()))?;
    let with_headers = |mut request: reqwest::RequestBuilder| {
        for (key, value) in headers {
            request = request.header(key, value);
        }
        request
    };
    let response = with_headers(client.get(url).header(reqwest::header::ACCEPT, "text/event-stream")).send().await.map_err(|error| format!("{url}: {error}"))?;
    if response.status() == reqwest::StatusCode::UNAUTHORIZED {
        let challenge = response.headers().get(reqwest::header::WWW_AUTHENTICATE).and_then(|value| value.to_str().ok()).unwrap_or("Bearer");
        return Err(ConnectError::NeedsLogin { challenge: challenge.to_owned() });
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
        .map_err(|_| ConnectError::Failed(format!("{url}: the server named no message endpoint within {} s", ENDPOINT_WAIT.as_secs())))?
        .map_err(|_| ConnectError::Failed(format!("{url}: the event stream ended before it named a message endpoint")))?;
    let headers = headers.clone();
    let outgoing = futures::sink::unfold((client, endpoint, headers), |(client, endpoint, headers), message: TxJsonRpcMessage<RoleClient>| async move {
        let mut request = client.post(&endpoint).json(&message);
        for (key, value) in &headers {
            request = request.header(key, value);
        }
        request.send().await.and_then(reqwest::Response::error_for_status).map_err(|error| SseError(format!("{endpoint}: {error}")))?;
        Ok::<_, SseError>((client, endpoint, headers))
    });
    let incoming = futures::stream::poll_fn(move |context| messages_rx.poll_recv(context));
    Ok(SinkStreamTransport::new(Box::pin(outgoing) as Outgoing, Box::pin(incoming) as Incoming))
}
