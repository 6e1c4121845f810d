#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Every committed input of every fuzz target, seeds and the crashes fuzzing found (named
//! `crash-*`), run through its target on stable: a property once broken stays fixed.

use std::path::Path;

fn replay(target: &str, run: fn(&[u8])) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus").join(target);
    let mut inputs: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|error| panic!("{}: {error}", dir.display()))
        .flatten()
        .map(|entry| entry.path())
        .collect();
    inputs.sort();
    assert!(!inputs.is_empty(), "{target} has no seed inputs");
    for input in inputs {
        let bytes = std::fs::read(&input).unwrap();
        if std::panic::catch_unwind(|| run(&bytes)).is_err() {
            panic!("{target}: {} breaks its property", input.display());
        }
    }
}

#[test]
fn jsonrpc() {
    replay("jsonrpc", larik_fuzz::jsonrpc);
}

#[test]
fn model_stream() {
    replay("model_stream", larik_fuzz::model_stream);
}

#[test]
fn shell_rules() {
    replay("shell_rules", larik_fuzz::shell_rules);
}

#[test]
fn session_file() {
    replay("session_file", larik_fuzz::session_file);
}

#[test]
fn definitions() {
    replay("definitions", larik_fuzz::definitions);
}
