#![allow(clippy::unwrap_used, clippy::expect_used)]
//! The workspace's crates in layers the compiler enforces: each crate may depend only on crates
//! of a lower layer. A new crate needs a layer here; a dependency pointing up fails this test.

use serde_json::Value;

/// Each workspace crate and its layer, lowest first (ARCHITECTURE.md draws the same picture).
const LAYERS: &[(&str, u32)] = &[
    ("larik-settings", 0),
    ("larik-jsonrpc", 0),
    ("larik-llm", 0),
    ("larik-host", 0),
    ("larik-protocol", 0),
    ("larik-sandbox", 1),
    ("larik-config", 1),
    ("larik-tools", 2),
    ("larik-core", 3),
    ("larik", 4),
    ("larik-tests", 5),
    ("larik-fuzz", 5),
    ("larik-bench", 6),
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

/// The agent's crates, each one's sources.
const AGENT_CRATES: &[&str] =
    &["src", "jsonrpc/src", "tools/src", "config/src", "sandbox/src", "host/src", "llm/src", "settings/src"];

/// Inside each of the agent's crates too: no top-level module may import one that imports it
/// back, directly or around a circle. ARCHITECTURE.md lists larik-core's order.
#[test]
fn no_crates_modules_import_each_other_in_a_circle() {
    let agent = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../agent-core");
    let core = module_imports(&agent.join("src"));
    assert!(core.len() > 8, "the core's modules were found: {:?}", core.keys());
    for src in AGENT_CRATES {
        let imports = module_imports(&agent.join(src));
        for start in imports.keys() {
            if let Some(circle) = circle_through(start, &imports) {
                panic!("the modules of agent-core/{src} import each other in a circle: {}", circle.join(" -> "));
            }
        }
    }
}

type Imports = std::collections::BTreeMap<String, std::collections::BTreeSet<String>>;

/// Each top-level module of `src` and the other top-level modules its non-test code names as
/// `crate::<module>`.
fn module_imports(src: &std::path::Path) -> Imports {
    let mut files: Vec<(String, std::path::PathBuf)> = Vec::new();
    for entry in std::fs::read_dir(src).unwrap() {
        let path = entry.unwrap().path();
        let stem = path.file_stem().unwrap().to_string_lossy().into_owned();
        if path.is_dir() {
            let mut pending = vec![path];
            while let Some(dir) = pending.pop() {
                for entry in std::fs::read_dir(dir).unwrap() {
                    let path = entry.unwrap().path();
                    if path.is_dir() {
                        pending.push(path);
                    } else if path.extension().is_some_and(|ext| ext == "rs") {
                        files.push((stem.clone(), path));
                    }
                }
            }
        } else if path.extension().is_some_and(|ext| ext == "rs") && stem != "lib" {
            files.push((stem, path));
        }
    }
    let modules: std::collections::BTreeSet<String> = files.iter().map(|(module, _)| module.clone()).collect();
    let mut imports = Imports::new();
    for (module, path) in &files {
        let name = path.file_name().unwrap().to_string_lossy();
        let named = imports.entry(module.clone()).or_default();
        if name == "tests.rs" || name.ends_with("_tests.rs") {
            continue;
        }
        let text = std::fs::read_to_string(path).unwrap();
        let code = text.split("#[cfg(test)]\nmod tests").next().unwrap_or_default();
        for other in crate_paths(code) {
            if other != *module && modules.contains(&other) {
                named.insert(other);
            }
        }
    }
    imports
}

/// The first segment of every `crate::...` path in `code`, `use crate::{a, b::c}` groups too.
fn crate_paths(code: &str) -> Vec<String> {
    let ident =
        |text: &str| -> String { text.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect() };
    let mut found = Vec::new();
    for (at, _) in code.match_indices("crate::") {
        let rest = &code[at + "crate::".len()..];
        let Some(group) = rest.strip_prefix('{') else {
            found.push(ident(rest));
            continue;
        };
        // The group's own items: segments at depth one, before its closing brace.
        let (mut depth, mut start) = (1, 0);
        for (index, c) in group.char_indices() {
            match c {
                '{' => depth += 1,
                '}' if depth == 1 => {
                    found.push(ident(group[start..index].trim_start()));
                    break;
                }
                '}' => depth -= 1,
                ',' if depth == 1 => {
                    found.push(ident(group[start..index].trim_start()));
                    start = index + 1;
                }
                _ => {}
            }
        }
    }
    found
}

/// A circle of imports from `start` back to it, if there is one.
fn circle_through(start: &str, imports: &Imports) -> Option<Vec<String>> {
    let mut path = vec![start.to_owned()];
    let mut seen = std::collections::BTreeSet::new();
    fn walk(
        path: &mut Vec<String>,
        seen: &mut std::collections::BTreeSet<String>,
        imports: &Imports,
    ) -> Option<Vec<String>> {
        let last = path.last().cloned().unwrap_or_default();
        for next in imports.get(&last).into_iter().flatten() {
            if *next == path[0] {
                let mut circle = path.clone();
                circle.push(next.clone());
                return Some(circle);
            }
            if seen.insert(next.clone()) {
                path.push(next.clone());
                if let Some(circle) = walk(path, seen, imports) {
                    return Some(circle);
                }
                path.pop();
            }
        }
        None
    }
    walk(&mut path, &mut seen, imports)
}

#[test]
fn a_circle_between_two_modules_is_found() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.rs"), "use crate::b::Thing;\n").unwrap();
    std::fs::create_dir(dir.path().join("b")).unwrap();
    std::fs::write(dir.path().join("b.rs"), "mod inner;\n").unwrap();
    std::fs::write(dir.path().join("b/inner.rs"), "use crate::{c, a::{X, Y}};\n").unwrap();
    std::fs::write(dir.path().join("c.rs"), "#[cfg(test)]\nmod tests { use crate::a; }\n").unwrap();
    let imports = module_imports(dir.path());
    assert_eq!(circle_through("a", &imports), Some(vec!["a".into(), "b".into(), "a".into()]));
    assert_eq!(circle_through("c", &imports), None, "test code does not count");
}

/// The session's loop and the permission decision know tools by what they declare (their rule
/// names, what a call acts on), never by name: no tool's name is written in their code.
#[test]
fn no_tool_name_is_written_in_the_session_or_the_permission_code() {
    let agent = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../agent-core");
    let src = agent.join("src");
    let names: Vec<String> = AGENT_CRATES.iter().flat_map(|crate_src| tool_names(&agent.join(crate_src))).collect();
    assert!(names.iter().any(|name| name == "bash") && names.len() > 20, "the tools' names were found: {names:?}");
    let mut found = Vec::new();
    for (path, code) in production_code(&src, &["session", "permission"]) {
        for name in &names {
            for quoted in [format!("\"{name}\""), format!("\"{name}(")] {
                if code.contains(&quoted) {
                    found.push(format!("{} names {quoted}", path.display()));
                }
            }
        }
    }
    assert!(found.is_empty(), "{found:#?}");
}

/// Every tool name the core declares (`const NAME: &'static str = "...";`).
fn tool_names(src: &std::path::Path) -> Vec<String> {
    let mut names = std::collections::BTreeSet::new();
    for (_, code) in production_code(src, &[""]) {
        for (at, _) in code.match_indices("const NAME: &'static str = \"") {
            let rest = &code[at + "const NAME: &'static str = \"".len()..];
            names.insert(rest.split('"').next().unwrap_or_default().to_owned());
        }
    }
    names.into_iter().collect()
}

/// The non-test code of the modules named (their `.rs` file and folder; `""` for all).
fn production_code(src: &std::path::Path, modules: &[&str]) -> Vec<(std::path::PathBuf, String)> {
    let mut files = Vec::new();
    let mut pending = vec![src.to_path_buf()];
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                pending.push(path);
                continue;
            }
            let relative = path.strip_prefix(src).unwrap().to_string_lossy().into_owned();
            let module = relative.split(['/', '.']).next().unwrap_or_default();
            let name = path.file_name().unwrap().to_string_lossy();
            let is_test = name == "tests.rs" || name.ends_with("_tests.rs");
            if relative.ends_with(".rs")
                && !is_test
                && modules.iter().any(|wanted| wanted.is_empty() || *wanted == module)
            {
                let text = std::fs::read_to_string(&path).unwrap();
                let code = text.split("#[cfg(test)]\nmod tests").next().unwrap_or_default().to_owned();
                files.push((path, code));
            }
        }
    }
    files
}

/// STYLE.md: small files with one job. A file that grows past this is split by what it does.
#[test]
fn no_rust_file_is_over_600_lines() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut long = Vec::new();
    let mut pending = vec![root.clone()];
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            if path.is_dir() {
                if !name.starts_with('.') && name != "target" && name != "node_modules" {
                    pending.push(path);
                }
            } else if name.ends_with(".rs") {
                let lines = std::fs::read_to_string(&path).unwrap().lines().count();
                if lines > 600 {
                    long.push(format!("{} has {lines} lines", path.strip_prefix(&root).unwrap().display()));
                }
            }
        }
    }
    assert!(long.is_empty(), "{long:#?}");
}

/// STYLE.md: one error enum per boundary. A public function or trait method of the core that
/// answers `Err(String)` leaves its caller to parse prose; it returns a typed error instead.
#[test]
fn no_public_function_of_the_core_returns_a_string_error() {
    let agent = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../agent-core");
    let (mut found, mut seen) = (Vec::new(), 0);
    for crate_src in AGENT_CRATES {
        for (path, code) in production_code(&agent.join(crate_src), &[""]) {
            for signature in public_signatures(&code) {
                seen += 1;
                let result = signature.split("Result<").nth(1).unwrap_or_default();
                if result.replace(char::is_whitespace, "").contains(",String>") {
                    found.push(format!("{}: {signature}", path.display()));
                }
            }
        }
    }
    assert!(seen > 500, "the scan found the core's public functions ({seen})");
    assert!(found.is_empty(), "{found:#?}");
}

/// The signatures of `pub fn`s, `pub type`s and the methods of `pub trait`s, each joined onto
/// one line.
fn public_signatures(code: &str) -> Vec<String> {
    let (mut signatures, mut in_trait, mut open): (Vec<String>, bool, Option<String>) = (Vec::new(), false, None);
    for line in code.lines() {
        let trimmed = line.trim_start();
        if let Some(signature) = open.as_mut() {
            signature.push(' ');
            signature.push_str(trimmed);
        } else {
            in_trait = (in_trait && line != "}") || trimmed.starts_with("pub trait ");
            let public =
                ["pub fn ", "pub async fn ", "pub type ", "pub const fn "].iter().any(|p| trimmed.starts_with(p));
            let method = in_trait && (trimmed.starts_with("fn ") || trimmed.starts_with("async fn "));
            if !(public || method) {
                continue;
            }
            open = Some(trimmed.to_owned());
        }
        if trimmed.contains('{') || trimmed.ends_with(';') {
            signatures.extend(open.take());
        }
    }
    signatures
}

#[test]
fn a_string_error_in_a_public_signature_is_found() {
    let code = "pub trait Asks {\n    async fn ask(&self) -> Result<String, String>;\n}\nfn private() -> Result<(), String> {}\npub fn wrapped(\n    a: u8,\n) -> Result<u8,\n    String> {\n}\n";
    let signatures = public_signatures(code);
    assert_eq!(signatures.len(), 2, "{signatures:?}");
    assert!(signatures[1].starts_with("pub fn wrapped(") && signatures[1].ends_with("String> {"), "{signatures:?}");
}
