//! What a long session costs in input tokens, from the requests Larik really sent: a scripted
//! 41-request session (one read of a ~2 KB source file per request) against the mock model,
//! each request priced under the provider's published prompt-caching rules.
//!
//! Anthropic: a request's blocks are the tools, the system blocks and the messages' content
//! blocks, in that order, each estimated at four bytes a token. A cache entry is written at each
//! block carrying `cache_control` whose prefix is at least 1,024 tokens; a request reads the
//! longest cached prefix ending at one of its breakpoints or up to 20 blocks before it. Reads
//! cost 0.1x, writes 1.25x, the rest 1x. "Ideal" reads everything any earlier request sent.
//!
//! OpenAI: caching is automatic by prefix, past 1,024 tokens; a request's cached part is its
//! longest prefix shared with an earlier request (whole messages, as the tool list and system
//! prompt come first and stay put), priced at the cached rate of 0.25x (gpt-4.1's).

use std::collections::HashSet;

use larik_tests::harness::{Agent, Sandbox};
use larik_tests::mock_llm::{MockLlm, Scenario, Step, without_cache_markers};
use serde_json::{Value, json};

use crate::stats::Row;

/// Requests in the scripted session: forty reads and the answer.
const READS: usize = 40;
const MINIMUM_CACHED_TOKENS: u64 = 1024;
const LOOKBACK_BLOCKS: usize = 20;

pub async fn measure() -> anyhow::Result<Vec<Row>> {
    let mut rows = Vec::new();
    let anthropic = session(false).await?;
    let priced = anthropic_bill(&anthropic);
    rows.push(Row::single(
        format!("cost, Anthropic, {} requests: raw input", anthropic.len()),
        format!("{:.0}k tokens", priced.raw / 1000.0),
        "",
    ));
    rows.push(Row::single(
        "cost, Anthropic: billed / raw (ideal caching of the same requests); billed",
        format!("{:.3} ({:.3}); {:.0}k", priced.billed / priced.raw, priced.ideal / priced.raw, priced.billed / 1000.0),
        "≤ 0.16",
    ));
    let with_servers = Sandbox::new();
    if let Some(configured) = crate::mcp_servers::three(&with_servers.project_path()) {
        with_servers.write_user_settings(&json!({"mcpServers": configured}));
        let requests = session_in(&with_servers, false).await?;
        let priced = anthropic_bill(&requests);
        rows.push(Row::single(
            "cost, Anthropic, with 3 MCP servers: raw input; billed / raw (ideal); billed",
            format!(
                "{:.0}k tokens; {:.3} ({:.3}); {:.0}k",
                priced.raw / 1000.0,
                priced.billed / priced.raw,
                priced.ideal / priced.raw,
                priced.billed / 1000.0
            ),
            "≤ 0.16",
        ));
    }
    let openai = session(true).await?;
    let priced = openai_bill(&openai);
    rows.push(Row::single(
        "cost, OpenAI: billed / raw at the 0.25x cached rate (ideal)",
        format!("{:.3} ({:.3})", priced.billed / priced.raw, priced.ideal / priced.raw),
        "within 0.02 of ideal",
    ));
    rows.push(Row::single(
        "cost, OpenAI: prefix shared with the previous request, least (median)",
        format!("{:.1}% ({:.1}%)", priced.least_shared * 100.0, priced.median_shared * 100.0),
        "≥ 95%",
    ));
    Ok(rows)
}

/// The requests of the scripted session, as the mock received them.
async fn session(openai: bool) -> anyhow::Result<Vec<Value>> {
    session_in(&Sandbox::new(), openai).await
}

/// The scripted session in `sandbox`, with whatever settings it holds.
async fn session_in(sandbox: &Sandbox, openai: bool) -> anyhow::Result<Vec<Value>> {
    let body: String = (0..48).map(|line| format!("    let value_{line} = compute({line}, \"item\");\n")).collect();
    let mut steps = Vec::new();
    for read in 0..READS {
        std::fs::write(sandbox.project.path().join(format!("module_{read}.rs")), format!("fn f() {{\n{body}}}\n"))?;
        steps.push(Step::tool(&format!("r{read}"), "read", json!({"path": format!("module_{read}.rs")})));
    }
    steps.push(Step::text("Every module computes its items the same way."));
    let mock = MockLlm::start(Scenario { responses: steps }).await?;
    let env = if openai { sandbox.openai_env(mock.url()) } else { sandbox.env(mock.url()) };
    let mut agent = Agent::spawn(&sandbox.project_path(), &env);
    agent.initialize().await;
    let session = agent.new_session(&sandbox.project_path()).await;
    agent.prompt(&session, "read every module and tell me what they have in common", |_| "allow_once").await;
    agent.close_stdin();
    agent.wait_exit().await;
    Ok(mock.requests())
}

struct Bill {
    raw: f64,
    billed: f64,
    ideal: f64,
    least_shared: f64,
    median_shared: f64,
}

fn tokens(block: &Value) -> u64 {
    block.to_string().len() as u64 / 4 + 1
}

/// A request's blocks in cache order, each with whether it carries a breakpoint.
fn anthropic_blocks(request: &Value) -> Vec<(Value, bool)> {
    let listed = |value: &Value| value.as_array().cloned().unwrap_or_default();
    let mut blocks: Vec<Value> = listed(&request["tools"]);
    blocks.extend(listed(&request["system"]));
    for message in listed(&request["messages"]) {
        match &message["content"] {
            Value::Array(content) => blocks.extend(content.iter().cloned()),
            text => blocks.push(text.clone()),
        }
    }
    blocks.into_iter().map(|block| (without_cache_markers(&block), block.get("cache_control").is_some())).collect()
}

fn anthropic_bill(requests: &[Value]) -> Bill {
    let (mut cached, mut seen) = (HashSet::new(), HashSet::new());
    let mut bill = Bill { raw: 0.0, billed: 0.0, ideal: 0.0, least_shared: 1.0, median_shared: 1.0 };
    for request in requests {
        let blocks = anthropic_blocks(request);
        // The prefix ending at each block: its key and its tokens.
        let mut prefixes = Vec::with_capacity(blocks.len());
        let (mut key, mut total) = (String::new(), 0u64);
        for (block, _) in &blocks {
            key.push_str(&block.to_string());
            total += tokens(block);
            prefixes.push((fingerprint(&key), total));
        }
        let breakpoints: Vec<usize> =
            blocks.iter().enumerate().filter(|(_, (_, marked))| *marked).map(|(index, _)| index).collect();
        let read = breakpoints
            .iter()
            .flat_map(|&at| (at.saturating_sub(LOOKBACK_BLOCKS)..=at).rev())
            .filter(|&at| cached.contains(&prefixes[at].0))
            .map(|at| prefixes[at].1)
            .max()
            .unwrap_or(0);
        let written = breakpoints.last().map_or(0, |&at| prefixes[at].1).max(read);
        for &at in &breakpoints {
            if prefixes[at].1 >= MINIMUM_CACHED_TOKENS {
                cached.insert(prefixes[at].0);
            }
        }
        let ideal_read = prefixes.iter().rev().find(|(key, _)| seen.contains(key)).map_or(0, |(_, tokens)| *tokens);
        seen.extend(prefixes.iter().map(|(key, _)| *key));
        let (read, written, ideal_read, total) = (read as f64, written as f64, ideal_read as f64, total as f64);
        bill.raw += total;
        bill.billed += 0.1 * read + 1.25 * (written - read) + (total - written);
        bill.ideal += 0.1 * ideal_read + 1.25 * (total - ideal_read);
    }
    bill
}

fn openai_bill(requests: &[Value]) -> Bill {
    const CACHED_RATE: f64 = 0.25;
    let mut bill = Bill { raw: 0.0, billed: 0.0, ideal: 0.0, least_shared: 1.0, median_shared: 1.0 };
    let (mut previous, mut fractions): (Vec<Value>, Vec<f64>) = (Vec::new(), Vec::new());
    for request in requests {
        // The tools and the system prompt lead; then each message.
        let mut blocks = vec![json!({"tools": request["tools"]})];
        blocks.extend(request["messages"].as_array().cloned().unwrap_or_default());
        let total: u64 = blocks.iter().map(tokens).sum();
        let shared: u64 = blocks
            .iter()
            .zip(&previous)
            .take_while(|(block, before)| block == before)
            .map(|(block, _)| tokens(block))
            .sum();
        let cached = if shared >= MINIMUM_CACHED_TOKENS { shared } else { 0 };
        if !previous.is_empty() {
            fractions.push(shared as f64 / total as f64);
        }
        let (total, cached, shared) = (total as f64, cached as f64, shared as f64);
        bill.raw += total;
        bill.billed += CACHED_RATE * cached + (total - cached);
        bill.ideal += CACHED_RATE * shared + (total - shared);
        previous = blocks;
    }
    bill.least_shared = fractions.iter().copied().reduce(f64::min).unwrap_or(1.0);
    bill.median_shared = crate::stats::median_of(&fractions);
    bill
}

/// A short fingerprint of a prefix's text.
fn fingerprint(text: &str) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    text.hash(&mut hasher);
    hasher.finish()
}
