// The chat webview: renders what the host sends (see src/webview/messages.ts) and posts the
// user's intents back. It keeps no conversation state of its own beyond the DOM: on load it says
// `ready` and the host answers with a full snapshot, then incremental updates. Streamed text is
// appended to its item and re-rendered at most once per animation frame.
//
// Subagents (child sessions) are drawn inside the card of the `task` call that started them,
// each with its own calls, a preview of its report and a Stop button while it runs. Their nodes
// outlive the card's re-renders: a card re-rendered takes its children's nodes back.
//
// The prompt box completes the agent's slash commands (commandPopup.ts) from the session's list.
//
// A turn that changed files shows, under its prompt, how many and an Undo button (between turns
// only); an undone turn and everything after it are dimmed and say so. A tool call's content is
// drawn by toolContent.ts: a command's card lists the files it changed, each opening its diff.

import type {
  ContextChip,
  HostToWebview,
  PermissionsView,
  PlanEntryView,
  Picker,
  SessionView,
  SubagentView,
  TranscriptItem,
  WebviewToHost,
} from "../src/webview/messages";
import { CommandPopup } from "./commandPopup";
import { el } from "./dom";
import { renderInline, renderMarkdown } from "./markdown";
import { renderToolContent } from "./toolContent";

interface VsCodeApi {
  postMessage(message: WebviewToHost): void;
  getState(): { draft?: string } | undefined;
  setState(state: { draft?: string }): void;
}

declare function acquireVsCodeApi(): VsCodeApi;

const vscode = acquireVsCodeApi();
const post = (message: WebviewToHost) => vscode.postMessage(message);

// --- Layout -----------------------------------------------------------------------------------

const app = document.getElementById("app")!;
// New session and past sessions are the view's own title-bar actions (package.json), not
// buttons here: the toolbar only names the session.
const toolbar = el("div", { class: "toolbar" });
const titleEl = el("span", { class: "title" }, "Larik");
toolbar.append(titleEl);
const planEl = el("details", { class: "plan", id: "plan", hidden: "", open: "" });
const transcriptEl = el("div", { class: "transcript", id: "transcript", role: "log", "aria-live": "polite" });
const emptyEl = el("div", { class: "empty" }, "Ask Larik to read, explain or change your code.");
const permissionEl = el("div", { class: "permission", id: "permission", hidden: "", role: "alertdialog", "aria-label": "Permission request" });
const bannerEl = el("div", { class: "banner", id: "banner", hidden: "" });
const chipsEl = el("div", { class: "chips", id: "chips" });
const promptEl = el("textarea", { id: "prompt", rows: "3", placeholder: "Ask Larik… (Enter to send, Shift+Enter for a new line)", "aria-label": "Prompt" });
const modeEl = el("select", { id: "mode", title: "Mode", "aria-label": "Mode", hidden: "" });
const modelEl = el("select", { id: "model", title: "Model", "aria-label": "Model", hidden: "" });
const sendButton = el("button", { id: "send", class: "primary" }, "Send");
const cancelButton = el("button", { id: "cancel", hidden: "" }, "Cancel");
const statusEl = el("span", { class: "status", id: "status" });
const commandPopup = new CommandPopup(promptEl, () => vscode.setState({ draft: promptEl.value }));
const usageEl = el("span", { class: "usage", id: "usage", hidden: "" });
const composer = el(
  "div",
  { class: "composer" },
  chipsEl,
  commandPopup.box,
  // The pickers keep their labels whole at the sidebar's default width (300 px): Send and Cancel
  // share one place, and the row wraps rather than cutting a label short.
  el("div", { class: "controls" }, modeEl, modelEl, el("span", { class: "actions" }, cancelButton, sendButton)),
  el("div", { class: "statusline" }, statusEl, el("span", { class: "spacer" }), usageEl),
);
app.append(toolbar, planEl, transcriptEl, permissionEl, bannerEl, composer);
transcriptEl.append(emptyEl);

// --- State ------------------------------------------------------------------------------------

const items = new Map<string, { item: TranscriptItem; node: HTMLElement }>();
const subagents = new Map<string, { view: SubagentView; node: HTMLElement }>();
/** Top-level holders of subagents whose task call has no card (yet), by child session id. */
const strayHolders = new Map<string, HTMLElement>();
const dirty = new Set<string>();
let frame = 0;
let session: SessionView = { status: "starting", plan: [], canLoadSessions: false, commands: [] };
let permissions: PermissionsView = { queued: 0 };

const saved = vscode.getState();
if (saved?.draft) promptEl.value = saved.draft;

// --- Transcript -------------------------------------------------------------------------------

/** A path as the user thinks of it: relative to the workspace when inside it. */
function displayPath(path: string): string {
  const root = session.cwd;
  return root && path.startsWith(`${root}/`) ? path.slice(root.length + 1) : path;
}

const STATUS_ICON: Record<string, string> = { pending: "○", in_progress: "◐", completed: "●", failed: "✕", cancelled: "⊘" };

/** Undo is offered between turns only: the agent undoes once its turn has ended. */
const canUndo = () => session.status === "idle";

/** Under a turn's prompt: what it changed and its Undo, or that it was undone. */
function renderTurnState(item: Extract<TranscriptItem, { type: "user" }>): HTMLElement | undefined {
  if (item.undone) return el("div", { class: "turn-undone", role: "note" }, "Undone: its files went back, and Larik forgot this turn.");
  const checkpoint = item.checkpoint;
  if (!checkpoint) return undefined;
  const count = checkpoint.files.length;
  const undo = el(
    "button",
    { class: "link-button undo-turn", "data-checkpoint-id": checkpoint.id, title: "Put the files back as they were before this turn; Larik forgets it and the turns after it" },
    "Undo",
  );
  undo.disabled = !canUndo();
  undo.addEventListener("click", () => {
    post({ type: "undo", checkpointId: checkpoint.id });
    // The host answers with the turn marked undone (or says why not).
    undo.disabled = true;
  });
  const files = el("span", { class: "turn-files", title: checkpoint.files.join("\n") }, `${count} ${count === 1 ? "file" : "files"} changed`);
  return el("div", { class: "turn-changes" }, files, undo);
}

/** An element holding one line of inline Markdown (a title, a summary), never raw backticks. */
function inlineEl(tag: "span" | "summary", attrs: Record<string, string>, text: string): HTMLElement {
  const node = el(tag, attrs);
  node.innerHTML = renderInline(text); // escaped by the renderer
  return node;
}

/** A plan's summary (how much is done) and its entries, for the pinned plan and a turn's. */
function planParts(entries: readonly PlanEntryView[]): HTMLElement[] {
  const done = entries.filter((e) => e.status === "completed").length;
  return [
    el("summary", {}, `Plan (${done}/${entries.length})`),
    el("ul", {}, ...entries.map((e) => el("li", { class: `plan-entry ${e.status}`, "data-priority": e.priority }, `${STATUS_ICON[e.status] ?? "○"} `, inlineEl("span", {}, e.content)))),
  ];
}

function renderItem(item: TranscriptItem, node: HTMLElement): void {
  node.replaceChildren();
  node.className = `item ${item.type}`;
  if (item.undone) node.classList.add("undone");
  switch (item.type) {
    case "user": {
      node.append(el("div", { class: "bubble" }, item.text));
      if (item.context?.length) node.append(el("div", { class: "context" }, ...item.context.map((c) => el("span", { class: "chip" }, c))));
      const state = renderTurnState(item);
      if (state) node.append(state);
      break;
    }
    case "agent": {
      const body = el("div", { class: "markdown" });
      body.innerHTML = renderMarkdown(item.text); // escaped by the renderer
      node.append(body);
      break;
    }
    case "thought": {
      const body = el("div", { class: "markdown" });
      body.innerHTML = renderMarkdown(item.text);
      node.append(el("details", {}, el("summary", {}, "Thinking"), body));
      break;
    }
    case "tool": {
      node.classList.add(`status-${item.status}`);
      const toolCallId = item.id.replace(/^tool:/, "");
      node.dataset.toolCallId = toolCallId;
      node.dataset.status = item.status;
      const head = el("div", { class: "tool-head" }, el("span", { class: "tool-status", title: item.status }, STATUS_ICON[item.status] ?? "○"), " ", el("span", { class: "tool-title" }, item.title));
      node.append(head);
      if (item.decision) {
        const { allowed, text } = item.decision;
        node.append(el("div", { class: `tool-decision ${allowed ? "allowed" : "rejected"}` }, `${allowed ? "✓" : "✗"} ${text}`));
      }
      for (const location of item.locations.slice(0, 3)) {
        const shown = displayPath(location.path);
        const link = el("a", { class: "location", href: "#", title: location.path }, location.line ? `${shown}:${location.line}` : shown);
        link.addEventListener("click", (event) => {
          event.preventDefault();
          post({ type: "openLocation", path: location.path, ...(location.line ? { line: location.line } : {}) });
        });
        node.append(link);
      }
      // The subagents it started, between its head and its own output (their report).
      const children = el("div", { class: "subagents" });
      const reports = new Set<string>();
      for (const entry of subagents.values()) {
        if (entry.view.toolCallId !== node.dataset.toolCallId) continue;
        children.append(entry.node);
        dropStrayHolder(entry.view.sessionId);
        if (!entry.view.textTruncated) reports.add(entry.view.text.trim());
      }
      node.append(children);
      for (const content of item.content) {
        // A report its child already shows whole is not shown twice.
        if (content.type === "text" && reports.has(content.text.trim())) continue;
        // A command waiting for permission is shown by its permission card, once.
        if (item.kind === "execute" && item.status === "pending") continue;
        node.append(renderToolContent(content, { kind: item.kind, toolCallId, displayPath, post }));
      }
      break;
    }
    case "notice":
      node.classList.add(item.severity);
      node.append(item.text);
      break;
    case "plan":
      node.append(el("details", { class: "plan" }, ...planParts(item.entries)));
      break;
  }
}

// Follow the end of the transcript unless the user scrolled up to read. Only a scroll upwards
// stops following: the view also moves when it shrinks (a permission card opens below it), and
// that must not count as the user leaving the end.
let followEnd = true;
let lastTop = 0;
transcriptEl.addEventListener("scroll", () => {
  const atEnd = transcriptEl.scrollHeight - transcriptEl.scrollTop - transcriptEl.clientHeight < 40;
  if (atEnd) followEnd = true;
  else if (transcriptEl.scrollTop < lastTop) followEnd = false;
  lastTop = transcriptEl.scrollTop;
});

function scrollToEnd(): void {
  if (!followEnd) return;
  transcriptEl.scrollTop = transcriptEl.scrollHeight;
  lastTop = transcriptEl.scrollTop;
}

// The card opening or closing resizes the transcript: keep its end in view.
new ResizeObserver(() => scrollToEnd()).observe(transcriptEl);

function upsert(item: TranscriptItem): void {
  emptyEl.remove();
  const existing = items.get(item.id);
  if (existing) {
    existing.item = item;
    renderItem(item, existing.node);
  } else {
    const node = el("div", { "data-id": item.id });
    items.set(item.id, { item, node });
    renderItem(item, node);
    transcriptEl.append(node);
  }
  scrollToEnd();
}

function append(id: string, text: string): void {
  const entry = items.get(id);
  if (!entry || !("text" in entry.item)) return;
  entry.item.text += text;
  dirty.add(id);
  frame ||= requestAnimationFrame(() => {
    frame = 0;
    for (const dirtyId of dirty) {
      const e = items.get(dirtyId);
      if (e) renderItem(e.item, e.node);
    }
    dirty.clear();
    scrollToEnd();
  });
}

function resetTranscript(list: TranscriptItem[], children: SubagentView[]): void {
  items.clear();
  dirty.clear();
  subagents.clear();
  strayHolders.clear();
  transcriptEl.replaceChildren();
  if (list.length === 0 && children.length === 0) transcriptEl.append(emptyEl);
  // Children first, so each card takes its own as it is drawn.
  for (const view of children) {
    const node = el("div", { "data-session-id": view.sessionId });
    renderSubagent(view, node);
    subagents.set(view.sessionId, { view, node });
  }
  for (const item of list) upsert(structuredClone(item));
  for (const entry of subagents.values()) placeSubagent(entry);
}

// --- Subagents --------------------------------------------------------------------------------

const PHASE_ICON: Record<string, string> = { running: "◐", waiting: "◐", done: "●", stopped: "⊘", ended: "✕", unknown: "○" };

function phaseText(view: SubagentView): string {
  switch (view.phase) {
    case "waiting":
      return "waiting for you";
    case "ended":
      return view.stopReason ? `ended: ${view.stopReason}` : "ended";
    case "unknown":
      return "not reported";
    default:
      return view.phase;
  }
}

/** The report's first line, as the summary of the folded report. */
function firstLine(text: string): string {
  const line = text.trim().split("\n")[0]!.replace(/^#+\s*/, "");
  return line.length > 80 ? `${line.slice(0, 79)}…` : line;
}

function renderSubagent(view: SubagentView, node: HTMLElement): void {
  node.replaceChildren();
  node.className = `subagent phase-${view.phase}`;
  node.dataset.sessionId = view.sessionId;
  node.dataset.phase = view.phase;
  const head = el(
    "div",
    { class: "subagent-head" },
    el("span", { class: "subagent-icon", "aria-hidden": "true" }, PHASE_ICON[view.phase] ?? "○"),
    inlineEl("span", { class: "subagent-title" }, view.title),
    el("span", { class: "subagent-phase" }, phaseText(view)),
  );
  if (view.canStop) {
    const stop = el("button", { class: "subagent-stop", title: `Stop ${view.title}`, "aria-label": `Stop ${view.title}` }, view.stopping ? "Stopping…" : "Stop");
    stop.disabled = view.stopping;
    stop.addEventListener("click", () => {
      post({ type: "stopSubagent", sessionId: view.sessionId });
      // The host confirms with the child's next view; no second stop meanwhile.
      stop.disabled = true;
      stop.textContent = "Stopping…";
    });
    head.append(stop);
  }
  node.append(head);
  if (view.tools.length > 0) {
    const rows = view.tools.map((tool) =>
      el(
        "li",
        { class: `subagent-tool status-${tool.status}`, "data-call-id": tool.toolCallId, "data-status": tool.status },
        el("span", { class: "tool-status", title: tool.status }, STATUS_ICON[tool.status] ?? "○"),
        " ",
        inlineEl("span", { class: "subagent-tool-title" }, tool.title),
      ),
    );
    node.append(el("ul", { class: "subagent-tools" }, ...rows));
  }
  const text = view.text.trim();
  if (text !== "") {
    const body = el("div", { class: "markdown" });
    body.innerHTML = renderMarkdown(view.textTruncated ? `${view.text}…` : view.text); // escaped by the renderer
    // A one-line report reads in place; a longer one folds behind its first line.
    const short = !view.textTruncated && !text.includes("\n") && text.length <= 80;
    node.append(short ? el("div", { class: "subagent-text" }, body) : el("details", { class: "subagent-text" }, inlineEl("summary", {}, firstLine(text)), body));
  }
}

function dropStrayHolder(sessionId: string): void {
  strayHolders.get(sessionId)?.remove();
  strayHolders.delete(sessionId);
}

/** Puts a child in its task call's card, or on its own at the end while there is no such card. */
function placeSubagent(entry: { view: SubagentView; node: HTMLElement }): void {
  const card = entry.view.toolCallId !== undefined ? items.get(`tool:${entry.view.toolCallId}`) : undefined;
  const container = card?.node.querySelector(":scope > .subagents");
  if (container) {
    if (entry.node.parentElement !== container) container.append(entry.node);
    dropStrayHolder(entry.view.sessionId);
    return;
  }
  if (entry.node.isConnected) return;
  emptyEl.remove();
  const holder = el("div", { class: "item subagent-stray" }, entry.node);
  strayHolders.set(entry.view.sessionId, holder);
  transcriptEl.append(holder);
}

function upsertSubagent(view: SubagentView): void {
  let entry = subagents.get(view.sessionId);
  if (entry) entry.view = view;
  else {
    entry = { view, node: el("div", { "data-session-id": view.sessionId }) };
    subagents.set(view.sessionId, entry);
  }
  renderSubagent(view, entry.node);
  placeSubagent(entry);
  scrollToEnd();
}

// --- Session, pickers, plan, usage ------------------------------------------------------------

function fillPicker(select: HTMLSelectElement, picker: Picker | undefined): void {
  select.hidden = !picker || picker.options.length === 0;
  if (!picker) return;
  select.replaceChildren(...picker.options.map((o) => el("option", { value: o.id, ...(o.description ? { title: o.description } : {}) }, o.name)));
  select.value = picker.current;
}

const STATUS_TEXT: Record<string, string> = {
  starting: "Starting…",
  idle: "Ready",
  working: "Working…",
  waiting: "Waiting for you",
  stopped: "Stopped",
  disabled: "Disabled",
};

function renderSession(next: SessionView): void {
  session = next;
  titleEl.textContent = next.title || "Larik";
  statusEl.textContent = STATUS_TEXT[next.status] ?? next.status;
  statusEl.dataset.status = next.status;
  document.body.dataset.status = next.status;
  const running = next.status === "working" || next.status === "waiting";
  cancelButton.hidden = !running;
  sendButton.hidden = running;
  sendButton.disabled = running || next.status !== "idle";
  fillPicker(modeEl, next.mode);
  fillPicker(modelEl, next.model);
  transcriptEl.querySelectorAll<HTMLButtonElement>(".undo-turn").forEach((button) => (button.disabled = !canUndo()));
  const blocked = next.status === "disabled" || next.status === "stopped";
  bannerEl.hidden = !blocked;
  promptEl.disabled = next.status === "disabled";
  commandPopup.setCommands(next.commands);
  if (blocked) {
    bannerEl.replaceChildren(el("div", {}, next.statusDetail ?? (next.status === "disabled" ? "Larik is disabled." : "The agent stopped.")));
    if (next.status === "stopped") {
      const restart = el("button", { id: "restart" }, "Restart agent");
      restart.addEventListener("click", () => post({ type: "restart" }));
      bannerEl.append(restart);
    }
  }
  planEl.hidden = next.plan.length === 0;
  planEl.replaceChildren(...planParts(next.plan));
  usageEl.hidden = !next.usage;
  if (next.usage) {
    const percent = next.usage.size > 0 ? Math.round((next.usage.used / next.usage.size) * 100) : 0;
    const cost = next.usage.cost ? ` · ${formatCost(next.usage.cost.amount, next.usage.cost.currency)}` : "";
    usageEl.textContent = `${next.usage.used.toLocaleString("en-US")} / ${next.usage.size.toLocaleString("en-US")} tokens (${percent}%)${cost}`;
  }
}

/** One cost format in every editor: dollars with two decimals, four below a cent, so a small turn
 * does not read as free ("$0.0009", "$0.05", "$1.20"). */
function formatCost(amount: number, currency: string | undefined): string {
  const digits = amount > 0 && amount < 0.01 ? 4 : 2;
  const number = amount.toFixed(digits);
  return !currency || currency === "USD" ? `$${number}` : `${number} ${currency}`;
}

// --- Permission -------------------------------------------------------------------------------

const KIND_ICON: Record<string, string> = { allow_once: "✓", allow_always: "✓✓", reject_once: "✕", reject_always: "✕✕" };

function renderPermissions(next: PermissionsView): void {
  permissions = next;
  const current = next.current;
  permissionEl.hidden = !current;
  permissionEl.replaceChildren();
  if (!current) return;
  permissionEl.dataset.key = String(current.key);
  // A subagent's request: say which one asks, its title as the task call shows it.
  if (current.subagent !== undefined) permissionEl.append(el("div", { class: "permission-subagent" }, "For the subagent ", el("strong", {}, current.subagent)));
  permissionEl.append(el("div", { class: "permission-title" }, el("strong", {}, "Larik wants to: "), current.title));
  if (current.command !== undefined) permissionEl.append(el("pre", { class: "permission-command" }, el("code", {}, current.command)));
  if (current.outsideSandbox) {
    permissionEl.append(el("div", { class: "permission-warning", role: "note" }, "⚠ Runs outside the sandbox: full write and network access"));
  }
  if (current.diffPath && current.reviewingHunks) {
    const name = current.diffPath.split("/").pop();
    permissionEl.append(el("div", { class: "permission-reviewing", role: "note" }, `Decide each hunk in the editor, in “${name} (Larik proposal)”.`));
    const show = el("button", { class: "link-button", id: "view-diff" }, "Show the review");
    show.addEventListener("click", () => post({ type: "viewDiff", key: current.key }));
    permissionEl.append(show);
    if (next.queued > 0) permissionEl.append(el("div", { class: "queued" }, `${next.queued} more waiting`));
    return;
  }
  if (current.diffPath) {
    const view = el("button", { class: "link-button", id: "view-diff" }, `View diff of ${current.diffPath.split("/").pop()}`);
    view.addEventListener("click", () => post({ type: "viewDiff", key: current.key }));
    permissionEl.append(view);
  }
  const feedback = el("input", { type: "text", id: "feedback", placeholder: "Reason, sent with a rejection (optional)", "aria-label": "Reason for rejecting" });
  if (current.acceptsFeedback) permissionEl.append(feedback);
  const buttons = el("div", { class: "options" });
  current.options.forEach((option, i) => {
    // Allow once is the one primary button; the rest (always, reject) are secondary.
    const rank = option.kind === "allow_once" ? "primary" : "secondary";
    const button = el(
      "button",
      { class: `option ${option.kind} ${rank}`, "data-option-id": option.optionId, "data-kind": option.kind, title: `${option.name} (${i + 1})` },
      `${KIND_ICON[option.kind] ?? ""} `,
      ...withCode(option.name),
    );
    button.addEventListener("click", () => {
      const reason = current.acceptsFeedback && option.kind.startsWith("reject") ? feedback.value.trim() : "";
      post({ type: "answerPermission", key: current.key, optionId: option.optionId, ...(reason ? { feedback: reason } : {}) });
      permissionEl.querySelectorAll("button").forEach((b) => ((b as HTMLButtonElement).disabled = true));
    });
    buttons.append(button);
  });
  permissionEl.append(buttons);
  if (next.queued > 0) permissionEl.append(el("div", { class: "queued" }, `${next.queued} more waiting`));
}

/** A label with its `backticked` parts (a rule such as `bash(make*)`) as code. */
function withCode(text: string): (string | HTMLElement)[] {
  return text.split(/(`[^`]+`)/).filter(Boolean).map((part) => (/^`[^`]+`$/.test(part) ? el("code", {}, part.slice(1, -1)) : part));
}

// Digit keys answer the visible permission request while focus is not in a text field.
document.addEventListener("keydown", (event) => {
  const target = event.target as HTMLElement | null;
  if (!permissions.current || !/^[1-9]$/.test(event.key) || target?.closest("textarea, input, select")) return;
  const option = permissions.current.options[Number(event.key) - 1];
  if (!option) return;
  event.preventDefault();
  post({ type: "answerPermission", key: permissions.current.key, optionId: option.optionId });
});

// --- Context chips ----------------------------------------------------------------------------

function renderContext(context: ContextChip[]): void {
  chipsEl.replaceChildren(
    ...context.map((chip) => {
      const remove = el("button", { class: "chip-remove", title: "Remove", "aria-label": `Remove ${chip.label}` }, "×");
      remove.addEventListener("click", () => post({ type: "removeContext", id: chip.id }));
      return el("span", { class: "chip", "data-id": chip.id }, chip.label, remove);
    }),
  );
}

// --- Input ------------------------------------------------------------------------------------

function send(): void {
  const text = promptEl.value.trim();
  if (text === "" || sendButton.disabled) return;
  post({ type: "prompt", text });
  followEnd = true;
  promptEl.value = "";
  vscode.setState({ draft: "" });
  commandPopup.refresh();
}

sendButton.addEventListener("click", send);
cancelButton.addEventListener("click", () => post({ type: "cancel" }));
modeEl.addEventListener("change", () => post({ type: "setMode", id: modeEl.value }));
modelEl.addEventListener("change", () => post({ type: "setModel", id: modelEl.value }));
promptEl.addEventListener("input", () => vscode.setState({ draft: promptEl.value }));
promptEl.addEventListener("keydown", (event) => {
  // While the command list is open, its keys (Enter among them) are the list's.
  if (commandPopup.handleKey(event)) return;
  if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
    event.preventDefault();
    send();
  }
});

window.addEventListener("message", (event: MessageEvent<HostToWebview>) => {
  const message = event.data;
  switch (message.type) {
    case "snapshot":
      // The session first: the items are drawn with its directory and status.
      renderSession(message.session);
      resetTranscript(message.items, message.subagents);
      renderPermissions(message.permissions);
      renderContext(message.context);
      break;
    case "item":
      upsert(structuredClone(message.item));
      break;
    case "subagent":
      upsertSubagent(structuredClone(message.subagent));
      break;
    case "append":
      append(message.id, message.text);
      break;
    case "session":
      renderSession(message.session);
      break;
    case "permissions":
      renderPermissions(message.permissions);
      break;
    case "context":
      renderContext(message.context);
      break;
    case "focusPrompt":
      promptEl.focus();
      break;
  }
});

renderSession(session);
post({ type: "ready" });
