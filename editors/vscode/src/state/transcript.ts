// The chat transcript of one session, built from `session/update` notifications.
//
// Invariants:
// - streamed chunks append to the last item when it is of the same kind (and message id), so a
//   chunk costs O(chunk) to forward: listeners get an `append`, not the whole item;
// - tool calls are keyed by `toolCallId` and merged field by field: a field absent from an update
//   keeps its previous value, `content` and `locations` are replaced whole when present;
// - session-level state (plan, usage, modes, config options, title) lives in `session` and is
//   replaced whole by each update of its kind, as ACP specifies;
// - a tool call's diffs are kept whole (the view has only a preview), so that any of them can be
//   opened in the editor; a command's change summary and the diffs of the files it names show as
//   one list of changed files;
// - a turn is its user item and what follows up to the next one; undoing it marks it and every
//   later item undone, for good, and forgets the checkpoints of the turns it covers.
//
// This module does not import `vscode`.

import type { AvailableCommand, ContentBlock, SessionConfigOption, SessionModeState, SessionUpdate, ToolCallContent, ToolCallUpdate } from "../protocol/acp";
import { commandChangesOf } from "../protocol/larik";
import type {
  CommandView,
  DiffPreviewLine,
  FileChangeView,
  PlanEntryView,
  Picker,
  SessionView,
  ToolContentView,
  TranscriptItem,
  TurnCheckpointView,
  UsageView,
} from "../webview/messages";
import type { TurnRef } from "./checkpoints";
import type { DecisionView } from "./permissions";
import { computeHunks, splitLines } from "./hunks";

export type TranscriptChange =
  | { kind: "reset" }
  | { kind: "item"; item: TranscriptItem }
  | { kind: "append"; id: string; text: string }
  | { kind: "session" };

type Listener = (change: TranscriptChange) => void;

/** Lines of a diff shown inside a tool card; the editor's diff view shows the rest. */
const PREVIEW_LINES = 40;

export function textOf(block: ContentBlock | undefined): string {
  if (!block) return "";
  switch (block.type) {
    case "text":
      return block.text;
    case "resource_link":
      return `[${block.title ?? block.name}](${block.uri})`;
    case "resource":
      return "text" in block.resource ? block.resource.text : `[${block.resource.uri}]`;
    case "image":
      return "[image]";
    case "audio":
      return "[audio]";
    default:
      return "";
  }
}

/** A compact unified preview of a whole-file change, with `gap` lines between distant hunks. */
export function diffPreview(oldText: string, newText: string, limit = PREVIEW_LINES): { lines: DiffPreviewLine[]; added: number; removed: number; truncated: boolean } {
  const hunks = computeHunks(oldText, newText);
  const old = splitLines(oldText);
  const lines: DiffPreviewLine[] = [];
  let added = 0;
  let removed = 0;
  let lastOld = 0;
  const bare = (l: string) => l.replace(/\r?\n$/, "");
  for (const h of hunks) {
    added += h.newLines;
    removed += h.oldLines;
    const from = h.oldLines > 0 ? h.oldStart - 1 : h.oldStart;
    const contextStart = Math.max(lastOld, from - 2);
    if (contextStart > lastOld) lines.push({ kind: "gap", text: "…" });
    for (const l of old.slice(contextStart, from)) lines.push({ kind: "context", text: bare(l) });
    for (const l of splitLines(h.oldText)) lines.push({ kind: "removed", text: bare(l) });
    for (const l of splitLines(h.newText)) lines.push({ kind: "added", text: bare(l) });
    lastOld = from + h.oldLines;
    const trailing = old.slice(lastOld, lastOld + 2);
    for (const l of trailing) lines.push({ kind: "context", text: bare(l) });
    lastOld += trailing.length;
  }
  const truncated = lines.length > limit;
  return { lines: truncated ? lines.slice(0, limit) : lines, added, removed, truncated };
}

/** A file's change as a tool call carries it, whole; `change` as its summary says, for a
 * command's, else from its texts (an edit with no old text creates the file). */
export interface ToolDiff {
  path: string;
  oldText: string;
  newText: string;
  change: FileChangeView["change"];
}

/** The call's diffs, in order, each with the mark its change summary gives it. */
function toolDiffs(content: readonly ToolCallContent[], views: readonly ToolContentView[]): ToolDiff[] {
  const diffs = content.flatMap((c): ToolDiff[] => (c.type === "diff" ? [{ path: c.path, oldText: c.oldText ?? "", newText: c.newText, change: c.oldText == null ? "added" : "changed" }] : []));
  for (const view of views) {
    if (view.type !== "changes") continue;
    for (const file of view.files) if (file.diff !== undefined && diffs[file.diff]) diffs[file.diff]!.change = file.change;
  }
  return diffs;
}

/** One content block as the chat shows it; `diff` is a diff's index among the call's diffs. */
export function toolContentView(content: ToolCallContent, diff = 0): ToolContentView {
  switch (content.type) {
    case "diff": {
      const preview = diffPreview(content.oldText ?? "", content.newText);
      return {
        type: "diff",
        path: content.path,
        added: preview.added,
        removed: preview.removed,
        isNew: content.oldText == null,
        preview: preview.lines,
        truncated: preview.truncated,
        diff,
      };
    }
    case "terminal":
      return { type: "terminal", terminalId: content.terminalId };
    default:
      return { type: "text", text: textOf(content.content) };
  }
}

/**
 * A tool call's content as the chat shows it. A command's change summary (a text block starting
 * `Files the command changed: `) takes the diffs after it of the files it names: they show as one
 * list, each file with its mark, its line counts and the diff to open.
 */
export function toolContentViews(content: readonly ToolCallContent[]): ToolContentView[] {
  const diffIndex = (at: number) => content.slice(0, at).filter((c) => c.type === "diff").length;
  const folded = new Set<number>();
  const views: ToolContentView[] = [];
  content.forEach((block, at) => {
    if (folded.has(at)) return;
    const summary = block.type === "content" && block.content.type === "text" ? commandChangesOf(block.content.text) : undefined;
    if (!summary) {
      views.push(toolContentView(block, diffIndex(at)));
      return;
    }
    const changes = summary.files.map((file): FileChangeView => {
      const found = content.findIndex((c, j) => j > at && !folded.has(j) && c.type === "diff" && c.path === file.path);
      const diff = content[found];
      if (!diff || diff.type !== "diff") return { ...file, added: 0, removed: 0 };
      folded.add(found);
      const counts = computeHunks(diff.oldText ?? "", diff.newText).reduce((sum, h) => ({ added: sum.added + h.newLines, removed: sum.removed + h.oldLines }), { added: 0, removed: 0 });
      return { ...file, ...counts, diff: diffIndex(found) };
    });
    views.push({ type: "changes", files: changes, ...(summary.ignored ? { ignored: summary.ignored } : {}) });
  });
  return views;
}

/** A command as the prompt box offers it: its input's hint kept, the only input kind ACP has. */
export function commandView(command: AvailableCommand): CommandView {
  const hint = (command.input as { hint?: unknown } | null | undefined)?.hint;
  return { name: command.name, description: command.description, ...(typeof hint === "string" && hint.trim() !== "" ? { hint: hint.trim() } : {}) };
}

export function modePicker(modes: SessionModeState | null | undefined, options: SessionConfigOption[] | undefined): Picker | undefined {
  const fromOption = pickerOf(options, "mode");
  if (fromOption) return fromOption;
  if (!modes || modes.availableModes.length === 0) return undefined;
  return {
    current: modes.currentModeId,
    options: modes.availableModes.map((m) => ({ id: m.id, name: m.name, ...(m.description ? { description: m.description } : {}) })),
  };
}

/** The config option of a category (`mode`, `model`) as a picker; `model` also matches id `model`. */
export function configOptionOf(options: SessionConfigOption[] | undefined, category: string): SessionConfigOption | undefined {
  return options?.find((o) => o.type === "select" && (o.category === category || (category === "model" && o.id === "model")));
}

function pickerOf(options: SessionConfigOption[] | undefined, category: string): Picker | undefined {
  const option = configOptionOf(options, category);
  if (!option || option.type !== "select") return undefined;
  const flat = option.options.flatMap((o) => ("options" in o ? o.options : [o]));
  return {
    current: option.currentValue,
    options: flat.map((o) => ({ id: o.value, name: o.name, ...(o.description ? { description: o.description } : {}) })),
  };
}

export class Transcript {
  items: TranscriptItem[] = [];
  session: SessionView = { status: "starting", plan: [], canLoadSessions: false, commands: [] };
  modes: SessionModeState | undefined;
  configOptions: SessionConfigOption[] | undefined;
  #byId = new Map<string, TranscriptItem>();
  /** Tool calls not shown (the plan tool's). */
  /** Shell calls, by item id, with the title they are shown under (the command's description). */
  #commands = new Map<string, string>();
  /** Every tool call's diffs, whole, by item id. */
  #diffs = new Map<string, ToolDiff[]>();
  #lastMessageId: string | undefined;
  #counter = 0;
  #listeners: Listener[] = [];

  onChange(listener: Listener): () => void {
    this.#listeners.push(listener);
    return () => {
      this.#listeners = this.#listeners.filter((l) => l !== listener);
    };
  }

  #emit(change: TranscriptChange): void {
    for (const listener of this.#listeners) listener(change);
  }

  #newId(prefix: string): string {
    return `${prefix}${++this.#counter}`;
  }

  /** Forgets the conversation (a new or loaded session); keeps the status. */
  reset(): void {
    this.items = [];
    this.#byId.clear();
    this.#commands.clear();
    this.#diffs.clear();
    this.#lastMessageId = undefined;
    this.modes = undefined;
    this.configOptions = undefined;
    const { status, statusDetail, canLoadSessions, cwd } = this.session;
    this.session = { status, ...(statusDetail ? { statusDetail } : {}), ...(cwd ? { cwd } : {}), plan: [], canLoadSessions, commands: [] };
    this.#emit({ kind: "reset" });
  }

  updateSession(patch: Partial<SessionView>): void {
    this.session = { ...this.session, ...patch };
    for (const key of Object.keys(patch) as Array<keyof SessionView>) {
      if (patch[key] === undefined) delete this.session[key];
    }
    this.#emit({ kind: "session" });
  }

  setModesAndOptions(modes: SessionModeState | null | undefined, options: SessionConfigOption[] | null | undefined): void {
    if (modes !== undefined) this.modes = modes ?? undefined;
    if (options !== undefined) this.configOptions = options ?? undefined;
    this.updateSession({ mode: modePicker(this.modes, this.configOptions), model: pickerOf(this.configOptions, "model") });
  }

  #push(item: TranscriptItem): TranscriptItem {
    this.items.push(item);
    this.#byId.set(item.id, item);
    this.#emit({ kind: "item", item });
    return item;
  }

  /**
   * The turn ended (or the next one starts): its plan leaves the pinned place and stays in the
   * transcript with the turn, so it is undone with it and never shown over a later turn.
   */
  settlePlan(): void {
    if (this.session.plan.length === 0) return;
    this.#push({ type: "plan", id: this.#newId("p"), entries: this.session.plan });
    this.updateSession({ plan: [] });
  }

  /** Adds the prompt of a turn; returns its item's id. */
  addUserMessage(text: string, context?: string[]): string {
    this.settlePlan();
    this.#lastMessageId = undefined;
    return this.#push({ type: "user", id: this.#newId("u"), text, ...(context && context.length > 0 ? { context } : {}) }).id;
  }

  /** The turns, oldest first: their prompts' items. */
  turns(): TurnRef[] {
    return this.items.flatMap((i) => (i.type === "user" ? [{ id: i.id, text: i.text, ...(i.checkpoint ? { checkpoint: i.checkpoint } : {}), ...(i.undone ? { undone: true } : {}) }] : []));
  }

  /** Records the checkpoint a turn took: its changes can be undone. */
  setCheckpoint(id: string, checkpoint: TurnCheckpointView): void {
    const item = this.#byId.get(id);
    if (item?.type !== "user" || item.undone) return;
    item.checkpoint = checkpoint;
    this.#emit({ kind: "item", item });
  }

  /** Marks the turn of user item `fromId` and everything after it undone, up to `untilId` (not included). */
  markUndone(fromId: string, untilId?: string): void {
    const from = this.items.findIndex((i) => i.id === fromId);
    if (from === -1) return;
    const until = untilId === undefined ? -1 : this.items.findIndex((i) => i.id === untilId);
    for (const item of this.items.slice(from, until === -1 ? undefined : until)) {
      if (item.undone) continue;
      item.undone = true;
      if (item.type === "user") delete item.checkpoint;
      this.#emit({ kind: "item", item });
    }
  }

  /** Records on a tool call's card what the user decided about it. */
  setDecision(toolCallId: string, decision: DecisionView): void {
    const item = this.#byId.get(`tool:${toolCallId}`);
    if (item?.type !== "tool") return;
    item.decision = decision;
    this.#emit({ kind: "item", item });
  }

  /** One of a tool call's diffs, whole (`index` among its diffs), with the call's title. */
  diffOf(toolCallId: string, index: number): { diff: ToolDiff; title: string } | undefined {
    const id = `tool:${toolCallId}`;
    const diff = this.#diffs.get(id)?.[index];
    const item = this.#byId.get(id);
    return diff && item?.type === "tool" ? { diff, title: item.title } : undefined;
  }

  addNotice(severity: "info" | "warning" | "error", text: string): void {
    this.#push({ type: "notice", id: this.#newId("n"), severity, text });
  }

  #appendChunk(type: "user" | "agent" | "thought", text: string, messageId: string | undefined): void {
    const last = this.items.at(-1);
    const sameMessage = messageId === undefined || this.#lastMessageId === undefined || messageId === this.#lastMessageId;
    if (last && last.type === type && !last.undone && sameMessage) {
      last.text += text;
      this.#lastMessageId = messageId ?? this.#lastMessageId;
      this.#emit({ kind: "append", id: last.id, text });
      return;
    }
    this.#lastMessageId = messageId;
    // A replayed prompt starts a turn: the plan before it was the previous turn's.
    if (type === "user") this.settlePlan();
    this.#push({ type, id: this.#newId(type[0]!), text });
  }

  #mergeTool(update: ToolCallUpdate, created: boolean): void {
    const id = `tool:${update.toolCallId}`;
    const commandTitle = titleOfCommand(update);
    if (commandTitle !== undefined) this.#commands.set(id, commandTitle);
    const title = this.#commands.get(id) ?? update.title;
    const content = update.content != null ? toolContentViews(update.content) : undefined;
    if (update.content != null && content) this.#diffs.set(id, toolDiffs(update.content, content));
    const existing = this.#byId.get(id);
    if (existing && existing.type === "tool") {
      if (title != null) existing.title = title;
      if (update.kind != null) existing.kind = update.kind;
      if (update.status != null) existing.status = update.status;
      if (content) existing.content = content;
      if (update.locations != null) existing.locations = update.locations.map((l) => ({ path: l.path, ...(l.line != null ? { line: l.line } : {}) }));
      this.#emit({ kind: "item", item: existing });
      return;
    }
    this.#lastMessageId = undefined;
    this.#push({
      type: "tool",
      id,
      title: title ?? update.toolCallId,
      kind: update.kind ?? "other",
      status: update.status ?? (created ? "pending" : "in_progress"),
      content: content ?? [],
      locations: (update.locations ?? []).map((l) => ({ path: l.path, ...(l.line != null ? { line: l.line } : {}) })),
    });
  }

  /** Marks tool calls that never finished as cancelled (after the turn was cancelled). */
  settleUnfinishedTools(status = "cancelled"): void {
    for (const item of this.items) {
      if (item.type === "tool" && (item.status === "pending" || item.status === "in_progress")) {
        item.status = status;
        this.#emit({ kind: "item", item });
      }
    }
  }

  /** Applies one `session/update`; unknown kinds are ignored, as ACP asks of clients. */
  apply(update: SessionUpdate): void {
    switch (update.sessionUpdate) {
      case "user_message_chunk":
        this.#appendChunk("user", textOf(update.content), update.messageId ?? undefined);
        break;
      case "agent_message_chunk":
        this.#appendChunk("agent", textOf(update.content), update.messageId ?? undefined);
        break;
      case "agent_thought_chunk":
        this.#appendChunk("thought", textOf(update.content), update.messageId ?? undefined);
        break;
      case "tool_call":
        this.#mergeTool(update, true);
        break;
      case "tool_call_update":
        this.#mergeTool(update, false);
        break;
      case "plan":
        this.updateSession({ plan: update.entries.map((e): PlanEntryView => ({ content: e.content, status: e.status, priority: e.priority })) });
        break;
      case "usage_update": {
        const usage: UsageView = { used: update.used, size: update.size, ...(update.cost ? { cost: { amount: update.cost.amount, currency: update.cost.currency } } : {}) };
        this.updateSession({ usage });
        break;
      }
      case "current_mode_update":
        if (this.modes) this.modes = { ...this.modes, currentModeId: update.currentModeId };
        else this.modes = { currentModeId: update.currentModeId, availableModes: [] };
        this.setModesAndOptions(this.modes, undefined);
        break;
      case "config_option_update":
        this.setModesAndOptions(undefined, update.configOptions);
        break;
      case "session_info_update":
        if (update.title !== undefined) this.updateSession({ title: update.title ?? undefined });
        break;
      case "available_commands_update":
        this.updateSession({ commands: update.availableCommands.map(commandView) });
        break;
      case "notice": {
        const severity = update.severity === "error" ? "error" : update.severity === "warning" ? "warning" : "info";
        this.addNotice(severity, update.description ? `${update.title}: ${update.description}` : update.title);
        break;
      }
      default:
        break;
    }
  }
}

/** A shell call's title: its description, since its command is shown in its output block and the
 * agent's title repeats it with raw backticks. Undefined for other calls. */
function titleOfCommand(update: ToolCallUpdate): string | undefined {
  const input = update.rawInput as { command?: unknown; description?: unknown } | null | undefined;
  if (typeof input?.command !== "string") return undefined;
  return typeof input.description === "string" && input.description.trim() ? input.description.trim() : "Run a command";
}
