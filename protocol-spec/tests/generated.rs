#![allow(clippy::unwrap_used, clippy::expect_used)]
//! The committed schema and reference must be what the types generate today.

use std::path::Path;

#[test]
fn committed_documents_match_the_types() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let stale: Vec<&str> = larik_protocol::spec::generate()
        .into_iter()
        .filter(|(path, contents)| std::fs::read_to_string(root.join(path)).ok().as_deref() != Some(contents.as_str()))
        .map(|(path, _)| path)
        .collect();
    assert!(
        stale.is_empty(),
        "stale: {stale:?}; run `cargo run -p larik-protocol --bin larik-protocol-gen` and commit the result"
    );
}

#[test]
fn every_reference_example_is_a_valid_message() {
    larik_protocol::spec::check_examples().unwrap();
}
