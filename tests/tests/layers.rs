#![allow(clippy::unwrap_used, clippy::expect_used)]
//! The workspace's crates in layers the compiler enforces: each crate may depend only on crates
//! of a lower layer. A new crate needs a layer here; a dependency pointing up fails this test.

use serde_json::Value;

/// Each workspace crate and its layer, lowest first (ARCHITECTURE.md draws the same picture).
const LAYERS: &[(&str, u32)] = &[
    ("larik-settings", 0),
    ("larik-core", 1),
    ("larik-protocol", 1),
    ("larik", 2),
    ("larik-tests", 3),
    ("larik-fuzz", 3),
    ("larik-bench", 4),
];

#[test]
fn no_crate_depends_on_one_above_it() {
    let output = std::process::Command::new(env!("CARGO"))
        .args(["metadata", "--format-version", "1", "--no-deps", "--offline"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let metadata: Value = serde_json::from_slice(&output.stdout).unwrap();
    let layer = |name: &str| LAYERS.iter().find(|(crate_name, _)| *crate_name == name).map(|(_, layer)| *layer);
    let packages = metadata["packages"].as_array().unwrap();
    assert_eq!(packages.len(), LAYERS.len(), "every workspace crate has a layer");
    for package in packages {
        let name = package["name"].as_str().unwrap();
        let own = layer(name).unwrap_or_else(|| panic!("{name} has no layer in tests/tests/layers.rs"));
        for dependency in package["dependencies"].as_array().unwrap() {
            let Some(other) = layer(dependency["name"].as_str().unwrap()) else { continue };
            // Dev-dependencies are tests' own business.
            if dependency["kind"].as_str() == Some("dev") {
                continue;
            }
            assert!(other < own, "{name} (layer {own}) depends on {} (layer {other})", dependency["name"]);
        }
    }
}
