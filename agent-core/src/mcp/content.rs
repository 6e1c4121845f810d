//! What an MCP tool result becomes for the model and the editor: text passes through (capped
//! like any tool output by the pipeline); images of the kinds models read (PNG, JPEG, GIF, WebP,
//! up to 5 MB each and 4 per call) go to the model as images; audio, embedded resources and
//! links are summarised in a line; `isError` makes the result an error. The result is read from
//! its JSON form, so the wire's spelling decides, not a library's types.

use serde_json::Value;

use crate::event::Display;
use crate::llm::ResultPart;
use crate::tools::ToolOutput;

const IMAGE_TYPES: &[&str] = &["image/png", "image/jpeg", "image/gif", "image/webp"];
const MAX_IMAGE_BYTES: usize = 5 * 1024 * 1024;
const MAX_IMAGES: usize = 4;

/// The tool output for a `tools/call` result.
pub fn tool_output(result: &Value) -> ToolOutput {
    let mut parts = Vec::new();
    let mut images = 0;
    for block in result["content"].as_array().map(Vec::as_slice).unwrap_or_default() {
        match block["type"].as_str() {
            Some("text") => {
                parts.push(ResultPart::Text { text: block["text"].as_str().unwrap_or_default().to_owned() })
            }
            Some("image") => {
                let media_type = block["mimeType"].as_str().unwrap_or_default();
                let data = block["data"].as_str().unwrap_or_default();
                // Base64 holds 3 bytes in 4 characters.
                let bytes = data.len() / 4 * 3;
                if IMAGE_TYPES.contains(&media_type) && bytes <= MAX_IMAGE_BYTES && images < MAX_IMAGES {
                    images += 1;
                    parts.push(ResultPart::Image { media_type: media_type.to_owned(), data: data.to_owned() });
                } else {
                    parts.push(ResultPart::Text { text: format!("[an image ({media_type}, {bytes} bytes) was left out: only PNG, JPEG, GIF and WebP up to 5 MB, 4 per call, reach the model]") });
                }
            }
            Some("audio") => parts.push(ResultPart::Text {
                text: format!(
                    "[audio ({}) the model cannot hear]",
                    block["mimeType"].as_str().unwrap_or("unknown type")
                ),
            }),
            Some("resource") => {
                let resource = &block["resource"];
                let uri = resource["uri"].as_str().unwrap_or_default();
                match resource["text"].as_str() {
                    Some(text) => parts.push(ResultPart::Text { text: format!("[resource {uri}]\n{text}") }),
                    None => parts.push(ResultPart::Text {
                        text: format!(
                            "[binary resource {uri} ({})]",
                            resource["mimeType"].as_str().unwrap_or("unknown type")
                        ),
                    }),
                }
            }
            Some("resource_link") => {
                let uri = block["uri"].as_str().unwrap_or_default();
                let name = block["name"].as_str().unwrap_or(uri);
                parts.push(ResultPart::Text { text: format!("[resource link: {name} <{uri}>]") });
            }
            other => parts
                .push(ResultPart::Text { text: format!("[content of type {} left out]", other.unwrap_or("unknown")) }),
        }
    }
    if parts.is_empty()
        && let Some(structured) = result.get("structuredContent").filter(|value| !value.is_null())
    {
        parts.push(ResultPart::Text { text: structured.to_string() });
    }
    if parts.is_empty() {
        parts.push(ResultPart::Text { text: "(no output)".into() });
    }
    let images: Vec<(String, String)> = parts
        .iter()
        .filter_map(|part| match part {
            ResultPart::Image { media_type, data } => Some((media_type.clone(), data.clone())),
            ResultPart::Text { .. } => None,
        })
        .collect();
    let mut output =
        ToolOutput { content: parts, is_error: result["isError"].as_bool().unwrap_or(false), display: None };
    // The editor shows the images too, not only what the model reads.
    if !images.is_empty() {
        output.display = Some(Display::Media { text: output.text_content(), images });
    }
    output
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn text_images_and_the_rest() {
        let result = json!({"content": [
            {"type": "text", "text": "hello"},
            {"type": "image", "mimeType": "image/png", "data": "iVBORw0KGgo="},
            {"type": "image", "mimeType": "image/tiff", "data": "AAAA"},
            {"type": "audio", "mimeType": "audio/wav", "data": "AAAA"},
            {"type": "resource", "resource": {"uri": "demo://doc", "text": "body"}},
            {"type": "resource_link", "uri": "demo://other", "name": "other"}
        ]});
        let output = tool_output(&result);
        assert!(!output.is_error);
        assert_eq!(output.content.len(), 6);
        assert!(matches!(&output.content[1], ResultPart::Image { media_type, .. } if media_type == "image/png"));
        assert!(
            matches!(&output.display, Some(Display::Media { images, .. }) if images.len() == 1),
            "the editor gets the image too"
        );
        let text = output.text_content();
        assert!(
            text.contains("hello")
                && text.contains("image/tiff")
                && text.contains("audio/wav")
                && text.contains("[resource demo://doc]\nbody")
                && text.contains("demo://other"),
            "{text}"
        );
        assert!(tool_output(&json!({"content": [{"type": "text", "text": "bad"}], "isError": true})).is_error);
        let five: Vec<Value> =
            (0..5).map(|_| json!({"type": "image", "mimeType": "image/png", "data": "AAAA"})).collect();
        let capped = tool_output(&json!({"content": five}));
        assert_eq!(capped.content.iter().filter(|part| matches!(part, ResultPart::Image { .. })).count(), MAX_IMAGES);
        assert_eq!(tool_output(&json!({"content": [], "structuredContent": {"n": 5}})).text_content(), "{\"n\":5}");
    }
}
