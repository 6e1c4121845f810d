//! `file://` URIs and paths. lsp-types' `Uri` has no path conversion, so percent-encoding of the
//! few characters paths commonly contain is done here.

use std::path::{Path, PathBuf};

pub fn from_path(path: &Path) -> String {
    let mut uri = String::from("file://");
    for byte in path.to_string_lossy().bytes() {
        match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'/' | b'-' | b'_' | b'.' | b'~' => uri.push(char::from(byte)),
            other => uri.push_str(&format!("%{other:02X}")),
        }
    }
    uri
}

pub fn to_path(uri: &str) -> Option<PathBuf> {
    let encoded = uri.strip_prefix("file://")?;
    let bytes = encoded.as_bytes();
    let mut decoded = Vec::with_capacity(bytes.len());
    let mut index = 0;
    while index < bytes.len() {
        if bytes[index] == b'%'
            && let Some(hex) = encoded.get(index + 1..index + 3)
            && let Ok(byte) = u8::from_str_radix(hex, 16)
        {
            decoded.push(byte);
            index += 3;
        } else {
            decoded.push(bytes[index]);
            index += 1;
        }
    }
    Some(PathBuf::from(String::from_utf8(decoded).ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_paths_with_spaces() {
        let path = Path::new("/home/me/my project/a+b.rs");
        let uri = from_path(path);
        assert_eq!(uri, "file:///home/me/my%20project/a%2Bb.rs");
        assert_eq!(to_path(&uri).unwrap(), path);
        assert_eq!(to_path("untitled:1"), None);
    }
}
