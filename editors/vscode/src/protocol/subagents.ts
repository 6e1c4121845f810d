// ACP's subagents (child sessions, stable since ACP 1.20) as they come on the wire, and Larik's
// note of the `task` call that made each child (`_meta.larik.toolCallId`, see
// protocol-spec/spec/extensions.md, "Subagents under their task call").
//
// The SDK's stable v1 types do not have them yet, so they are declared here, and read leniently:
// a malformed `subagent_update` is treated as absent, a malformed field as omitted.

import { larikMeta } from "./larik";

/** What a client advertises in `clientCapabilities.subagents`: that it shows child sessions. */
export type SubagentCapabilities = Record<string, never>;

/** A child's state; `idle` ends its work, with the reason its turn stopped. */
export interface SubagentState {
  state: string;
  stopReason?: string;
}

/**
 * One `subagent_update`, sent in the parent's session. Only `sessionId` is required: an omitted
 * field keeps its previous value, `null` clears it (ACP's patch rules).
 */
export interface SubagentUpdate {
  sessionUpdate: "subagent_update";
  /** The child's session id, under which its own updates and requests come. */
  sessionId: string;
  title?: string | null;
  description?: string | null;
  cwd?: string | null;
  /** `cancel` present (an object): `session/cancel` with the child's id stops it. */
  capabilities?: { cancel?: object | null } | null;
  state?: SubagentState | null;
  /** The parent's `task` call that started the child, from `_meta.larik.toolCallId`. */
  toolCallId?: string;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/** A patch field: a string, `null` (cleared), or undefined (omitted or malformed). */
function stringPatch(value: unknown): string | null | undefined {
  return typeof value === "string" || value === null ? value : undefined;
}

/** The update as a `subagent_update`, or undefined when it is not one (or is malformed). */
export function subagentUpdateOf(update: unknown): SubagentUpdate | undefined {
  if (!isObject(update) || update.sessionUpdate !== "subagent_update" || typeof update.sessionId !== "string" || update.sessionId === "") return undefined;
  const parsed: SubagentUpdate = { sessionUpdate: "subagent_update", sessionId: update.sessionId };
  for (const key of ["title", "description", "cwd"] as const) {
    const value = stringPatch(update[key]);
    if (value !== undefined) parsed[key] = value;
  }
  if (update.capabilities === null) parsed.capabilities = null;
  else if (isObject(update.capabilities)) {
    const cancel = update.capabilities.cancel;
    parsed.capabilities = isObject(cancel) ? { cancel } : {};
  }
  if (update.state === null) parsed.state = null;
  else if (isObject(update.state) && typeof update.state.state === "string") {
    const stopReason = update.state.stopReason;
    parsed.state = { state: update.state.state, ...(typeof stopReason === "string" ? { stopReason } : {}) };
  }
  const call = larikMeta(update._meta)?.toolCallId;
  if (typeof call === "string" && call !== "") parsed.toolCallId = call;
  return parsed;
}
