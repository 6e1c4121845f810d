//! `layout`: the functions Larik runs to start, open a session and take a turn, written as the
//! linker script that places them together at the front of the binary's code
//! (`rpc-server/hot-functions.ld`, read by `rpc-server/build.rs` for release builds).
//!
//! Why: the kernel maps a program's code in 64 KiB windows around each page it runs (fault-around),
//! so what counts in resident memory is how many windows the running code is spread over, not
//! how much code runs. Linked in the compiler's order, the ~1 MiB that starts Larik and serves
//! a turn is spread over most of its 27 MiB of code; placed together, it takes a few windows.
//!
//! The functions are those callgrind saw run, under a private home, through `initialize`,
//! `session/new` and the `turn` section's scripted turn (read, edit, bash, answer). Names drop
//! LTO's `.llvm.N` suffixes, which change from build to build, so the script matches the next
//! build's symbols too; a function renamed since, or every function after a toolchain update
//! (the mangled names' hashes change), is simply left where the compiler put it, and the
//! `ready` figures show it is time to write the script again.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use larik_tests::harness::{Agent, Sandbox, spawn_piped};
use larik_tests::mock_llm::{MockLlm, Scenario};

/// Where the script goes, from the repository's root.
const SCRIPT: &str = "rpc-server/hot-functions.ld";

/// Runs the scripted session under callgrind and writes the linker script.
pub async fn write_script() -> anyhow::Result<()> {
    let larik = PathBuf::from(std::env::var("LARIK_BIN")?);
    let profiles = tempfile::tempdir()?;
    run_under_callgrind(&larik, profiles.path()).await?;
    // One profile per process callgrind saw (a forked child writes its own, and must not
    // overwrite the agent's); the functions are those any of them ran.
    let mut names = BTreeSet::new();
    for entry in std::fs::read_dir(profiles.path())? {
        names.extend(functions_run(&std::fs::read_to_string(entry?.path())?, &larik));
    }
    anyhow::ensure!(names.len() > 100, "callgrind saw only {} functions of larik run", names.len());
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    std::fs::write(root.join(SCRIPT), script(&names))?;
    println!("{SCRIPT}: {} functions", names.len());
    Ok(())
}

async fn run_under_callgrind(larik: &Path, profiles: &Path) -> anyhow::Result<()> {
    let sandbox = Sandbox::new();
    let steps = crate::agent::scripted_turn(&sandbox)?;
    let mock = MockLlm::start(Scenario { responses: steps }).await?;
    let mut command = tokio::process::Command::new("valgrind");
    command
        .arg("--tool=callgrind")
        .arg("--demangle=no")
        .arg(format!("--callgrind-out-file={}", profiles.join("callgrind.%p").display()))
        .arg(larik)
        .arg("acp");
    let mut agent = Agent::from_child(spawn_piped(command, &sandbox.project_path(), &sandbox.env(mock.url())));
    agent.initialize().await;
    let session = agent.new_session(&sandbox.project_path()).await;
    agent.prompt(&session, "change the greeting", |_| "allow_once").await;
    agent.close_stdin();
    agent.wait_exit().await;
    Ok(())
}

/// The names of the functions of `binary` that ran, as build-independent patterns.
fn functions_run(profile: &str, binary: &Path) -> BTreeSet<String> {
    let binary = binary.to_string_lossy();
    // callgrind names an object or function in full once, then by number.
    let (mut objects, mut functions) = (std::collections::HashMap::new(), std::collections::HashMap::new());
    let mut in_binary = false;
    let mut run = BTreeSet::new();
    for line in profile.lines() {
        let Some((key, value)) = line.split_once('=') else { continue };
        let Some((id, name)) = numbered(value) else { continue };
        let table = match key {
            "ob" | "cob" => &mut objects,
            "fn" | "cfn" => &mut functions,
            _ => continue,
        };
        if let Some(name) = name {
            table.insert(id.to_owned(), name.to_owned());
        }
        match key {
            // Code in the section this script makes is named by no object in callgrind's
            // profile (`???`); taking those too keeps a function hot once it was. A name no
            // function of the binary has matches nothing in the script.
            "ob" => in_binary = objects.get(id).is_some_and(|object: &String| *object == binary || object == "???"),
            "fn" if in_binary => {
                if let Some(pattern) = functions.get(id).and_then(|name: &String| pattern(name)) {
                    run.insert(pattern);
                }
            }
            _ => {}
        }
    }
    run
}

/// `(12) name` or `(12)`.
fn numbered(value: &str) -> Option<(&str, Option<&str>)> {
    let rest = value.strip_prefix('(')?;
    let (id, name) = rest.split_once(')')?;
    Some((id, Some(name.trim()).filter(|name| !name.is_empty())))
}

/// A symbol's name with what changes between builds replaced by `*` (the `.llvm.N` suffix LTO
/// gives the local functions it exports); `None` for what is no symbol (an address, `(below
/// main)`). The legacy mangling's hash stays: it tells a generic function's instances apart, and
/// it only changes with the toolchain, a dependency's version or the features.
fn pattern(symbol: &str) -> Option<String> {
    let symbol = match symbol.find(".llvm.") {
        Some(at) => format!("{}*", &symbol[..at]),
        None => symbol.to_owned(),
    };
    let plain = symbol.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '$' | '.' | '*'));
    (plain && symbol.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')).then_some(symbol)
}

fn script(names: &BTreeSet<String>) -> String {
    let mut text = String::from(
        "/* The functions that start Larik, open a session and serve a turn, placed together before\n   the rest of the code: see bench/src/layout.rs. Written by `bash bench/run.sh layout`. */\nSECTIONS {\n  .text.larik_hot : {\n",
    );
    for name in names {
        // LLVM puts a function it takes for cold in `.text.unlikely.`.
        text.push_str(&format!("    *(.text.{name} .text.unlikely.{name})\n"));
    }
    text.push_str("  }\n} INSERT BEFORE .text;\n");
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_lose_what_changes_between_builds() {
        assert_eq!(
            pattern("_ZN5larik4main17h0123456789abcdefE").as_deref(),
            Some("_ZN5larik4main17h0123456789abcdefE"),
        );
        assert_eq!(
            pattern("_ZN4core3fmt5write17h0123456789abcdefE.llvm.123456").as_deref(),
            Some("_ZN4core3fmt5write17h0123456789abcdefE*"),
        );
        assert_eq!(
            pattern("_RNvNtCsjrHSEGnQ3l9_3std2rt19lang_start_internal.llvm.42").as_deref(),
            Some("_RNvNtCsjrHSEGnQ3l9_3std2rt19lang_start_internal*")
        );
        assert_eq!(pattern("git_oid_global_init").as_deref(), Some("git_oid_global_init"));
        assert_eq!(pattern("0x00000000008cdf70"), None);
        assert_eq!(pattern("(below main)"), None);
    }

    #[test]
    fn only_the_binarys_functions_are_kept() {
        let profile = "ob=(1) /usr/lib/libc.so.6\nfn=(1) malloc\nob=(2) /x/larik\nfn=(2) _ZN5larik4main17h0123456789abcdefE\ncob=(1)\ncfn=(1)\nfn=(3) git_oid_global_init\nob=(1)\nfn=(1)\n";
        let run = functions_run(profile, Path::new("/x/larik"));
        assert_eq!(run.into_iter().collect::<Vec<_>>(), ["_ZN5larik4main17h0123456789abcdefE", "git_oid_global_init"]);
    }
}
