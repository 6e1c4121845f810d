//! Names the git commit the binary is built from (`LARIK_COMMIT`), for `larik --version`. A
//! build outside a git checkout (a source archive) may set `LARIK_COMMIT` itself; else it says
//! `unknown`.

use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    let output = Command::new("git").args(args).output().ok().filter(|output| output.status.success())?;
    String::from_utf8(output.stdout).ok().map(|text| text.trim().to_owned()).filter(|text| !text.is_empty())
}

fn main() {
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
