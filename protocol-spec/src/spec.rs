//! The protocol as Larik speaks it, generated from the Rust types so the documents cannot drift:
//! `schema/acp-v1.json` (the ACP v1 messages Larik sends and accepts, from the official schema
//! crate), `schema/larik-extensions.json` (Larik's `_meta` and `_larik/` types) and
//! `reference.md` (every method and notification with its direction, params, result, errors and
//! an example). `cargo run -p larik-protocol --bin larik-protocol-gen` rewrites them; a test
//! fails while the committed copies differ.

use schemars::{JsonSchema, SchemaGenerator, generate::SchemaSettings};
use serde_json::{Value, json};

use crate::acp;
use crate::extensions;

/// Who sends a method.
#[derive(Clone, Copy)]
pub enum Direction {
    ClientToAgent,
    AgentToClient,
}

/// One method or notification of the protocol.
pub struct Method {
    pub name: &'static str,
    pub direction: Direction,
    pub summary: &'static str,
    pub params: &'static str,
    /// `None` for notifications.
    pub result: Option<&'static str>,
    pub errors: &'static str,
    pub example: &'static str,
}

macro_rules! method {
    ($name:literal, $direction:ident, $params:literal, $result:expr, $summary:literal, $errors:literal, $example:literal) => {
        Method {
            name: $name,
            direction: Direction::$direction,
            params: $params,
            result: $result,
            summary: $summary,
            errors: $errors,
            example: $example,
        }
    };
}

pub const METHODS: &[Method] = &[
    method!(
        "initialize",
        ClientToAgent,
        "InitializeRequest",
        Some("InitializeResponse"),
        "Negotiates the protocol version (always 1) and capabilities; Larik's extensions are advertised in `agentCapabilities._meta.larik`.",
        "-32602 malformed params",
        r#"{"protocolVersion":1,"clientCapabilities":{"fs":{"readTextFile":true,"writeTextFile":true}},"clientInfo":{"name":"zed","version":"1.0"}}"#
    ),
    method!(
        "authenticate",
        ClientToAgent,
        "AuthenticateRequest",
        Some("AuthenticateResponse"),
        "The one method, `api-key`, succeeds when a key (or a local OpenAI-compatible server) is configured in the environment or settings, and ends a `logout`.",
        "-32000 no credentials configured; -32602 unknown method id",
        r#"{"methodId":"api-key"}"#
    ),
    method!(
        "logout",
        ClientToAgent,
        "LogoutRequest",
        Some("LogoutResponse"),
        "Stops using the configured credentials in this connection until `authenticate`; prompts answer -32000 meanwhile. Keys stay where the user keeps them.",
        "none",
        r#"{}"#
    ),
    method!(
        "session/new",
        ClientToAgent,
        "NewSessionRequest",
        Some("NewSessionResponse"),
        "Opens a session in `cwd`, and in `additionalDirectories` too (the agent's tools and sandboxed commands write there as in `cwd`, with the same paths protected; `load`, `resume` and `fork` take them the same way); the answer carries the modes and config options (mode, model).",
        "-32602 cwd or an additional directory not absolute or not a directory, or unreadable settings",
        r#"{"cwd":"/home/me/project","mcpServers":[]}"#
    ),
    method!(
        "session/load",
        ClientToAgent,
        "LoadSessionRequest",
        Some("LoadSessionResponse"),
        "Reopens a saved session and replays its whole history as `session/update`s before answering; tool outputs in the replay are bounded.",
        "-32002 unknown session",
        r#"{"sessionId":"sess_1","cwd":"/home/me/project","mcpServers":[]}"#
    ),
    method!(
        "session/resume",
        ClientToAgent,
        "ResumeSessionRequest",
        Some("ResumeSessionResponse"),
        "Reopens a saved session without replaying it.",
        "-32002 unknown session",
        r#"{"sessionId":"sess_1","cwd":"/home/me/project"}"#
    ),
    method!(
        "session/fork",
        ClientToAgent,
        "ForkSessionRequest",
        Some("ForkSessionResponse"),
        "(Unstable in ACP.) A new session with the source's history up to now, its subagents' transcripts and the token saver's stored outputs, and a future of its own; the source is untouched. Nothing is replayed: the client has the history.",
        "-32002 unknown session",
        r#"{"sessionId":"sess_1","cwd":"/home/me/project"}"#
    ),
    method!(
        "session/list",
        ClientToAgent,
        "ListSessionsRequest",
        Some("ListSessionsResponse"),
        "Saved sessions, most recent first, 50 a page; `nextCursor` asks for the next page.",
        "-32602 a cursor this agent did not give out",
        r#"{"cwd":"/home/me/project"}"#
    ),
    method!(
        "session/close",
        ClientToAgent,
        "CloseSessionRequest",
        Some("CloseSessionResponse"),
        "Cancels the session's work and frees it; it stays saved.",
        "-32002 unknown session",
        r#"{"sessionId":"sess_1"}"#
    ),
    method!(
        "session/delete",
        ClientToAgent,
        "DeleteSessionRequest",
        Some("DeleteSessionResponse"),
        "Removes a saved session; idempotent.",
        "-32603 the file could not be removed",
        r#"{"sessionId":"sess_1"}"#
    ),
    method!(
        "session/prompt",
        ClientToAgent,
        "PromptRequest",
        Some("PromptResponse"),
        "Runs a turn. Every update of the turn is sent before this answers with `stopReason` (end_turn, max_tokens, max_turn_requests, refusal, cancelled).",
        "-32000 no model credentials; -32002 unknown session; -32603 a model error, with `data.kind` (rate_limited, overloaded, context_overflow, bad_request, network, stream_broken)",
        r#"{"sessionId":"sess_1","prompt":[{"type":"text","text":"Fix the failing test"}]}"#
    ),
    method!(
        "session/cancel",
        ClientToAgent,
        "CancelNotification",
        None,
        "Stops the running turn: the model stream, running tools (their process groups are killed) and pending permission prompts. The prompt answers `cancelled`.",
        "none (a notification)",
        r#"{"sessionId":"sess_1"}"#
    ),
    method!(
        "session/set_mode",
        ClientToAgent,
        "SetSessionModeRequest",
        Some("SetSessionModeResponse"),
        "Switches mode (default, accept-edits, plan, yolo); sends `current_mode_update` and `config_option_update`.",
        "-32602 unknown mode; -32002 unknown session",
        r#"{"sessionId":"sess_1","modeId":"plan"}"#
    ),
    method!(
        "session/set_config_option",
        ClientToAgent,
        "SetSessionConfigOptionRequest",
        Some("SetSessionConfigOptionResponse"),
        "Sets `mode` or `model` (one of the configured models); answers with the complete option list.",
        "-32602 unknown option or value; -32000 no model configured",
        r#"{"sessionId":"sess_1","configId":"model","value":"claude-sonnet-4-5"}"#
    ),
    method!(
        "$/cancel_request",
        ClientToAgent,
        "CancelRequestNotification",
        None,
        "Cancels a request in flight; a cancelled `session/prompt` answers `cancelled`. The agent sends it too, for a request of its own a cancelled turn stopped waiting for (an `fs/write_text_file` the editor had not answered 2 s after `session/cancel`), and to withdraw an open `session/request_permission` whose asker stopped waiting for another reason than `session/cancel` (after which the client answers it itself): `$/cancel_request` for the prompt, or the background task that asked was stopped; a late answer to it is ignored.",
        "none (a notification)",
        r#"{"requestId":7}"#
    ),
    method!(
        "_session/steering",
        ClientToAgent,
        "SteeringRequest",
        Some("SteeringResponse"),
        "Words for the running turn, added before its next model request (`injected`); `promptRequired` when no turn runs. Advertised in the initialize result's `_meta.steering.supported`.",
        "-32002 unknown session",
        r#"{"sessionId":"sess_1","prompt":"also update the changelog"}"#
    ),
    method!(
        "_larik/checkpoints",
        ClientToAgent,
        "CheckpointsRequest",
        Some("CheckpointsResponse"),
        "The session's checkpoints, oldest first: the project before each turn that changed a file (edits and what commands did), with the turn's prompt and the files it changed.",
        "-32002 unknown session",
        r#"{"sessionId":"sess_1"}"#
    ),
    method!(
        "_larik/undo",
        ClientToAgent,
        "UndoRequest",
        Some("UndoResponse"),
        "Restores the files to a checkpoint (the latest when `checkpointId` is absent): files turns since created are removed, changed or deleted ones written back, those changed by hand since the agent's last turn kept and listed; the conversation is rewound to the checkpoint's turn, which is gone with the later ones. The same as the `/undo [id]` command for clients without it.",
        "-32602 no such checkpoint or nothing to undo; -32002 unknown session",
        r#"{"sessionId":"sess_1","checkpointId":"cp-2"}"#
    ),
    method!(
        "_larik/editor_context",
        ClientToAgent,
        "EditorContext",
        None,
        "What the user is looking at (active file, selection, open files, diagnostics); added to the session's next prompt.",
        "none (a notification)",
        r#"{"sessionId":"sess_1","activeFile":"/home/me/project/src/main.rs","selection":{"path":"/home/me/project/src/main.rs","startLine":3,"endLine":4,"text":"let x = 1;"}}"#
    ),
    method!(
        "session/update",
        AgentToClient,
        "SessionNotification",
        None,
        "Streams a turn: agent_message_chunk, agent_thought_chunk, tool_call, tool_call_update (diff content for edits, command output for bash or its terminal, locations; to clients that advertise `_meta.terminal_output` or `terminal_output_delta`, bash output streams in `_meta` (`TerminalInfo`, `TerminalOutputChunk`, `TerminalExit`)), plan, usage_update, current_mode_update, config_option_update, session_info_update, user_message_chunk (replay), notice (to clients with `session.notices`).",
        "none (a notification)",
        r#"{"sessionId":"sess_1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"Looking at the test"}}}"#
    ),
    method!(
        "session/request_permission",
        AgentToClient,
        "RequestPermissionRequest",
        Some("RequestPermissionResponse"),
        "Asks before a call that needs approval; options allow_once, allow_always, reject_once. `_meta.larik.hunks` carries the change split into hunks for clients with hunk review; the answer may carry `_meta.larik.feedback` and `_meta.larik.acceptedHunks`. An `allow_always` whose rule cannot be saved still holds for the rest of the session, and the agent says so in a message of the turn (the answer is the client's response, so no reply of the agent's could carry a `persisted` flag).",
        "an error answer counts as a rejection",
        r#"{"sessionId":"sess_1","toolCall":{"toolCallId":"toolu_1","title":"Edit src/lib.rs","kind":"edit","status":"pending"},"options":[{"optionId":"allow_once","name":"Allow once","kind":"allow_once"},{"optionId":"allow_always","name":"Always allow edit in this session","kind":"allow_always"},{"optionId":"reject_once","name":"Reject","kind":"reject_once"}]}"#
    ),
    method!(
        "elicitation/create",
        AgentToClient,
        "CreateElicitationRequest",
        Some("CreateElicitationResponse"),
        "A question for the user as a form, to clients that advertise `elicitation.form`: the `ask_user` tool's (one `answer` field) or an MCP server's (its own schema with its defaults, the message naming the server). To clients that advertise `elicitation.url`, an MCP server's login page in URL mode (`/mcp login`, or a wider scope needed mid-call); `accept` means the page was opened, and `elicitation/complete` follows when the login is over. Without URL mode the page's address is said in the chat.",
        "an error or a declined form tells the model the user did not answer; an MCP server hears decline or cancel as given; a declined login page ends the login",
        r#"{"sessionId":"sess_1","mode":"form","message":"Tabs or spaces?","requestedSchema":{"type":"object","properties":{"answer":{"type":"string","title":"Answer","enum":["tabs","spaces"]}},"required":["answer"]}}"#
    ),
    method!(
        "fs/read_text_file",
        AgentToClient,
        "ReadTextFileRequest",
        Some("ReadTextFileResponse"),
        "Reads a file through the editor (unsaved buffers), when the client advertises `fs.readTextFile`.",
        "an error is reported to the model as a failed read",
        r#"{"sessionId":"sess_1","path":"/home/me/project/src/lib.rs"}"#
    ),
    method!(
        "fs/write_text_file",
        AgentToClient,
        "WriteTextFileRequest",
        Some("WriteTextFileResponse"),
        "Writes an approved change through the editor (undo history), when the client advertises `fs.writeTextFile`. Larik's own checks (project bounds, freshness) still apply first.",
        "an error is reported to the model as a failed write",
        r#"{"sessionId":"sess_1","path":"/home/me/project/src/lib.rs","content":"fn main() {}\n"}"#
    ),
    method!(
        "_larik/diagnostics",
        AgentToClient,
        "DiagnosticsRequest",
        Some("DiagnosticsResponse"),
        "A file's problems from the editor's own language servers, after an edit (and after a read, for what the file had before), for a client that set `clientCapabilities._meta.larik.diagnostics`. The editor waits up to `waitMs` for its servers to see the file's current text. `diagnostics: null` means no server of the editor's covers the file: Larik asks its own.",
        "an error or no answer in time: no report for that edit",
        r#"{"sessionId":"sess_1","path":"/home/me/project/app.py","waitMs":3000}"#
    ),
    method!(
        "terminal/create",
        AgentToClient,
        "CreateTerminalRequest",
        Some("CreateTerminalResponse"),
        "Runs a bash call in a terminal the editor shows, for clients that advertise `terminal` but not `_meta.terminal_output`. The command is the sandbox helper (`larik __sandbox ... -- bash -c LINE`) when the sandbox is on, in the project directory; the terminal is embedded in the tool call at once. If it fails, the command runs in the agent instead.",
        "an error makes the agent run the command itself",
        r#"{"sessionId":"sess_1","command":"/usr/local/bin/larik","args":["__sandbox","--write","/home/me/project","--","bash","-c","cargo test"],"cwd":"/home/me/project","outputByteLimit":122880}"#
    ),
    method!(
        "terminal/wait_for_exit",
        AgentToClient,
        "WaitForTerminalExitRequest",
        Some("WaitForTerminalExitResponse"),
        "Waits for the command; the agent's own timeout and cancellation apply (then `terminal/kill`).",
        "an error ends the call as killed",
        r#"{"sessionId":"sess_1","terminalId":"term_1"}"#
    ),
    method!(
        "terminal/kill",
        AgentToClient,
        "KillTerminalRequest",
        Some("KillTerminalResponse"),
        "Stops the command on timeout or cancel; the terminal stays until released.",
        "logged",
        r#"{"sessionId":"sess_1","terminalId":"term_1"}"#
    ),
    method!(
        "terminal/output",
        AgentToClient,
        "TerminalOutputRequest",
        Some("TerminalOutputResponse"),
        "Reads what the command printed, for the model; `truncated` output is marked as such.",
        "the model is told the output could not be read",
        r#"{"sessionId":"sess_1","terminalId":"term_1"}"#
    ),
    method!(
        "terminal/release",
        AgentToClient,
        "ReleaseTerminalRequest",
        Some("ReleaseTerminalResponse"),
        "Sent for every terminal the agent created, once its output was read (also after kill, cancel or an error).",
        "logged",
        r#"{"sessionId":"sess_1","terminalId":"term_1"}"#
    ),
];

/// Every generated file: path relative to `protocol-spec/`, and contents.
pub fn generate() -> Vec<(&'static str, String)> {
    vec![
        ("schema/acp-v1.json", acp_schema()),
        ("schema/larik-extensions.json", extension_schema()),
        ("reference.md", reference()),
    ]
}

fn generator() -> SchemaGenerator {
    SchemaSettings::draft2020_12().into_generator()
}

fn document(title: &str, mut generator: SchemaGenerator) -> String {
    let definitions: serde_json::Map<String, Value> = generator.take_definitions(true).into_iter().collect();
    let schema =
        json!({"$schema": "https://json-schema.org/draft/2020-12/schema", "title": title, "$defs": definitions});
    let mut text = serde_json::to_string_pretty(&schema).unwrap_or_default();
    text.push('\n');
    text
}

fn acp_schema() -> String {
    let mut generator = generator();
    macro_rules! add {
        ($($type:ty),* $(,)?) => { $( let _ = generator.subschema_for::<$type>(); )* };
    }
    add!(
        acp::InitializeRequest,
        acp::InitializeResponse,
        acp::NewSessionRequest,
        acp::NewSessionResponse,
        acp::LoadSessionRequest,
        acp::LoadSessionResponse,
        acp::ResumeSessionRequest,
        acp::ResumeSessionResponse,
        acp::ListSessionsRequest,
        acp::ListSessionsResponse,
        acp::CloseSessionRequest,
        acp::CloseSessionResponse,
        acp::DeleteSessionRequest,
        acp::DeleteSessionResponse,
        acp::PromptRequest,
        acp::PromptResponse,
        acp::CancelNotification,
        acp::SetSessionModeRequest,
        acp::SetSessionModeResponse,
        acp::SetSessionConfigOptionRequest,
        acp::SetSessionConfigOptionResponse,
        acp::CancelRequestNotification,
        acp::SessionNotification,
        acp::RequestPermissionRequest,
        acp::RequestPermissionResponse,
        acp::ReadTextFileRequest,
        acp::ReadTextFileResponse,
        acp::WriteTextFileRequest,
        acp::WriteTextFileResponse,
        acp::AuthenticateRequest,
        acp::AuthenticateResponse,
        acp::LogoutRequest,
        acp::LogoutResponse,
        acp::CreateElicitationRequest,
        acp::CreateElicitationResponse,
        acp::CreateTerminalRequest,
        acp::CreateTerminalResponse,
        acp::TerminalOutputRequest,
        acp::TerminalOutputResponse,
        acp::WaitForTerminalExitRequest,
        acp::WaitForTerminalExitResponse,
        acp::KillTerminalRequest,
        acp::KillTerminalResponse,
        acp::ReleaseTerminalRequest,
        acp::ReleaseTerminalResponse,
    );
    document("The ACP v1 messages Larik sends and accepts", generator)
}

fn extension_schema() -> String {
    let mut generator = generator();
    let _ = generator.subschema_for::<extensions::AgentExtensions>();
    let _ = generator.subschema_for::<extensions::ClientExtensions>();
    let _ = generator.subschema_for::<extensions::PermissionResponseMeta>();
    let _ = generator.subschema_for::<extensions::ToolCallMeta>();
    let _ = generator.subschema_for::<extensions::EditorContext>();
    let _ = generator.subschema_for::<extensions::SteeringRequest>();
    let _ = generator.subschema_for::<extensions::SteeringResponse>();
    let _ = generator.subschema_for::<extensions::TerminalInfo>();
    let _ = generator.subschema_for::<extensions::TerminalOutputChunk>();
    let _ = generator.subschema_for::<extensions::TerminalExit>();
    let _ = generator.subschema_for::<extensions::SandboxNotification>();
    let _ = generator.subschema_for::<extensions::UsageMeta>();
    let _ = generator.subschema_for::<extensions::DiagnosticsRequest>();
    let _ = generator.subschema_for::<extensions::DiagnosticsResponse>();
    let _ = generator.subschema_for::<extensions::UndoRequest>();
    let _ = generator.subschema_for::<extensions::UndoResponse>();
    let _ = generator.subschema_for::<extensions::CheckpointsRequest>();
    let _ = generator.subschema_for::<extensions::CheckpointsResponse>();
    document("Larik's extensions to ACP v1", generator)
}

fn is_extension(type_name: &str) -> bool {
    matches!(
        type_name,
        "EditorContext"
            | "AgentExtensions"
            | "ClientExtensions"
            | "PermissionResponseMeta"
            | "ToolCallMeta"
            | "SteeringRequest"
            | "SteeringResponse"
            | "TerminalInfo"
            | "TerminalOutputChunk"
            | "TerminalExit"
            | "SandboxNotification"
            | "DiagnosticsRequest"
            | "DiagnosticsResponse"
            | "UndoRequest"
            | "UndoResponse"
            | "CheckpointsRequest"
            | "CheckpointsResponse"
            | "CheckpointInfo"
    )
}

fn reference() -> String {
    let mut out = String::from(
        "# Protocol reference\n\n<!-- Generated by `cargo run -p larik-protocol --bin larik-protocol-gen`; do not edit. -->\n\n\
         Larik speaks ACP v1: JSON-RPC 2.0, one compact JSON message per line on stdio (`larik acp`). \
         Types link to `schema/acp-v1.json` (ACP's own types, from the official schema crate) or \
         `schema/larik-extensions.json`. Guides: `spec/turn-lifecycle.md`, `spec/permissions.md`, \
         `spec/sessions.md`, `spec/extensions.md`, `spec/versioning.md`.\n\n\
         Errors on every request: -32700 unparsable line (`id: null`), -32600 not a request object, a batch, or an id that is not a string, an integer or null (`id: null`), \
         -32601 unknown method (unknown notifications are ignored), -32602 bad params (the message names the field), \
         -32603 internal error (a panicking handler included), -32800 cancelled.\n\n\
         | method | direction | params | result |\n|---|---|---|---|\n",
    );
    let link = |type_name: &str| {
        let file = if is_extension(type_name) { "larik-extensions.json" } else { "acp-v1.json" };
        format!("[`{type_name}`](schema/{file})")
    };
    for method in METHODS {
        let direction = match method.direction {
            Direction::ClientToAgent => "client → agent",
            Direction::AgentToClient => "agent → client",
        };
        let result = method.result.map(link).unwrap_or_else(|| "— (notification)".into());
        out.push_str(&format!("| `{}` | {direction} | {} | {result} |\n", method.name, link(method.params)));
    }
    for method in METHODS {
        out.push_str(&format!("\n## `{}`\n\n{}\n\n", method.name, method.summary));
        out.push_str(&format!("- Params: {}\n", link(method.params)));
        match method.result {
            Some(result) => out.push_str(&format!("- Result: {}\n", link(result))),
            None => out.push_str("- Notification: no result\n"),
        }
        out.push_str(&format!("- Errors: {}\n\n", method.errors));
        let params: Value = serde_json::from_str(method.example).unwrap_or(Value::Null);
        let mut message = json!({"jsonrpc": "2.0", "method": method.name, "params": params});
        if method.result.is_some() {
            message["id"] = json!(1);
        }
        out.push_str(&format!("```json\n{message}\n```\n"));
    }
    out
}

/// Checks that every example deserializes into its params type, so examples cannot drift either.
pub fn check_examples() -> Result<(), String> {
    for method in METHODS {
        let value: Value = serde_json::from_str(method.example).map_err(|error| format!("{}: {error}", method.name))?;
        let checked = match method.params {
            "InitializeRequest" => parse::<acp::InitializeRequest>(value),
            "AuthenticateRequest" => parse::<acp::AuthenticateRequest>(value),
            "LogoutRequest" => parse::<acp::LogoutRequest>(value),
            "SteeringRequest" => parse::<extensions::SteeringRequest>(value),
            "DiagnosticsRequest" => parse::<extensions::DiagnosticsRequest>(value),
            "UndoRequest" => parse::<extensions::UndoRequest>(value),
            "CheckpointsRequest" => parse::<extensions::CheckpointsRequest>(value),
            "ForkSessionRequest" => parse::<acp::ForkSessionRequest>(value),
            "CreateElicitationRequest" => parse::<acp::CreateElicitationRequest>(value),
            "NewSessionRequest" => parse::<acp::NewSessionRequest>(value),
            "LoadSessionRequest" => parse::<acp::LoadSessionRequest>(value),
            "ResumeSessionRequest" => parse::<acp::ResumeSessionRequest>(value),
            "ListSessionsRequest" => parse::<acp::ListSessionsRequest>(value),
            "CloseSessionRequest" => parse::<acp::CloseSessionRequest>(value),
            "DeleteSessionRequest" => parse::<acp::DeleteSessionRequest>(value),
            "PromptRequest" => parse::<acp::PromptRequest>(value),
            "CancelNotification" => parse::<acp::CancelNotification>(value),
            "SetSessionModeRequest" => parse::<acp::SetSessionModeRequest>(value),
            "SetSessionConfigOptionRequest" => parse::<acp::SetSessionConfigOptionRequest>(value),
            "CancelRequestNotification" => parse::<acp::CancelRequestNotification>(value),
            "EditorContext" => parse::<extensions::EditorContext>(value),
            "SessionNotification" => parse::<acp::SessionNotification>(value),
            "RequestPermissionRequest" => parse::<acp::RequestPermissionRequest>(value),
            "ReadTextFileRequest" => parse::<acp::ReadTextFileRequest>(value),
            "WriteTextFileRequest" => parse::<acp::WriteTextFileRequest>(value),
            "CreateTerminalRequest" => parse::<acp::CreateTerminalRequest>(value),
            "TerminalOutputRequest" => parse::<acp::TerminalOutputRequest>(value),
            "WaitForTerminalExitRequest" => parse::<acp::WaitForTerminalExitRequest>(value),
            "KillTerminalRequest" => parse::<acp::KillTerminalRequest>(value),
            "ReleaseTerminalRequest" => parse::<acp::ReleaseTerminalRequest>(value),
            other => Err(format!("no type `{other}` to check against")),
        };
        checked.map_err(|error| format!("{}: {error}", method.name))?;
    }
    Ok(())
}

fn parse<T: serde::de::DeserializeOwned + JsonSchema>(value: Value) -> Result<(), String> {
    serde_json::from_value::<T>(value).map(|_| ()).map_err(|error| error.to_string())
}
