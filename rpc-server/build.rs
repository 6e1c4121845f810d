//! Names the git commit the binary is built from (`LARIK_COMMIT`), for `larik --version`. A
//! build outside a git checkout (a source archive) may set `LARIK_COMMIT` itself; else it says
//! `unknown`.
//!
//! A release build for Linux also links with `hot-functions.ld`, which places the functions a
//! session runs together at the front of the code (see `bench/src/layout.rs`).

use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    let output = Command::new("git").args(args).output().ok().filter(|output| output.status.success())?;
    String::from_utf8(output.stdout).ok().map(|text| text.trim().to_owned()).filter(|text| !text.is_empty())
}

fn main() {
    hot_functions_first();
    println!("cargo:rerun-if-env-changed=LARIK_COMMIT");
    let given = std::env::var("LARIK_COMMIT").ok().filter(|commit| !commit.is_empty());
    let commit = given.or_else(|| git(&["rev-parse", "--short=12", "HEAD"])).unwrap_or_else(|| "unknown".to_owned());
    println!("cargo:rustc-env=LARIK_COMMIT={commit}");
    // Built again when HEAD moves: a checkout changes HEAD, a commit changes the branch's ref
    // (a loose file, or a line of packed-refs). Only files that exist are named: cargo takes a
    // missing one as changed, and would build the binary again on every build.
    if let Some(dir) = git(&["rev-parse", "--absolute-git-dir"]) {
        let reference = git(&["symbolic-ref", "-q", "HEAD"]);
        let watched = ["HEAD".to_owned(), "packed-refs".to_owned()].into_iter().chain(reference);
        for path in watched.map(|name| format!("{dir}/{name}")).filter(|path| std::path::Path::new(path).exists()) {
            println!("cargo:rerun-if-changed={path}");
        }
    }
}

/// The linker script of the functions a session runs, for a release build on Linux (GNU ld and
/// lld read it; other platforms' linkers take no such script).
fn hot_functions_first() {
    let script = std::path::Path::new("hot-functions.ld");
    println!("cargo:rerun-if-changed=hot-functions.ld");
    let release = std::env::var("PROFILE").is_ok_and(|profile| profile == "release");
    let linux = std::env::var("CARGO_CFG_TARGET_OS").is_ok_and(|os| os == "linux");
    if release && linux && script.exists() {
        let path = std::fs::canonicalize(script).unwrap_or_else(|_| script.to_path_buf());
        println!("cargo:rustc-link-arg-bin=larik=-Wl,-T,{}", path.display());
    }
}
