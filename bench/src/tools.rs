//! Tool figures: `grep` against ripgrep on the same tree, `glob` over 100,000 files (beside
//! ripgrep listing the same files), `edit` of a 20 MB file, and `read` of the last 100 lines of
//! a 1 GB file.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use larik_core::bench::Workspace;
use larik_core::bench::{Registry, ToolContext, run_now};
use serde_json::json;

use crate::stats::{Row, duration_row, median, time_async, time_command};

const RUNS: usize = 5;

pub async fn measure() -> anyhow::Result<Vec<Row>> {
    let mut rows = Vec::new();
    rows.extend(grep_against_ripgrep().await?);
    rows.extend(glob_over_many_files().await?);
    rows.extend(edit_and_read().await?);
    rows.extend(sandboxed_command_start()?);
    Ok(rows)
}

/// What the sandbox adds to a command: `bash -c true` plain and through the helper, for a git
/// repository with every stand-in to make (the worst case), and the one-time probe.
fn sandboxed_command_start() -> anyhow::Result<Vec<Row>> {
    let project = tempfile::tempdir()?;
    std::process::Command::new("git").args(["init", "-q"]).current_dir(project.path()).status()?;
    let helper = larik_tests::harness::larik_bin();
    let sandbox =
        larik_core::sandbox::Sandbox::new(helper.clone(), project.path().to_path_buf(), Vec::new(), &[], false);
    let plain = time_command(30, "bash", &["-c", "true"], project.path())?;
    let mut confined = Vec::with_capacity(30);
    for index in 0..=30 {
        let started = std::time::Instant::now();
        // Preparing (stand-ins made and locked) is part of what each command costs.
        let prepared = sandbox.confine("true", None)?;
        let status =
            std::process::Command::new(&prepared.program).args(&prepared.args).current_dir(project.path()).status()?;
        drop(prepared);
        anyhow::ensure!(status.success(), "the sandboxed command failed: {status}");
        if index > 0 {
            confined.push(started.elapsed());
        }
    }
    let probe = time_command(10, &helper.display().to_string(), &["__sandbox", "--probe"], project.path())?;
    Ok(vec![
        duration_row("bash -c true, plain", &plain, "(reference)"),
        duration_row("bash -c true, sandboxed (git repo, every stand-in made)", &confined, "< plain + 10 ms"),
        duration_row("sandbox probe (once per process)", &probe, "< 20 ms"),
    ])
}

/// The largest real source tree on the machine: the cargo registry's sources, or a generated one.
fn search_tree() -> anyhow::Result<(PathBuf, Option<tempfile::TempDir>)> {
    let home = std::env::var("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|_| std::env::var("HOME").map(|home| Path::new(&home).join(".cargo")))?;
    if let Some(src) = std::fs::read_dir(home.join("registry/src")).ok().and_then(|mut dirs| dirs.find_map(Result::ok))
    {
        return Ok((src.path(), None));
    }
    let generated = generated_tree(100_000)?;
    Ok((generated.path().to_path_buf(), Some(generated)))
}

/// `files` small Rust files, a thousand to a directory.
fn generated_tree(files: usize) -> anyhow::Result<tempfile::TempDir> {
    let generated = tempfile::tempdir()?;
    for index in 0..files {
        let dir = generated.path().join(format!("d{}", index / 1000));
        std::fs::create_dir_all(&dir)?;
        std::fs::write(
            dir.join(format!("f{index}.rs")),
            format!("// file {index}\nfn helper_{index}() -> u32 {{ {index} }}\n"),
        )?;
    }
    Ok(generated)
}

/// `glob` must walk every file and read each match's modification time (it answers newest
/// first); `rg --files` walks the same tree and only prints names.
async fn glob_over_many_files() -> anyhow::Result<Vec<Row>> {
    let tree = generated_tree(100_000)?;
    let ctx = ToolContext::standalone(Arc::new(Workspace::new(tree.path())));
    let registry = Registry::builtin(None);
    let glob = registry.get("glob").ok_or_else(|| anyhow::anyhow!("no glob tool"))?;
    let mut rows = Vec::new();
    for pattern in ["**/*.rs", "**/f9*7.rs"] {
        let ours = time_async(RUNS, || {
            let (glob, ctx) = (glob.clone(), ctx.clone());
            async move {
                let output = run_now(glob, &json!({"pattern": pattern}), &ctx).await;
                anyhow::ensure!(!output.is_error && output.text_content().contains(".rs"), "{}", output.text_content());
                Ok(())
            }
        })
        .await?;
        rows.push(duration_row(&format!("glob `{pattern}` over 100,000 files"), &ours, ""));
    }
    match time_command(RUNS, "rg", &["--files", "--glob", "*.rs"], tree.path()) {
        Ok(times) => rows.push(duration_row("rg --files (same tree)", &times, "")),
        Err(error) => rows.push(Row::single("rg --files", format!("not run: {error}"), "")),
    }
    Ok(rows)
}

async fn grep_against_ripgrep() -> anyhow::Result<Vec<Row>> {
    let (tree, _keep) = search_tree()?;
    let workspace = Arc::new(Workspace::new(&tree));
    let ctx = ToolContext::standalone(workspace);
    let registry = Registry::builtin(None);
    let grep = registry.get("grep").ok_or_else(|| anyhow::anyhow!("no grep tool"))?;
    let mut rows = Vec::new();
    for (label, pattern) in [("literal", "fn main"), ("regex", r"fn\s+[a-z_]+_test\b")] {
        let ours = time_async(RUNS, || {
            let input = json!({"pattern": pattern, "output_mode": "files_with_matches", "head_limit": 1_000_000});
            let (grep, ctx) = (grep.clone(), ctx.clone());
            async move {
                let output = run_now(grep, &input, &ctx).await;
                anyhow::ensure!(!output.is_error, "{}", output.text_content());
                Ok(())
            }
        })
        .await?;
        let ripgrep = time_command(RUNS, "rg", &["--files-with-matches", pattern], &tree);
        let files = std::fs::read_dir(&tree).map(|dirs| dirs.count()).unwrap_or(0);
        rows.push(duration_row(&format!("grep {label} `{pattern}` ({files} crates)"), &ours, "≤ 1.3× rg"));
        match ripgrep {
            Ok(times) => {
                let ratio = median(&ours).as_secs_f64() / median(&times).as_secs_f64().max(f64::EPSILON);
                rows.push(duration_row(&format!("rg {label} (same tree)"), &times, ""));
                rows.push(Row::single(format!("grep/rg ratio, {label}"), format!("{ratio:.2}×"), "≤ 1.3×"));
            }
            Err(error) => rows.push(Row::single(format!("rg {label}"), format!("not run: {error}"), "")),
        }
    }
    Ok(rows)
}

async fn edit_and_read() -> anyhow::Result<Vec<Row>> {
    let dir = tempfile::tempdir()?;
    let workspace = Arc::new(Workspace::new(dir.path()));
    let ctx = ToolContext::standalone(Arc::clone(&workspace));
    let registry = Registry::builtin(None);
    let (edit, read) = (
        registry.get("edit").ok_or_else(|| anyhow::anyhow!("no edit"))?,
        registry.get("read").ok_or_else(|| anyhow::anyhow!("no read"))?,
    );

    // 20 MB of source-like lines, one unique line in the middle to edit back and forth.
    let lines = 20 * 1024 * 1024 / 40;
    let mut body: String = (0..lines).map(|index| format!("    let value_{index:08} = compute({index});\n")).collect();
    body.insert_str(body.len() / 2, "    let marker = \"before\";\n");
    let path = dir.path().canonicalize()?.join("big.rs");
    std::fs::write(&path, &body)?;
    let mut flip = false;
    let edits = time_async(RUNS, || {
        flip = !flip;
        let (old, new) = if flip { ("\"before\"", "\"after\"") } else { ("\"after\"", "\"before\"") };
        let input = json!({"path": "big.rs", "old_string": old, "new_string": new});
        let (edit, ctx, workspace, path) = (edit.clone(), ctx.clone(), Arc::clone(&workspace), path.clone());
        async move {
            workspace.record_read(&path);
            let output = run_now(edit, &input, &ctx).await;
            anyhow::ensure!(!output.is_error, "{}", output.text_content());
            Ok(())
        }
    })
    .await?;

    // A 1 GB log with text at both ends and a sparse middle, so it costs no disk: the read
    // checks the head (is it text?) and seeks to the tail; it never looks in between.
    let log = dir.path().join("huge.log");
    {
        use std::io::{Seek, SeekFrom, Write};
        let mut file = std::fs::File::create(&log)?;
        for index in 0..200 {
            writeln!(file, "2026-11-30T05:00:00Z INFO startup step {index}")?;
        }
        file.set_len(1024 * 1024 * 1024 - 200_000)?;
        file.seek(SeekFrom::End(0))?;
        for index in 0..4000 {
            writeln!(file, "2026-11-30T06:00:00Z INFO request {index} served in 12 ms")?;
        }
    }
    let reads = time_async(RUNS * 4, || {
        let (read, ctx) = (read.clone(), ctx.clone());
        async move {
            let output = run_now(read, &json!({"path": "huge.log", "offset": -100}), &ctx).await;
            anyhow::ensure!(output.text_content().contains("request 3999"), "{}", output.text_content());
            Ok(())
        }
    })
    .await?;
    Ok(vec![
        duration_row("edit of a 20 MB file (with its diff)", &edits, "< 300 ms"),
        duration_row("read of the last 100 lines of a 1 GB file", &reads, "< 50 ms"),
    ])
}
