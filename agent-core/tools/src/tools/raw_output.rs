//! `raw_output`: the exact output of an earlier bash call, from the token saver's sidecar, a
//! slice at a time. In the registry only while the token saver is on.

use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;

use super::{CallDescription, Registry, Tool, ToolContext, ToolOutput};
use crate::event::ToolKind;
use crate::token_saver::TokenSaver;

/// The most one call returns, and what it returns when not told.
pub const MAX_LIMIT: usize = 20_000;

#[derive(Deserialize, JsonSchema)]
pub struct RawOutputInput {
    /// The id of the bash call whose exact output to read.
    pub tool_call_id: String,
    /// Where to start, in bytes from the start of the output (zero-based; default 0).
    #[serde(default)]
    pub offset: u64,
    /// How many bytes to return (default and at most 20000).
    #[serde(default)]
    pub limit: Option<usize>,
}

pub struct RawOutput;

/// Offers `raw_output` when the session has a token saver.
pub fn offer_if_on(registry: &Registry, token_saver: Option<&Arc<TokenSaver>>) {
    if token_saver.is_some() {
        registry.add(Arc::new(RawOutput) as Arc<dyn super::DynTool>);
    }
}

impl Tool for RawOutput {
    type Input = RawOutputInput;
    const NAME: &'static str = "raw_output";
    const DESCRIPTION: &'static str = "Read the exact output of an earlier bash call whose output the token saver filtered (its note names the call). `offset` is zero-based, in bytes; `limit` is at most 20000 bytes. The answer says the total size and the next offset while more remains.";
    const KIND: ToolKind = ToolKind::Read;

    fn read_only(&self) -> bool {
        true
    }

    fn describe(&self, input: &RawOutputInput, _ctx: &ToolContext) -> CallDescription {
        CallDescription::titled(format!("Exact output of {} from byte {}", input.tool_call_id, input.offset))
    }

    async fn run(&self, input: RawOutputInput, ctx: &ToolContext) -> ToolOutput {
        let Some(saver) = ctx.env.token_saver.as_deref() else {
            return ToolOutput::error("the token saver is off in this session, so no exact output is stored");
        };
        let limit = input.limit.unwrap_or(MAX_LIMIT).clamp(1, MAX_LIMIT);
        let slice = match saver.sidecar().read(&input.tool_call_id, input.offset, limit) {
            Ok(slice) => slice,
            Err(error) => return ToolOutput::error(error.to_string()),
        };
        let text = String::from_utf8_lossy(&slice.bytes);
        let place = if slice.end() < slice.total {
            format!("bytes {}..{} of {}; more from offset {}", slice.offset, slice.end(), slice.total, slice.end())
        } else {
            format!("bytes {}..{} of {}; the end", slice.offset, slice.end(), slice.total)
        };
        let separator = if text.is_empty() || text.ends_with('\n') { "" } else { "\n" };
        ToolOutput::text(format!("{text}{separator}[{place}]"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::token_saver::Sidecar;
    use crate::tools::ToolEnv;
    use crate::workspace::Workspace;

    fn context(data: &std::path::Path, project: &std::path::Path) -> ToolContext {
        let mut env = ToolEnv::standalone(Arc::new(Workspace::new(project)));
        env.token_saver = Some(Arc::new(TokenSaver::new(Sidecar::for_session(data, "s").unwrap())));
        ToolContext { env: Arc::new(env), ..ToolContext::standalone(Arc::new(Workspace::new(project))) }
    }

    fn read(tool_call_id: &str, offset: u64, limit: Option<usize>) -> RawOutputInput {
        RawOutputInput { tool_call_id: tool_call_id.into(), offset, limit }
    }

    #[tokio::test]
    async fn slices_by_offset_and_limit_up_to_the_cap() {
        let (data, project) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let ctx = context(data.path(), project.path());
        let output: String = (0..3000).map(|line| format!("line {line:05}\n")).collect();
        assert_eq!(output.len(), 33_000);
        ctx.env.token_saver.as_ref().unwrap().sidecar().store("toolu_1", output.as_bytes()).unwrap();
        let first = RawOutput.run(read("toolu_1", 0, None), &ctx).await.text_content();
        assert!(
            first.starts_with("line 00000\n") && first.ends_with("[bytes 0..20000 of 33000; more from offset 20000]"),
            "{}",
            &first[first.len() - 80..]
        );
        let capped = RawOutput.run(read("toolu_1", 0, Some(50_000)), &ctx).await.text_content();
        assert_eq!(capped, first, "the limit is capped at 20,000 bytes");
        let rest = RawOutput.run(read("toolu_1", 20_000, None), &ctx).await.text_content();
        assert_eq!(
            format!("{}{}", &first[..20_000], rest.trim_end_matches("[bytes 20000..33000 of 33000; the end]")),
            output
        );
        let small = RawOutput.run(read("toolu_1", 11, Some(11)), &ctx).await.text_content();
        assert_eq!(small, "line 00001\n[bytes 11..22 of 33000; more from offset 22]");
    }

    #[tokio::test]
    async fn unknown_and_escaping_ids_are_told_to_the_model() {
        let (data, project) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let ctx = context(data.path(), project.path());
        let unknown = RawOutput.run(read("toolu_9", 0, None), &ctx).await;
        assert!(
            unknown.is_error
                && unknown.text_content().contains("no exact output is stored for the tool call `toolu_9`"),
            "{}",
            unknown.text_content()
        );
        let escaping = RawOutput.run(read("../../../etc/passwd", 0, None), &ctx).await;
        assert!(
            escaping.is_error && escaping.text_content().contains("is not a tool call id"),
            "{}",
            escaping.text_content()
        );
        ctx.env.token_saver.as_ref().unwrap().sidecar().store("t", b"short").unwrap();
        let past = RawOutput.run(read("t", 5, None), &ctx).await;
        assert!(past.is_error && past.text_content().contains("past the end"), "{}", past.text_content());
        let off = ToolContext::standalone(Arc::new(Workspace::new(project.path())));
        assert!(RawOutput.run(read("t", 0, None), &off).await.text_content().contains("the token saver is off"));
    }
}
