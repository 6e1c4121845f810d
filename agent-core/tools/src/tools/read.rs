//! `read`: a file with line numbers, a window of lines, images for the model, clear refusals for
//! binaries and directories.

use std::io::Read as _;

use base64_free::encode_base64;
use schemars::JsonSchema;
use serde::Deserialize;

use super::{CallDescription, CallSubject, ClaudeCodeAlias, HookResponse, Tool, ToolContext, ToolOutput, display_path};
use crate::event::{Location, ToolKind};
use crate::llm::ResultPart;

const DEFAULT_LIMIT: usize = 2000;
const MAX_LINE_CHARS: usize = 2000;
const MAX_IMAGE_BYTES: u64 = 5 * 1024 * 1024;

#[derive(Deserialize, JsonSchema)]
pub struct ReadInput {
    /// Path of the file, absolute or relative to the project root.
    pub path: String,
    /// First line to return, 1-based. A negative number counts from the end: -100 returns the
    /// last 100 lines (fast even on huge logs).
    #[serde(default)]
    pub offset: Option<i64>,
    /// How many lines to return (default 2000).
    #[serde(default)]
    pub limit: Option<usize>,
}

pub struct Read;

impl Tool for Read {
    type Input = ReadInput;
    const NAME: &'static str = "read";
    const CLAUDE_CODE: Option<&'static ClaudeCodeAlias> =
        Some(&ClaudeCodeAlias { name: "Read", fields: super::names::FILE_PATH, response: HookResponse::FileRead });
    const DESCRIPTION: &'static str = include_str!("read.md");
    const KIND: ToolKind = ToolKind::Read;

    fn read_only(&self) -> bool {
        true
    }

    fn describe(&self, input: &ReadInput, ctx: &ToolContext) -> CallDescription {
        let path = ctx.env.workspace.absolute(&input.path);
        let line = input.offset.filter(|offset| *offset > 0).and_then(|offset| u32::try_from(offset).ok());
        CallDescription {
            title: format!("Read {}", display_path(ctx, &path)),
            locations: vec![Location { path, line }],
            subject: CallSubject::Read(input.path.clone()),
        }
    }

    async fn run(&self, input: ReadInput, ctx: &ToolContext) -> ToolOutput {
        let path = ctx.env.workspace.absolute(&input.path);
        let meta = match std::fs::metadata(&path) {
            Ok(meta) => meta,
            Err(error) => return ToolOutput::error(format!("cannot read {}: {error}", path.display())),
        };
        if meta.is_dir() {
            return ToolOutput::error(format!("{} is a directory; use bash `ls` to list it", path.display()));
        }
        if let Some(media_type) = image_media_type(&path) {
            if meta.len() > MAX_IMAGE_BYTES {
                return ToolOutput::error(format!(
                    "{} is an image of {} bytes; the limit is {MAX_IMAGE_BYTES}",
                    path.display(),
                    meta.len()
                ));
            }
            return match std::fs::read(&path) {
                Ok(bytes) => {
                    ctx.env.workspace.record_read(&path);
                    ToolOutput {
                        content: vec![ResultPart::Image {
                            media_type: media_type.to_owned(),
                            data: encode_base64(&bytes),
                        }],
                        is_error: false,
                        display: None,
                    }
                }
                Err(error) => ToolOutput::error(format!("cannot read {}: {error}", path.display())),
            };
        }
        let mut file = match std::fs::File::open(&path) {
            Ok(file) => file,
            Err(error) => return ToolOutput::error(format!("cannot read {}: {error}", path.display())),
        };
        let mut head = vec![0u8; 8192];
        let head_len = file.read(&mut head).unwrap_or(0);
        if head[..head_len].contains(&0) {
            return ToolOutput::error(format!("{} is a binary file; it cannot be shown as text", path.display()));
        }
        let limit = input.limit.unwrap_or(DEFAULT_LIMIT).max(1);
        let shown = match input.offset {
            Some(offset) if offset < 0 => {
                window::tail(&path, meta.len(), offset.unsigned_abs() as usize).map_err(|error| error.to_string())
            }
            _ if meta.len() > window::WHOLE_FILE_BYTES => {
                window::from_line(&path, input.offset.unwrap_or(1).max(1) as usize, limit)
                    .map_err(|error| error.to_string())
            }
            // Small files go through the workspace, which reads the editor's buffer when there is one.
            _ => match ctx.env.workspace.read_text(&path).await {
                Ok(text) => Ok(number_lines(&text, input.offset.unwrap_or(1).max(1) as usize, limit)),
                Err(error) => Err(error.to_string()),
            },
        };
        let numbered = match shown {
            Ok(numbered) => numbered,
            Err(message) => return ToolOutput::error(format!("cannot read {}: {message}", path.display())),
        };
        ctx.env.workspace.record_read(&path);
        if numbered.is_empty() {
            let note = if meta.len() == 0 { "the file is empty" } else { "the file has fewer lines than the offset" };
            return ToolOutput::text(format!("({note})"));
        }
        ToolOutput::text(numbered)
    }
}

/// `cat -n` style numbering of lines `first..first+limit`, long lines clipped.
fn number_lines(text: &str, first: usize, limit: usize) -> String {
    let mut out = String::new();
    let total = text.lines().count();
    for (index, line) in text.lines().enumerate().skip(first - 1).take(limit) {
        push_numbered(&mut out, &(index + 1).to_string(), line);
    }
    let shown_until = (first - 1 + limit).min(total);
    if !out.is_empty() && shown_until < total {
        out.push_str(&format!("[{} more lines; continue with offset {}]\n", total - shown_until, shown_until + 1));
    }
    out
}

/// One numbered line, clipped when very long.
fn push_numbered(out: &mut String, number: &str, line: &str) {
    let line = line.strip_suffix('\r').unwrap_or(line);
    let clipped: String = line.chars().take(MAX_LINE_CHARS).collect();
    out.push_str(&format!("{number:>6}\t{clipped}"));
    if clipped.len() < line.len() {
        out.push_str(" [line clipped]");
    }
    out.push('\n');
}

/// Reading parts of files too large to load whole: from a line forward (streaming, stopping
/// when the window is full) or the last lines (seeking from the end, never scanning the file).
mod window {
    use std::io::{BufRead, BufReader, Read, Seek, SeekFrom};
    use std::path::Path;

    use super::push_numbered;

    /// Files up to this size are read whole; larger ones are streamed or seeked.
    pub const WHOLE_FILE_BYTES: u64 = 8 * 1024 * 1024;
    const CHUNK: u64 = 64 * 1024;

    pub fn from_line(path: &Path, first: usize, limit: usize) -> std::io::Result<String> {
        let file = std::fs::File::open(path)?;
        let mut reader = BufReader::with_capacity(256 * 1024, file);
        let mut out = String::new();
        let mut line = Vec::new();
        let mut number = 0usize;
        loop {
            line.clear();
            if reader.read_until(b'\n', &mut line)? == 0 {
                return Ok(out);
            }
            number += 1;
            if number < first {
                continue;
            }
            if number >= first + limit {
                out.push_str(&format!("[more lines follow; continue with offset {number}]\n"));
                return Ok(out);
            }
            let text = String::from_utf8_lossy(&line);
            push_numbered(&mut out, &number.to_string(), text.trim_end_matches('\n'));
        }
    }

    /// The last `count` lines, read backwards from the end in chunks. Lines are numbered from the
    /// end (-1 is the last line) because counting from the start would mean reading everything.
    pub fn tail(path: &Path, size: u64, count: usize) -> std::io::Result<String> {
        let mut file = std::fs::File::open(path)?;
        let mut end = size;
        let mut buffer: Vec<u8> = Vec::new();
        // A trailing newline ends the last line; it does not start an empty one.
        let mut wanted_newlines = count + 1;
        let mut last_byte = [0u8; 1];
        if size > 0 {
            file.seek(SeekFrom::Start(size - 1))?;
            file.read_exact(&mut last_byte)?;
            if last_byte[0] != b'\n' {
                wanted_newlines -= 1;
            }
        }
        while end > 0 && memchr::memchr_iter(b'\n', &buffer).count() < wanted_newlines {
            let start = end.saturating_sub(CHUNK);
            let mut chunk = vec![0u8; usize::try_from(end - start).unwrap_or(0)];
            file.seek(SeekFrom::Start(start))?;
            file.read_exact(&mut chunk)?;
            chunk.extend_from_slice(&buffer);
            buffer = chunk;
            end = start;
        }
        let text = String::from_utf8_lossy(&buffer);
        let lines: Vec<&str> = text.trim_end_matches('\n').split('\n').collect();
        let skip = if end > 0 || lines.len() > count { lines.len().saturating_sub(count) } else { 0 };
        let shown = &lines[skip..];
        let mut out = String::new();
        for (index, line) in shown.iter().enumerate() {
            push_numbered(&mut out, &format!("-{}", shown.len() - index), line);
        }
        Ok(out)
    }
}

fn image_media_type(path: &std::path::Path) -> Option<&'static str> {
    let extension = path.extension()?.to_string_lossy().to_lowercase();
    Some(match extension.as_str() {
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "gif" => "image/gif",
        "webp" => "image/webp",
        _ => return None,
    })
}

/// Standard base64 without pulling a crate in for one function.
mod base64_free {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

    pub fn encode_base64(bytes: &[u8]) -> String {
        let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
        for chunk in bytes.chunks(3) {
            let b = [chunk[0], *chunk.get(1).unwrap_or(&0), *chunk.get(2).unwrap_or(&0)];
            let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
            for (i, shift) in [18, 12, 6, 0].into_iter().enumerate() {
                if i <= chunk.len() {
                    out.push(char::from(ALPHABET[((n >> shift) & 63) as usize]));
                } else {
                    out.push('=');
                }
            }
        }
        out
    }

    #[cfg(test)]
    #[test]
    fn matches_known_vectors() {
        assert_eq!(encode_base64(b""), "");
        assert_eq!(encode_base64(b"f"), "Zg==");
        assert_eq!(encode_base64(b"fo"), "Zm8=");
        assert_eq!(encode_base64(b"foobar"), "Zm9vYmFy");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use std::sync::Arc;

    use crate::workspace::Workspace;

    #[test]
    fn numbers_a_window_and_says_what_follows() {
        let text = "a\nb\nc\nd\n";
        assert_eq!(number_lines(text, 2, 2), "     2\tb\n     3\tc\n[1 more lines; continue with offset 4]\n");
        assert_eq!(number_lines(text, 9, 2), "");
    }

    fn read(path: &str, offset: Option<i64>, limit: Option<usize>) -> ReadInput {
        ReadInput { path: path.into(), offset, limit }
    }

    #[tokio::test]
    async fn text_images_binaries_and_directories() {
        let dir = tempfile::tempdir().unwrap();
        let ctx = ToolContext::standalone(Arc::new(Workspace::new(dir.path())));
        std::fs::write(dir.path().join("a.txt"), format!("one\r\ntwo\n{}\n", "x".repeat(3000))).unwrap();
        let text = Read.run(read("a.txt", None, None), &ctx).await.text_content();
        assert!(text.starts_with("     1\tone\n     2\ttwo\n     3\txxx"), "{text}");
        assert!(text.ends_with("[line clipped]\n"), "{text}");
        std::fs::write(dir.path().join("pixel.png"), [0x89, b'P', b'N', b'G']).unwrap();
        let image = Read.run(read("pixel.png", None, None), &ctx).await;
        assert!(
            matches!(&image.content[0], ResultPart::Image { media_type, data } if media_type == "image/png" && data == "iVBORw==")
        );
        std::fs::write(dir.path().join("blob.bin"), [1, 2, 0, 3]).unwrap();
        let binary = Read.run(read("blob.bin", None, None), &ctx).await;
        assert!(binary.is_error && binary.text_content().contains("binary"));
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        let directory = Read.run(read("sub", None, None), &ctx).await;
        assert!(directory.is_error && directory.text_content().contains("is a directory"));
        let missing = Read.run(read("nope.txt", None, None), &ctx).await;
        assert!(missing.is_error && missing.text_content().contains("nope.txt"));
        std::fs::write(dir.path().join("empty.txt"), "").unwrap();
        assert_eq!(Read.run(read("empty.txt", None, None), &ctx).await.text_content(), "(the file is empty)");
    }

    #[tokio::test]
    async fn large_files_are_streamed_and_tails_are_seeked() {
        let dir = tempfile::tempdir().unwrap();
        let ctx = ToolContext::standalone(Arc::new(Workspace::new(dir.path())));
        let lines = (window::WHOLE_FILE_BYTES / 20) as usize + 1000;
        let body: String = (1..=lines).map(|n| format!("line number {n:>7}\n")).collect();
        std::fs::write(dir.path().join("big.log"), &body).unwrap();
        let middle = Read.run(read("big.log", Some(1000), Some(2)), &ctx).await.text_content();
        assert_eq!(
            middle,
            "  1000\tline number    1000\n  1001\tline number    1001\n[more lines follow; continue with offset 1002]\n"
        );
        let tail = Read.run(read("big.log", Some(-2), None), &ctx).await.text_content();
        assert_eq!(tail, format!("    -2\tline number {:>7}\n    -1\tline number {lines:>7}\n", lines - 1));
        std::fs::write(dir.path().join("short.txt"), "a\nb").unwrap();
        assert_eq!(Read.run(read("short.txt", Some(-5), None), &ctx).await.text_content(), "    -2\ta\n    -1\tb\n");
    }
}
