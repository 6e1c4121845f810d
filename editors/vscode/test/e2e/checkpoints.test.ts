// End to end in a real VS Code (code-server with the packaged .vsix), the real `larik acp` and the
// mock model, in a git repository: undo per turn and a command's changed files.
//   1. the model writes a file, runs a command that changes, deletes and creates files, then
//      answers: the command's card lists the files it changed, and one opens as a diff;
//   2. the turn's Undo puts the files back on disk, the open editors follow (a.txt shows its old
//      text, the tab of a file the turn created closes), a notification says what was undone, and
//      the turn is marked undone in the chat; the agent forgot it (the next request starts afresh);
//   3. "Larik: Show Checkpoints" picks the next turn and undoes it; "Larik: Undo Last Turn" then
//      says there is nothing left to undo.

import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, test } from "node:test";
import type { Frame } from "playwright-core";
import { gitCommitAll, waitFor } from "../support/agent";
import { sendPrompt, STEP_MS, Workbench } from "../support/workbench";

const TIDY = "sed -i 's/one/uno/' a.txt && rm b.txt && touch c.txt";

const SCENARIO = {
  responses: [
    // Turn 1: a write through the editor, then a command that changes the project behind it.
    { tool_calls: [{ id: "toolu_w", name: "write", input: { path: "notes.md", content: "# Notes\n" } }] },
    { tool_calls: [{ id: "toolu_b", name: "bash", input: { command: TIDY, description: "tidy" } }] },
    { text: "Tidied." },
    // Turn 2, after the undo: one more file.
    { tool_calls: [{ id: "toolu_d", name: "write", input: { path: "d.txt", content: "delta\n" } }] },
    { text: "Wrote d.txt." },
  ],
};

let rig: Workbench;

before(async () => {
  rig = await Workbench.start({
    prefix: "larik-vscode-e2e-undo-",
    files: { "a.txt": "one\n", "b.txt": "two\n", ".gitignore": "target/\n" },
    setup: gitCommitAll,
    // The permission flow has its own tests: here the agent's own settings let every call run
    // without asking.
    agentSettings: { permissions: { defaultMode: "bypassPermissions" } },
    scenario: SCENARIO,
  });
});

after(async () => {
  await rig?.stop();
});

const file = (name: string) => join(rig.sandbox.project, name);
const textOf = (name: string) => (existsSync(file(name)) ? readFileSync(file(name), "utf8") : undefined);

/** Opens a project file by its absolute path in Quick Open: a file just created behind the
 * editor's back may not be in its file search yet. */
async function quickOpen(name: string): Promise<void> {
  const { page } = rig;
  await page.keyboard.press("Control+P");
  const input = page.locator(".quick-input-widget input");
  await input.waitFor({ state: "visible" });
  await input.fill(file(name));
  await page.locator(".quick-input-list .monaco-list-row", { hasText: name }).first().waitFor();
  await input.press("Enter");
  await page.locator(".tabs-container .tab.active", { hasText: name }).waitFor();
}

/** The editor tab of a file itself (not a diff of it). */
function fileTab(name: string) {
  return rig.page.locator(".tabs-container .tab").filter({ has: rig.page.locator(".label-name", { hasText: new RegExp(`^${name.replace(".", "\\.")}$`) }) });
}

/** The text the active editor shows. */
async function activeEditorText(): Promise<string> {
  return rig.page.locator(".editor-instance .monaco-editor .view-lines").first().innerText();
}

function notification(text: string) {
  return rig.page.locator(".notifications-toasts .notification-list-item-message", { hasText: text });
}

let chat: Frame;

test("a command's card lists the files it changed; a file opens as a diff", { timeout: 180_000 }, async () => {
  await rig.step("open the workbench, the chat and a.txt", async () => {
    await rig.open();
    await rig.runCommand("Larik: Open Chat");
    chat = await rig.chatFrame();
    await quickOpen("a.txt");
    await waitFor(async () => (await activeEditorText()).includes("one"), "a.txt in its editor", STEP_MS);
  });
  await rig.step("the turn writes a file and runs the command", async () => {
    await sendPrompt(chat, "Tidy the project");
    await chat.locator(".item.agent", { hasText: "Tidied." }).waitFor();
    await chat.locator('#status[data-status="idle"]').waitFor();
    assert.equal(textOf("a.txt"), "uno\n");
    assert.equal(textOf("b.txt"), undefined);
  });
  await rig.step("the command's card lists its files with their marks", async () => {
    const card = chat.locator('[data-tool-call-id="toolu_b"][data-status="completed"]');
    await card.locator(".tool-changes").waitFor();
    const rows = await card.locator("li.change").evaluateAll((nodes) => nodes.map((n) => [n.getAttribute("data-change"), n.querySelector(".change-mark")?.textContent, n.querySelector(".diff-open")?.textContent]));
    assert.deepEqual(rows, [["changed", "M", "a.txt"], ["deleted", "D", "b.txt"], ["added", "A", "c.txt"]]);
    // The editor shows what the command did to the open file.
    await waitFor(async () => (await activeEditorText()).includes("uno"), "a.txt's editor to show the command's change", STEP_MS);
  });
  await rig.step("a.txt opens as a diff of what the command did", async () => {
    await chat.locator('[data-tool-call-id="toolu_b"] [data-change="changed"] .diff-open').click();
    await rig.page.locator(".tabs-container .tab", { hasText: "a.txt: before ↔ after “tidy”" }).waitFor();
    const diff = rig.page.locator(".monaco-diff-editor").first();
    await diff.locator(".editor.original .view-lines", { hasText: "one" }).waitFor();
    await diff.locator(".editor.modified .view-lines", { hasText: "uno" }).waitFor();
    await rig.screenshot("e2e-command-changes");
  });
});

test("the turn's Undo puts the files back, the editors follow, a notification says what was undone", { timeout: 120_000 }, async () => {
  const prompt = chat.locator(".item.user", { hasText: "Tidy the project" });
  await rig.step("the turn offers Undo with what it changed; c.txt is open", async () => {
    await prompt.locator(".turn-changes", { hasText: "4 files changed" }).waitFor();
    await quickOpen("c.txt");
  });
  await rig.step("undo the turn: the files on disk are as before it", async () => {
    await prompt.locator("button.undo-turn").click();
    await waitFor(() => textOf("a.txt") === "one\n" && textOf("b.txt") === "two\n", "a.txt and b.txt back", STEP_MS);
    await waitFor(() => textOf("c.txt") === undefined && textOf("notes.md") === undefined, "c.txt and notes.md gone", STEP_MS);
  });
  await rig.step("a notification says what was restored and removed", async () => {
    await notification("Undid “Tidy the project”: restored a.txt, b.txt; removed c.txt, notes.md.").waitFor();
    await rig.screenshot("e2e-undo");
  });
  await rig.step("the chat marks the turn undone", async () => {
    await prompt.locator(".turn-undone").waitFor();
    assert.ok(await prompt.evaluate((node) => node.classList.contains("undone")));
    assert.equal(await prompt.locator("button.undo-turn").count(), 0);
    assert.ok(await chat.locator('[data-tool-call-id="toolu_b"]').evaluate((node) => node.classList.contains("undone")), "the command's card is not undone");
    await chat.locator(".item.notice", { hasText: "Undid “Tidy the project”" }).waitFor();
  });
  await rig.step("the editors show the disk: c.txt's tab closed, a.txt's old text", async () => {
    await fileTab("c.txt").waitFor({ state: "detached" });
    await fileTab("a.txt").click();
    await waitFor(async () => {
      const text = await activeEditorText();
      return text.includes("one") && !text.includes("uno");
    }, "a.txt's editor to show its old text", STEP_MS);
  });
});

test("Show Checkpoints undoes the turn picked; then Undo Last Turn has nothing left", { timeout: 120_000 }, async () => {
  await rig.step("a new turn writes d.txt, from a conversation without the undone turn", async () => {
    await sendPrompt(chat, "Write d.txt");
    await chat.locator(".item.agent", { hasText: "Wrote d.txt." }).waitFor();
    await chat.locator(".item.user", { hasText: "Write d.txt" }).locator("button.undo-turn").waitFor();
    assert.equal(textOf("d.txt"), "delta\n");
    const requests = (await rig.model.requests()) as Array<{ messages: unknown[] }>;
    assert.equal(requests[3]!.messages.length, 1, "the model still got the undone turn");
  });
  await rig.step("pick the turn in Show Checkpoints", async () => {
    await rig.runCommand("Larik: Show Checkpoints");
    const row = rig.page.locator(".quick-input-list .monaco-list-row", { hasText: "Write d.txt" });
    await row.waitFor();
    assert.equal(await rig.page.locator(".quick-input-list .monaco-list-row").count(), 1);
    await row.click();
    await waitFor(() => textOf("d.txt") === undefined, "d.txt gone", STEP_MS);
    await notification("Undid “Write d.txt”: removed d.txt.").waitFor();
    await chat.locator(".item.user.undone", { hasText: "Write d.txt" }).waitFor();
  });
  await rig.step("Undo Last Turn: nothing left to undo", async () => {
    await rig.runCommand("Larik: Undo Last Turn");
    await notification("Nothing was undone: there is nothing to undo").waitFor();
  });
  assert.match(rig.extensionLog(), /→ \{[^\n]*"method":"_larik\/undo"[^\n]*"checkpointId":"cp-1"/, "no _larik/undo in the protocol trace");
});
