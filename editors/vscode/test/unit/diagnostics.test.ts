// `_larik/diagnostics` from the editor's own servers: the conversion, the wait for a report newer
// than the file's last change, and when the answer is `null`. The editor's languages API is a
// fake the tests drive, standing in for the language servers.

import assert from "node:assert/strict";
import test from "node:test";
import { EditorDiagnostics, toWire } from "../../src/editor/diagnostics";
import { SessionController } from "../../src/session";
import { FakeAgent } from "../support/fakeAgent";
import { diagnosticAt, FakeLanguages } from "../support/fakeLanguages";

const at = diagnosticAt;
const ask = (path: string, waitMs = 3000) => ({ sessionId: "sess_1", path, waitMs });

test("conversion: 1-based positions, severities by name, the source when there is one", () => {
  assert.deepEqual(toWire(at(4, 6, '"gret" is not defined', 0, "Pylance")), { line: 5, character: 7, severity: "error", message: '"gret" is not defined', source: "Pylance" });
  assert.deepEqual(
    [1, 2, 3].map((s) => toWire(at(0, 0, "m", s)).severity),
    ["warning", "information", "hint"],
  );
  assert.deepEqual(toWire(at(0, 0, "m", 0)), { line: 1, character: 1, severity: "error", message: "m" });
  assert.equal(toWire({ range: { start: { line: 0, character: 0 } }, message: "no severity" }).severity, "error");
});

test("a file already reported on since its last change is answered at once", async () => {
  const fake = new FakeLanguages();
  const editor = new EditorDiagnostics(fake);
  fake.edited("/p/app.py");
  fake.report("/p/app.py", [at(5, 6, '"missing_name" is not defined', 0, "Pylance")]);
  const started = Date.now();
  const answer = await editor.answer(ask("/p/app.py", 5000));
  assert.ok(Date.now() - started < 1000, "it waited for nothing");
  assert.deepEqual(answer, { diagnostics: [{ line: 6, character: 7, severity: "error", message: '"missing_name" is not defined', source: "Pylance" }] });
  assert.deepEqual(fake.opened, ["file:///p/app.py"], "the document is opened so that the servers see it");
  editor.dispose();
});

test("after a change the answer waits for the next report on that file, not another one's", async () => {
  const fake = new FakeLanguages();
  const editor = new EditorDiagnostics(fake);
  fake.report("/p/app.py", [at(5, 6, "old")]);
  fake.edited("/p/app.py");
  let answered = false;
  const answer = editor.answer(ask("/p/app.py", 5000)).finally(() => (answered = true));
  await new Promise((r) => setTimeout(r, 50));
  fake.report("/p/other.py", [at(0, 0, "elsewhere")]);
  await new Promise((r) => setTimeout(r, 50));
  assert.equal(answered, false, "a report on another file ended the wait");
  fake.report("/p/app.py", [at(5, 6, "old"), at(4, 6, "new")]);
  assert.deepEqual((await answer).diagnostics?.map((d) => d.message), ["old", "new"]);
  editor.dispose();
});

test("no report within the wait: what the editor shows now", async () => {
  const fake = new FakeLanguages();
  const editor = new EditorDiagnostics(fake);
  fake.report("/p/app.py", [at(0, 0, "stale")]);
  fake.edited("/p/app.py");
  const started = Date.now();
  assert.deepEqual((await editor.answer(ask("/p/app.py", 100))).diagnostics?.map((d) => d.message), ["stale"]);
  assert.ok(Date.now() - started >= 90, "it did not wait");
  editor.dispose();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** How long `editor` takes to answer on `path` when nothing reports, in ms. */
async function quietAnswer(editor: EditorDiagnostics, path: string, waitMs: number): Promise<number> {
  const started = performance.now();
  await editor.answer(ask(path, waitMs));
  return performance.now() - started;
}

test("a language whose servers reported quickly after recent changes is waited for a few times that, not the whole wait", async () => {
  const fake = new FakeLanguages();
  const editor = new EditorDiagnostics(fake);
  // The edit that fixed app.ts: its server reported 20 ms after the change.
  fake.edited("/p/app.ts", "typescript");
  await sleep(20);
  fake.report("/p/app.ts", []);
  // The next edit leaves it clean, and the server says nothing, as TypeScript's does.
  fake.edited("/p/app.ts", "typescript");
  const quick = await quietAnswer(editor, "/p/app.ts", 5000);
  assert.ok(quick >= 700 && quick < 3500, `waited ${quick} ms, not about 750`);
  // Another file of the language is waited for as briefly; another language, the whole wait.
  fake.report("/p/util.ts", [at(0, 0, "old")]);
  fake.edited("/p/util.ts", "typescript");
  assert.ok((await quietAnswer(editor, "/p/util.ts", 5000)) < 3500, "the language's time did not count for its other files");
  fake.report("/p/app.py", [at(0, 0, "old")]);
  fake.edited("/p/app.py", "python");
  assert.ok((await quietAnswer(editor, "/p/app.py", 1200)) >= 1100, "python was waited for by typescript's time");
  editor.dispose();
});

test("a language is waited for three times its slowest recent report; opens and later reports are not timed", async () => {
  const fake = new FakeLanguages();
  const editor = new EditorDiagnostics(fake);
  // Opening loads the project: slow, and not a measure of an edit.
  fake.edited("/p/app.ts", "typescript", true);
  await sleep(300);
  fake.report("/p/app.ts", [at(0, 0, "old")]);
  fake.edited("/p/app.ts", "typescript");
  assert.ok((await quietAnswer(editor, "/p/app.ts", 1500)) >= 1400, "an open was timed");
  // Two edits reported on after 10 ms and 450 ms (a second report on the same text is not timed).
  fake.edited("/p/app.ts", "typescript");
  await sleep(10);
  fake.report("/p/app.ts", []);
  await sleep(600);
  fake.report("/p/app.ts", []);
  fake.edited("/p/app.ts", "typescript");
  await sleep(450);
  fake.report("/p/app.ts", []);
  fake.edited("/p/app.ts", "typescript");
  const waited = await quietAnswer(editor, "/p/app.ts", 5000);
  assert.ok(waited >= 1300 && waited < 3500, `waited ${waited} ms, not about 3 × 450`);
  editor.dispose();
});

test("a clean file that a server reported on is an empty list, not null", async () => {
  const fake = new FakeLanguages();
  const editor = new EditorDiagnostics(fake);
  fake.edited("/p/app.py");
  const answer = editor.answer(ask("/p/app.py"));
  fake.report("/p/app.py", []);
  assert.deepEqual(await answer, { diagnostics: [] });
  editor.dispose();
});

test("nothing ever reported on the file, before or during the wait: null", async () => {
  const fake = new FakeLanguages();
  const editor = new EditorDiagnostics(fake);
  fake.report("/p/other.py", [at(0, 0, "elsewhere")]);
  assert.deepEqual(await editor.answer(ask("/p/README.md", 100)), { diagnostics: null });
  // Diagnostics present from before the extension started count as reported.
  fake.diagnostics.set("file:///p/old.py", [at(1, 1, "from before")]);
  assert.deepEqual((await editor.answer(ask("/p/old.py", 50))).diagnostics?.map((d) => d.message), ["from before"]);
  editor.dispose();
});

test("a file answered null is answered null at once, until something reports on it", async () => {
  const fake = new FakeLanguages();
  const editor = new EditorDiagnostics(fake);
  assert.deepEqual(await editor.answer(ask("/p/notes.txt", 100)), { diagnostics: null });
  fake.edited("/p/notes.txt");
  const started = Date.now();
  assert.deepEqual(await editor.answer(ask("/p/notes.txt", 5000)), { diagnostics: null });
  assert.ok(Date.now() - started < 1000, "it waited again for a file nothing checks");
  // A server that started late: from its first report on, the file is waited for again.
  fake.report("/p/notes.txt", [at(0, 0, "late")]);
  fake.edited("/p/notes.txt");
  const answer = editor.answer(ask("/p/notes.txt", 5000));
  fake.report("/p/notes.txt", [at(0, 0, "after the change")]);
  assert.deepEqual((await answer).diagnostics?.map((d) => d.message), ["after the change"]);
  editor.dispose();
});

test("a cancelled request or a disposed editor ends the wait", async () => {
  const fake = new FakeLanguages();
  const editor = new EditorDiagnostics(fake);
  const cancel = new AbortController();
  const cancelled = editor.answer(ask("/p/a.py", 60_000), cancel.signal);
  const disposed = editor.answer(ask("/p/b.py", 60_000));
  cancel.abort();
  editor.dispose();
  const started = performance.now();
  assert.deepEqual(await cancelled, { diagnostics: null });
  assert.deepEqual(await disposed, { diagnostics: null });
  assert.ok(performance.now() - started < 1000, "the answers waited on");
  // Cancelled once the wait began, too.
  const later = new AbortController();
  const second = new EditorDiagnostics(fake);
  const waiting = second.answer(ask("/p/c.py", 60_000), later.signal);
  await sleep(50);
  later.abort();
  assert.deepEqual(await waiting, { diagnostics: null });
  assert.ok(performance.now() - started < 1000, "a cancel during the wait did not end it");
  second.dispose();
});

function controllerWith(diagnostics?: (params: any) => Promise<any>) {
  return new SessionController(
    { readTextFile: async () => "", writeTextFile: async () => {}, editorContext: () => undefined, ...(diagnostics ? { diagnostics } : {}) },
    { cwd: "/p", clientVersion: "0", sendEditorContext: () => false, log: () => {} },
  );
}

test("the session answers _larik/diagnostics from its host, or null without one", async () => {
  const asked: unknown[] = [];
  const withHost = controllerWith(async (params) => {
    asked.push(params);
    return { diagnostics: [{ line: 5, character: 7, severity: "error", message: "x" }] };
  });
  const fake = new FakeAgent().standard();
  await withHost.connect(fake.client);
  assert.deepEqual(await fake.agent.call("_larik/diagnostics", ask("/p/app.py")), { diagnostics: [{ line: 5, character: 7, severity: "error", message: "x" }] });
  assert.deepEqual(asked, [ask("/p/app.py")]);
  fake.close();

  const bare = new FakeAgent().standard();
  await controllerWith().connect(bare.client);
  assert.deepEqual(await bare.agent.call("_larik/diagnostics", ask("/p/app.py")), { diagnostics: null });
  bare.close();
});
