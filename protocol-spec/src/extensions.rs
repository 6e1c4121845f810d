//! Larik's extensions to ACP v1. Each is optional for the client; Larik advertises them in
//! `agentCapabilities._meta.larik` and reads a client's opt-ins from
//! `clientCapabilities._meta.larik`. `spec/extensions.md` documents them for client authors.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The key under which Larik's data sits in any `_meta` object.
pub const META_KEY: &str = "larik";

/// The notification a client sends to tell the agent what the user is looking at.
pub const EDITOR_CONTEXT_METHOD: &str = "_larik/editor_context";

/// The request Larik sends a client that set `diagnostics`: a file's problems as the editor's
/// own language servers see them, after an edit.
pub const DIAGNOSTICS_METHOD: &str = "_larik/diagnostics";

/// Params of `_larik/diagnostics`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DiagnosticsRequest {
    pub session_id: String,
    /// The file, absolute.
    pub path: String,
    /// How long the editor may wait for its servers to catch up with the file's current text
    /// before it answers with what it has.
    pub wait_ms: u64,
}

/// The answer to `_larik/diagnostics`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DiagnosticsResponse {
    /// The file's problems now; `null` when no language server of the editor's covers the file
    /// (Larik then asks its own).
    pub diagnostics: Option<Vec<EditorDiagnostic>>,
}

/// Restores the project's files to a checkpoint (before the last turn that changed them, by
/// default) and rewinds the conversation to the same point.
pub const UNDO_METHOD: &str = "_larik/undo";

/// Lists the session's checkpoints.
pub const CHECKPOINTS_METHOD: &str = "_larik/checkpoints";

/// Params of `_larik/undo`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct UndoRequest {
    pub session_id: String,
    /// The checkpoint to go back to (`cp-3`); the latest when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checkpoint_id: Option<String>,
}

/// The answer to `_larik/undo`. Paths are relative to the session's directory.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct UndoResponse {
    pub checkpoint: CheckpointInfo,
    /// Written back as they were.
    pub restored: Vec<String>,
    /// Removed: created after the checkpoint.
    pub removed: Vec<String>,
    /// Left as they are: changed by hand since the agent's last turn.
    pub kept: Vec<String>,
}

/// Params of `_larik/checkpoints`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CheckpointsRequest {
    pub session_id: String,
}

/// The answer to `_larik/checkpoints`, oldest first.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CheckpointsResponse {
    pub checkpoints: Vec<CheckpointInfo>,
}

/// A checkpoint: the project before one turn that changed it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CheckpointInfo {
    pub id: String,
    /// ISO 8601, UTC.
    pub created_at: String,
    /// The turn's prompt (its first 200 characters).
    pub prompt: String,
    /// What the turn changed, relative to the session's directory.
    pub files: Vec<String>,
    /// What checkpoints leave out: large ignored trees (`target/`) and large files.
    pub skipped: Vec<String>,
}

/// One problem, as the editor shows it. Positions are 1-based.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct EditorDiagnostic {
    pub line: u32,
    pub character: u32,
    pub severity: DiagnosticSeverityName,
    pub message: String,
    /// The server or tool that reported it (`pyright`, `eslint`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum DiagnosticSeverityName {
    Error,
    Warning,
    Information,
    Hint,
}

/// `_meta.larik` of a `session/request_permission` response.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PermissionResponseMeta {
    /// Why the user rejected the call; passed to the model so it can change course.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub feedback: Option<String>,
    /// With hunk review: the hunks the user accepted (indices from the request's `hunks`).
    /// Absent means all of them; empty means none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub accepted_hunks: Option<Vec<usize>>,
}

/// One hunk of a proposed change, sent in `toolCall._meta.larik.hunks` of a permission request
/// to clients that opted into hunk review. Line numbers are 1-based, as in a unified diff.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ReviewHunk {
    pub index: usize,
    pub old_start: usize,
    pub old_lines: usize,
    pub new_start: usize,
    pub new_lines: usize,
    pub old_text: String,
    pub new_text: String,
}

/// `toolCall._meta.larik` of a permission request for a change.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ToolCallMeta {
    pub hunks: Vec<ReviewHunk>,
}

/// What a client opts into, in `clientCapabilities._meta.larik`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", default)]
pub struct ClientExtensions {
    pub hunk_review: bool,
    /// The client shows turns the agent starts itself, outside any `session/prompt`: a
    /// background task's result arriving while the session is idle. Without it those results
    /// wait for the next prompt.
    pub background_turns: bool,
    /// The client answers `_larik/diagnostics` from the editor's own language servers, so
    /// Larik does not start a second server for files the editor already checks.
    pub diagnostics: bool,
}

/// What Larik advertises in `agentCapabilities._meta.larik`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AgentExtensions {
    /// Version of the extension set; bumped when an extension changes incompatibly.
    pub version: u32,
    pub permission_feedback: bool,
    pub hunk_review: bool,
    pub editor_context: bool,
    pub background_turns: bool,
    /// `_larik/checkpoints` and `_larik/undo` are served (sessions with a data directory keep
    /// checkpoints).
    #[serde(default)]
    pub checkpoints: bool,
}

impl Default for AgentExtensions {
    fn default() -> Self {
        Self {
            version: 1,
            permission_feedback: true,
            hunk_review: true,
            editor_context: true,
            background_turns: true,
            checkpoints: true,
        }
    }
}

/// `_meta.larik` of a `usage_update`: what the session spent so far (its subagents' and prompt
/// hooks' requests included), in the four kinds of input and output tokens providers price apart.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct UsageMeta {
    pub spent: SpentTokens,
}

/// Tokens by how they are billed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SpentTokens {
    /// Input read at the full price.
    pub input_tokens: u64,
    /// Input read back from the provider's prompt cache (a tenth of the price on Anthropic).
    pub cache_read_tokens: u64,
    /// Input written to the prompt cache (a quarter more than the full price on Anthropic).
    pub cache_write_tokens: u64,
    pub output_tokens: u64,
}

/// The notification Larik sends once a session is open (new, loaded, resumed or forked) and the
/// sandbox's check on this machine has answered: how the session's shell commands are confined,
/// so the editor can show it. The session's answer does not wait for the check.
pub const SANDBOX_METHOD: &str = "_larik/sandbox";

/// Params of `_larik/sandbox`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SandboxNotification {
    pub session_id: String,
    pub sandbox: SandboxState,
}

/// Whether commands run in the sandbox. With `enforced: false` every command asks first, and
/// `reason` says why the sandbox is off (settings, or what this machine lacks).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SandboxState {
    pub enforced: bool,
    /// Sandboxed commands may use the network.
    pub network: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// Params of `_session/steering`, the de-facto extension other agents' adapters share: words for
/// the running turn. `prompt` is text or ACP content blocks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SteeringRequest {
    pub session_id: String,
    pub prompt: serde_json::Value,
}

impl SteeringRequest {
    /// The prompt as text: a string, or the text of content blocks.
    pub fn text(&self) -> String {
        match &self.prompt {
            serde_json::Value::String(text) => text.clone(),
            blocks => blocks
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|block| block["text"].as_str())
                .collect::<Vec<_>>()
                .join("\n"),
        }
    }
}

/// The answer to `_session/steering`: `injected` into the running turn, or `promptRequired` when
/// none runs (send it as a prompt).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SteeringResponse {
    pub outcome: String,
}

pub const STEERING_METHOD: &str = "_session/steering";

/// Params of `_larik/editor_context`: what the user is looking at. The latest one wins and is
/// added to the session's next prompt.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct EditorContext {
    pub session_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub active_file: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selection: Option<Selection>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub open_files: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub diagnostics: Vec<Diagnostic>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Selection {
    pub path: String,
    pub start_line: u32,
    pub end_line: u32,
    #[serde(default)]
    pub text: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Diagnostic {
    pub path: String,
    pub line: u32,
    #[serde(default)]
    pub severity: String,
    pub message: String,
}

/// `tool_call._meta.terminal_info`: the call is shown as a terminal the agent owns and streams
/// into, for clients that advertise `clientCapabilities._meta.terminal_output` (Zed's convention)
/// or `terminal_output_delta`. The call's content is `[{"type": "terminal", "terminalId": ...}]`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct TerminalInfo {
    pub terminal_id: String,
    pub cwd: std::path::PathBuf,
}

/// `tool_call_update._meta.terminal_output` (or `terminal_output_delta`): output the command
/// printed since the previous piece, appended to the terminal.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct TerminalOutputChunk {
    pub terminal_id: String,
    pub data: String,
}

/// `tool_call_update._meta.terminal_exit`, on the call's last update: how the command ended.
/// `exit_code` is null when it was killed (timeout, cancel).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct TerminalExit {
    pub terminal_id: String,
    pub exit_code: Option<u32>,
    pub signal: Option<String>,
}

/// The `_meta` keys of the agent-owned terminal convention.
pub const TERMINAL_INFO_KEY: &str = "terminal_info";
pub const TERMINAL_OUTPUT_KEY: &str = "terminal_output";
pub const TERMINAL_OUTPUT_DELTA_KEY: &str = "terminal_output_delta";
pub const TERMINAL_EXIT_KEY: &str = "terminal_exit";
