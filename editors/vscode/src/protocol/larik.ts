// Larik's extensions to ACP v1, as documented in protocol-spec/spec/extensions.md: data under the
// `larik` key of `_meta` objects, and methods named `_larik/...`. Every reader here is lenient:
// a malformed extension payload is treated as absent, never as an error, so a plain ACP agent
// works unchanged.

import type { InitializeResponse, ToolCallUpdate } from "./acp";

export const META_KEY = "larik";
export const EDITOR_CONTEXT_METHOD = "_larik/editor_context";
export const DIAGNOSTICS_METHOD = "_larik/diagnostics";

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
