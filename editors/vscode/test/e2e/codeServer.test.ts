// End to end in a real VS Code: code-server 4.100.3 (VS Code 1.100 workbench and extension host)
// with the packaged .vsix installed, the real `larik acp` and the mock model, driven by
// playwright-core in Debian's Chromium (set up by test/support/workbench.ts). One server, six turns:
//   1. a prompt, streamed text, an edit reviewed in the diff editor, accepted from the title bar:
//      the file on disk changes;
//   2. another edit rejected with the keyboard: the file stays as it was, the model is told;
//   3. an edit of two hunks reviewed inline: one hunk accepted and one rejected with CodeLens:
//      the file ends with only the accepted hunk;
//   4. a file with unsaved changes: the agent reads the unsaved text, the selection rides along,
//      the accepted edit is written through the editor and can be undone;
//   5. a command outside the sandbox: its prompt shows the command and the warning, allow once
//      runs it, and the chat ends with the final answer in view;
//   6. reloading the window stops the agent (deactivate) and starts a new one, which loads the
//      first session from the history.
// The README's pictures are taken on the way: review.png in turn 1 (a tool call, the edit under
// review in the diff editor, its permission prompt), turn.png at the end of turn 5 (a whole turn
// with its tool calls). `npm run screenshots` saves them into screenshots/.

import assert from "node:assert/strict";
import { readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { after, before, test } from "node:test";
import type { Page } from "playwright-core";
import { stringsIn, waitFor, type MockModel, type Sandbox } from "../support/agent";
import { labelFits } from "../support/browser";
import { alive, sendPrompt, STEP_MS, Workbench } from "../support/workbench";

const TEN = "one\ntwo\nthree\nfour\nfive\nsix\nseven\neight\nnine\nten\n";
const B_TEXT = "alpha\nbeta\ngamma\n";
const C_TEXT = "c1\nc2\nc3\nc4\nc5\nc6\nc7\nc8\nc9\nc10\n";
const C_PROPOSED = C_TEXT.replace("c2\n", "C2\n").replace("c9\n", "C9\n");
const D_TEXT = "delta\necho\n";
const E_COMMAND = "cat e.txt && echo checked-by-bash";
const CLOSING = ["Checked.", ...Array.from({ length: 14 }, (_, i) => `- point ${i + 1} of the summary`), "", "That is the end of the turn."].join("\n");
/** The README's pictures stay small: the whole of each in well under this many bytes. */
const PICTURE_BYTES = 200_000;

const SCENARIO = {
  responses: [
    // Turn 1: read, then edit a.txt, then a closing line.
    { text: "Sure, let me look at a.txt first.", chunk_delay_ms: 20, tool_calls: [{ id: "toolu_1", name: "read", input: { path: "a.txt" } }] },
    { tool_calls: [{ id: "toolu_2", name: "edit", input: { path: "a.txt", old_string: "two\n", new_string: "TWO\n" } }] },
    { text: "Edited a.txt." },
    // Turn 2: the same for b.txt; the user rejects.
    { tool_calls: [{ id: "toolu_3", name: "read", input: { path: "b.txt" } }] },
    { tool_calls: [{ id: "toolu_4", name: "edit", input: { path: "b.txt", old_string: "beta\n", new_string: "BETA\n" } }] },
    { text: "Leaving b.txt as it was." },
    // Turn 3: a whole-file write of c.txt with two separate changes.
    { tool_calls: [{ id: "toolu_5", name: "read", input: { path: "c.txt" } }] },
    { tool_calls: [{ id: "toolu_6", name: "write", input: { path: "c.txt", content: C_PROPOSED } }] },
    { text: "Done with c.txt." },
    // Turn 4: d.txt has unsaved changes in an editor; the agent reads and edits them.
    { tool_calls: [{ id: "toolu_7", name: "read", input: { path: "d.txt" } }] },
    { tool_calls: [{ id: "toolu_8", name: "edit", input: { path: "d.txt", old_string: "delta\n", new_string: "DELTA\n" } }] },
    { text: "Updated d.txt." },
    // Turn 5: a command outside the sandbox, allowed once, then a long closing answer.
    {
      text: "Now let me check the file.",
      tool_calls: [{ id: "toolu_9", name: "bash", input: { command: E_COMMAND, description: "Check e.txt", sandbox: false } }],
    },
    { text: CLOSING },
  ],
};

let rig: Workbench;
let sandbox: Sandbox;
let model: MockModel;
let page: Page;

before(async () => {
  rig = await Workbench.start({
    prefix: "larik-vscode-e2e-",
    files: { "a.txt": TEN, "b.txt": B_TEXT, "c.txt": C_TEXT, "d.txt": D_TEXT, "e.txt": "epsilon\n" },
    scenario: SCENARIO,
  });
  ({ sandbox, model, page } = rig);
});

after(async () => {
  await rig?.stop();
});

/** A process's environment variables (`NAME=value`), empty once it is gone. */
function environOf(pid: number): string[] {
  try {
    return readFileSync(`/proc/${pid}/environ`, "utf8").split("\0");
  } catch {
    return [];
  }
}

const extensionLog = () => rig.extensionLog();
const agentPids = () => rig.agentPids();
const screenshot = (name: string) => rig.screenshot(name);
const step = <T>(what: string, body: () => Promise<T>) => rig.step(what, body);
const runCommand = (title: string) => rig.runCommand(title);
const chatFrame = () => rig.chatFrame();

/** A line of the inline review, found by its text: its gutter (our decoration standing for the
 * line number), its text's opacity, and how many of the editor's own line numbers show. */
async function reviewLine(text: string): Promise<{ gutter: string; opacity: string; lineNumbers: number }> {
  return page.evaluate((wanted) => {
    const line = [...document.querySelectorAll(".view-line")].find((l) => (l.textContent ?? "").replace(/\u00a0/g, " ").trim() === wanted);
    if (!line) throw new Error(`no line ${wanted} in view`);
    let gutter = "";
    let opacity = "";
    for (const span of line.querySelectorAll("span")) {
      const content = getComputedStyle(span, "::before").content;
      if (content && content !== "none" && content !== "normal") gutter = content.slice(1, -1).replace(/\u00a0/g, " ");
      if ((span.textContent ?? "").includes(wanted)) opacity = getComputedStyle(span).opacity; // the innermost: decorations style the text spans
    }
    const lineNumbers = line.closest(".monaco-editor")!.querySelectorAll(".line-numbers").length;
    return { gutter, opacity, lineNumbers };
  }, text);
}

function diffTab(file: string) {
  return page.locator(".tabs-container .tab", { hasText: `${file}: Original ↔ Larik's proposal` });
}

async function fileBecomes(file: string, expected: string): Promise<void> {
  await waitFor(() => readFileSync(join(sandbox.project, file), "utf8") === expected, `${file} on disk to become ${JSON.stringify(expected)}`, STEP_MS);
}

test("prompt, streamed text, diff review accepted: the file changes on disk", { timeout: 180_000 }, async () => {
  await step("open the workbench", async () => {
    await rig.open();
  });
  const chat = await step("open the chat view", async () => {
    await runCommand("Larik: Open Chat");
    return chatFrame();
  });
  await step("send a prompt and see streamed text", async () => {
    await sendPrompt(chat, "Please change two to TWO in a.txt");
    await chat.locator(".item.agent", { hasText: "Sure, let me look at a.txt first." }).waitFor();
    await chat.locator('[data-tool-call-id="toolu_1"][data-status="completed"]').waitFor();
  });
  await step("the permission prompt and the diff editor", async () => {
    const card = chat.locator("#permission");
    await card.waitFor({ state: "visible" });
    assert.deepEqual(
      (await card.locator("button.option").allTextContents()).map((t) => t.replace(/^\S+\s/, "")),
      ["Allow once", "Always allow edit in this project", "Reject"],
    );
    // The rule is shown as code.
    assert.equal(await card.locator('button[data-kind="allow_always"] code').textContent(), "edit");
    await page.locator(".statusbar-item", { hasText: "Larik: waiting for you" }).waitFor();
    await diffTab("a.txt").waitFor();
    const diff = page.locator(".monaco-diff-editor").first();
    await diff.waitFor({ state: "visible" });
    await diff.locator(".editor.modified .view-lines", { hasText: "TWO" }).waitFor();
    await diff.locator(".editor.original .view-lines", { hasText: "two" }).waitFor();
    await screenshot("e2e-diff-review");
    // The picture: the read's card and the prompt in the chat, the proposal in the diff editor.
    assert.ok(await chat.locator('[data-tool-call-id="toolu_1"]').isVisible(), "the read's card is not in view");
    const picture = await rig.picture("review", { x: 0, y: 0, width: 1400, height: 900 });
    assert.ok(statSync(picture).size < PICTURE_BYTES, `${picture} is ${statSync(picture).size} bytes`);
  });
  await step("accept from the title bar", async () => {
    await page.locator('.editor-actions .action-label[aria-label^="Accept Proposed Edit"]').click();
    await fileBecomes("a.txt", TEN.replace("two\n", "TWO\n"));
    await chat.locator(".item.agent", { hasText: "Edited a.txt." }).waitFor();
    await chat.locator('[data-tool-call-id="toolu_2"][data-status="completed"]').waitFor();
    await diffTab("a.txt").waitFor({ state: "detached" });
    await page.locator(".statusbar-item", { hasText: "Larik: idle" }).waitFor();
  });
  const log = extensionLog();
  assert.match(log, /"optionId":"allow_once"/, "the protocol trace does not show the allow answer");
  assert.match(log, /fs\/write_text_file/, "the agent did not write through the editor");
});

test("another edit rejected with the keyboard: the file is unchanged and the model is told", { timeout: 120_000 }, async () => {
  const chat = await chatFrame();
  await step("send the second prompt", async () => {
    await sendPrompt(chat, "Now uppercase beta in b.txt");
    await chat.locator("#permission").waitFor({ state: "visible" });
    await diffTab("b.txt").waitFor();
  });
  await step("reject with Ctrl+Shift+Backspace", async () => {
    await page.locator(".monaco-diff-editor .editor.modified .view-lines").first().click();
    await page.keyboard.press("Control+Shift+Backspace");
    await chat.locator(".item.agent", { hasText: "Leaving b.txt as it was." }).waitFor();
    await chat.locator('[data-tool-call-id="toolu_4"][data-status="failed"]').waitFor();
    await diffTab("b.txt").waitFor({ state: "detached" });
  });
  assert.equal(readFileSync(join(sandbox.project, "b.txt"), "utf8"), B_TEXT);
  const requests = await model.requests();
  assert.equal(requests.length, 6);
  const told = [...stringsIn(requests[5])].some((s) => /reject|denied|declined/i.test(s));
  assert.ok(told, "the model's next request does not say the edit was rejected");
});

test("inline review: one hunk accepted, one rejected with CodeLens", { timeout: 120_000 }, async () => {
  const chat = await chatFrame();
  await step("send the third prompt", async () => {
    await sendPrompt(chat, "Uppercase c2 and c9 in c.txt");
    await diffTab("c.txt").waitFor();
  });
  await step("switch to the per-hunk review: one review tab, titled as a proposal", async () => {
    await page.locator('.editor-actions .action-label[aria-label^="Review Proposed Edit per Hunk"]').click();
    await page.locator(".codelens-decoration a", { hasText: "Accept all" }).waitFor();
    await diffTab("c.txt").waitFor({ state: "detached" });
    await page.locator(".tabs-container .tab.active", { hasText: "c.txt (Larik proposal)" }).waitFor();
    assert.equal(await page.locator(".tabs-container .tab", { hasText: "c.txt" }).count(), 1, "more than one tab for c.txt");
  });
  await step("the chat card leaves the decision to the review", async () => {
    await chat.locator("#permission .permission-reviewing").waitFor();
    assert.equal(await chat.locator("#permission button.option").count(), 0);
  });
  await step("the gutter numbers lines as in c.txt", async () => {
    // c10 is the review's 12th line (removed and added lines both show) and the file's 10th.
    const c10 = await waitFor(async () => ((await reviewLine("c10")).gutter.trim() === "10" ? reviewLine("c10") : undefined), "c10 numbered 10", STEP_MS);
    assert.equal(c10.lineNumbers, 0, "the editor's own line numbers are shown");
    assert.equal((await reviewLine("c9")).gutter.trim(), "9 −");
    assert.equal((await reviewLine("C9")).gutter.trim(), "+");
    await screenshot("e2e-inline-review");
  });
  await step("accept the first hunk: it looks accepted; reject the second", async () => {
    const lens = (label: RegExp) => page.locator(".codelens-decoration a").filter({ hasText: label });
    const before = await reviewLine("c2");
    await lens(/^\W*Accept$/).first().click();
    await lens(/Accepted \(click to reject\)/).waitFor();
    const accepted = await waitFor(async () => ((await reviewLine("C2")).gutter.trim() === "✓" ? reviewLine("c2") : undefined), "the accepted hunk's mark", STEP_MS);
    assert.equal(accepted.gutter.trim(), "2 ✓");
    assert.notEqual(accepted.opacity, before.opacity, "the accepted hunk's removed line looks as before");
    assert.equal((await reviewLine("C9")).gutter.trim(), "+", "the undecided hunk changed its look");
    await screenshot("e2e-inline-review-accepted");
    await lens(/^\W*Reject$/).first().click();
    await fileBecomes("c.txt", C_TEXT.replace("c2\n", "C2\n"));
    await chat.locator(".item.agent", { hasText: "Done with c.txt." }).waitFor();
  });
  assert.match(extensionLog(), /"acceptedHunks":\[0\]/, "the answer did not carry acceptedHunks");
  await screenshot("e2e-final");
});

test("unsaved text, selection, editor context, keyboard accept, undo", { timeout: 120_000 }, async () => {
  const chat = await chatFrame();
  const editor = page.locator(".editor-instance .monaco-editor").first();
  await step("open d.txt and change it without saving", async () => {
    await page.keyboard.press("Control+P");
    const input = page.locator(".quick-input-widget input");
    await input.waitFor({ state: "visible" });
    await input.fill("d.txt");
    await page.locator(".quick-input-list .monaco-list-row", { hasText: "d.txt" }).first().waitFor();
    await input.press("Enter");
    await page.locator(".tabs-container .tab.active", { hasText: "d.txt" }).waitFor();
    await editor.locator(".view-lines").click();
    await page.keyboard.press("Control+Home");
    await page.keyboard.type("unsaved ");
    await page.keyboard.press("Escape");
    await page.locator(".tabs-container .tab.active.dirty", { hasText: "d.txt" }).waitFor();
  });
  await step("ask about the selection", async () => {
    await editor.locator(".view-lines").click();
    await page.keyboard.press("Control+A");
    await runCommand("Larik: Ask Larik about Selection");
    await chat.locator(".chips .chip", { hasText: "d.txt:1-2" }).waitFor();
  });
  await step("the agent reads the unsaved text", async () => {
    await sendPrompt(chat, "Uppercase delta in d.txt");
    await chat.locator('[data-tool-call-id="toolu_7"][data-status="completed"]', { hasText: "unsaved delta" }).waitFor();
    await diffTab("d.txt").waitFor();
  });
  await step("accept with Ctrl+Shift+Enter", async () => {
    await page.locator(".monaco-diff-editor .editor.modified .view-lines").first().click();
    await page.keyboard.press("Control+Shift+Enter");
    await fileBecomes("d.txt", "unsaved DELTA\necho\n");
    await chat.locator(".item.agent", { hasText: "Updated d.txt." }).waitFor();
    await diffTab("d.txt").waitFor({ state: "detached" });
  });
  await step("undo the agent's edit in the editor", async () => {
    await page.locator(".tabs-container .tab", { hasText: "d.txt" }).first().click();
    await editor.locator(".view-lines", { hasText: "unsaved DELTA" }).waitFor();
    await editor.locator(".view-lines").click();
    await page.keyboard.press("Control+Z");
    await editor.locator(".view-lines", { hasText: "unsaved delta" }).waitFor();
  });
  const log = extensionLog();
  assert.match(log, /→ \{"jsonrpc":"2.0","method":"_larik\/editor_context","params":\{[^\n]*"activeFile":"[^"]*d\.txt"/, "no editor context for d.txt");
  assert.match(log, /→ \{[^\n]*"method":"session\/prompt"[^\n]*"type":"resource"[^\n]*d\.txt#L1-2/, "the selection was not attached to the prompt");
  assert.match(log, /← \{[^\n]*"method":"fs\/read_text_file"[^\n]*d\.txt/, "the agent did not read through the editor");
});

test("a command outside the sandbox: the prompt shows it whole with the warning; the end of the turn stays in view", { timeout: 120_000 }, async () => {
  const chat = await chatFrame();
  const card = chat.locator("#permission");
  await step("send the fifth prompt", async () => {
    await sendPrompt(chat, "Check e.txt with cat");
    await card.waitFor({ state: "visible" });
  });
  await step("the prompt says exactly what will run", async () => {
    assert.equal(await card.locator(".permission-title").textContent(), "Larik wants to: Check e.txt");
    assert.equal(await card.locator("pre.permission-command code").textContent(), E_COMMAND);
    assert.equal(await card.locator(".permission-warning").textContent(), "⚠ Runs outside the sandbox: full write and network access");
    const always = card.locator('button[data-kind="allow_always"]');
    assert.equal(((await always.textContent()) ?? "").replace(/^\S+\s/, ""), "Always allow bash(cat*) in this project");
    assert.equal(await always.locator("code").textContent(), "bash(cat*)");
    assert.equal(await card.locator("button.option.primary").getAttribute("data-kind"), "allow_once");
  });
  await step("allow once: the command runs and the final answer is in view", async () => {
    await card.locator('button[data-kind="allow_once"]').click();
    await chat.locator('[data-tool-call-id="toolu_9"][data-status="completed"]', { hasText: "checked-by-bash" }).waitFor();
    await chat.locator(".item.agent", { hasText: "That is the end of the turn." }).waitFor();
    await card.waitFor({ state: "hidden" });
    // The command appears once, in its output block: titled by its description, no raw fences.
    const call = chat.locator('[data-tool-call-id="toolu_9"]');
    assert.equal(await call.locator(".tool-title").textContent(), "Check e.txt");
    assert.ok(!((await call.textContent()) ?? "").includes("```"), "literal fences in the tool card");
    await waitFor(
      () => chat.locator(".transcript").evaluate((t) => t.scrollHeight - t.scrollTop - t.clientHeight < 2),
      "the transcript to show its end",
      STEP_MS,
    );
    const last = await chat.locator(".item.agent", { hasText: "That is the end of the turn." }).evaluate((node) => {
      const view = node.closest(".transcript")!.getBoundingClientRect();
      return node.getBoundingClientRect().bottom - view.bottom;
    });
    assert.ok(last <= 1, `the final answer ends ${last} px below the view`);
    // At the sidebar's default width the pickers show their labels whole, and New / History are
    // offered once, in the view's title bar.
    for (const picker of ["#mode", "#model"]) {
      const fit = await labelFits(chat, picker);
      assert.ok(fit.fits, `${picker} shows "${fit.label}" in ${fit.width} px, it needs ${fit.needed}`);
    }
    for (const action of ["New Session", "Load Past Session…"]) {
      assert.equal(await page.locator(`.part.sidebar .action-label[aria-label^="${action}"]:visible`).count(), 1, `${action} in the title bar`);
    }
    const buttons = (await chat.locator("button:visible").allTextContents()).map((t) => t.trim());
    assert.ok(!buttons.some((b) => /^(History|New)$/.test(b)), `buttons in the chat: ${buttons.join(", ")}`);
    const picture = await rig.picture("turn", { x: 0, y: 0, width: 760, height: 900 });
    assert.ok(statSync(picture).size < PICTURE_BYTES, `${picture} is ${statSync(picture).size} bytes`);
  });
  const requests = await model.requests();
  assert.ok([...stringsIn(requests.at(-1))].some((text) => text.includes("checked-by-bash")), "the model did not get the command's output");
});

test("reloading the window stops the agent; the new one loads the first session", { timeout: 120_000 }, async () => {
  const [first] = agentPids();
  assert.ok(first !== undefined && alive(first), "no running agent in the log");
  await step("reload the window", async () => {
    await runCommand("Developer: Reload Window");
    await waitFor(() => !alive(first), `the first agent (pid ${first}) to be stopped on deactivate`, STEP_MS);
    // The reloaded extension host may start an agent before the user settings (the sandbox's
    // environment) arrive and restart it once they do: wait for one running with them.
    const dataHome = `XDG_DATA_HOME=${sandbox.agentEnv("").XDG_DATA_HOME}`;
    await waitFor(
      () => agentPids().slice(1).some((pid) => alive(pid) && environOf(pid).includes(dataHome)),
      "a new agent running with the user settings' environment",
      STEP_MS,
    );
    await page.locator(".statusbar-item", { hasText: "Larik: idle" }).waitFor();
  });
  await step("load the first session from the history", async () => {
    const first = /← \{"jsonrpc":"2.0","id":\d+,"result":\{"sessionId":"([^"]+)"/.exec(extensionLog())?.[1];
    assert.ok(first, "no session/new answer in the protocol trace");
    await runCommand("Larik: Open Chat");
    const chat = await chatFrame();
    await chat.locator('#status[data-status="idle"]').waitFor();
    await page.locator('.part.sidebar .action-label[aria-label^="Load Past Session"]:visible').click();
    await page.locator(".quick-input-list .monaco-list-row", { hasText: "Please change two to TWO" }).first().click();
    await waitFor(() => new RegExp(`→ \\{[^\\n]*"method":"session/load"[^\\n]*"sessionId":"${first}"`).test(extensionLog()), "session/load of the first session", STEP_MS);
    await chat.locator(".item.user", { hasText: "Please change two to TWO in a.txt" }).waitFor();
    await chat.locator(".item.agent", { hasText: "Edited a.txt." }).waitFor();
    await screenshot("e2e-loaded-session");
  });
});
