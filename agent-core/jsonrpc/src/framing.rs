//! The two framings: one message per line (ACP), or a `Content-Length` header before each body
//! (LSP). Reading keeps at most a bounded message in memory: a longer one is skipped and said so,
//! never buffered without bound.

use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncReadExt};

/// The longest header line read.
const HEADER_LIMIT: u64 = 8 * 1024;

/// How messages are delimited on a stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Framing {
    /// One compact JSON message per line (serde_json escapes newlines inside strings).
    Lines,
    /// `Content-Length: N\r\n\r\n` and N bytes of body; other headers are ignored.
    ContentLength,
}

/// What one read gave.
#[derive(Debug, PartialEq, Eq)]
pub enum Frame {
    /// A message's bytes are in the buffer.
    Message,
    /// A message longer than the limit was skipped (its bytes are gone from the stream).
    TooLong,
    /// A header block that does not say how long its body is: the stream cannot be followed
    /// past it.
    Unframed(String),
    /// The stream ended.
    Eof,
}

impl Framing {
    /// Reads the next message into `body` (cleared first), keeping at most `limit` bytes.
    pub async fn read(
        self,
        input: &mut (impl AsyncBufRead + Unpin),
        body: &mut Vec<u8>,
        limit: usize,
    ) -> std::io::Result<Frame> {
        body.clear();
        match self {
            Self::Lines => read_line(input, body, limit).await,
            Self::ContentLength => read_content_length(input, body, limit).await,
        }
    }

    /// The bytes that carry `message` on the stream.
    pub fn frame(self, message: &str) -> Vec<u8> {
        match self {
            Self::Lines => {
                let mut line = Vec::with_capacity(message.len() + 1);
                line.extend_from_slice(message.as_bytes());
                line.push(b'\n');
                line
            }
            Self::ContentLength => format!("Content-Length: {}\r\n\r\n{message}", message.len()).into_bytes(),
        }
    }
}

/// Reads up to the next `\n`; the rest of a line longer than `limit` is skipped.
async fn read_line(
    input: &mut (impl AsyncBufRead + Unpin),
    line: &mut Vec<u8>,
    limit: usize,
) -> std::io::Result<Frame> {
    let mut too_long = false;
    loop {
        let available = input.fill_buf().await?;
        if available.is_empty() {
            return Ok(if line.is_empty() && !too_long { Frame::Eof } else { Frame::Message });
        }
        let (chunk, found_newline) = match available.iter().position(|byte| *byte == b'\n') {
            Some(end) => (&available[..end], true),
            None => (available, false),
        };
        if !too_long && line.len() + chunk.len() <= limit {
            line.extend_from_slice(chunk);
        } else {
            too_long = true;
            line.clear();
        }
        let consumed = chunk.len() + usize::from(found_newline);
        input.consume(consumed);
        if found_newline {
            return Ok(if too_long { Frame::TooLong } else { Frame::Message });
        }
    }
}

/// Reads a header block and its body; a body over `limit` is read past and dropped.
async fn read_content_length(
    input: &mut (impl AsyncBufRead + Unpin),
    body: &mut Vec<u8>,
    limit: usize,
) -> std::io::Result<Frame> {
    let mut length: Option<u64> = None;
    let mut header = Vec::new();
    loop {
        header.clear();
        // Headers are short; a "header" past this is not one.
        let read = (&mut *input).take(HEADER_LIMIT).read_until(b'\n', &mut header).await?;
        if read == 0 {
            return Ok(Frame::Eof);
        }
        let line = String::from_utf8_lossy(&header);
        let line = line.trim_end();
        if line.is_empty() {
            if length.is_some() {
                break;
            }
            // Blank lines between messages are tolerated.
            continue;
        }
        let Some((key, value)) = line.split_once(':') else {
            return Ok(Frame::Unframed(format!("a header without a colon: `{line}`")));
        };
        if key.trim().eq_ignore_ascii_case("content-length") {
            match value.trim().parse() {
                Ok(value) => length = Some(value),
                Err(_) => return Ok(Frame::Unframed(format!("bad Content-Length `{}`", value.trim()))),
            }
        }
    }
    let length = length.unwrap_or_default();
    if usize::try_from(length).map_or(true, |length| length > limit) {
        let skipped = tokio::io::copy(&mut (&mut *input).take(length), &mut tokio::io::sink()).await?;
        return Ok(if skipped < length { Frame::Eof } else { Frame::TooLong });
    }
    body.resize(usize::try_from(length).unwrap_or_default(), 0);
    match input.read_exact(body).await {
        Ok(_) => Ok(Frame::Message),
        Err(error) if error.kind() == std::io::ErrorKind::UnexpectedEof => Ok(Frame::Eof),
        Err(error) => Err(error),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    async fn all(framing: Framing, mut stream: &[u8], limit: usize) -> Vec<(Frame, String)> {
        let mut frames = Vec::new();
        let mut body = Vec::new();
        loop {
            let frame = framing.read(&mut stream, &mut body, limit).await.unwrap();
            let end = matches!(frame, Frame::Eof | Frame::Unframed(_));
            frames.push((frame, String::from_utf8_lossy(&body).into_owned()));
            if end {
                return frames;
            }
        }
    }

    #[tokio::test]
    async fn lines_are_read_one_by_one_and_a_long_one_is_skipped_whole() {
        let stream = b"{\"a\":1}\r\n0123456789abcdef\n{\"b\":2}\n{\"c\":3}";
        let frames = all(Framing::Lines, stream, 10).await;
        let kinds: Vec<&Frame> = frames.iter().map(|(frame, _)| frame).collect();
        assert_eq!(kinds, [&Frame::Message, &Frame::TooLong, &Frame::Message, &Frame::Message, &Frame::Eof]);
        assert_eq!(frames[0].1, "{\"a\":1}\r");
        assert_eq!(frames[2].1, "{\"b\":2}");
        assert_eq!(frames[3].1, "{\"c\":3}", "the last line needs no newline");
    }

    #[tokio::test]
    async fn content_length_frames_what_is_written_and_skips_what_is_too_long() {
        let mut stream = Framing::ContentLength.frame("{\"a\":\"é\"}");
        stream.extend_from_slice(
            b"content-length: 13\r\nContent-Type: application/vscode-jsonrpc\r\n\r\n{\"long\":1234}",
        );
        stream.extend_from_slice(b"\r\n");
        stream.extend(Framing::ContentLength.frame("{}"));
        let frames = all(Framing::ContentLength, &stream, 11).await;
        let kinds: Vec<&Frame> = frames.iter().map(|(frame, _)| frame).collect();
        assert_eq!(kinds, [&Frame::Message, &Frame::TooLong, &Frame::Message, &Frame::Eof]);
        assert_eq!(frames[0].1, "{\"a\":\"é\"}", "the length counts bytes, not characters");
        assert_eq!(frames[2].1, "{}");
    }

    #[tokio::test]
    async fn a_broken_header_or_a_cut_body_ends_the_stream_with_a_reason() {
        let frames = all(Framing::ContentLength, b"Content-Length: ten\r\n\r\n{}", 100).await;
        assert_eq!(frames[0].0, Frame::Unframed("bad Content-Length `ten`".into()));
        let frames = all(Framing::ContentLength, b"garbage\r\n\r\n", 100).await;
        assert!(matches!(&frames[0].0, Frame::Unframed(why) if why.contains("garbage")), "{frames:?}");
        let frames = all(Framing::ContentLength, b"Content-Length: 10\r\n\r\n{\"a\"", 100).await;
        assert_eq!(frames[0].0, Frame::Eof);
    }
}
