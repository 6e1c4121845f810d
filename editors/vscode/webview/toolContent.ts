// A tool call's content in its card: a diff's preview, a command's output, the files a command
// changed (each with its mark and line counts). A file's name opens its diff in the editor.

import type { ToolContentView, WebviewToHost } from "../src/webview/messages";
import { el } from "./dom";

/** The card the content is drawn in, and what it needs of the chat. */
export interface ToolCard {
  kind: string;
  toolCallId: string;
  /** A path as the user thinks of it: relative to the workspace when inside it. */
  displayPath: (path: string) => string;
  post: (message: WebviewToHost) => void;
}

/** A link that opens one of the call's diffs in the editor. */
function diffLink(call: ToolCard, index: number, path: string): HTMLElement {
  const link = el("a", { class: "diff-open", href: "#", title: `Open the diff of ${path}` }, call.displayPath(path));
  link.addEventListener("click", (event) => {
    event.preventDefault();
    call.post({ type: "openDiff", toolCallId: call.toolCallId, index });
  });
  return link;
}

const CHANGE_MARK: Record<string, string> = { added: "A", changed: "M", deleted: "D" };

/** The files a command changed: a mark, the file (opening its diff when there is one), line counts. */
function renderChanges(content: Extract<ToolContentView, { type: "changes" }>, call: ToolCard): HTMLElement {
  const rows = content.files.map((file) => {
    const name = file.diff !== undefined ? diffLink(call, file.diff, file.path) : el("span", { class: "change-path", title: file.path }, call.displayPath(file.path));
    const counts = file.diff !== undefined ? [" ", el("span", { class: "added" }, `+${file.added}`), " ", el("span", { class: "removed" }, `−${file.removed}`)] : [];
    return el(
      "li",
      { class: `change change-${file.change}`, "data-change": file.change, "data-path": file.path },
      el("span", { class: "change-mark", title: file.change, "aria-label": file.change }, CHANGE_MARK[file.change] ?? "?"),
      " ",
      name,
      el("span", { class: "change-kind" }, ` ${file.change}`),
      ...counts,
    );
  });
  if (content.ignored) {
    // Build output and caches: one line with their count, paths (in backticks) as code.
    const parts = content.ignored.text.split("`").map((part, index) => (index % 2 === 1 ? el("code", {}, part) : part));
    rows.push(el("li", { class: "change change-ignored" }, el("span", { class: "change-mark", title: "ignored", "aria-label": "ignored" }, "·"), " ignored by the project: ", ...parts));
  }
  const count = content.files.length + (content.ignored?.count ?? 0);
  return el("div", { class: "tool-changes" }, el("div", { class: "changes-title" }, `Files the command changed (${count})`), el("ul", { class: "changes" }, ...rows));
}

/**
 * Where a changed line differs from the line it replaces: for each run of removed lines followed
 * by as many added ones, the part of each pair between their common start and common end
 * (`return total / (len(values) - 1)` against `return total / len(values)`: `(len(values) - 1`
 * and `len(values`). Keyed by the line's index in the preview: [start, end) of its text.
 */
export function changedWithinLines(lines: ReadonlyArray<{ kind: string; text: string }>): Map<number, [number, number]> {
  const spans = new Map<number, [number, number]>();
  let at = 0;
  while (at < lines.length) {
    if (lines[at]!.kind !== "removed") {
      at++;
      continue;
    }
    let removedEnd = at;
    while (removedEnd < lines.length && lines[removedEnd]!.kind === "removed") removedEnd++;
    let addedEnd = removedEnd;
    while (addedEnd < lines.length && lines[addedEnd]!.kind === "added") addedEnd++;
    const pairs = removedEnd - at;
    if (addedEnd - removedEnd === pairs) {
      for (let i = 0; i < pairs; i++) {
        const [before, after] = [lines[at + i]!.text, lines[removedEnd + i]!.text];
        let start = 0;
        while (start < before.length && start < after.length && before[start] === after[start]) start++;
        let end = 0;
        while (end < before.length - start && end < after.length - start && before[before.length - 1 - end] === after[after.length - 1 - end]) end++;
        // A line changed through and through is marked by its colour alone.
        if (start + end === 0) continue;
        spans.set(at + i, [start, before.length - end]);
        spans.set(removedEnd + i, [start, after.length - end]);
      }
    }
    at = addedEnd;
  }
  return spans;
}

/** Lines a command's output box shows before it is expanded. */
const OUTPUT_LINES = 12;

/**
 * A command and its output, tail first: the verdict ("Ran 4 tests ... OK") and the errors are in
 * the last lines, so the box opens scrolled to its end. Lines are not wrapped (a long one scrolls
 * sideways rather than breaking into pieces); a long output can be expanded whole.
 */
function renderCommandOutput(text: string): HTMLElement {
  // Very long output keeps its end, cut at a line.
  const kept = text.length > 8000 ? `…\n${text.slice(text.indexOf("\n", text.length - 8000) + 1)}` : text;
  const lines = kept.split("\n").filter((l, i, all) => l !== "" || i < all.length - 1).length;
  // column-reverse: the box's scroll starts at its end.
  const box = el("pre", { class: "tool-output command-output" }, el("span", {}, kept));
  if (lines <= OUTPUT_LINES) return box;
  box.classList.add("folded");
  const expand = el("button", { class: "link-button output-expand", "aria-expanded": "false" }, `Show all ${lines} lines`);
  expand.addEventListener("click", () => {
    const folded = box.classList.toggle("folded");
    expand.setAttribute("aria-expanded", String(!folded));
    expand.textContent = folded ? `Show all ${lines} lines` : "Show less";
  });
  return el("div", { class: "command-output-box" }, box, expand);
}

/** One block of a tool call's content, in its card. */
export function renderToolContent(content: ToolContentView, call: ToolCard): HTMLElement {
  if (content.type === "changes") return renderChanges(content, call);
  if (content.type === "diff") {
    const header = el("div", { class: "diff-header" }, diffLink(call, content.diff, content.path), content.isNew ? " (new)" : "", " ", el("span", { class: "added" }, `+${content.added}`), " ", el("span", { class: "removed" }, `−${content.removed}`));
    const body = el("pre", { class: "diff" });
    const changed = changedWithinLines(content.preview);
    content.preview.forEach((line, at) => {
      const sign = line.kind === "added" ? "+" : line.kind === "removed" ? "-" : line.kind === "gap" ? "" : " ";
      const span = changed.get(at);
      const text = span ? [line.text.slice(0, span[0]), el("span", { class: "changed" }, line.text.slice(span[0], span[1])), line.text.slice(span[1])] : [line.text];
      body.append(el("div", { class: `line ${line.kind}` }, sign, ...text));
    });
    if (content.truncated) body.append(el("div", { class: "line gap" }, "… (open the diff for the rest)"));
    return el("div", { class: "tool-diff" }, header, body);
  }
  if (content.type === "terminal") return el("div", { class: "tool-terminal" }, `terminal ${content.terminalId}`);
  // A fenced block (a command and its output) shows as the block itself, without its fences.
  const unfenced = /^```[\w-]*\n([\s\S]*?)\n?```\s*$/.exec(content.text)?.[1] ?? content.text;
  if (call.kind === "execute") return renderCommandOutput(unfenced);
  const text = unfenced.length > 4000 ? `${unfenced.slice(0, 4000)}\n…` : unfenced;
  const lines = text.split("\n").filter((l, i, all) => l !== "" || i < all.length - 1).length;
  // File contents are long and already known to the user.
  if (lines <= 3) return el("pre", { class: "tool-output" }, text);
  return el("details", { class: "tool-output-fold" }, el("summary", {}, `Output (${lines} lines)`), el("pre", { class: "tool-output" }, text));
}
