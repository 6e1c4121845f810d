// Hunks of a proposed edit: computing them from whole-file old/new text, placing the agent's own
// hunks in the old text, applying a chosen subset, and laying out the unified review view.
//
// Line numbers in `Hunk` are 1-based as in a unified diff; everything else here is 0-based.
// Lines keep their terminators when text is rebuilt, so applying every hunk to the old text gives
// back the new text byte for byte (CRLF and a missing final newline included).
//
// This module does not import `vscode`.

import type { Hunk } from "../protocol/larik";

/** Splits text into lines that keep their `\n` (the last line may lack one). */
export function splitLines(text: string): string[] {
  if (text === "") return [];
  return text.match(/[^\n]*\n|[^\n]+$/g) ?? [];
}

type Op = "equal" | "delete" | "insert";

/** Myers' O(ND) diff of two line arrays, as a list of operations from start to end. */
function myers(a: string[], b: string[]): Op[] {
  const n = a.length;
  const m = b.length;
  const max = n + m;
  const offset = max + 1;
  const v = new Int32Array(2 * max + 3);
  const trace: Int32Array[] = [];
  let found = false;
  for (let d = 0; d <= max && !found; d++) {
    trace.push(v.slice());
    for (let k = -d; k <= d; k += 2) {
      let x = k === -d || (k !== d && v[k - 1 + offset]! < v[k + 1 + offset]!) ? v[k + 1 + offset]! : v[k - 1 + offset]! + 1;
      let y = x - k;
      while (x < n && y < m && a[x] === b[y]) {
        x++;
        y++;
      }
      v[k + offset] = x;
      if (x >= n && y >= m) {
        found = true;
        break;
      }
    }
  }
  const ops: Op[] = [];
  let x = n;
  let y = m;
  for (let d = trace.length - 1; d >= 0; d--) {
    const vd = trace[d]!;
    const k = x - y;
    const prevK = k === -d || (k !== d && vd[k - 1 + offset]! < vd[k + 1 + offset]!) ? k + 1 : k - 1;
    const prevX = vd[prevK + offset]!;
    const prevY = prevX - prevK;
    while (x > prevX && y > prevY) {
      ops.push("equal");
      x--;
      y--;
    }
    if (d > 0) ops.push(x === prevX ? "insert" : "delete");
    x = prevX;
    y = prevY;
  }
  return ops.reverse();
}

/** The change between two texts as zero-context hunks, numbered from 0. */
export function computeHunks(oldText: string, newText: string): Hunk[] {
  const a = splitLines(oldText);
  const b = splitLines(newText);
  // Trim the common ends first: most edits touch a few lines of a long file.
  let prefix = 0;
  while (prefix < a.length && prefix < b.length && a[prefix] === b[prefix]) prefix++;
  let suffix = 0;
  while (suffix < a.length - prefix && suffix < b.length - prefix && a[a.length - 1 - suffix] === b[b.length - 1 - suffix]) suffix++;
  const midA = a.slice(prefix, a.length - suffix);
  const midB = b.slice(prefix, b.length - suffix);
  // A very large rewrite is one hunk: the quadratic part of the diff is not worth it.
  const ops: Op[] =
    midA.length * midB.length > 25_000_000
      ? [...midA.map((): Op => "delete"), ...midB.map((): Op => "insert")]
      : myers(midA, midB);

  const hunks: Hunk[] = [];
  let i = prefix;
  let j = prefix;
  let current: { oldFrom: number; newFrom: number; oldTo: number; newTo: number } | undefined;
  const flush = () => {
    if (!current) return;
    const oldLines = current.oldTo - current.oldFrom;
    const newLines = current.newTo - current.newFrom;
    hunks.push({
      index: hunks.length,
      oldStart: oldLines > 0 ? current.oldFrom + 1 : current.oldFrom,
      oldLines,
      newStart: newLines > 0 ? current.newFrom + 1 : current.newFrom,
      newLines,
      oldText: a.slice(current.oldFrom, current.oldTo).join(""),
      newText: b.slice(current.newFrom, current.newTo).join(""),
    });
    current = undefined;
  };
  for (const op of ops) {
    if (op === "equal") {
      flush();
      i++;
      j++;
      continue;
    }
    current ??= { oldFrom: i, newFrom: j, oldTo: i, newTo: j };
    if (op === "delete") current.oldTo = ++i;
    else current.newTo = ++j;
  }
  flush();
  return hunks;
}

/** A hunk placed in the old text: it replaces old lines `[oldIndex, oldIndex + oldLines)`. */
export interface PlacedHunk {
  hunk: Hunk;
  oldIndex: number;
}

/** Applies the hunks whose index is in `accepted` to the old text. */
export function applyHunks(oldText: string, placed: PlacedHunk[], accepted: ReadonlySet<number>): string {
  const lines = splitLines(oldText);
  let out = "";
  let cursor = 0;
  for (const { hunk, oldIndex } of placed) {
    out += lines.slice(cursor, oldIndex).join("");
    out += accepted.has(hunk.index) ? hunk.newText : lines.slice(oldIndex, oldIndex + hunk.oldLines).join("");
    cursor = oldIndex + hunk.oldLines;
  }
  return out + lines.slice(cursor).join("");
}

/**
 * Places hunks (typically the agent's) in the old text. Returns undefined when they do not
 * describe the change from `oldText` to `newText`: overlapping, out of order, or not matching
 * the text. An empty-range hunk's place comes from its new start and the hunks before it, which
 * is unambiguous whichever convention the sender used for `oldStart`.
 */
export function placeHunks(oldText: string, newText: string, hunks: Hunk[]): PlacedHunk[] | undefined {
  const lines = splitLines(oldText);
  const placed: PlacedHunk[] = [];
  let delta = 0; // new line number minus old line number after the hunks placed so far
  let cursor = 0;
  for (const hunk of [...hunks].sort((x, y) => x.index - y.index)) {
    const oldIndex = hunk.oldLines > 0 ? hunk.oldStart - 1 : hunk.newLines > 0 ? hunk.newStart - 1 - delta : hunk.oldStart;
    if (oldIndex < cursor || oldIndex + hunk.oldLines > lines.length) return undefined;
    if (lines.slice(oldIndex, oldIndex + hunk.oldLines).join("") !== hunk.oldText) return undefined;
    placed.push({ hunk, oldIndex });
    cursor = oldIndex + hunk.oldLines;
    delta += hunk.newLines - hunk.oldLines;
  }
  const all = new Set(placed.map((p) => p.hunk.index));
  return applyHunks(oldText, placed, all) === newText ? placed : undefined;
}

export type ViewLineKind = "context" | "removed" | "added";

/** The unified review view: the old text with each hunk's removed lines followed by its added lines. */
export interface UnifiedView {
  text: string;
  kinds: ViewLineKind[];
  /** Per view line, its 1-based line number in the old text (the file as it is on disk);
   * undefined for added lines, which are not in it yet. */
  oldLines: Array<number | undefined>;
  /** Per hunk, the view lines it spans (`end` exclusive); `start === end` never happens. */
  ranges: Array<{ index: number; start: number; end: number }>;
}

function bare(line: string): string {
  return line.replace(/\r?\n$/, "");
}

export function unifiedView(oldText: string, placed: PlacedHunk[]): UnifiedView {
  const old = splitLines(oldText);
  const out: string[] = [];
  const kinds: ViewLineKind[] = [];
  const oldLines: UnifiedView["oldLines"] = [];
  const ranges: UnifiedView["ranges"] = [];
  let oldLine = 0;
  const push = (line: string, kind: ViewLineKind) => {
    out.push(bare(line));
    kinds.push(kind);
    oldLines.push(kind === "added" ? undefined : ++oldLine);
  };
  let cursor = 0;
  for (const { hunk, oldIndex } of placed) {
    for (const line of old.slice(cursor, oldIndex)) push(line, "context");
    const start = out.length;
    for (const line of splitLines(hunk.oldText)) push(line, "removed");
    for (const line of splitLines(hunk.newText)) push(line, "added");
    ranges.push({ index: hunk.index, start, end: out.length });
    cursor = oldIndex + hunk.oldLines;
  }
  for (const line of old.slice(cursor)) push(line, "context");
  return { text: out.join("\n"), kinds, oldLines, ranges };
}

/** How a line of the review looks: its kind, and its hunk's decision when it has one. */
export type ReviewLineLook = "context" | "removed" | "added" | "accepted-removed" | "accepted-added" | "rejected-removed" | "rejected-added";

export interface ReviewLine {
  look: ReviewLineLook;
  /** The gutter: the line's number in the file as it is on disk (blank for added lines, which
   * are not in it yet) and a mark: − removed, + added, ✓ in an accepted hunk, ✕ in a rejected one. */
  gutter: string;
}

/** The look and gutter of every line of the review, given the per-hunk decisions so far (hunk
 * index -> kept). The gutter replaces the editor's line numbers, which would count the removed
 * and added lines alike and so match neither the file nor the proposal. */
export function reviewLines(view: UnifiedView, decisions: ReadonlyMap<number, boolean>): ReviewLine[] {
  const width = String(view.oldLines.reduce<number>((max, n) => Math.max(max, n ?? 0), 0)).length;
  const decisionAt: Array<boolean | undefined> = view.kinds.map(() => undefined);
  for (const range of view.ranges) for (let i = range.start; i < range.end; i++) decisionAt[i] = decisions.get(range.index);
  return view.kinds.map((kind, i) => {
    const decided = decisionAt[i];
    const look: ReviewLineLook = kind === "context" || decided === undefined ? kind : `${decided ? "accepted" : "rejected"}-${kind}`;
    const mark = kind === "context" ? "\u00a0" : decided === true ? "✓" : decided === false ? "✕" : kind === "removed" ? "−" : "+";
    const number = view.oldLines[i] === undefined ? "" : String(view.oldLines[i]);
    // No-break spaces: the gutter is drawn as decoration text, where ordinary spaces collapse.
    return { look, gutter: `${number.padStart(width, "\u00a0")}\u00a0${mark}\u00a0` };
  });
}

/** Counts of added and removed lines, for labels such as "+3 −1". */
export function lineStats(hunks: Hunk[]): { added: number; removed: number } {
  return hunks.reduce((s, h) => ({ added: s.added + h.newLines, removed: s.removed + h.oldLines }), { added: 0, removed: 0 });
}
