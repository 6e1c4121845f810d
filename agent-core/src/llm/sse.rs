//! The HTTP + server-sent-events plumbing both wire formats share: POST a JSON body, classify an
//! error status, then turn SSE frames into [`StreamEvent`]s through a format-specific parser.

use std::collections::VecDeque;

use futures::StreamExt;
use serde_json::Value;
use sse_stream::{Sse, SseStream};

use super::{EventStream, ProviderError, StreamEvent, classify_http_error, network_error, retry_after_header};

/// Turns one wire format's SSE frames into stream events.
pub(crate) trait FrameParser: Send + 'static {
    /// Handles one frame; may yield any number of events.
    fn frame(&mut self, frame: Sse) -> Result<Vec<StreamEvent>, ProviderError>;
    /// Called when the body ends; errors if the model had not finished.
    fn finish(&mut self) -> Result<Vec<StreamEvent>, ProviderError>;
}

/// Sends the request and returns the parsed event stream, or the classified HTTP error.
pub(crate) async fn post_streaming(
    request: reqwest::RequestBuilder,
    body: &impl serde::Serialize,
    parser: impl FrameParser,
) -> Result<EventStream, ProviderError> {
    let response = request.json(body).send().await.map_err(network_error)?;
    let status = response.status();
    if !status.is_success() {
        let retry_after = retry_after_header(response.headers());
        let text = response.text().await.unwrap_or_default();
        return Err(classify_http_error(status.as_u16(), retry_after, &text));
    }
    let frames = SseStream::from_bytes_stream(response.bytes_stream());
    Ok(parse_frames(frames, parser))
}

struct ParseState<S, P> {
    frames: S,
    parser: P,
    pending: VecDeque<Result<StreamEvent, ProviderError>>,
    finished: bool,
}

fn parse_frames<S, E, P>(frames: S, parser: P) -> EventStream
where
    S: futures::Stream<Item = Result<Sse, E>> + Send + Unpin + 'static,
    E: std::fmt::Display,
    P: FrameParser,
{
    let state = ParseState { frames, parser, pending: VecDeque::new(), finished: false };
    futures::stream::unfold(state, |mut state| async move {
        loop {
            if let Some(item) = state.pending.pop_front() {
                return Some((item, state));
            }
            if state.finished {
                return None;
            }
            let batch = match state.frames.next().await {
                Some(Ok(frame)) => state.parser.frame(frame),
                Some(Err(error)) => {
                    state.finished = true;
                    Err(ProviderError::StreamBroken { message: error.to_string() })
                }
                None => {
                    state.finished = true;
                    state.parser.finish()
                }
            };
            match batch {
                Ok(events) => state.pending.extend(events.into_iter().map(Ok)),
                Err(error) => {
                    state.finished = true;
                    state.pending.push_back(Err(error));
                }
            }
        }
    })
    .boxed()
}

/// Parses a frame's data as JSON, naming the format on failure.
pub(crate) fn frame_json(frame: &Sse) -> Result<Option<Value>, ProviderError> {
    let Some(data) = frame.data.as_deref() else { return Ok(None) };
    if data.trim().is_empty() {
        return Ok(None);
    }
    serde_json::from_str(data)
        .map(Some)
        .map_err(|error| ProviderError::StreamBroken { message: format!("unreadable stream frame: {error}") })
}
