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
    // Built again when HEAD moves: a checkout changes HEAD, a commit changes the branch's ref.
    if let Some(dir) = git(&["rev-parse", "--absolute-git-dir"]) {
        println!("cargo:rerun-if-changed={dir}/HEAD");
        println!("cargo:rerun-if-changed={dir}/packed-refs");
        if let Some(reference) = git(&["symbolic-ref", "-q", "HEAD"]) {
            println!("cargo:rerun-if-changed={dir}/{reference}");
        }
    }
}
