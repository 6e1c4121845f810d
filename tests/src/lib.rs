#![allow(clippy::expect_used, clippy::unwrap_used)]
// Test support: a failed expectation here is a failed test, which is what a panic reports.

//! Test support for Larik: the mock model server and a harness that drives the real `larik`
//! binary over stdio.

pub mod chromium;
pub mod harness;
pub mod listener;
pub mod lsp_client;
pub mod mcp_servers;
pub mod mock_llm;
pub mod pages;
pub mod tasks;
pub mod turns;
