// Which turn of the chat each of the agent's checkpoints belongs to, and what an undo did, in
// words.
//
// The agent takes a checkpoint before a turn's first change of a file and lists them with
// `_larik/checkpoints`; it does not say which prompt request took one. The chat learns it by
// asking after each turn: the newest checkpoint belongs to the turn that just ended when no
// earlier turn holds it and it is that turn's (its prompt is the turn's, or it was taken since
// the turn started). Checkpoint ids are numbered again after an undo (`cp-1` may come back), so a
// checkpoint is known by its id and its creation time together.
//
// Invariants:
// - a turn holds at most one checkpoint, and no two turns that are not undone hold the same one;
// - a turn whose checkpoint the agent no longer lists was undone (a `/undo` typed as a prompt):
//   it and every later turn are undone, since the agent rewound the conversation to before it.
//
// This module does not import `vscode`.

import type { CheckpointInfo, UndoResponse } from "../protocol/larik";
import type { TurnCheckpointView } from "../webview/messages";

/** A turn as the chat shows it: its prompt's item. */
export interface TurnRef {
  /** The id of the turn's user item. */
  id: string;
  text: string;
  checkpoint?: TurnCheckpointView;
  undone?: boolean;
}

/** The turn that just ended, with the time it started (ms since the epoch). */
export interface EndedTurn {
  id: string;
  text: string;
  startedAt: number;
}

export interface Reconciled {
  /** The first turn the agent undid behind the chat's back: it and the later ones are undone. */
  undoneFrom?: string;
  /** The checkpoint the turn that ended took. */
  assign?: { id: string; checkpoint: TurnCheckpointView };
}

/** How far a checkpoint's time may lie before its turn's start: the agent keeps whole seconds. */
const CLOCK_SLACK_MS = 1000;

/** A prompt as the agent keeps it in a checkpoint: its first 200 characters. */
export function promptKey(text: string): string {
  return Array.from(text).slice(0, 200).join("");
}

const sameCheckpoint = (a: { id: string; createdAt: string }, b: { id: string; createdAt: string }) => a.id === b.id && a.createdAt === b.createdAt;

export function checkpointView(checkpoint: CheckpointInfo): TurnCheckpointView {
  return { id: checkpoint.id, createdAt: checkpoint.createdAt, files: [...checkpoint.files] };
}

/** What the agent's list of checkpoints says about the chat's turns, after `ended` (if any). */
export function reconcile(turns: readonly TurnRef[], list: readonly CheckpointInfo[], ended?: EndedTurn): Reconciled {
  const live = turns.filter((t) => !t.undone);
  const vanished = live.findIndex((t) => t.checkpoint !== undefined && t.id !== ended?.id && !list.some((c) => sameCheckpoint(c, t.checkpoint!)));
  const kept = vanished === -1 ? live : live.slice(0, vanished);
  const result: Reconciled = vanished === -1 ? {} : { undoneFrom: live[vanished]!.id };
  const newest = list.at(-1);
  if (!ended || !newest || kept.some((t) => t.checkpoint && sameCheckpoint(t.checkpoint, newest))) return result;
  const taken = Date.parse(newest.createdAt);
  const itsOwn = newest.prompt === promptKey(ended.text) || (Number.isFinite(taken) && taken >= ended.startedAt - CLOCK_SLACK_MS);
  if (itsOwn) result.assign = { id: ended.id, checkpoint: checkpointView(newest) };
  return result;
}

/**
 * A loaded session's checkpoints placed on its replayed turns, by prompt: the newest checkpoint
 * on the latest turn with its prompt, the one before on an earlier turn, and so on.
 */
export function placeLoaded(turns: readonly TurnRef[], list: readonly CheckpointInfo[]): Array<{ id: string; checkpoint: TurnCheckpointView }> {
  const placed: Array<{ id: string; checkpoint: TurnCheckpointView }> = [];
  let end = turns.length;
  for (const checkpoint of [...list].reverse()) {
    let index = end - 1;
    while (index >= 0 && (turns[index]!.undone || promptKey(turns[index]!.text) !== checkpoint.prompt)) index--;
    if (index < 0) continue;
    placed.unshift({ id: turns[index]!.id, checkpoint: checkpointView(checkpoint) });
    end = index;
  }
  return placed;
}

/** The chat's turn an undo went back to before: the one holding its checkpoint, else the latest
 * turn with its prompt. */
export function turnOfCheckpoint(turns: readonly TurnRef[], checkpoint: CheckpointInfo): TurnRef | undefined {
  const live = turns.filter((t) => !t.undone);
  return live.find((t) => t.checkpoint && sameCheckpoint(t.checkpoint, checkpoint)) ?? [...live].reverse().find((t) => promptKey(t.text) === checkpoint.prompt);
}

/**
 * The turns an undo back to before `checkpoint` takes along: every live turn after the one that
 * holds it, whether or not it changed files (the agent forgets them all).
 */
export function turnsAfter(turns: readonly TurnRef[], checkpoint: CheckpointInfo): TurnRef[] {
  const live = turns.filter((t) => !t.undone);
  const own = turnOfCheckpoint(turns, checkpoint);
  return own ? live.slice(live.indexOf(own) + 1) : [];
}

/** The question before an undo that takes later turns along, naming them; undefined when none. */
export function undoQuestion(checkpoint: CheckpointInfo, later: readonly TurnRef[]): { message: string; detail: string } | undefined {
  if (later.length === 0) return undefined;
  const named = later.slice(0, 3).map((t) => `“${shortPrompt(t.text, 40)}”`);
  const more = later.length > 3 ? ` and ${later.length - 3} more` : "";
  return {
    message: `Undo “${shortPrompt(checkpoint.prompt)}” and the ${later.length === 1 ? "turn" : `${later.length} turns`} after it?`,
    detail: `These go too: ${named.join(", ")}${more}. The files go back to how they were before “${shortPrompt(checkpoint.prompt, 40)}”, and the agent forgets it and every turn since.`,
  };
}

/** A list of paths, the first few by name. */
export function listed(paths: readonly string[], max = 6): string {
  const shown = paths.slice(0, max).join(", ");
  return paths.length > max ? `${shown} and ${paths.length - max} more` : shown;
}

/** A prompt short enough for a notification's line. */
export function shortPrompt(prompt: string, max = 60): string {
  const line = prompt.trim().split("\n")[0] ?? "";
  const chars = Array.from(line);
  return chars.length > max || line !== prompt.trim() ? `${chars.slice(0, max - 1).join("")}…` : line;
}

/** What an undo did, in one sentence: "Undid “Tidy”: restored a.txt; removed c.txt; b.txt changed by you since, kept." */
export function undoSummary(undone: UndoResponse): string {
  const parts: string[] = [];
  if (undone.restored.length > 0) parts.push(`restored ${listed(undone.restored)}`);
  if (undone.removed.length > 0) parts.push(`removed ${listed(undone.removed)}`);
  if (parts.length === 0) parts.push("no file needed restoring");
  if (undone.kept.length > 0) parts.push(`${listed(undone.kept)} changed by you since, kept`);
  return `Undid “${shortPrompt(undone.checkpoint.prompt) || undone.checkpoint.id}”: ${parts.join("; ")}.`;
}
