// The chat webview bundle in headless Chromium (served by test/support/chatPage.ts under the same
// CSP as in VS Code, with a fake `acquireVsCodeApi` that records what the webview posts).

import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import type { Page } from "playwright-core";
import type { CommandView, HostToWebview, SessionView, SubagentView, TranscriptItem } from "../../src/webview/messages";
import { labelFits } from "../support/browser";
import { open, SESSION, snapshot, startChatPages, stopChatPages } from "../support/chatPage";

before(startChatPages);
after(stopChatPages);

test("says ready, renders a snapshot, streams appended text as markdown", async () => {
  const { page, problems, send, waitPosted } = await open();
  await waitPosted("ready");
  await send(snapshot([{ type: "user", id: "u1", text: "hello" }]));
  await send({ type: "item", item: { type: "agent", id: "a1", text: "Here is " } });
  for (const chunk of ["**bold", "** and `co", "de`", "\n\n- one\n- two"]) await send({ type: "append", id: "a1", text: chunk });
  const agent = page.locator('[data-id="a1"] .markdown');
  await agent.locator("li").nth(1).waitFor({ timeout: 5000 });
  assert.equal(await agent.locator("strong").textContent(), "bold");
  assert.equal(await agent.locator("code").textContent(), "code");
  assert.equal(await page.locator(".item.user .bubble").textContent(), "hello");
  assert.deepEqual(problems, []);
  await page.close();
});

test("tool cards are updated in place by tool call id", async () => {
  const { page, send, waitPosted } = await open();
  await waitPosted("ready");
  await send(snapshot());
  const tool = (status: string, content: any[] = []): TranscriptItem => ({ type: "tool", id: "tool:toolu_1", title: "Edit a.txt", kind: "edit", status, content, locations: [{ path: "/p/a.txt", line: 2 }] });
  await send({ type: "item", item: tool("pending") });
  await send({ type: "item", item: tool("in_progress") });
  await send({
    type: "item",
    item: tool("completed", [{ type: "diff", path: "/p/a.txt", added: 1, removed: 1, isNew: false, truncated: false, preview: [{ kind: "removed", text: "two" }, { kind: "added", text: "TWO" }] }]),
  });
  const cards = page.locator('[data-tool-call-id="toolu_1"]');
  await page.waitForFunction(() => document.querySelector('[data-tool-call-id="toolu_1"]')?.getAttribute("data-status") === "completed");
  assert.equal(await cards.count(), 1);
  assert.equal(await cards.locator(".diff .line.removed").textContent(), "-two");
  assert.equal(await cards.locator(".diff .line.added").textContent(), "+TWO");
  await cards.locator(".location").click();
  const { path, line } = await waitPosted("openLocation");
  assert.deepEqual([path, line], ["/p/a.txt", 2]);
  await page.close();
});

test("a permission shows the agent's options verbatim; answers carry key, option and reason", async () => {
  const { page, send, waitPosted, posted } = await open();
  await waitPosted("ready");
  await send(snapshot());
  await send({
    type: "permissions",
    permissions: {
      current: {
        key: 7,
        toolCallId: "toolu_2",
        title: "Edit a.txt",
        toolKind: "edit",
        diffPath: "/p/a.txt",
        acceptsFeedback: true,
        options: [
          { optionId: "allow_once", name: "Allow once", kind: "allow_once" },
          { optionId: "allow_always", name: "Always allow `edit` in this project", kind: "allow_always" },
          { optionId: "reject_once", name: "Reject", kind: "reject_once" },
        ],
      },
      queued: 2,
    },
  });
  const card = page.locator("#permission");
  await card.waitFor({ state: "visible" });
  const labels = await card.locator("button.option").allTextContents();
  assert.deepEqual(labels.map((l) => l.replace(/^\S+\s/, "")), ["Allow once", "Always allow edit in this project", "Reject"]);
  // The rule is shown as code; no command block or warning for an edit.
  assert.equal(await card.locator('button[data-kind="allow_always"] code').textContent(), "edit");
  assert.equal(await card.locator(".permission-command, .permission-warning").count(), 0);
  assert.match((await card.locator(".queued").textContent()) ?? "", /2 more waiting/);
  await card.locator("#view-diff").click();
  assert.equal((await waitPosted("viewDiff")).key, 7);
  await card.locator("#feedback").fill("not in this file");
  await card.locator('button[data-option-id="reject_once"]').click();
  assert.deepEqual(await waitPosted("answerPermission"), { type: "answerPermission", key: 7, optionId: "reject_once", feedback: "not in this file" });
  // The next request replaces the card; a digit key answers it.
  await send({
    type: "permissions",
    permissions: { current: { key: 8, toolCallId: "t3", title: "Run ls", toolKind: "execute", acceptsFeedback: false, options: [{ optionId: "yes", name: "Yes", kind: "allow_once" }] }, queued: 0 },
  });
  await page.waitForFunction(() => document.querySelector("#permission")?.getAttribute("data-key") === "8");
  await page.locator("body").click({ position: { x: 5, y: 5 } });
  await page.keyboard.press("1");
  await page.waitForFunction(() => (window as any).__posted.filter((m: any) => m.type === "answerPermission").length === 2);
  assert.deepEqual((await posted()).filter((m) => m.type === "answerPermission")[1], { type: "answerPermission", key: 8, optionId: "yes" });
  await send({ type: "permissions", permissions: { queued: 0 } });
  await card.waitFor({ state: "hidden" });
  await page.close();
});

test("while the hunks are decided in the editor, the card offers no options and points there", async () => {
  const { page, send, waitPosted, posted } = await open();
  await waitPosted("ready");
  await send(snapshot());
  await send({
    type: "permissions",
    permissions: {
      current: { key: 9, toolCallId: "toolu_6", title: "Write c.txt", toolKind: "edit", diffPath: "/p/c.txt", reviewingHunks: true, acceptsFeedback: true, options: [] },
      queued: 0,
    },
  });
  const card = page.locator("#permission");
  await card.waitFor({ state: "visible" });
  assert.equal(await card.locator("button.option, #feedback").count(), 0);
  assert.equal(await card.locator(".permission-reviewing").textContent(), "Decide each hunk in the editor, in “c.txt (Larik proposal)”.");
  await page.locator("body").click({ position: { x: 5, y: 5 } });
  await page.keyboard.press("1");
  await card.locator("#view-diff").click();
  assert.equal((await waitPosted("viewDiff")).key, 9);
  assert.equal((await posted()).filter((m) => m.type === "answerPermission").length, 0, "a digit answered from the card");
  await page.close();
});

const BASH_PERMISSION = (key: number, sandboxOff: boolean): HostToWebview => ({
  type: "permissions",
  permissions: {
    current: {
      key,
      toolCallId: "toolu_3",
      title: "Run the unit tests",
      toolKind: "execute",
      command: "python3 -m unittest -v 2>&1 | tail -n 20 && touch .tests-passed",
      ...(sandboxOff ? { outsideSandbox: true } : {}),
      acceptsFeedback: true,
      options: [
        { optionId: "allow_once", name: "Allow once", kind: "allow_once" },
        { optionId: "allow_always", name: "Always allow `bash(python3 -m unittest*)` in this project", kind: "allow_always" },
        { optionId: "reject_once", name: "Reject", kind: "reject_once" },
      ],
    },
    queued: 0,
  },
});

test("a command's prompt shows it whole in a code block, warns outside the sandbox, and ranks allow once first", async () => {
  const { page, send, waitPosted } = await open();
  await page.setViewportSize({ width: 300, height: 700 });
  await waitPosted("ready");
  await send(snapshot());
  await send(BASH_PERMISSION(9, true));
  const card = page.locator("#permission");
  await card.waitFor({ state: "visible" });
  assert.equal(await card.locator(".permission-title").textContent(), "Larik wants to: Run the unit tests");
  assert.equal(await card.locator("pre.permission-command code").textContent(), "python3 -m unittest -v 2>&1 | tail -n 20 && touch .tests-passed");
  assert.equal(await card.locator(".permission-warning").textContent(), "⚠ Runs outside the sandbox: full write and network access");
  // The command block is monospace and wraps inside the 300 px card rather than overflowing it.
  const block = await card.locator("pre.permission-command").evaluate((node) => ({
    font: getComputedStyle(node).fontFamily,
    overflow: node.scrollWidth > node.clientWidth,
  }));
  assert.match(block.font, /monospace/);
  assert.equal(block.overflow, false);
  assert.equal(await card.locator('button[data-kind="allow_always"] code').textContent(), "bash(python3 -m unittest*)");
  const ranks = await card.locator("button.option").evaluateAll((buttons) => buttons.map((b) => [b.getAttribute("data-kind"), b.classList.contains("primary")]));
  assert.deepEqual(ranks, [["allow_once", true], ["allow_always", false], ["reject_once", false]]);
  const [primary, secondary] = await Promise.all(
    ['button[data-kind="allow_once"]', 'button[data-kind="allow_always"]'].map((selector) => card.locator(selector).evaluate((b) => getComputedStyle(b).backgroundColor)),
  );
  assert.notEqual(primary, secondary, "allow once and always look the same");
  await send(BASH_PERMISSION(10, false));
  await page.waitForFunction(() => document.querySelector("#permission")?.getAttribute("data-key") === "10");
  assert.equal(await card.locator(".permission-warning").count(), 0);
  await page.close();
});

test("the transcript keeps its end in view while a permission card opens and closes, unless the user scrolled up", async () => {
  const { page, send, waitPosted } = await open();
  await page.setViewportSize({ width: 300, height: 500 });
  await waitPosted("ready");
  const lines = (n: number) => Array.from({ length: n }, (_, i) => `line ${i + 1}`).join("\n\n");
  await send(snapshot([{ type: "user", id: "u1", text: "go" }, { type: "agent", id: "a1", text: lines(30) }]));
  const distance = () => page.locator("#transcript, .transcript").first().evaluate((t) => t.scrollHeight - t.scrollTop - t.clientHeight);
  const atEnd = async (what: string) => {
    await page.waitForFunction(() => {
      const t = document.querySelector(".transcript")!;
      return t.scrollHeight - t.scrollTop - t.clientHeight < 2;
    }, undefined, { timeout: 5000 }).catch(async () => assert.fail(`${what}: ${await distance()} px below the view`));
  };
  await atEnd("after the snapshot");
  await send({ type: "item", item: { type: "tool", id: "tool:toolu_3", title: "Run the unit tests", kind: "execute", status: "pending", content: [], locations: [] } });
  await send(BASH_PERMISSION(11, true));
  await page.locator("#permission").waitFor({ state: "visible" });
  await atEnd("with the card open");
  await send({ type: "permissions", permissions: { queued: 0 } });
  await send({ type: "item", item: { type: "tool", id: "tool:toolu_3", title: "Run the unit tests", kind: "execute", status: "completed", content: [{ type: "text", text: lines(12) }], locations: [] } });
  await send({ type: "item", item: { type: "agent", id: "a2", text: "All four tests pass now." } });
  await page.locator('[data-id="a2"]').waitFor();
  await atEnd("after the card was answered and the final answer came");

  // A user who scrolled up to read stays where they are (wheeling over text: over a command's
  // output the wheel scrolls that box first).
  await page.locator('[data-id="a2"]').hover();
  await page.mouse.wheel(0, -400);
  await page.waitForFunction(() => {
    const t = document.querySelector(".transcript")!;
    return t.scrollHeight - t.scrollTop - t.clientHeight > 300;
  });
  await send({ type: "item", item: { type: "agent", id: "a3", text: lines(6) } });
  await page.locator('[data-id="a3"]').waitFor();
  assert.ok((await distance()) > 300, "the view jumped to the end while the user was reading above");
  await page.close();
});

test("prompt box: Enter sends, Shift+Enter does not; working shows Cancel", async () => {
  const { page, send, waitPosted, posted } = await open();
  await waitPosted("ready");
  await send(snapshot());
  const prompt = page.locator("#prompt");
  await prompt.fill("first line");
  await prompt.press("Shift+Enter");
  await prompt.pressSequentially("second");
  await prompt.press("Enter");
  assert.deepEqual(await waitPosted("prompt"), { type: "prompt", text: "first line\nsecond" });
  assert.equal(await prompt.inputValue(), "");
  await send({ type: "session", session: { ...SESSION, status: "working" } });
  await page.locator("#cancel").waitFor({ state: "visible" });
  assert.equal(await page.locator("#send").isDisabled(), true);
  await page.locator("#cancel").click();
  await waitPosted("cancel");
  await prompt.fill("while working");
  await prompt.press("Enter");
  assert.equal((await posted()).filter((m) => m.type === "prompt").length, 1, "sent while a turn was running");
  await page.close();
});

// As Larik announces them: the built-ins, then the user's skills and commands.
const COMMANDS: CommandView[] = [
  { name: "compact", description: "Summarize the conversation so far to free context" },
  { name: "clear", description: "Start over with an empty conversation" },
  { name: "mode", description: "Switch mode", hint: "default, accept-edits, plan or yolo" },
  { name: "code-review", description: "Review a change for correctness, tests and style", hint: "[path or branch]" },
  { name: "commit", description: "Create a git commit from the staged changes" },
  { name: "git:recent", description: "Summarize what changed in the last commits" },
];

/** The command list as shown: each option's name, hint and description, and which is selected. */
async function commandList(page: Page) {
  return page.locator("#command-list [role=option]").evaluateAll((options) =>
    options.map((o) => ({
      name: o.querySelector(".command-name")?.textContent,
      hint: o.querySelector(".command-hint")?.textContent ?? undefined,
      description: o.querySelector(".command-description")?.textContent ?? undefined,
      selected: o.getAttribute("aria-selected") === "true",
    })),
  );
}

const selectedName = async (page: Page) => (await commandList(page)).find((o) => o.selected)?.name;

test("slash commands: `/` at the start lists them as a listbox, typing filters, Up/Down move, Enter puts /name in the prompt", async () => {
  const { page, problems, send, waitPosted, posted } = await open();
  await waitPosted("ready");
  await send(snapshot([], { ...SESSION, commands: COMMANDS }));
  const prompt = page.locator("#prompt");
  const list = page.locator("#command-list");
  // Not after other text: the agent reads a command only at the start.
  await prompt.pressSequentially("see /co");
  assert.equal(await list.isVisible(), false, "the list opened after other text");
  await prompt.fill("");
  await prompt.pressSequentially("/");
  await list.waitFor({ state: "visible" });
  assert.equal(await list.getAttribute("role"), "listbox");
  assert.equal(await prompt.getAttribute("aria-controls"), "command-list");
  assert.equal(await prompt.getAttribute("aria-autocomplete"), "list");
  assert.deepEqual((await commandList(page)).map((o) => o.name), COMMANDS.map((c) => `/${c.name}`));
  await prompt.pressSequentially("co");
  assert.deepEqual(await commandList(page), [
    { name: "/compact", hint: undefined, description: "Summarize the conversation so far to free context", selected: true },
    { name: "/code-review", hint: "[path or branch]", description: "Review a change for correctness, tests and style", selected: false },
    { name: "/commit", hint: undefined, description: "Create a git commit from the staged changes", selected: false },
  ]);
  assert.equal(await page.locator("#command-status").textContent(), "3 commands");
  // The prompt keeps the focus and points at the highlighted option.
  const activeOption = async () => page.locator(`#${await prompt.getAttribute("aria-activedescendant")}`).getAttribute("data-name");
  assert.equal(await activeOption(), "compact");
  await prompt.press("ArrowDown");
  assert.equal(await selectedName(page), "/code-review");
  assert.equal(await activeOption(), "code-review");
  await prompt.press("ArrowDown");
  await prompt.press("ArrowDown");
  assert.equal(await selectedName(page), "/compact", "Down does not wrap to the first");
  await prompt.press("ArrowUp");
  assert.equal(await selectedName(page), "/commit", "Up does not wrap to the last");
  assert.equal(await page.evaluate(() => document.activeElement?.id), "prompt");
  // Typing on narrows the list; the highlighted one stays highlighted while it matches.
  await prompt.pressSequentially("m");
  assert.deepEqual((await commandList(page)).map((o) => [o.name, o.selected]), [["/compact", false], ["/commit", true]]);
  await prompt.press("Enter");
  assert.equal(await prompt.inputValue(), "/commit ");
  assert.deepEqual(await prompt.evaluate((t: HTMLTextAreaElement) => [t.selectionStart, t.selectionEnd]), [8, 8]);
  await list.waitFor({ state: "hidden" });
  assert.equal(await prompt.getAttribute("aria-activedescendant"), null);
  assert.equal((await posted()).filter((m) => m.type === "prompt").length, 0, "Enter sent the prompt instead of choosing");
  // Now Enter sends, arguments and all.
  await prompt.pressSequentially("fix the comma split");
  await prompt.press("Enter");
  assert.deepEqual(await waitPosted("prompt"), { type: "prompt", text: "/commit fix the comma split" });
  assert.deepEqual(problems, []);
  await page.close();
});

test("slash commands: Tab and a click choose, the hint shows where the arguments go, Escape closes, new lists replace the old", async () => {
  const { page, problems, send, waitPosted, posted } = await open();
  await page.setViewportSize({ width: 300, height: 600 });
  await waitPosted("ready");
  // What reaches the window (VS Code forwards it to the workbench, where Escape cancels a turn).
  await page.evaluate(() => {
    (window as any).__keys = [];
    window.addEventListener("keydown", (e) => (window as any).__keys.push(e.key));
  });
  await send(snapshot([], { ...SESSION, status: "working", commands: COMMANDS }));
  const prompt = page.locator("#prompt");
  const list = page.locator("#command-list");
  await prompt.pressSequentially("/cod");
  await list.waitFor({ state: "visible" });
  await prompt.press("Tab");
  assert.equal(await prompt.inputValue(), "/code-review ");
  assert.equal(await page.evaluate(() => document.activeElement?.id), "prompt", "Tab moved the focus");
  // The hint, where the arguments will be typed, and said to a screen reader.
  const ghost = page.locator(".prompt-ghost");
  await ghost.waitFor({ state: "visible" });
  assert.equal(await ghost.locator(".ghost-hint").textContent(), "[path or branch]");
  assert.equal(await page.locator("#command-status").textContent(), "Arguments: [path or branch]");
  const [hintBox, promptBox] = await Promise.all([ghost.locator(".ghost-hint").boundingBox(), prompt.boundingBox()]);
  assert.ok(hintBox && promptBox && hintBox.x > promptBox.x + 40 && hintBox.y < promptBox.y + 20, `the hint is not after the name: ${JSON.stringify([hintBox, promptBox])}`);
  await prompt.pressSequentially("s");
  await ghost.waitFor({ state: "hidden" });
  // Escape closes the list and goes no further; typing opens it again.
  await prompt.fill("");
  await prompt.pressSequentially("/c");
  await list.waitFor({ state: "visible" });
  // At the sidebar's width the list sits above the prompt, inside the view.
  const [listBox, box] = await Promise.all([list.boundingBox(), prompt.boundingBox()]);
  assert.ok(listBox && box && listBox.y + listBox.height <= box.y + 1, `the list covers the prompt: ${JSON.stringify([listBox, box])}`);
  assert.ok(listBox!.x >= 0 && listBox!.x + listBox!.width <= 300, `the list leaves the view: ${JSON.stringify(listBox)}`);
  assert.equal(await list.evaluate((l) => l.scrollWidth > l.clientWidth), false, "the list scrolls sideways");
  const keysBefore = (await page.evaluate(() => (window as any).__keys as string[])).length;
  await prompt.press("Escape");
  await list.waitFor({ state: "hidden" });
  const keys = (await page.evaluate(() => (window as any).__keys as string[])).slice(keysBefore);
  assert.ok(!keys.includes("Escape"), "Escape reached the window");
  assert.equal(await prompt.inputValue(), "/c");
  await prompt.pressSequentially("l");
  await list.waitFor({ state: "visible" });
  assert.deepEqual((await commandList(page)).map((o) => o.name), ["/clear"]);
  // Without the list, Escape is not ours.
  await prompt.fill("plain text");
  await prompt.press("Escape");
  assert.ok((await page.evaluate(() => (window as any).__keys as string[])).includes("Escape"));
  // A click chooses, and the prompt keeps the focus.
  await prompt.fill("");
  await prompt.pressSequentially("/");
  await page.locator('#command-list [data-name="git:recent"]').click();
  assert.equal(await prompt.inputValue(), "/git:recent ");
  assert.equal(await page.evaluate(() => document.activeElement?.id), "prompt");
  await list.waitFor({ state: "hidden" });
  // The agent's next list (after /clear, skills read again) replaces the shown one.
  await prompt.fill("");
  await prompt.pressSequentially("/co");
  await list.waitFor({ state: "visible" });
  await send({ type: "session", session: { ...SESSION, status: "working", commands: [...COMMANDS.slice(0, 3), { name: "code-review", description: "Audit a change", hint: "[path]" }] } });
  await page.waitForFunction(() => document.querySelectorAll("#command-list [role=option]").length === 2);
  assert.deepEqual((await commandList(page)).map((o) => [o.name, o.description]), [["/compact", "Summarize the conversation so far to free context"], ["/code-review", "Audit a change"]]);
  // No commands, no list.
  await send({ type: "session", session: { ...SESSION, commands: [] } });
  await list.waitFor({ state: "hidden" });
  assert.equal((await posted()).filter((m) => m.type === "prompt" || m.type === "cancel").length, 0);
  assert.deepEqual(problems, []);
  await page.close();
});

test("mode and model pickers, plan and usage", async () => {
  const { page, send, waitPosted } = await open();
  await waitPosted("ready");
  await send(
    snapshot([], {
      ...SESSION,
      plan: [
        { content: "Read the code", status: "completed", priority: "high" },
        { content: "Fix the bug", status: "in_progress", priority: "high" },
      ],
      usage: { used: 53000, size: 200000, cost: { amount: 0.0009, currency: "USD" } },
    }),
  );
  assert.equal(await page.locator("#mode").inputValue(), "default");
  assert.deepEqual(await page.locator("#model option").allTextContents(), ["Model One", "Model Two"]);
  await page.locator("#mode").selectOption("plan");
  assert.deepEqual(await waitPosted("setMode"), { type: "setMode", id: "plan" });
  await page.locator("#model").selectOption("m2");
  assert.deepEqual(await waitPosted("setModel"), { type: "setModel", id: "m2" });
  assert.match((await page.locator("#plan summary").textContent()) ?? "", /Plan \(1\/2\)/);
  assert.equal(await page.locator("#plan .plan-entry.in_progress").count(), 1);
  assert.match((await page.locator("#usage").textContent()) ?? "", /53,000 \/ 200,000 tokens \(27%\) · \$0\.0009$/);
  await page.close();
});

test("context chips; new session and history are the view's title actions, not buttons here", async () => {
  const { page, send, waitPosted } = await open();
  await waitPosted("ready");
  await send(snapshot());
  await send({ type: "context", context: [{ id: "sel1", label: "a.py:2-3" }] });
  await page.locator('.chip[data-id="sel1"] .chip-remove').click();
  assert.deepEqual(await waitPosted("removeContext"), { type: "removeContext", id: "sel1" });
  const labels = (await page.locator("button:visible").allTextContents()).map((t) => t.trim());
  assert.ok(!labels.some((l) => /^(History|New)$/.test(l)), `buttons in the view: ${labels.join(", ")}`);
  await page.close();
});


test("at the sidebar's default width (300 px) the pickers show their labels whole, during a turn too", async () => {
  const { page, send, waitPosted } = await open();
  await page.setViewportSize({ width: 300, height: 700 });
  await waitPosted("ready");
  const session: SessionView = {
    ...SESSION,
    mode: {
      current: "accept-edits",
      options: [
        { id: "default", name: "Default" },
        { id: "accept-edits", name: "Accept edits" },
        { id: "plan", name: "Plan" },
        { id: "yolo", name: "Yolo" },
      ],
    },
    model: { current: "claude-sonnet-4-5", options: [{ id: "claude-sonnet-4-5", name: "claude-sonnet-4-5" }, { id: "openai:gpt-4.1", name: "openai:gpt-4.1" }] },
  };
  for (const status of ["idle", "working"] as const) {
    await send(snapshot([], { ...session, status }));
    await page.waitForFunction((s) => document.body.dataset.status === s, status);
    for (const picker of ["#mode", "#model"]) {
      const fit = await labelFits(page, picker);
      assert.ok(fit.fits, `${status}: ${picker} shows "${fit.label}" in ${fit.width} px, it needs ${fit.needed}`);
    }
    // One button at a time: Send when idle, Cancel during a turn; inside the view either way.
    const visible = await page.locator(".controls button:visible").evaluateAll((buttons) => buttons.map((b) => [b.id, b.getBoundingClientRect().right]));
    assert.deepEqual(visible.map(([id]) => id), [status === "idle" ? "send" : "cancel"]);
    assert.ok((visible[0]![1] as number) <= 300, `the button ends at ${visible[0]![1]} px`);
  }
  await page.close();
});

test("disabled and stopped states replace the prompt with an explanation", async () => {
  const { page, send, waitPosted } = await open();
  await waitPosted("ready");
  await send(snapshot([], { ...SESSION, status: "disabled", statusDetail: "Larik only runs in trusted workspaces." }));
  await page.locator("#banner").waitFor({ state: "visible" });
  assert.match((await page.locator("#banner").textContent()) ?? "", /trusted workspaces/);
  assert.equal(await page.locator("#prompt").isDisabled(), true);
  await send({ type: "session", session: { ...SESSION, status: "stopped", statusDetail: "the agent exited with code 1" } });
  await page.locator("#restart").click();
  await waitPosted("restart");
  await page.close();
});

test("hostile agent text stays text: no element, no script, no CSP violation", async () => {
  const { page, problems, send, waitPosted } = await open();
  await waitPosted("ready");
  await send(snapshot());
  const hostile = '<img src=x onerror="window.__pwned=1"><script>window.__pwned=2</script>[x](javascript:window.__pwned=3)';
  await send({ type: "item", item: { type: "agent", id: "a1", text: hostile } });
  await send({ type: "item", item: { type: "tool", id: "tool:t", title: '<img src=x onerror="window.__pwned=4">', kind: "other", status: "completed", content: [{ type: "text", text: "<b>x</b>" }], locations: [] } });
  await page.locator('[data-id="a1"]').waitFor();
  assert.equal(await page.locator("#transcript img, #transcript script, #transcript b").count(), 0);
  assert.equal(await page.evaluate(() => (window as any).__pwned), undefined);
  assert.match((await page.locator('[data-id="a1"]').textContent()) ?? "", /<img src=x/);
  assert.deepEqual(problems, []);
  await page.close();
});

test("the draft survives a reload through the webview state", async () => {
  const { page, waitPosted } = await open();
  await waitPosted("ready");
  await page.locator("#prompt").fill("half-written");
  const state = await page.evaluate(() => (window as any).__state);
  assert.deepEqual(state, { draft: "half-written" });
  await page.close();
});

const TASK = (id: string, title: string, status: string, content: any[] = []): TranscriptItem => ({ type: "tool", id: `tool:${id}`, title, kind: "other", status, content, locations: [] });

const child = (sessionId: string, toolCallId: string | undefined, title: string, extra: Partial<SubagentView> = {}): SubagentView => ({
  sessionId,
  ...(toolCallId !== undefined ? { toolCallId } : {}),
  title,
  phase: "running",
  canStop: true,
  stopping: false,
  tools: [],
  text: "",
  textTruncated: false,
  ...extra,
});

test("subagents are drawn inside their task call's card, with their calls, report and a Stop button while they run", async () => {
  const { page, problems, send, waitPosted, posted } = await open();
  await page.setViewportSize({ width: 300, height: 700 });
  await waitPosted("ready");
  await send(snapshot([{ type: "user", id: "u1", text: "look around" }, TASK("t1", "explore: find alpha", "in_progress"), TASK("t2", "explore: wait forever", "in_progress")]));
  await send({ type: "subagent", subagent: child("s-t1", "t1", "explore: find alpha") });
  await send({ type: "subagent", subagent: child("s-t2", "t2", "explore: wait forever") });
  const alpha = page.locator('[data-tool-call-id="t1"] > .subagents > .subagent[data-session-id="s-t1"]');
  const stuck = page.locator('[data-tool-call-id="t2"] > .subagents > .subagent[data-session-id="s-t2"]');
  await alpha.waitFor();
  await stuck.waitFor();
  assert.equal(await alpha.locator(".subagent-title").textContent(), "explore: find alpha");
  assert.equal(await alpha.locator(".subagent-phase").textContent(), "running");
  // Streamed: the child's call appears, then completes, then its report; each one view.
  await send({ type: "subagent", subagent: child("s-t1", "t1", "explore: find alpha", { tools: [{ toolCallId: "c1", title: "Read alpha.txt", kind: "read", status: "in_progress" }] }) });
  await send({
    type: "subagent",
    subagent: child("s-t1", "t1", "explore: find alpha", { phase: "done", canStop: false, tools: [{ toolCallId: "c1", title: "Read alpha.txt", kind: "read", status: "completed" }], text: "alpha done" }),
  });
  await page.waitForFunction(() => document.querySelector('[data-session-id="s-t1"]')?.getAttribute("data-phase") === "done");
  assert.equal(await alpha.locator('.subagent-tool[data-call-id="c1"][data-status="completed"]').textContent(), "● Read alpha.txt");
  assert.equal(await alpha.locator(".subagent-text").textContent(), "alpha done");
  assert.equal(await alpha.locator(".subagent-stop").count(), 0, "a finished child offers Stop");
  // The task card re-rendered (its status and output) keeps its child, once.
  await send({ type: "item", item: TASK("t1", "explore: find alpha", "completed", [{ type: "text", text: "alpha done" }]) });
  await page.waitForFunction(() => document.querySelector('[data-tool-call-id="t1"]')?.getAttribute("data-status") === "completed");
  assert.equal(await page.locator('.subagent[data-session-id="s-t1"]').count(), 1);
  assert.equal(await alpha.locator(".subagent-phase").textContent(), "done");
  // The report its child shows whole is not repeated as the card's output; another output is.
  assert.equal(await page.locator('[data-tool-call-id="t1"] > .tool-output').count(), 0, "the report is shown twice");
  await send({ type: "item", item: TASK("t1", "explore: find alpha", "completed", [{ type: "text", text: "alpha done" }, { type: "text", text: "took 2 s" }]) });
  await page.locator('[data-tool-call-id="t1"] > .tool-output', { hasText: "took 2 s" }).waitFor();
  assert.equal(await page.locator('[data-tool-call-id="t1"] > .tool-output').count(), 1);
  // Stop the running one: the webview says which, and does not offer it twice.
  const stop = stuck.locator("button.subagent-stop");
  assert.equal(await stop.getAttribute("aria-label"), "Stop explore: wait forever");
  await stop.click();
  assert.deepEqual(await waitPosted("stopSubagent"), { type: "stopSubagent", sessionId: "s-t2" });
  assert.equal(await stop.isDisabled(), true);
  await stop.click({ force: true });
  assert.equal((await posted()).filter((m) => m.type === "stopSubagent").length, 1, "Stop sent twice");
  await send({ type: "subagent", subagent: child("s-t2", "t2", "explore: wait forever", { stopping: true }) });
  assert.equal(await stop.textContent(), "Stopping…");
  await send({ type: "subagent", subagent: child("s-t2", "t2", "explore: wait forever", { phase: "stopped", canStop: false }) });
  await page.waitForFunction(() => document.querySelector('[data-session-id="s-t2"]')?.getAttribute("data-phase") === "stopped");
  assert.equal(await stuck.locator(".subagent-phase").textContent(), "stopped");
  assert.equal(await stuck.locator(".subagent-stop").count(), 0);
  // Nothing is wider than the sidebar.
  const overflow = await page.locator(".transcript").evaluate((t) => t.scrollWidth > t.clientWidth);
  assert.equal(overflow, false, "the nested children overflow the 300 px view");
  assert.deepEqual(problems, []);
  await page.close();
});

test("a long report folds behind its first line; other ends read in words; a snapshot keeps children in their cards", async () => {
  const { page, send, waitPosted } = await open();
  await waitPosted("ready");
  const report = "## Findings in `alpha.txt`\n\nThe alpha secret is 42.\n\n- alpha.txt:1";
  await send(
    snapshot(
      [TASK("t1", "explore: find alpha", "completed"), TASK("t2", "general-purpose: fix it", "failed")],
      SESSION,
      [
        child("s-t1", "t1", "explore: find alpha", { phase: "done", canStop: false, text: report, tools: [{ toolCallId: "c1", title: "Read `alpha.txt`", kind: "read", status: "completed" }] }),
        child("s-t2", "t2", "general-purpose: fix it", { phase: "ended", stopReason: "max tokens", canStop: false }),
        child("s-w", "t3", "explore: waiting", { phase: "waiting" }),
      ],
    ),
  );
  const folded = page.locator('[data-tool-call-id="t1"] .subagent details.subagent-text');
  await folded.waitFor();
  // Markdown in a report's first line and a call's title reads as Markdown, not raw backticks.
  assert.equal(await folded.locator("summary").textContent(), "Findings in alpha.txt");
  assert.equal(await folded.locator("summary code").textContent(), "alpha.txt");
  assert.equal(await page.locator('[data-tool-call-id="t1"] .subagent-tool-title code').textContent(), "alpha.txt");
  assert.equal(await folded.evaluate((d) => (d as HTMLDetailsElement).open), false);
  await folded.locator("summary").click();
  assert.equal(await folded.locator(".markdown li").textContent(), "alpha.txt:1");
  assert.equal(await page.locator('[data-tool-call-id="t2"] .subagent .subagent-phase').textContent(), "ended: max tokens");
  // A child whose task call has no card stands on its own, and moves in when the card comes.
  const waiting = page.locator('.subagent[data-session-id="s-w"]');
  assert.equal(await waiting.locator(".subagent-phase").textContent(), "waiting for you");
  assert.equal(await page.locator('.item.subagent-stray .subagent[data-session-id="s-w"]').count(), 1);
  await send({ type: "item", item: TASK("t3", "explore: waiting", "in_progress") });
  await page.locator('[data-tool-call-id="t3"] .subagent[data-session-id="s-w"]').waitFor();
  assert.equal(await page.locator(".item.subagent-stray").count(), 0);
  await page.close();
});

test("a subagent's permission request says which subagent asks; its title stays text", async () => {
  const { page, problems, send, waitPosted } = await open();
  await waitPosted("ready");
  await send(snapshot([TASK("t1", "explore: find alpha", "in_progress")]));
  await send({ type: "subagent", subagent: child("s-t1", "t1", '<img src=x onerror="window.__pwned=1">') });
  await send({
    type: "permissions",
    permissions: {
      current: { key: 3, toolCallId: "c2", title: "Edit alpha.txt", toolKind: "edit", acceptsFeedback: false, subagent: "explore: find alpha", options: [{ optionId: "allow_once", name: "Allow once", kind: "allow_once" }] },
      queued: 0,
    },
  });
  const card = page.locator("#permission");
  await card.waitFor({ state: "visible" });
  assert.equal(await card.locator(".permission-subagent").textContent(), "For the subagent explore: find alpha");
  assert.equal(await card.locator(".permission-title").textContent(), "Larik wants to: Edit alpha.txt");
  await card.locator('button[data-option-id="allow_once"]').click();
  assert.deepEqual(await waitPosted("answerPermission"), { type: "answerPermission", key: 3, optionId: "allow_once" });
  assert.equal(await page.locator("#transcript img").count(), 0);
  assert.equal(await page.evaluate(() => (window as any).__pwned), undefined);
  assert.deepEqual(problems, []);
  await page.close();
});

test("a turn's plan stays in the transcript after the turn, folded, its Markdown rendered; nothing stays pinned", async () => {
  const { page, problems, send, waitPosted } = await open();
  await waitPosted("ready");
  const plan: TranscriptItem = { type: "plan", id: "p1", entries: [{ content: "Fix `mean`", status: "completed", priority: "high" }, { content: "Run the tests", status: "pending", priority: "low" }] };
  await send(snapshot([{ type: "user", id: "u1", text: "Fix calc.py" }, plan, { type: "agent", id: "a1", text: "Done." }], SESSION));
  const item = page.locator('.item.plan[data-id="p1"]');
  await item.waitFor();
  assert.equal(await item.locator("summary").textContent(), "Plan (1/2)");
  assert.equal(await item.locator("details").evaluate((d) => (d as HTMLDetailsElement).open), false);
  assert.equal(await item.locator(".plan-entry code").textContent(), "mean");
  assert.equal(await page.locator("#plan").isHidden(), true, "no plan pinned once its turn ended");
  assert.deepEqual(problems, []);
  await page.close();
});

test("a command's output at the sidebar's width: its last lines in view, lines unwrapped, all of it on request; shown once while asking", async () => {
  const { page, problems, send, waitPosted } = await open();
  await page.setViewportSize({ width: 300, height: 700 });
  await waitPosted("ready");
  const printed = [...Array.from({ length: 25 }, (_, n) => `test_case_${n} (test_calc.CalcTest.test_case_${n}) ... ok`), "", "Ran 25 tests in 0.004s", "", "OK"].join("\n");
  const run: TranscriptItem = { type: "tool", id: "tool:b1", title: "Run the unit tests", kind: "execute", status: "completed", locations: [], content: [{ type: "text", text: `\`\`\`sh\n$ python3 -m unittest -v\n${printed}\n\`\`\`` }] };
  await send(snapshot([{ type: "user", id: "u1", text: "Run the tests" }, run], SESSION));
  const box = page.locator('[data-tool-call-id="b1"] pre.command-output');
  await box.waitFor();
  const visible = async (text: string) =>
    box.evaluate((pre, wanted) => {
      const range = document.createRange();
      const node = pre.firstElementChild!.firstChild!;
      const at = node.textContent!.indexOf(wanted);
      range.setStart(node, at);
      range.setEnd(node, at + wanted.length);
      const line = range.getBoundingClientRect();
      const shown = pre.getBoundingClientRect();
      return line.top >= shown.top - 1 && line.bottom <= shown.bottom + 1;
    }, text);
  assert.equal(await visible("Ran 25 tests in 0.004s"), true, "the verdict is not in view");
  assert.equal(await visible("$ python3 -m unittest -v"), false, "the box shows its head, not its tail");
  // A long line scrolls sideways instead of wrapping into pieces.
  assert.equal(await box.evaluate((pre) => getComputedStyle(pre).whiteSpace), "pre");
  assert.ok(await box.evaluate((pre) => pre.scrollWidth > pre.clientWidth));
  const expand = page.locator('[data-tool-call-id="b1"] button.output-expand');
  assert.equal(await expand.textContent(), "Show all 30 lines");
  await expand.click();
  assert.equal(await visible("$ python3 -m unittest -v"), true, "expanded, the whole output shows");
  // While the call waits for permission its card shows no second copy of the command.
  await send({ type: "item", item: { ...run, id: "tool:b2", status: "pending", content: [{ type: "text", text: "```sh\n$ make deploy\n```" }] } as TranscriptItem });
  await page.locator('[data-tool-call-id="b2"]').waitFor();
  assert.equal(await page.locator('[data-tool-call-id="b2"] pre').count(), 0);
  assert.deepEqual(problems, []);
  await page.close();
});

test("an edit's diff at the sidebar's width shows what changed within a line, wrapped into view", async () => {
  const { page, problems, send, waitPosted } = await open();
  await page.setViewportSize({ width: 300, height: 700 });
  await waitPosted("ready");
  const edit: TranscriptItem = {
    type: "tool",
    id: "tool:e1",
    title: "Edit calc.py",
    kind: "edit",
    status: "completed",
    locations: [],
    content: [
      {
        type: "diff",
        path: "/p/calc.py",
        added: 1,
        removed: 1,
        isNew: false,
        truncated: false,
        diff: 0,
        preview: [
          { kind: "context", text: "    for v in values:" },
          { kind: "removed", text: "    return total / (len(values) - 1)" },
          { kind: "added", text: "    return total / len(values)" },
        ],
      },
    ],
  };
  await send(snapshot([{ type: "user", id: "u1", text: "Fix it" }, edit], SESSION));
  const card = page.locator('[data-tool-call-id="e1"]');
  await card.locator(".diff .line.removed").waitFor();
  assert.deepEqual(await card.locator(".diff .changed").allTextContents(), ["(len(values) - 1", "len(values"]);
  // Every changed part is inside the box, not cut off at its right edge.
  const inView = await card.locator(".diff .changed").evaluateAll((spans) =>
    spans.every((span) => {
      const box = span.closest("pre")!.getBoundingClientRect();
      return Array.from(span.getClientRects()).every((r) => r.right <= box.right + 1);
    }),
  );
  assert.equal(inView, true);
  assert.deepEqual(problems, []);
  await page.close();
});

test("a card records what was decided about its call", async () => {
  const { page, problems, send, waitPosted } = await open();
  await waitPosted("ready");
  const edit = (id: string, decision: { text: string; allowed: boolean }): TranscriptItem =>
    ({ type: "tool", id: `tool:${id}`, title: "Edit calc.py", kind: "edit", status: "completed", locations: [], content: [], decision }) as TranscriptItem;
  await send(snapshot([{ type: "user", id: "u1", text: "Fix it" }, edit("e1", { text: "1 of 2 hunks accepted", allowed: true }), edit("e2", { text: "Rejected", allowed: false })], SESSION));
  await page.locator('[data-tool-call-id="e1"] .tool-decision').waitFor();
  assert.equal(await page.locator('[data-tool-call-id="e1"] .tool-decision').textContent(), "✓ 1 of 2 hunks accepted");
  assert.equal(await page.locator('[data-tool-call-id="e2"] .tool-decision.rejected').textContent(), "✗ Rejected");
  assert.deepEqual(problems, []);
  await page.close();
});
