//! Test support for Larik: the mock model server and a harness that drives the real `larik`
//! binary over stdio.

pub mod harness;
pub mod mock_llm;
