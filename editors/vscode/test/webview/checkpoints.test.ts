// Undo per turn and a command's changed files in the chat webview (headless Chromium, see
// test/support/chatPage.ts): a turn that changed files offers Undo between turns only, an undone
// turn is dimmed and says so, a command's card lists its files with their marks, and a file (or an
// edit's diff header) opens its diff.

import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import type { SessionView, TranscriptItem } from "../../src/webview/messages";
import { open, SESSION, snapshot, startChatPages, stopChatPages } from "../support/chatPage";

before(startChatPages);
after(stopChatPages);

const IN_PROJECT: SessionView = { ...SESSION, cwd: "/p" };

const PROMPT: TranscriptItem = { type: "user", id: "u1", text: "Tidy the project", checkpoint: { id: "cp-1", createdAt: "2026-12-02T06:30:00Z", files: ["a.txt", "b.txt", "c.txt"] } };
const ANSWER: TranscriptItem = { type: "agent", id: "a1", text: "Tidied." };
const TIDY: TranscriptItem = {
  type: "tool",
  id: "tool:toolu_b",
  title: "tidy",
  kind: "execute",
  status: "completed",
  locations: [],
  content: [
    { type: "text", text: "```sh\n$ sed -i 's/one/uno/' a.txt && rm b.txt && touch c.txt\n```" },
    {
      type: "changes",
      files: [
        { path: "/p/a.txt", change: "changed", added: 1, removed: 1, diff: 0 },
        { path: "/p/b.txt", change: "deleted", added: 0, removed: 1, diff: 1 },
        { path: "/p/<img src=x>.png", change: "added", added: 0, removed: 0 },
        { path: "/p/c.txt", change: "added", added: 0, removed: 0, diff: 2 },
      ],
    },
  ],
};

test("a turn that changed files says how many and offers Undo between turns; Undo posts its checkpoint", async () => {
  const { page, problems, send, posted, waitPosted } = await open();
  await waitPosted("ready");
  await send(snapshot([PROMPT, TIDY, ANSWER], IN_PROJECT));
  const row = page.locator('[data-id="u1"] .turn-changes');
  await row.waitFor();
  assert.equal(await row.locator(".turn-files").textContent(), "3 files changed");
  assert.equal(await row.locator(".turn-files").getAttribute("title"), "a.txt\nb.txt\nc.txt");
  const undo = row.locator("button.undo-turn");
  assert.equal(await undo.textContent(), "Undo");
  assert.equal(await undo.isEnabled(), true);
  // While a turn runs the agent could not undo: the button waits.
  await send({ type: "session", session: { ...IN_PROJECT, status: "working" } });
  await page.waitForFunction(() => (document.querySelector("button.undo-turn") as HTMLButtonElement).disabled);
  await send({ type: "session", session: IN_PROJECT });
  await page.waitForFunction(() => !(document.querySelector("button.undo-turn") as HTMLButtonElement).disabled);
  await undo.click();
  assert.deepEqual((await posted()).filter((m) => m.type === "undo"), [{ type: "undo", checkpointId: "cp-1" }]);
  assert.equal(await undo.isEnabled(), false, "a second click would undo again");
  // A turn without a checkpoint has no such row.
  await send({ type: "item", item: { type: "user", id: "u2", text: "Explain" } });
  await page.locator('[data-id="u2"] .bubble').waitFor();
  assert.equal(await page.locator('[data-id="u2"] .turn-changes').count(), 0);
  assert.deepEqual(problems, []);
  await page.close();
});

test("an undone turn and what followed it are dimmed; the prompt says it was undone, with no Undo", async () => {
  const { page, send, waitPosted } = await open();
  await waitPosted("ready");
  await send(snapshot([PROMPT, TIDY, ANSWER], IN_PROJECT));
  await page.locator("button.undo-turn").waitFor();
  const { checkpoint: _gone, ...prompt } = PROMPT as Extract<TranscriptItem, { type: "user" }>;
  for (const item of [{ ...prompt, undone: true }, { ...TIDY, undone: true }, { ...ANSWER, undone: true }] as TranscriptItem[]) await send({ type: "item", item });
  await send({ type: "item", item: { type: "notice", id: "n1", severity: "info", text: "Undid “Tidy the project”: restored a.txt, b.txt; removed c.txt." } });
  const user = page.locator('[data-id="u1"]');
  await user.locator(".turn-undone").waitFor();
  assert.equal(await user.locator(".turn-undone").textContent(), "Undone: its files went back, and Larik forgot this turn.");
  assert.equal(await page.locator("button.undo-turn").count(), 0);
  assert.deepEqual(await page.locator(".item.undone").evaluateAll((nodes) => nodes.map((n) => n.getAttribute("data-id"))), ["u1", "tool:toolu_b", "a1"]);
  const opacity = (selector: string) => page.locator(selector).evaluate((node) => Number(getComputedStyle(node).opacity));
  assert.ok((await opacity('[data-id="u1"] .bubble')) < 1, "the undone prompt is not dimmed");
  assert.ok((await opacity('[data-id="a1"] .markdown')) < 1, "the undone answer is not dimmed");
  assert.equal(await opacity('[data-id="u1"] .turn-undone'), 1, "the note itself is dimmed");
  assert.equal(await page.locator('[data-id="n1"]').evaluate((n) => n.classList.contains("undone")), false);
  await page.close();
});

test("a command's card lists the files it changed with their marks; a file opens its diff, as an edit's header does", async () => {
  const { page, problems, send, posted, waitPosted } = await open();
  await waitPosted("ready");
  const edit: TranscriptItem = {
    type: "tool",
    id: "tool:toolu_e",
    title: "Edit d.txt",
    kind: "edit",
    status: "completed",
    locations: [],
    content: [{ type: "diff", path: "/p/d.txt", added: 1, removed: 1, isNew: false, truncated: false, diff: 0, preview: [{ kind: "removed", text: "d" }, { kind: "added", text: "D" }] }],
  };
  await send(snapshot([PROMPT, TIDY, edit], IN_PROJECT));
  const card = page.locator('[data-tool-call-id="toolu_b"]');
  await card.locator(".tool-changes").waitFor();
  assert.equal(await card.locator(".changes-title").textContent(), "Files the command changed (4)");
  const rows = await card.locator("li.change").evaluateAll((nodes) =>
    nodes.map((n) => ({
      change: n.getAttribute("data-change"),
      mark: n.querySelector(".change-mark")?.textContent,
      name: n.querySelector(".diff-open, .change-path")?.textContent,
      link: n.querySelector(".diff-open") !== null,
      text: n.textContent,
    })),
  );
  assert.deepEqual(rows, [
    { change: "changed", mark: "M", name: "a.txt", link: true, text: "M a.txt changed +1 −1" },
    { change: "deleted", mark: "D", name: "b.txt", link: true, text: "D b.txt deleted +0 −1" },
    // No diff to open (a binary file); its name stays text.
    { change: "added", mark: "A", name: "<img src=x>.png", link: false, text: "A <img src=x>.png added" },
    { change: "added", mark: "A", name: "c.txt", link: true, text: "A c.txt added +0 −0" },
  ]);
  assert.equal(await card.locator("img").count(), 0);
  assert.equal(await card.locator('[data-change="deleted"] .diff-open').evaluate((n) => getComputedStyle(n).textDecorationLine), "line-through");
  // The command's own output is still there, once.
  assert.equal(await card.locator("pre.tool-output").count(), 1);
  await card.locator('[data-change="deleted"] .diff-open').click();
  await page.locator('[data-tool-call-id="toolu_e"] .diff-header .diff-open').click();
  assert.deepEqual((await posted()).filter((m) => m.type === "openDiff"), [
    { type: "openDiff", toolCallId: "toolu_b", index: 1 },
    { type: "openDiff", toolCallId: "toolu_e", index: 0 },
  ]);
  assert.deepEqual(problems, []);
  await page.close();
});

test("at the sidebar's default width a file's kind stays one word, and ignored build output is one counted line", async () => {
  const { page, problems, send, waitPosted } = await open();
  await page.setViewportSize({ width: 300, height: 700 });
  await waitPosted("ready");
  const tidy = TIDY as Extract<TranscriptItem, { type: "tool" }>;
  const changes = { ...tidy.content[1], ignored: { text: "14 files in `tests/__pycache__/` (9), `__pycache__/` (5)", count: 14 } } as (typeof tidy.content)[number];
  // Paths of every length, so some line ends fall where a kind label stands.
  const long = Array.from({ length: 24 }, (_, n) => ({ path: `/p/src/${"m".repeat(n + 10)}.py`, change: "added", added: 3, removed: 0, diff: 3 }));
  const withIgnored = { ...tidy, content: [tidy.content[0]!, { ...changes, files: [...(changes as any).files, ...long] } as any] } as TranscriptItem;
  await send(snapshot([PROMPT, withIgnored, ANSWER], IN_PROJECT));
  const card = page.locator('[data-tool-call-id="toolu_b"]');
  await card.locator(".tool-changes").waitFor();
  assert.equal(await card.locator(".changes-title").textContent(), "Files the command changed (42)");
  const ignored = card.locator("li.change-ignored");
  assert.equal(await ignored.textContent(), "· ignored by the project: 14 files in tests/__pycache__/ (9), __pycache__/ (5)");
  assert.deepEqual(await ignored.locator("code").allTextContents(), ["tests/__pycache__/", "__pycache__/"]);
  // Each kind label is on one line: its height is one line's.
  const heights = await card.locator(".change-kind").evaluateAll((nodes) => nodes.map((n) => n.getClientRects().length));
  assert.ok(heights.every((rects) => rects === 1), `a kind label broke across lines: ${heights}`);
  assert.deepEqual(problems, []);
  await page.close();
});
