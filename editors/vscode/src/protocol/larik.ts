// Larik's extensions to ACP v1, as documented in protocol-spec/spec/extensions.md and
// protocol-spec/reference.md: data under the `larik` key of `_meta` objects, methods named
// `_larik/...` (checkpoints and undo among them), and the change summary a command's call carries
// in its content. Every reader here is lenient: a malformed extension payload is treated as
// absent, never as an error, so a plain ACP agent works unchanged.

import type { InitializeResponse, ToolCallUpdate } from "./acp";

export const META_KEY = "larik";
export const EDITOR_CONTEXT_METHOD = "_larik/editor_context";
export const DIAGNOSTICS_METHOD = "_larik/diagnostics";
export const CHECKPOINTS_METHOD = "_larik/checkpoints";
export const UNDO_METHOD = "_larik/undo";

/** What the agent advertises in `agentCapabilities._meta.larik`. */
export interface LarikAgentCapabilities {
  version?: number;
  permissionFeedback?: boolean;
  hunkReview?: boolean;
  editorContext?: boolean;
}

/** What this client advertises in `clientCapabilities._meta.larik`. */
export interface LarikClientCapabilities {
  hunkReview?: boolean;
  /** The client answers `_larik/diagnostics` from the editor's own language servers. */
  diagnostics?: boolean;
}

/** One hunk of a proposed edit; `index` from 0, line numbers 1-based as in a unified diff. */
export interface Hunk {
  index: number;
  oldStart: number;
  oldLines: number;
  newStart: number;
  newLines: number;
  oldText: string;
  newText: string;
}

/** `_meta.larik` of a `session/request_permission` response. */
export interface PermissionResponseMeta {
  feedback?: string;
  acceptedHunks?: number[];
}

export interface EditorSelection {
  path: string;
  startLine: number;
  endLine: number;
  text: string;
}

export interface EditorDiagnostic {
  path: string;
  line: number;
  severity: "error" | "warning" | "information" | "hint";
  message: string;
}

export type DiagnosticsSeverity = EditorDiagnostic["severity"];

/** Params of the `_larik/diagnostics` request (agent → client). */
export interface DiagnosticsRequest {
  sessionId: string;
  /** The file, absolute. */
  path: string;
  /** How long the editor may wait for its servers to see the file's current text. */
  waitMs: number;
}

/** One problem in a `_larik/diagnostics` answer; positions are 1-based. */
export interface WireDiagnostic {
  line: number;
  character: number;
  severity: DiagnosticsSeverity;
  message: string;
  source?: string;
}

/** The answer to `_larik/diagnostics`; `null`: nothing of the editor's checks the file. */
export interface DiagnosticsResponse {
  diagnostics: WireDiagnostic[] | null;
}

/** Params of the `_larik/editor_context` notification. */
export interface EditorContextParams {
  sessionId: string;
  activeFile?: string;
  selection?: EditorSelection;
  openFiles?: string[];
  diagnostics?: EditorDiagnostic[];
}

/** A checkpoint: the project before one turn that changed it. Paths are relative to the
 * session's directory. */
export interface CheckpointInfo {
  /** `cp-1`, `cp-2`, … within the session; numbers are used again after an undo. */
  id: string;
  /** ISO 8601, UTC. */
  createdAt: string;
  /** The turn's prompt (its first 200 characters). */
  prompt: string;
  /** What the turn changed. */
  files: string[];
  /** What checkpoints leave out: large ignored trees (`target/`) and large files. */
  skipped: string[];
}

/** Params of `_larik/checkpoints` (client → agent). */
export interface CheckpointsRequest {
  sessionId: string;
}

/** The answer to `_larik/checkpoints`, oldest first. */
export interface CheckpointsResponse {
  checkpoints: CheckpointInfo[];
}

/** Params of `_larik/undo` (client → agent). */
export interface UndoRequest {
  sessionId: string;
  /** The checkpoint to go back to; the latest when absent. */
  checkpointId?: string;
}

/** The answer to `_larik/undo`. The conversation is rewound to before the checkpoint's turn. */
export interface UndoResponse {
  checkpoint: CheckpointInfo;
  /** Written back as they were. */
  restored: string[];
  /** Created by the turns undone, now deleted. */
  removed: string[];
  /** Changed by hand since the agent's last turn, left as they are. */
  kept: string[];
}

/** How a command changed a file, as its call's change summary says. */
export type FileChangeKind = "added" | "changed" | "deleted";

/** One file of a command's change summary; the path is absolute. */
export interface CommandFileChange {
  path: string;
  change: FileChangeKind;
}

/** The start of the text block a bash call's final update carries after its output. */
export const COMMAND_CHANGES_PREFIX = "Files the command changed: ";

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/** The `larik` entry of a `_meta` object, if it is an object. */
export function larikMeta(meta: unknown): Record<string, unknown> | undefined {
  if (!isObject(meta)) return undefined;
  const larik = meta[META_KEY];
  return isObject(larik) ? larik : undefined;
}

export function agentCapabilities(init: InitializeResponse | undefined): LarikAgentCapabilities {
  const larik = larikMeta(init?.agentCapabilities?._meta);
  if (!larik) return {};
  const flag = (key: string) => larik[key] === true;
  return {
    ...(typeof larik.version === "number" ? { version: larik.version } : {}),
    permissionFeedback: flag("permissionFeedback"),
    hunkReview: flag("hunkReview"),
    editorContext: flag("editorContext"),
  };
}

function isHunk(value: unknown): value is Hunk {
  if (!isObject(value)) return false;
  const ints = ["index", "oldStart", "oldLines", "newStart", "newLines"].every(
    (k) => Number.isInteger(value[k]) && (value[k] as number) >= 0,
  );
  return ints && typeof value.oldText === "string" && typeof value.newText === "string";
}

/** The hunks a permission request's tool call carries, or undefined when there are none (or they are malformed). */
export function hunksOf(toolCall: Pick<ToolCallUpdate, "_meta"> | undefined): Hunk[] | undefined {
  const hunks = larikMeta(toolCall?._meta)?.hunks;
  if (!Array.isArray(hunks) || hunks.length === 0 || !hunks.every(isHunk)) return undefined;
  return [...hunks].sort((a, b) => a.index - b.index);
}

/** `_meta` for a permission response, or undefined when there is nothing to say. */
export function permissionResponseMeta(meta: PermissionResponseMeta): Record<string, unknown> | undefined {
  const larik: PermissionResponseMeta = {};
  if (meta.feedback !== undefined && meta.feedback.trim() !== "") larik.feedback = meta.feedback.trim();
  if (meta.acceptedHunks !== undefined) larik.acceptedHunks = [...meta.acceptedHunks].sort((a, b) => a - b);
  return Object.keys(larik).length > 0 ? { [META_KEY]: larik } : undefined;
}

const isStrings = (value: unknown): value is string[] => Array.isArray(value) && value.every((v) => typeof v === "string");

function checkpointOf(value: unknown): CheckpointInfo | undefined {
  if (!isObject(value) || typeof value.id !== "string" || value.id === "" || typeof value.createdAt !== "string") return undefined;
  return {
    id: value.id,
    createdAt: value.createdAt,
    prompt: typeof value.prompt === "string" ? value.prompt : "",
    files: isStrings(value.files) ? value.files : [],
    skipped: isStrings(value.skipped) ? value.skipped : [],
  };
}

/** The checkpoints of a `_larik/checkpoints` answer, oldest first; malformed entries are left out. */
export function checkpointsOf(result: unknown): CheckpointInfo[] {
  const list = isObject(result) ? result.checkpoints : undefined;
  if (!Array.isArray(list)) return [];
  return list.flatMap((entry) => checkpointOf(entry) ?? []);
}

/** A `_larik/undo` answer, or undefined when it names no checkpoint; a malformed list is empty. */
export function undoResponseOf(result: unknown): UndoResponse | undefined {
  if (!isObject(result)) return undefined;
  const checkpoint = checkpointOf(result.checkpoint);
  if (!checkpoint) return undefined;
  const list = (key: string) => (isStrings(result[key]) ? (result[key] as string[]) : []);
  return { checkpoint, restored: list("restored"), removed: list("removed"), kept: list("kept") };
}

/**
 * The files a command's change summary names (`Files the command changed: changed /p/a.txt,
 * deleted /p/b.txt, added /p/c.txt`), in its order; undefined when the text is not one. A path
 * may hold ", ": entries are split only where the next one starts with its mark.
 */
export function commandChangesOf(text: string): CommandFileChange[] | undefined {
  if (!text.startsWith(COMMAND_CHANGES_PREFIX)) return undefined;
  const entries = text.slice(COMMAND_CHANGES_PREFIX.length).trimEnd().split(/, (?=(?:added|changed|deleted) )/);
  const files: CommandFileChange[] = [];
  for (const entry of entries) {
    const match = /^(added|changed|deleted) (.+)$/s.exec(entry);
    if (!match) return undefined;
    files.push({ change: match[1] as FileChangeKind, path: match[2]! });
  }
  return files.length > 0 ? files : undefined;
}
