// Undo per turn in the editor, under the vscode stub: asking before undoing later turns too, the
// checkpoint picker, the notification, the editor brought in line with the disk (tabs of removed
// files closed, stale documents reverted, unsaved ones left and named), and a call's diff opened.

import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import test, { type TestContext } from "node:test";
import * as vscode from "vscode";
import { ResponseError } from "../../src/connection";
import { reflectDisk } from "../../src/editor/diskChanges";
import type { CheckpointInfo, UndoResponse } from "../../src/protocol/larik";
import type { SessionController } from "../../src/session";
import { ChangeDiffs, changeTitle } from "../../src/views/changeDiffs";
import { TurnUndo, undoMessage } from "../../src/views/undo";
import type { TurnRef } from "../../src/state/checkpoints";
import { Sandbox } from "../support/agent";

const stub = (vscode as unknown as { __stub: any }).__stub;
const log = { info() {}, warn() {}, error() {} } as unknown as vscode.LogOutputChannel;

const checkpoint = (id: string, prompt: string, files = ["a.txt"]): CheckpointInfo => ({ id, createdAt: "2026-12-02T06:30:00Z", prompt, files, skipped: [] });

/** A session that lists `list` and undoes with `undo`, recording what it was asked. */
function fakeSession(list: CheckpointInfo[] | undefined, undo: (id?: string) => Promise<UndoResponse>, cwd = "/p", turns: TurnRef[] = []) {
  const asked: Array<string | undefined> = [];
  const controller = {
    cwd,
    transcript: { turns: () => turns },
    listCheckpoints: async () => list,
    undo: (id?: string) => {
      asked.push(id);
      return undo(id);
    },
  } as unknown as SessionController;
  return { controller, asked };
}

const answered = (checkpointId: CheckpointInfo, restored: string[] = ["a.txt"], removed: string[] = [], kept: string[] = []): UndoResponse => ({ checkpoint: checkpointId, restored, removed, kept });

/** Swaps a property of the stub's `vscode` for the test's length. */
function replace<T extends object, K extends keyof T>(t: TestContext, target: T, key: K, value: T[K]): void {
  const before = target[key];
  target[key] = value;
  t.after(() => {
    target[key] = before;
  });
}

test("the chat's Undo of the latest turn undoes it without asking and says what it did", async () => {
  stub.reset();
  const list = [checkpoint("cp-1", "Tidy the project")];
  const { controller, asked } = fakeSession(list, async () => answered(list[0]!, ["a.txt", "b.txt"], ["c.txt"], ["d.txt"]));
  await new TurnUndo(controller, log).turn("cp-1");
  assert.deepEqual(asked, ["cp-1"]);
  assert.deepEqual(
    stub.messages.map((m: any) => [m.level, m.message]),
    [["info", "Undid “Tidy the project”: restored a.txt, b.txt; removed c.txt; d.txt changed by you since, kept."]],
  );
});

test("undoing an earlier turn asks first, naming how many later turns go with it", async () => {
  stub.reset();
  const list = [checkpoint("cp-1", "One"), checkpoint("cp-2", "Two"), checkpoint("cp-3", "Three")];
  const { controller, asked } = fakeSession(list, async () => answered(list[0]!));
  const undo = new TurnUndo(controller, log);
  await undo.turn("cp-1");
  const question = stub.messages[0];
  assert.equal(question.level, "warning");
  assert.equal(question.message, "Undo “One” and the 2 turns after it?");
  assert.match(question.items[0].detail, /^These go too: “Two”, “Three”\./);
  assert.equal(question.items[0].modal, true);
  assert.deepEqual(asked, [], "undone without an answer");
  stub.answerMessage = (_message: string, items: unknown[]) => items.find((i) => i === "Undo");
  await undo.turn("cp-2");
  assert.match(stub.messages.at(-2).message, /^Undo “Two” and the turn after it/);
  assert.deepEqual(asked, ["cp-2"]);
  // A checkpoint the agent no longer has.
  await undo.turn("cp-9");
  assert.match(stub.messages.at(-1).message, /can no longer be undone/);
});

test("undoing a turn asks first when later turns that changed nothing go with it, and says which", async () => {
  stub.reset();
  const list = [checkpoint("cp-1", "Fix calc.py")];
  const turns: TurnRef[] = [
    { id: "u1", text: "Fix calc.py", checkpoint: { id: "cp-1", createdAt: "2026-12-02T06:30:00Z", files: ["calc.py"] } },
    { id: "u2", text: "Explain the fix" },
    { id: "u0", text: "Gone already", undone: true },
  ];
  const { controller, asked } = fakeSession(list, async () => answered(list[0]!), "/p", turns);
  const undo = new TurnUndo(controller, log);
  await undo.turn("cp-1");
  assert.equal(stub.messages[0].message, "Undo “Fix calc.py” and the turn after it?");
  assert.match(stub.messages[0].items[0].detail, /^These go too: “Explain the fix”\./);
  assert.deepEqual(asked, [], "nothing rewound without an answer");
  // "Undo Last Turn" asks the same.
  await undo.last();
  assert.equal(stub.messages.at(-1).message, "Undo “Fix calc.py” and the turn after it?");
  assert.deepEqual(asked, []);
  stub.answerMessage = (_message: string, items: unknown[]) => items.find((i) => i === "Undo");
  await undo.last();
  assert.deepEqual(asked, ["cp-1"]);
});

test("Show Checkpoints lists the turns newest first; the one picked is undone", async (t) => {
  stub.reset();
  const list = [checkpoint("cp-1", "One", ["a.txt"]), checkpoint("cp-2", "Two\nmore", ["b.txt", "c.txt"])];
  const { controller, asked } = fakeSession(list, async (id) => answered(list.find((c) => c.id === id)!));
  let offered: any[] = [];
  let options: any;
  replace(t, vscode.window as any, "showQuickPick", async (items: any[], given: any) => {
    offered = items;
    options = given;
    return items[0];
  });
  await new TurnUndo(controller, log).pick();
  assert.deepEqual(offered.map((i) => [i.label, i.detail]), [["Two…", "2 files: b.txt, c.txt"], ["One", "1 file: a.txt"]]);
  assert.match(offered[0].description, /^cp-2 · /);
  assert.match(options.placeHolder, /Undo back to before a turn/);
  assert.deepEqual(asked, ["cp-2"]);
});

test("nothing to undo, no checkpoints, an agent without them: said in words", async () => {
  stub.reset();
  const nothing = fakeSession([], async () => {
    throw new ResponseError(-32602, "there is nothing to undo: no turn of this session changed a file");
  });
  await new TurnUndo(nothing.controller, log).last();
  await new TurnUndo(nothing.controller, log).pick();
  await new TurnUndo(fakeSession(undefined, async () => answered(checkpoint("cp-1", "x"))).controller, log).pick();
  assert.deepEqual(stub.messages.map((m: any) => m.message), [
    "Nothing was undone: there is nothing to undo: no turn of this session changed a file.",
    "No checkpoints: no turn of this session has changed a file yet.",
    "This agent keeps no checkpoints: it cannot undo turns.",
  ]);
});

test("the notification also names what checkpoints left out and the unsaved documents left in the editor", () => {
  const undone = { ...answered({ ...checkpoint("cp-1", "Build"), skipped: ["target/"] }, ["a.txt"]) };
  assert.equal(undoMessage(undone, ["a.txt"]), "Undid “Build”: restored a.txt. Not covered by checkpoints: target/. Unsaved changes to a.txt are left in the editor.");
});

/** An open document of `path` with `text`, dirty or not. */
function openDocument(path: string, text: string, isDirty = false) {
  return { uri: vscode.Uri.file(path), isDirty, getText: () => text };
}

test("after an undo the editor shows the disk: removed files' tabs close, stale documents are reverted, unsaved ones are left", async (t) => {
  stub.reset();
  const sandbox = new Sandbox();
  t.after(() => sandbox.remove());
  const file = (name: string) => join(sandbox.project, name);
  for (const [name, text] of [["fresh.txt", "one\n"], ["stale.txt", "one\n"], ["typed.txt", "one\n"], ["hidden.txt", "one\n"]]) writeFileSync(file(name!), text!);
  const tab = (name: string, isDirty = false) => ({ input: new vscode.TabInputText(vscode.Uri.file(file(name))), isDirty });
  const removedTab = tab("gone.txt");
  const unsavedGone = tab("gone-typed.txt", true);
  replace(t, vscode.window.tabGroups as any, "all", [{ tabs: [removedTab, unsavedGone, tab("stale.txt"), tab("typed.txt", true)] }]);
  const closed: unknown[] = [];
  replace(t, vscode.window.tabGroups as any, "close", async (tabs: unknown[]) => void closed.push(...tabs));
  const stale = openDocument(file("stale.txt"), "uno\n");
  replace(t, vscode.workspace as any, "textDocuments", [
    openDocument(file("fresh.txt"), "one\n"),
    stale,
    openDocument(file("typed.txt"), "mine\n", true),
    // Open without a tab (the agent's write opened it): not brought into view.
    openDocument(file("hidden.txt"), "uno\n"),
  ]);
  const shown: unknown[] = [];
  replace(t, vscode.window as any, "showTextDocument", async (document: unknown) => void shown.push(document));
  const unsaved = await reflectDisk({ restored: ["fresh.txt", "stale.txt", "typed.txt", "hidden.txt"].map(file), removed: ["gone.txt", "gone-typed.txt"].map(file) }, 20);
  assert.deepEqual(closed, [removedTab]);
  assert.deepEqual(unsaved.sort(), [file("gone-typed.txt"), file("typed.txt")]);
  assert.deepEqual(shown, [stale]);
  assert.ok(stub.executed.some((e: any) => e.id === "workbench.action.files.revert"), "the stale document was not reverted");
});

test("a call's diff opens in the diff editor, its sides from the call's texts, titled by the change", async () => {
  stub.reset();
  const diffs = new ChangeDiffs();
  await diffs.open("toolu_b", 1, { path: "/p/b.txt", oldText: "two\n", newText: "", change: "deleted" }, "tidy");
  const call = stub.executed.find((e: any) => e.id === "vscode.diff");
  const [before, after, title] = call.args;
  assert.equal(title, "b.txt (deleted by “tidy”)");
  assert.deepEqual([before.scheme, after.scheme, before.path], ["larik-before", "larik-after", "/p/b.txt"]);
  assert.equal(stub.contentProviders.get("larik-before").provideTextDocumentContent(before), "two\n");
  assert.equal(stub.contentProviders.get("larik-after").provideTextDocumentContent(after), "");
  assert.equal(changeTitle({ path: "/p/a.txt", oldText: "one\n", newText: "uno\n", change: "changed" }, "tidy"), "a.txt: before ↔ after “tidy”");
  diffs.dispose();
  assert.equal(stub.contentProviders.size, 0);
});
