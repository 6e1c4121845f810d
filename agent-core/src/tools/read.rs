//! `read`: a file with line numbers, a window of lines, images for the model, clear refusals for
//! binaries and directories.

use std::io::Read as _;

use base64_free::encode_base64;
use schemars::JsonSchema;
use serde::Deserialize;

use super::{CallDescription, Tool, ToolContext, ToolOutput, display_path};
use crate::event::{Location, ToolKind};
use crate::llm::ResultPart;

const DEFAULT_LIMIT: usize = 2000;
const MAX_LINE_CHARS: usize = 2000;
const MAX_IMAGE_BYTES: u64 = 5 * 1024 * 1024;

#[derive(Deserialize, JsonSchema)]
pub struct ReadInput {
    /// Path of the file, absolute or relative to the project root.
    pub path: String,
    /// First line to return, 1-based.
    #[serde(default)]
    pub offset: Option<usize>,
    /// How many lines to return (default 2000).
    #[serde(default)]
    pub limit: Option<usize>,
}

pub struct Read;

impl Tool for Read {
    type Input = ReadInput;
    const NAME: &'static str = "read";
    const DESCRIPTION: &'static str = include_str!("read.md");
    const KIND: ToolKind = ToolKind::Read;

    fn read_only(&self) -> bool {
        true
    }

    fn describe(&self, input: &ReadInput, ctx: &ToolContext) -> CallDescription {
        let path = ctx.workspace.absolute(&input.path);
        let line = input.offset.and_then(|offset| u32::try_from(offset).ok());
        CallDescription {
            title: format!("Read {}", display_path(ctx, &path)),
            locations: vec![Location { path, line }],
            target_path: None,
            command: None,
        }
    }

    async fn run(&self, input: ReadInput, ctx: &ToolContext) -> ToolOutput {
        let path = ctx.workspace.absolute(&input.path);
        let meta = match std::fs::metadata(&path) {
            Ok(meta) => meta,
            Err(error) => return ToolOutput::error(format!("cannot read {}: {error}", path.display())),
        };
        if meta.is_dir() {
            return ToolOutput::error(format!("{} is a directory; use bash `ls` to list it", path.display()));
        }
        if let Some(media_type) = image_media_type(&path) {
            if meta.len() > MAX_IMAGE_BYTES {
                return ToolOutput::error(format!("{} is an image of {} bytes; the limit is {MAX_IMAGE_BYTES}", path.display(), meta.len()));
            }
            return match std::fs::read(&path) {
                Ok(bytes) => {
                    ctx.workspace.record_read(&path);
                    ToolOutput {
                        content: vec![ResultPart::Image { media_type: media_type.to_owned(), data: encode_base64(&bytes) }],
                        is_error: false,
                        display: None,
                    }
                }
                Err(error) => ToolOutput::error(format!("cannot read {}: {error}", path.display())),
            };
        }
        let bytes = match read_all(&path) {
            Ok(bytes) => bytes,
            Err(error) => return ToolOutput::error(format!("cannot read {}: {error}", path.display())),
        };
        if bytes[..bytes.len().min(8192)].contains(&0) {
            return ToolOutput::error(format!("{} is a binary file; it cannot be shown as text", path.display()));
        }
        // The editor's buffer, when it has one, holds what the user sees (unsaved changes too).
        let text = match ctx.workspace.read_text(&path).await {
            Ok(text) => text,
            Err(_) => String::from_utf8_lossy(&bytes).into_owned(),
        };
        ctx.workspace.record_read(&path);
        let first = input.offset.unwrap_or(1).max(1);
        let limit = input.limit.unwrap_or(DEFAULT_LIMIT).max(1);
        let numbered = number_lines(&text, first, limit);
        if numbered.is_empty() {
            let note = if text.is_empty() { "the file is empty" } else { "the file has fewer lines than the offset" };
            return ToolOutput::text(format!("({note})"));
        }
        ToolOutput::text(numbered)
    }
}

fn read_all(path: &std::path::Path) -> std::io::Result<Vec<u8>> {
    let mut bytes = Vec::new();
    std::fs::File::open(path)?.read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// `cat -n` style numbering of lines `first..first+limit`, long lines clipped.
fn number_lines(text: &str, first: usize, limit: usize) -> String {
    let mut out = String::new();
    let total = text.lines().count();
    for (index, line) in text.lines().enumerate().skip(first - 1).take(limit) {
        let line = line.strip_suffix('\r').unwrap_or(line);
        let clipped: String = line.chars().take(MAX_LINE_CHARS).collect();
        out.push_str(&format!("{:>6}\t{clipped}", index + 1));
        if clipped.len() < line.len() {
            out.push_str(" [line clipped]");
        }
        out.push('\n');
    }
    let shown_until = (first - 1 + limit).min(total);
    if !out.is_empty() && shown_until < total {
        out.push_str(&format!("[{} more lines; continue with offset {}]\n", total - shown_until, shown_until + 1));
    }
    out
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

    #[test]
    fn numbers_a_window_and_says_what_follows() {
        let text = "a\nb\nc\nd\n";
        assert_eq!(number_lines(text, 2, 2), "     2\tb\n     3\tc\n[1 more lines; continue with offset 4]\n");
        assert_eq!(number_lines(text, 9, 2), "");
    }
}
