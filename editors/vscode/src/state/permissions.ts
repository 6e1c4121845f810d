// Permission requests from the agent, queued so that one is shown at a time.
//
// Invariants:
// - every request is answered exactly once: by the user (an option the agent offered, verbatim),
//   or with `cancelled` when the turn is cancelled, the agent withdraws the request
//   (`$/cancel_request`) or the connection closes. Nothing here answers on the user's behalf:
//   what runs without asking is the agent's to decide, by its own permission rules and mode, so
//   that every decision is explained by them and no request reaches this queue that they allow;
// - an answer names one of the request's own option ids; anything else is refused, so a stale
//   button can never answer the next request;
// - listeners hear about every change of the head of the queue or of its length.
//
// This module does not import `vscode`.

import type { PermissionOption, RequestPermissionRequest, RequestPermissionResponse } from "../protocol/acp";
import { hunksOf, permissionResponseMeta, type Hunk } from "../protocol/larik";

export interface PendingPermission {
  /** Local key, stable for the life of the request. */
  key: number;
  request: RequestPermissionRequest;
  /** The diff of the edit, when the tool call carries one. */
  diff?: { path: string; oldText: string; newText: string; isNew: boolean };
  /** The agent's hunks, when it sent them (per-hunk review). */
  hunks?: Hunk[];
}

/** What was decided about a tool call, as its card records it. */
export interface DecisionView {
  text: string;
  allowed: boolean;
}

/**
 * How an answered request reads on its call's card: "Allowed once", "Always allowed", "Rejected:
 * “why”", "1 of 2 hunks accepted"; undefined for a request withdrawn or cancelled with its turn.
 */
export function decisionOf(request: RequestPermissionRequest, response: RequestPermissionResponse): DecisionView | undefined {
  if (response.outcome.outcome !== "selected") return undefined;
  const chosen = response.outcome.optionId;
  const option = request.options.find((o) => o.optionId === chosen);
  if (!option) return undefined;
  const larik = (response._meta as Record<string, { acceptedHunks?: number[]; feedback?: string }> | undefined)?.larik;
  const total = hunksOf(request.toolCall)?.length;
  const accepted = larik?.acceptedHunks;
  if (accepted && total) {
    if (accepted.length === 0) return { text: `All ${total} hunks rejected`, allowed: false };
    return { text: accepted.length === total ? `All ${total} hunks accepted` : `${accepted.length} of ${total} hunks accepted`, allowed: true };
  }
  switch (option.kind) {
    case "allow_once":
      return { text: "Allowed once", allowed: true };
    case "allow_always":
      return { text: "Always allowed", allowed: true };
    default:
      return { text: larik?.feedback ? `Rejected: “${larik.feedback}”` : "Rejected", allowed: false };
  }
}

export interface PermissionAnswer {
  optionId: string;
  feedback?: string;
  /** Indices of the hunks the user kept; only for allow options. */
  acceptedHunks?: number[];
}

/** The first option of a kind, e.g. the one to use for "Accept" in the diff editor. */
export function optionOfKind(request: RequestPermissionRequest, ...kinds: string[]): PermissionOption | undefined {
  for (const kind of kinds) {
    const option = request.options.find((o) => o.kind === kind);
    if (option) return option;
  }
  return undefined;
}

export function diffOf(request: RequestPermissionRequest): PendingPermission["diff"] {
  const diff = (request.toolCall.content ?? []).find((c) => c.type === "diff");
  if (!diff || diff.type !== "diff") return undefined;
  return { path: diff.path, oldText: diff.oldText ?? "", newText: diff.newText, isNew: diff.oldText == null };
}

interface Entry {
  pending: PendingPermission;
  resolve: (response: RequestPermissionResponse) => void;
}

export class PermissionQueue {
  #entries: Entry[] = [];
  #nextKey = 1;
  #listeners: Array<() => void> = [];

  onChange(listener: () => void): () => void {
    this.#listeners.push(listener);
    return () => {
      this.#listeners = this.#listeners.filter((l) => l !== listener);
    };
  }

  #changed(): void {
    for (const listener of this.#listeners) listener();
  }

  get current(): PendingPermission | undefined {
    return this.#entries[0]?.pending;
  }

  get size(): number {
    return this.#entries.length;
  }

  get(key: number): PendingPermission | undefined {
    return this.#entries.find((e) => e.pending.key === key)?.pending;
  }

  all(): PendingPermission[] {
    return this.#entries.map((e) => e.pending);
  }

  /** Queues a request; the promise settles with the response to send. */
  enqueue(request: RequestPermissionRequest, signal?: AbortSignal): Promise<RequestPermissionResponse> {
    const diff = diffOf(request);
    const hunks = hunksOf(request.toolCall);
    const pending: PendingPermission = { key: this.#nextKey++, request, ...(diff ? { diff } : {}), ...(hunks ? { hunks } : {}) };
    return new Promise((resolve) => {
      if (signal?.aborted) {
        resolve({ outcome: { outcome: "cancelled" } });
        return;
      }
      this.#entries.push({ pending, resolve });
      signal?.addEventListener("abort", () => this.cancel(pending.key), { once: true });
      this.#changed();
    });
  }

  /** Answers a request with one of its options. Returns false if the key or option is unknown. */
  answer(key: number, answer: PermissionAnswer): boolean {
    const index = this.#entries.findIndex((e) => e.pending.key === key);
    if (index === -1) return false;
    const entry = this.#entries[index]!;
    const option = entry.pending.request.options.find((o) => o.optionId === answer.optionId);
    if (!option) return false;
    const allows = option.kind === "allow_once" || option.kind === "allow_always";
    const meta = permissionResponseMeta({
      ...(answer.feedback !== undefined && !allows ? { feedback: answer.feedback } : {}),
      ...(answer.acceptedHunks !== undefined && allows && entry.pending.hunks ? { acceptedHunks: answer.acceptedHunks } : {}),
    });
    this.#entries.splice(index, 1);
    entry.resolve({ outcome: { outcome: "selected", optionId: option.optionId }, ...(meta ? { _meta: meta } : {}) });
    this.#changed();
    return true;
  }

  cancel(key: number): void {
    const index = this.#entries.findIndex((e) => e.pending.key === key);
    if (index === -1) return;
    const [entry] = this.#entries.splice(index, 1);
    entry!.resolve({ outcome: { outcome: "cancelled" } });
    this.#changed();
  }

  /** Cancels every request (of one session, if given). */
  cancelAll(sessionId?: string): void {
    const cancelled = this.#entries.filter((e) => sessionId === undefined || e.pending.request.sessionId === sessionId);
    if (cancelled.length === 0) return;
    this.#entries = this.#entries.filter((e) => !cancelled.includes(e));
    for (const entry of cancelled) entry.resolve({ outcome: { outcome: "cancelled" } });
    this.#changed();
  }
}
