// The subagents of the current session: ACP child sessions, each announced by a `subagent_update`
// in the parent's session, then speaking (tool calls, text, permission requests) under its own
// session id, and ended by a last `subagent_update` that shows it idle with its stop reason.
//
// Invariants:
// - a child exists from its announcement on; the controller drops updates of a session that was
//   never announced, as it does for any unknown session;
// - `subagent_update` patches a child: an omitted field keeps its value, `null` clears it, a
//   concrete state replaces the previous one whole (ACP's rules);
// - each child keeps a `Transcript` of its own (tool calls merged by id, chunks appended), so its
//   calls read exactly as the session's do; its view carries the calls' titles and statuses and a
//   bounded preview of its latest message, so forwarding a streamed chunk costs at most the
//   preview, not the whole report (which the `task` call's own output carries);
// - a child can be stopped while it runs and the agent gave it the `cancel` capability;
//   `stopping` holds from the Stop to its end;
// - `clear()` is silent: it goes with the transcript's reset, whose snapshot carries the list.
//
// Children of a child are not tracked: Larik's subagents cannot start subagents (`task` is the
// parent's tool alone), so a `subagent_update` only comes in the session itself.
//
// This module does not import `vscode`.

import type { SessionUpdate } from "../protocol/acp";
import type { SubagentState, SubagentUpdate } from "../protocol/subagents";
import type { SubagentPhase, SubagentToolView, SubagentView } from "../webview/messages";
import { Transcript } from "./transcript";

/** Characters of a child's latest message shown under its task call. */
export const TEXT_PREVIEW = 600;

interface Child {
  sessionId: string;
  toolCallId?: string;
  title?: string;
  canCancel: boolean;
  /** Undefined: never reported, or cleared. */
  state?: SubagentState;
  stopping: boolean;
  /** One of its permission requests is open. */
  waiting: boolean;
  /** The connection closed while it ran. */
  lost: boolean;
  transcript: Transcript;
}

type Listener = (view: SubagentView) => void;

function isActive(state: SubagentState | undefined): boolean {
  return state?.state === "running" || state?.state === "requires_action";
}

function phaseOf(child: Child): { phase: SubagentPhase; stopReason?: string } {
  const { state } = child;
  if (child.lost && isActive(state)) return { phase: "ended", stopReason: "the agent stopped" };
  switch (state?.state) {
    case "running":
      return { phase: child.waiting ? "waiting" : "running" };
    case "requires_action":
      return { phase: "waiting" };
    case "idle":
      if (state.stopReason === undefined || state.stopReason === "end_turn") return { phase: "done" };
      if (state.stopReason === "cancelled") return { phase: "stopped" };
      return { phase: "ended", stopReason: state.stopReason.replace(/_/g, " ") };
    default:
      return { phase: "unknown" };
  }
}

function viewOf(child: Child): SubagentView {
  const { phase, stopReason } = phaseOf(child);
  const tools: SubagentToolView[] = [];
  let text = "";
  for (const item of child.transcript.items) {
    if (item.type === "tool") tools.push({ toolCallId: item.id.replace(/^tool:/, ""), title: item.title, kind: item.kind, status: item.status });
    else if (item.type === "agent") text = item.text;
  }
  const active = phase === "running" || phase === "waiting";
  return {
    sessionId: child.sessionId,
    ...(child.toolCallId !== undefined ? { toolCallId: child.toolCallId } : {}),
    title: child.title?.trim() || "Subagent",
    phase,
    ...(stopReason !== undefined ? { stopReason } : {}),
    canStop: active && child.canCancel,
    stopping: active && child.stopping,
    tools,
    text: text.length > TEXT_PREVIEW ? text.slice(0, TEXT_PREVIEW) : text,
    textTruncated: text.length > TEXT_PREVIEW,
  };
}

export class Subagents {
  #children = new Map<string, Child>();
  #listeners: Listener[] = [];

  onChange(listener: Listener): () => void {
    this.#listeners.push(listener);
    return () => {
      this.#listeners = this.#listeners.filter((l) => l !== listener);
    };
  }

  #emit(child: Child): void {
    if (this.#listeners.length === 0) return;
    const view = viewOf(child);
    for (const listener of this.#listeners) listener(view);
  }

  has(sessionId: string): boolean {
    return this.#children.has(sessionId);
  }

  /** The child's view, as the chat shows it. */
  get(sessionId: string): SubagentView | undefined {
    const child = this.#children.get(sessionId);
    return child && viewOf(child);
  }

  /** Every child, in the order they were announced. */
  views(): SubagentView[] {
    return [...this.#children.values()].map(viewOf);
  }

  /** The session ids of the children that still run. */
  running(): string[] {
    return [...this.#children.values()].filter((c) => isActive(c.state) && !c.lost).map((c) => c.sessionId);
  }

  /** Applies a `subagent_update` of the session: announces the child or patches it. */
  update(update: SubagentUpdate): void {
    let child = this.#children.get(update.sessionId);
    if (!child) {
      child = { sessionId: update.sessionId, canCancel: false, stopping: false, waiting: false, lost: false, transcript: new Transcript() };
      this.#children.set(update.sessionId, child);
    }
    // The call that made a child does not change; a later update need not repeat it.
    if (update.toolCallId !== undefined) child.toolCallId = update.toolCallId;
    if (update.title !== undefined) child.title = update.title ?? undefined;
    if (update.capabilities !== undefined) child.canCancel = update.capabilities?.cancel != null;
    if (update.state !== undefined) {
      child.state = update.state ?? undefined;
      if (!isActive(child.state)) {
        child.stopping = false;
        // Calls it left unfinished will not finish now.
        child.transcript.settleUnfinishedTools("cancelled");
      }
    }
    this.#emit(child);
  }

  /** Applies one of a child's own updates; false when the session is not a known child. */
  applyChild(sessionId: string, update: SessionUpdate): boolean {
    const child = this.#children.get(sessionId);
    if (!child) return false;
    child.transcript.apply(update);
    this.#emit(child);
    return true;
  }

  /** Notes that Stop was sent for a running child; false when it cannot be stopped. */
  markStopping(sessionId: string): boolean {
    const child = this.#children.get(sessionId);
    if (!child || !viewOf(child).canStop) return false;
    child.stopping = true;
    this.#emit(child);
    return true;
  }

  /** Which children have a permission request open (the others have none). */
  setWaiting(sessionIds: ReadonlySet<string>): void {
    for (const child of this.#children.values()) {
      const waiting = sessionIds.has(child.sessionId);
      if (child.waiting === waiting) continue;
      child.waiting = waiting;
      this.#emit(child);
    }
  }

  /** The connection closed: children that ran will not report again. */
  settle(): void {
    for (const child of this.#children.values()) {
      if (!isActive(child.state) || child.lost) continue;
      child.lost = true;
      child.transcript.settleUnfinishedTools("failed");
      this.#emit(child);
    }
  }

  /** Forgets every child (a new or loaded session); silent, see the module's invariants. */
  clear(): void {
    this.#children.clear();
  }
}
