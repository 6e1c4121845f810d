//! Rewrites the generated protocol documents in `protocol-spec/`.

use std::path::Path;

fn main() -> std::io::Result<()> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    for (path, contents) in larik_protocol::spec::generate() {
        std::fs::write(root.join(path), contents)?;
    }
    Ok(())
}
