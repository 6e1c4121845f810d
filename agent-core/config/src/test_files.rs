//! Writing the files a unit test lays out, parents made.

use std::path::Path;

/// Writes `text` at `path`, making its directories; panics on failure (tests only).
#[allow(clippy::unwrap_used)]
pub fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}
