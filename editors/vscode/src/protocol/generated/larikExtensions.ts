// Generated from protocol-spec/schema/larik-extensions.json by scripts/gen-protocol.mjs:
// do not edit; change the schema and run `npm run gen:protocol`.

export type DiagnosticSeverityName = "error" | "warning" | "information" | "hint";

/**
 * What Larik advertises in `agentCapabilities._meta.larik`.
 */
export interface AgentExtensions {
  /**
   * Version of the extension set; bumped when an extension changes incompatibly.
   */
  version: number;
  permissionFeedback: boolean;
  hunkReview: boolean;
  editorContext: boolean;
  backgroundTurns: boolean;
  /**
   * `_larik/checkpoints` and `_larik/undo` are served (sessions with a data directory keep
   * checkpoints).
   */
  checkpoints?: boolean;
}
/**
 * What a client opts into, in `clientCapabilities._meta.larik`.
 */
export interface ClientExtensions {
  hunkReview?: boolean;
  /**
   * The client shows turns the agent starts itself, outside any `session/prompt`: a
   * background task's result arriving while the session is idle. Without it those results
   * wait for the next prompt.
   */
  backgroundTurns?: boolean;
  /**
   * The client answers `_larik/diagnostics` from the editor's own language servers, so
   * Larik does not start a second server for files the editor already checks.
   */
  diagnostics?: boolean;
}
/**
 * `_meta.larik` of a `session/request_permission` response.
 */
export interface PermissionResponseMeta {
  /**
   * Why the user rejected the call; passed to the model so it can change course.
   */
  feedback?: string | null;
  /**
   * With hunk review: the hunks the user accepted (indices from the request's `hunks`).
   * Absent means all of them; empty means none.
   */
  acceptedHunks?: number[] | null;
}
/**
 * `toolCall._meta.larik` of a permission request for a change.
 */
export interface ToolCallMeta {
  hunks: ReviewHunk[];
}
/**
 * One hunk of a proposed change, sent in `toolCall._meta.larik.hunks` of a permission request
 * to clients that opted into hunk review. Line numbers are 1-based, as in a unified diff.
 */
export interface ReviewHunk {
  index: number;
  oldStart: number;
  oldLines: number;
  newStart: number;
  newLines: number;
  oldText: string;
  newText: string;
}
/**
 * Params of `_larik/editor_context`: what the user is looking at. The latest one wins and is
 * added to the session's next prompt.
 */
export interface EditorContext {
  sessionId: string;
  activeFile?: string | null;
  selection?: Selection | null;
  openFiles?: string[];
  diagnostics?: Diagnostic[];
}
export interface Selection {
  path: string;
  startLine: number;
  endLine: number;
  text?: string;
}
export interface Diagnostic {
  path: string;
  line: number;
  severity?: string;
  message: string;
}
/**
 * Params of `_session/steering`, the de-facto extension other agents' adapters share: words for
 * the running turn. `prompt` is text or ACP content blocks.
 */
export interface SteeringRequest {
  sessionId: string;
  prompt: unknown;
}
/**
 * The answer to `_session/steering`: `injected` into the running turn, or `promptRequired` when
 * none runs (send it as a prompt).
 */
export interface SteeringResponse {
  outcome: string;
}
/**
 * `tool_call._meta.terminal_info`: the call is shown as a terminal the agent owns and streams
 * into, for clients that advertise `clientCapabilities._meta.terminal_output` (Zed's convention)
 * or `terminal_output_delta`. The call's content is `[{"type": "terminal", "terminalId": ...}]`.
 */
export interface TerminalInfo {
  terminal_id: string;
  cwd: string;
}
/**
 * `tool_call_update._meta.terminal_output` (or `terminal_output_delta`): output the command
 * printed since the previous piece, appended to the terminal.
 */
export interface TerminalOutputChunk {
  terminal_id: string;
  data: string;
}
/**
 * `tool_call_update._meta.terminal_exit`, on the call's last update: how the command ended.
 * `exit_code` is null when it was killed (timeout, cancel).
 */
export interface TerminalExit {
  terminal_id: string;
  exit_code?: number | null;
  signal?: string | null;
}
/**
 * Params of `_larik/sandbox`.
 */
export interface SandboxNotification {
  sessionId: string;
  sandbox: SandboxState;
}
/**
 * Whether commands run in the sandbox. With `enforced: false` every command asks first, and
 * `reason` says why the sandbox is off (settings, or what this machine lacks).
 */
export interface SandboxState {
  enforced: boolean;
  /**
   * Sandboxed commands may use the network.
   */
  network: boolean;
  reason?: string | null;
}
/**
 * `_meta.larik` of a `usage_update`: what the session spent so far (its subagents' and prompt
 * hooks' requests included), in the four kinds of input and output tokens providers price apart.
 */
export interface UsageMeta {
  spent: SpentTokens;
}
/**
 * Tokens by how they are billed.
 */
export interface SpentTokens {
  /**
   * Input read at the full price.
   */
  inputTokens: number;
  /**
   * Input read back from the provider's prompt cache (a tenth of the price on Anthropic).
   */
  cacheReadTokens: number;
  /**
   * Input written to the prompt cache (a quarter more than the full price on Anthropic).
   */
  cacheWriteTokens: number;
  outputTokens: number;
}
/**
 * Params of `_larik/diagnostics`.
 */
export interface DiagnosticsRequest {
  sessionId: string;
  /**
   * The file, absolute.
   */
  path: string;
  /**
   * How long the editor may wait for its servers to catch up with the file's current text
   * before it answers with what it has.
   */
  waitMs: number;
}
/**
 * The answer to `_larik/diagnostics`.
 */
export interface DiagnosticsResponse {
  /**
   * The file's problems now; `null` when no language server of the editor's covers the file
   * (Larik then asks its own).
   */
  diagnostics?: EditorDiagnostic[] | null;
}
/**
 * One problem, as the editor shows it. Positions are 1-based.
 */
export interface EditorDiagnostic {
  line: number;
  character: number;
  severity: DiagnosticSeverityName;
  message: string;
  /**
   * The server or tool that reported it (`pyright`, `eslint`).
   */
  source?: string | null;
}
/**
 * Params of `_larik/undo`.
 */
export interface UndoRequest {
  sessionId: string;
  /**
   * The checkpoint to go back to (`cp-3`); the latest when absent.
   */
  checkpointId?: string | null;
}
/**
 * The answer to `_larik/undo`. Paths are relative to the session's directory.
 */
export interface UndoResponse {
  checkpoint: CheckpointInfo;
  /**
   * Written back as they were.
   */
  restored: string[];
  /**
   * Removed: created after the checkpoint.
   */
  removed: string[];
  /**
   * Left as they are: changed by hand since the agent's last turn.
   */
  kept: string[];
}
/**
 * A checkpoint: the project before one turn that changed it.
 */
export interface CheckpointInfo {
  id: string;
  /**
   * ISO 8601, UTC.
   */
  createdAt: string;
  /**
   * The turn's prompt (its first 200 characters).
   */
  prompt: string;
  /**
   * What the turn changed, relative to the session's directory.
   */
  files: string[];
  /**
   * What checkpoints leave out: large ignored trees (`target/`) and large files.
   */
  skipped: string[];
}
/**
 * Params of `_larik/checkpoints`.
 */
export interface CheckpointsRequest {
  sessionId: string;
}
/**
 * The answer to `_larik/checkpoints`, oldest first.
 */
export interface CheckpointsResponse {
  checkpoints: CheckpointInfo[];
}
