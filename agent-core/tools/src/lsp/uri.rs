//! `file://` URIs for paths, and the one spelling of a URI that lets a server's
//! `file:///a%20b` and ours be compared.

use std::path::{Path, PathBuf};

/// Bytes a path keeps as they are in a URI; the rest are percent-encoded.
fn kept(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || matches!(byte, b'/' | b'-' | b'_' | b'.' | b'~')
}

pub fn from_path(path: &Path) -> String {
    let mut out = String::from("file://");
    for &byte in path.as_os_str().as_encoded_bytes() {
        if kept(byte) {
            out.push(char::from(byte));
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

/// The path of a `file://` URI.
/// The document's URI as the protocol's type; `None` only for a path no URI can name.
pub fn document(path: &Path) -> Option<lsp_types::Uri> {
    from_path(path).parse().ok()
}

pub fn to_path(address: &str) -> Option<PathBuf> {
    let rest = address.strip_prefix("file://")?;
    let bytes = decoded(rest);
    Some(PathBuf::from(String::from_utf8(bytes).ok()?))
}

/// The URI spelled as [`from_path`] spells it.
pub fn normalized(address: &str) -> String {
    to_path(address).map_or_else(|| address.to_owned(), |path| from_path(&path))
}

fn decoded(text: &str) -> Vec<u8> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut index = 0;
    while index < bytes.len() {
        if bytes[index] == b'%'
            && let Some(value) = text.get(index + 1..index + 3).and_then(|hex| u8::from_str_radix(hex, 16).ok())
        {
            out.push(value);
            index += 3;
        } else {
            out.push(bytes[index]);
            index += 1;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_and_uris_round_trip_in_one_spelling() {
        let path = Path::new("/home/u/my project/a+b.py");
        let address = from_path(path);
        assert_eq!(address, "file:///home/u/my%20project/a%2Bb.py");
        assert_eq!(to_path(&address).unwrap(), path);
        assert_eq!(normalized("file:///home/u/my%20project/a+b.py"), address, "a server's own spelling");
        assert_eq!(to_path("untitled:1"), None);
    }
}
