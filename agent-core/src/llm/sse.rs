//! The HTTP + server-sent-events plumbing both wire formats share: POST a JSON body, classify an
//! error status, then split the body into SSE frames and turn them into [`StreamEvent`]s through
//! a format-specific parser. Frames are read in place from the bytes received: a fast stream of
//! small deltas costs no allocation per frame before the format's parser sees it.

use std::borrow::Cow;
use std::collections::VecDeque;

use futures::StreamExt;
use serde_json::Value;

use super::{EventStream, ProviderError, StreamEvent, classify_http_error, network_error, retry_after_header};

/// One server-sent event: its name (`event:`) and its data lines joined with `\n`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct SseFrame<'a> {
    pub event: Option<&'a str>,
    pub data: Cow<'a, str>,
}

impl<'a> SseFrame<'a> {
    #[cfg(test)]
    pub fn data(data: &'a str) -> Self {
        Self { event: None, data: Cow::Borrowed(data) }
    }

    #[cfg(test)]
    pub fn named(event: &'a str, data: &'a str) -> Self {
        Self { event: Some(event), data: Cow::Borrowed(data) }
    }
}

/// Turns one wire format's SSE frames into stream events.
pub(crate) trait FrameParser: Send + 'static {
    /// Handles one frame; may yield any number of events.
    fn frame(&mut self, frame: &SseFrame<'_>) -> Result<Vec<StreamEvent>, ProviderError>;
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
    Ok(parse_body(response.bytes_stream(), parser))
}

/// Splits an SSE byte stream into frames. Bytes are kept until their event is complete (a blank
/// line ends it); lines may end with `\n`, `\r\n` or `\r`, as the format allows.
#[derive(Default)]
pub(crate) struct SseDecoder {
    buffer: Vec<u8>,
}

impl SseDecoder {
    /// Adds received bytes and hands every event they complete to `on_frame`, in order.
    pub fn feed(&mut self, bytes: &[u8], on_frame: &mut impl FnMut(&SseFrame<'_>)) -> Result<(), ProviderError> {
        self.buffer.extend_from_slice(bytes);
        let mut read = 0;
        while let Some(end) = self.complete_event(read, on_frame)? {
            read = end;
        }
        self.buffer.drain(..read);
        Ok(())
    }

    /// Ends the stream: an event the body left unterminated still counts.
    pub fn finish(&mut self, on_frame: &mut impl FnMut(&SseFrame<'_>)) -> Result<(), ProviderError> {
        self.feed(b"\n\n", on_frame)
    }

    /// Parses the event starting at `start`; returns where the next one starts, or `None` when
    /// the buffer does not hold all of it yet.
    fn complete_event(&self, start: usize, on_frame: &mut impl FnMut(&SseFrame<'_>)) -> Result<Option<usize>, ProviderError> {
        let mut position = start;
        let mut event = None;
        let mut data: Option<Cow<'_, str>> = None;
        loop {
            let Some((line, next)) = next_line(&self.buffer, position) else { return Ok(None) };
            position = next;
            if line.is_empty() {
                if let Some(data) = data {
                    on_frame(&SseFrame { event, data });
                }
                return Ok(Some(position));
            }
            let line = std::str::from_utf8(line).map_err(|_| ProviderError::StreamBroken { message: "the stream is not UTF-8".into() })?;
            let (field, value) = match line.split_once(':') {
                Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
                None => (line, ""),
            };
            match field {
                "event" => event = Some(value),
                "data" => {
                    data = Some(match data.take() {
                        None => Cow::Borrowed(value),
                        Some(earlier) => Cow::Owned(format!("{earlier}\n{value}")),
                    });
                }
                // Comments (empty field), `id` and `retry` mean nothing to a model stream.
                _ => {}
            }
        }
    }
}

/// The line starting at `start` (without its ending) and where the next starts; `None` if the
/// line is not complete. A `\r` at the very end waits for a possible `\n`.
fn next_line(buffer: &[u8], start: usize) -> Option<(&[u8], usize)> {
    let rest = buffer.get(start..)?;
    let end = rest.iter().position(|byte| *byte == b'\n' || *byte == b'\r')?;
    let next = match rest[end] {
        b'\r' => match rest.get(end + 1) {
            Some(b'\n') => end + 2,
            Some(_) => end + 1,
            None => return None,
        },
        _ => end + 1,
    };
    Some((&rest[..end], start + next))
}

struct ParseState<S, P> {
    body: S,
    decoder: SseDecoder,
    parser: P,
    pending: VecDeque<Result<StreamEvent, ProviderError>>,
    finished: bool,
}

impl<S, P: FrameParser> ParseState<S, P> {
    /// Parses what `bytes` completes (or, with `None`, what the body left) into `pending`.
    fn take(&mut self, bytes: Option<&[u8]>) {
        let Self { decoder, parser, pending, finished, .. } = self;
        let mut on_frame = |frame: &SseFrame<'_>| {
            if *finished {
                return;
            }
            match parser.frame(frame) {
                Ok(events) => pending.extend(events.into_iter().map(Ok)),
                Err(error) => {
                    *finished = true;
                    pending.push_back(Err(error));
                }
            }
        };
        let decoded = match bytes {
            Some(bytes) => decoder.feed(bytes, &mut on_frame),
            None => decoder.finish(&mut on_frame),
        };
        if let Err(error) = decoded {
            *finished = true;
            pending.push_back(Err(error));
        }
    }
}

fn parse_body<S, B, E, P>(body: S, parser: P) -> EventStream
where
    S: futures::Stream<Item = Result<B, E>> + Send + Unpin + 'static,
    B: AsRef<[u8]>,
    E: std::fmt::Display,
    P: FrameParser,
{
    let state = ParseState { body, decoder: SseDecoder::default(), parser, pending: VecDeque::new(), finished: false };
    futures::stream::unfold(state, |mut state| async move {
        loop {
            if let Some(item) = state.pending.pop_front() {
                return Some((item, state));
            }
            if state.finished {
                return None;
            }
            match state.body.next().await {
                Some(Ok(bytes)) => state.take(Some(bytes.as_ref())),
                Some(Err(error)) => {
                    state.finished = true;
                    state.pending.push_back(Err(ProviderError::StreamBroken { message: error.to_string() }));
                }
                None => {
                    state.take(None);
                    if !state.finished {
                        state.finished = true;
                        match state.parser.finish() {
                            Ok(events) => state.pending.extend(events.into_iter().map(Ok)),
                            Err(error) => state.pending.push_back(Err(error)),
                        }
                    }
                }
            }
        }
    })
    .boxed()
}

/// Parses a frame's data as JSON, naming the format on failure.
pub(crate) fn frame_json(frame: &SseFrame<'_>) -> Result<Option<Value>, ProviderError> {
    if frame.data.trim().is_empty() {
        return Ok(None);
    }
    serde_json::from_str(&frame.data)
        .map(Some)
        .map_err(|error| ProviderError::StreamBroken { message: format!("unreadable stream frame: {error}") })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frames(pieces: &[&[u8]]) -> Vec<(Option<String>, String)> {
        let mut decoder = SseDecoder::default();
        let mut seen = Vec::new();
        let mut collect = |frame: &SseFrame<'_>| seen.push((frame.event.map(str::to_owned), frame.data.to_string()));
        for piece in pieces {
            decoder.feed(piece, &mut collect).unwrap();
        }
        decoder.finish(&mut collect).unwrap();
        seen
    }

    #[test]
    fn events_split_anywhere_and_any_line_ending_come_out_whole() {
        let stream: &[u8] = b"event: a\ndata: {\"x\":1}\n\n: a comment\r\nevent: b\r\ndata: one\r\ndata: two\r\nid: 7\r\n\r\nevent:c\rdata:three\r\rdata: tail";
        let whole = frames(&[stream]);
        let expected = vec![
            (Some("a".to_owned()), "{\"x\":1}".to_owned()),
            (Some("b".to_owned()), "one\ntwo".to_owned()),
            (Some("c".to_owned()), "three".to_owned()),
            (None, "tail".to_owned()),
        ];
        assert_eq!(whole, expected);
        // Byte by byte, including between a `\r` and its `\n`.
        let pieces: Vec<&[u8]> = stream.chunks(1).collect();
        assert_eq!(frames(&pieces), expected);
    }

    #[test]
    fn events_without_data_are_not_dispatched_and_bad_bytes_are_an_error() {
        assert_eq!(frames(&[b"event: ping\n\n: keep-alive\n\n"]), Vec::<(Option<String>, String)>::new());
        let mut decoder = SseDecoder::default();
        assert!(decoder.feed(b"data: \xff\n\n", &mut |_| {}).is_err());
    }
}
