//! Figure 8, optional: the ready time and idle footprint of other ACP agents, measured in the
//! same run as Larik's and printed as ratios. `bench/peers.sh` installs them from npm and names
//! them here through `LARIK_PEER_CODEX` and `LARIK_PEER_CLAUDE`. Their model credentials are fake:
//! nothing is asked of a model, and a peer that cannot open a session without a real login says
//! so in the table.

use std::process::Stdio;
use std::time::{Duration, Instant};

use larik_tests::harness::{Agent, Sandbox};
use serde_json::json;

use crate::process::{cpu_time, memory_kib};
use crate::stats::{Row, median_of};

/// An agent to measure: how to start it, and the `authenticate` method it needs, if any.
struct Contender {
    name: &'static str,
    program: String,
    args: Vec<String>,
    authenticate: Option<&'static str>,
}

/// What one start of an agent showed.
struct Start {
    initialized: Duration,
    /// `session/new` answered, or its error.
    session: Result<Duration, String>,
    rss_mib: f64,
    idle_cpu_ms: f64,
}

/// The process and every process under it: peers run helpers of their own.
fn process_tree(root: u32) -> Vec<u32> {
    let mut parents: Vec<(u32, u32)> = Vec::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|name| name.parse::<u32>().ok()) else { continue };
        let stat = std::fs::read_to_string(entry.path().join("stat")).unwrap_or_default();
        let parent = stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().nth(1))
            .and_then(|ppid| ppid.parse().ok());
        if let Some(parent) = parent {
            parents.push((pid, parent));
        }
    }
    let mut tree = vec![root];
    let mut index = 0;
    while index < tree.len() {
        let parent = tree[index];
        tree.extend(parents.iter().filter(|(_, of)| *of == parent).map(|(pid, _)| *pid));
        index += 1;
    }
    tree
}

async fn start(contender: &Contender, sandbox: &Sandbox, idle: Duration) -> anyhow::Result<Start> {
    let mut env = sandbox.base_env();
    env.extend([
        ("ANTHROPIC_API_KEY".to_owned(), "test-key".to_owned()),
        ("OPENAI_API_KEY".to_owned(), "test-key".to_owned()),
        // Nothing listens there: no model is called while measuring.
        ("ANTHROPIC_BASE_URL".to_owned(), "http://127.0.0.1:9".to_owned()),
        ("OPENAI_BASE_URL".to_owned(), "http://127.0.0.1:9/v1".to_owned()),
        ("CODEX_HOME".to_owned(), sandbox.home.path().join(".codex").display().to_string()),
    ]);
    std::fs::create_dir_all(sandbox.home.path().join(".codex"))?;
    let started = Instant::now();
    let child = tokio::process::Command::new(&contender.program)
        .args(&contender.args)
        .current_dir(sandbox.project.path())
        .env_clear()
        .envs(env)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()?;
    let mut agent = Agent::from_child(child);
    let pid = agent.child.id().unwrap_or(0);
    let id = agent.request("initialize", json!({"protocolVersion": 1, "clientCapabilities": {}})).await;
    agent.response(id).await;
    let initialized = started.elapsed();
    if let Some(method) = contender.authenticate {
        let id = agent.request("authenticate", json!({"methodId": method})).await;
        agent.response(id).await;
    }
    let id = agent.request("session/new", json!({"cwd": sandbox.project_path(), "mcpServers": []})).await;
    let (answer, _) = agent.response(id).await;
    let session = match answer.get("error") {
        None => Ok(started.elapsed()),
        Some(error) => Err(error["message"].as_str().unwrap_or("error").to_owned()),
    };
    tokio::time::sleep(Duration::from_millis(500)).await;
    let tree = process_tree(pid);
    let rss_mib = tree.iter().map(|pid| memory_kib(*pid).0).sum::<u64>() as f64 / 1024.0;
    let cpu_before: Duration = tree.iter().map(|pid| cpu_time(*pid)).sum();
    tokio::time::sleep(idle).await;
    let cpu_after: Duration = process_tree(pid).iter().map(|pid| cpu_time(*pid)).sum();
    let idle_cpu_ms = cpu_after.saturating_sub(cpu_before).as_secs_f64() * 1000.0;
    agent.close_stdin();
    let _ = tokio::time::timeout(Duration::from_secs(5), agent.wait_exit()).await;
    for pid in tree {
        // SAFETY: kill only sends a signal; a pid that already exited is an error we ignore.
        unsafe { libc::kill(i32::try_from(pid).unwrap_or(0), libc::SIGKILL) };
    }
    Ok(Start { initialized, session, rss_mib, idle_cpu_ms })
}

pub async fn measure(idle_seconds: u64) -> anyhow::Result<Vec<Row>> {
    let larik = std::env::var("LARIK_BIN").unwrap_or_else(|_| larik_tests::harness::larik_bin().display().to_string());
    let mut contenders =
        vec![Contender { name: "larik", program: larik, args: vec!["acp".into()], authenticate: None }];
    if let Ok(program) = std::env::var("LARIK_PEER_CODEX") {
        contenders.push(Contender {
            name: "codex-acp",
            program,
            args: Vec::new(),
            authenticate: Some("openai-api-key"),
        });
    }
    if let Ok(program) = std::env::var("LARIK_PEER_CLAUDE") {
        contenders.push(Contender { name: "claude-agent-acp", program, args: Vec::new(), authenticate: None });
    }
    anyhow::ensure!(contenders.len() > 1, "no peers to compare: run bench/peers.sh, which installs them");
    let idle = Duration::from_secs(idle_seconds);
    let mut rows = Vec::new();
    let mut ours: Option<(f64, f64)> = None;
    for contender in &contenders {
        let (mut init, mut ready, mut rss, mut cpu, mut failure) =
            (Vec::new(), Vec::new(), Vec::new(), Vec::new(), None);
        for _ in 0..5 {
            let sandbox = Sandbox::new();
            let start = start(contender, &sandbox, idle).await?;
            init.push(start.initialized.as_secs_f64() * 1000.0);
            match start.session {
                Ok(time) => ready.push(time.as_secs_f64() * 1000.0),
                Err(error) => failure = Some(error),
            }
            rss.push(start.rss_mib);
            cpu.push(start.idle_cpu_ms);
        }
        let (init, rss, cpu) = (median_of(&init), median_of(&rss), median_of(&cpu));
        let ready_text = match failure {
            Some(error) if ready.is_empty() => format!("session/new failed here: {error}"),
            _ => format!("{:.1} ms", median_of(&ready)),
        };
        let ready = (!ready.is_empty()).then(|| median_of(&ready));
        let ratio = |ours: f64, theirs: f64| {
            if ours > 0.0 { format!(" ({:.0}× Larik)", theirs / ours) } else { String::new() }
        };
        // The first contender is Larik: the others are compared with it.
        let (ready_ratio, rss_ratio) = match ours {
            Some((our_ready, our_rss)) => {
                (ready.map(|ready| ratio(our_ready, ready)).unwrap_or_default(), ratio(our_rss, rss))
            }
            None => {
                ours = Some((ready.unwrap_or_default(), rss));
                (String::new(), String::new())
            }
        };
        let name = contender.name;
        let row = |label: &str, value: String| Row::single(format!("{name}: {label}"), value, "");
        rows.push(row("initialize answered", format!("{init:.1} ms")));
        rows.push(row("ready (session/new answered)", format!("{ready_text}{ready_ratio}")));
        rows.push(row("RSS after session/new (process tree)", format!("{rss:.1} MiB{rss_ratio}")));
        rows.push(row(&format!("idle CPU over {idle_seconds} s"), format!("{cpu:.0} ms")));
    }
    Ok(rows)
}
