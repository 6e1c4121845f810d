//! The HTTP + server-sent-events plumbing both wire formats share: POST a JSON body, classify an
//! error status, then split the body into SSE frames and turn them into [`StreamEvent`]s through
//! a format-specific parser. Frames are read in place from the bytes received: a fast stream of
//! small deltas costs no allocation per frame before the format's parser sees it, and text
//! deltas that one read brings together leave as one event.

use std::borrow::Cow;
use std::collections::VecDeque;

use futures::StreamExt;

use super::{EventStream, ProviderError, StreamEvent, classify_http_error, network_error, retry_after_header};

/// One server-sent event: its name (`event:`) and its data lines joined with `\n`.
#[derive(Debug)]
pub struct SseFrame<'a> {
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
pub trait FrameParser: Send + Unpin + 'static {
    /// Handles one frame; may yield any number of events.
    fn frame(&mut self, frame: &SseFrame<'_>) -> Result<Vec<StreamEvent>, ProviderError>;
    /// Called when the body ends; errors if the model had not finished.
    fn finish(&mut self) -> Result<Vec<StreamEvent>, ProviderError>;
}

/// Sends the request and returns the parsed event stream, or the classified HTTP error.
pub async fn post_streaming(
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

/// Splits an SSE byte stream into frames. Bytes are kept only while their event is incomplete
/// (a blank line ends it); lines may end with `\n`, `\r\n` or `\r`, as the format allows.
#[derive(Default)]
pub struct SseDecoder {
    /// The start of an event the bytes so far did not complete.
    partial: Vec<u8>,
}

impl SseDecoder {
    /// Adds received bytes and hands every event they complete to `on_frame`, in order.
    pub fn feed(&mut self, bytes: &[u8], on_frame: &mut impl FnMut(&SseFrame<'_>)) -> Result<(), ProviderError> {
        if self.partial.is_empty() {
            // The usual case: whole events, read in place from the received bytes.
            let read = complete_events(bytes, on_frame)?;
            self.partial.extend_from_slice(&bytes[read..]);
        } else {
            self.partial.extend_from_slice(bytes);
            let read = complete_events(&self.partial, on_frame)?;
            self.partial.drain(..read);
        }
        Ok(())
    }

    /// Ends the stream: an event the body left unterminated still counts.
    pub fn finish(&mut self, on_frame: &mut impl FnMut(&SseFrame<'_>)) -> Result<(), ProviderError> {
        self.feed(b"\n\n", on_frame)
    }
}

/// Hands out every complete event in `bytes`; returns how many bytes they took.
fn complete_events(bytes: &[u8], on_frame: &mut impl FnMut(&SseFrame<'_>)) -> Result<usize, ProviderError> {
    let mut read = 0;
    while let Some(end) = complete_event(bytes, read, on_frame)? {
        read = end;
    }
    Ok(read)
}

/// Parses the event starting at `start`; returns where the next one starts, or `None` when
/// `bytes` do not hold all of it yet.
fn complete_event(
    bytes: &[u8],
    start: usize,
    on_frame: &mut impl FnMut(&SseFrame<'_>),
) -> Result<Option<usize>, ProviderError> {
    let mut position = start;
    let mut event = None;
    let mut data: Option<Cow<'_, str>> = None;
    loop {
        let Some((line, next)) = next_line(bytes, position) else { return Ok(None) };
        position = next;
        if line.is_empty() {
            if let Some(data) = data {
                on_frame(&SseFrame { event, data });
            }
            return Ok(Some(position));
        }
        let (field, value) = match memchr::memchr(b':', line) {
            Some(colon) => (&line[..colon], line[colon + 1..].strip_prefix(b" ").unwrap_or(&line[colon + 1..])),
            None => (line, &b""[..]),
        };
        let text = || {
            std::str::from_utf8(value)
                .map_err(|_| ProviderError::StreamBroken { message: "the stream is not UTF-8".into() })
        };
        match field {
            b"event" => event = Some(text()?),
            b"data" => {
                let value = text()?;
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

/// The line starting at `start` (without its ending) and where the next starts; `None` if the
/// line is not complete. A `\r` at the very end waits for a possible `\n`.
fn next_line(buffer: &[u8], start: usize) -> Option<(&[u8], usize)> {
    let rest = buffer.get(start..)?;
    let end = memchr::memchr2(b'\n', b'\r', rest)?;
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

/// The event stream over a response body: decodes what each read brings, parses its frames,
/// and hands the events out in order.
struct ParsedBody<S, P> {
    body: S,
    decoder: SseDecoder,
    parser: P,
    pending: VecDeque<Result<StreamEvent, ProviderError>>,
    finished: bool,
}

impl<S, P: FrameParser> ParsedBody<S, P> {
    /// Parses what `bytes` completes (or, with `None`, what the body left) into `pending`.
    fn take(&mut self, bytes: Option<&[u8]>) {
        let Self { decoder, parser, pending, finished, .. } = self;
        let mut on_frame = |frame: &SseFrame<'_>| {
            if *finished {
                return;
            }
            match parser.frame(frame) {
                Ok(events) => events.into_iter().for_each(|event| push_merged(pending, event)),
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
        // The stream ends at its first error: bytes after a bad frame say nothing more.
        if let Err(error) = decoded
            && !*finished
        {
            *finished = true;
            pending.push_back(Err(error));
        }
    }

    /// The body ended: what it left, then the parser's verdict on whether the model finished.
    fn end(&mut self) {
        self.take(None);
        if !self.finished {
            self.finished = true;
            match self.parser.finish() {
                Ok(events) => self.pending.extend(events.into_iter().map(Ok)),
                Err(error) => self.pending.push_back(Err(error)),
            }
        }
    }
}

/// Queues an event; text that arrived together with the text before it joins that delta, so a
/// burst of small deltas read at once travels on as one.
fn push_merged(pending: &mut VecDeque<Result<StreamEvent, ProviderError>>, event: StreamEvent) {
    match (pending.back_mut(), event) {
        (Some(Ok(StreamEvent::TextDelta(text))), StreamEvent::TextDelta(more)) => text.push_str(&more),
        (Some(Ok(StreamEvent::ThinkingDelta(text))), StreamEvent::ThinkingDelta(more)) => text.push_str(&more),
        (_, event) => pending.push_back(Ok(event)),
    }
}

impl<S, B, E, P> futures::Stream for ParsedBody<S, P>
where
    S: futures::Stream<Item = Result<B, E>> + Unpin,
    B: AsRef<[u8]>,
    E: std::fmt::Display,
    P: FrameParser,
{
    type Item = Result<StreamEvent, ProviderError>;

    fn poll_next(
        self: std::pin::Pin<&mut Self>,
        context: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Self::Item>> {
        use std::task::Poll;
        let this = self.get_mut();
        loop {
            if let Some(item) = this.pending.pop_front() {
                return Poll::Ready(Some(item));
            }
            if this.finished {
                return Poll::Ready(None);
            }
            match std::task::ready!(this.body.poll_next_unpin(context)) {
                Some(Ok(bytes)) => this.take(Some(bytes.as_ref())),
                Some(Err(error)) => {
                    this.finished = true;
                    this.pending.push_back(Err(ProviderError::StreamBroken { message: error.to_string() }));
                }
                None => this.end(),
            }
        }
    }
}

pub fn parse_body<S, B, E, P>(body: S, parser: P) -> EventStream
where
    S: futures::Stream<Item = Result<B, E>> + Send + Unpin + 'static,
    B: AsRef<[u8]>,
    E: std::fmt::Display,
    P: FrameParser,
{
    ParsedBody { body, decoder: SseDecoder::default(), parser, pending: VecDeque::new(), finished: false }.boxed()
}

/// Parses a frame's data as JSON (a tree, or a wire type), naming the format on failure.
pub fn frame_json<T: serde::de::DeserializeOwned>(frame: &SseFrame<'_>) -> Result<Option<T>, ProviderError> {
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

    /// Frames `t:TEXT` and `k:THOUGHT` become deltas; anything else stops the model.
    struct Letters;

    impl FrameParser for Letters {
        fn frame(&mut self, frame: &SseFrame<'_>) -> Result<Vec<StreamEvent>, ProviderError> {
            Ok(vec![match frame.data.split_once(':') {
                Some(("t", text)) => StreamEvent::TextDelta(text.to_owned()),
                Some(("k", text)) => StreamEvent::ThinkingDelta(text.to_owned()),
                _ => StreamEvent::Stop(crate::ModelStop::EndTurn),
            }])
        }

        fn finish(&mut self) -> Result<Vec<StreamEvent>, ProviderError> {
            Ok(Vec::new())
        }
    }

    #[tokio::test]
    async fn deltas_read_together_leave_as_one_event_in_order() {
        let reads: Vec<Result<&[u8], std::convert::Infallible>> = vec![
            Ok(b"data: t:a\n\ndata: t:b\n\ndata: k:c\n\ndata: k:d\n\ndata: t:e\n\n"),
            Ok(b"data: t:f\n\ndata: stop\n\ndata: t:g\n\n"),
        ];
        let events: Vec<String> = parse_body(futures::stream::iter(reads), Letters)
            .map(|event| match event.unwrap() {
                StreamEvent::TextDelta(text) => format!("text {text}"),
                StreamEvent::ThinkingDelta(text) => format!("thought {text}"),
                other => format!("{other:?}"),
            })
            .collect()
            .await;
        assert_eq!(events, ["text ab", "thought cd", "text e", "text f", "Stop(EndTurn)", "text g"]);
    }

    #[test]
    fn events_without_data_are_not_dispatched_and_bad_bytes_are_an_error() {
        assert_eq!(frames(&[b"event: ping\n\n: keep-alive\n\n"]), Vec::<(Option<String>, String)>::new());
        let mut decoder = SseDecoder::default();
        assert!(decoder.feed(b"data: \xff\n\n", &mut |_| {}).is_err());
    }
}
