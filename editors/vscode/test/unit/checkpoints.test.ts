// Undo per turn and a command's changed files, without a process: which turn a checkpoint
// belongs to, the words an undo is told in, the readers of the agent's answers and change
// summaries, the transcript's marks, and the session's calls against a scripted agent.

import assert from "node:assert/strict";
import test from "node:test";
import { ResponseError } from "../../src/connection";
import type { ToolCallContent } from "../../src/protocol/acp";
import { checkpointsOf, commandChangesOf, undoResponseOf, type CheckpointInfo } from "../../src/protocol/larik";
import { SessionController } from "../../src/session";
import { placeLoaded, promptKey, reconcile, shortPrompt, turnOfCheckpoint, undoSummary, type TurnRef } from "../../src/state/checkpoints";
import { toolContentViews, Transcript } from "../../src/state/transcript";
import { FakeAgent } from "../support/fakeAgent";

const checkpoint = (id: string, prompt: string, createdAt = "2026-12-02T06:30:00Z", files = ["a.txt"]): CheckpointInfo => ({ id, createdAt, prompt, files, skipped: [] });
const held = (id: string, createdAt = "2026-12-02T06:30:00Z") => ({ id, createdAt, files: ["a.txt"] });
const START = Date.parse("2026-12-02T06:30:00Z");

test("reconcile: which turn the newest checkpoint belongs to, and which turns the agent undid", () => {
  const cases: Array<{ name: string; turns: TurnRef[]; list: CheckpointInfo[]; ended?: { id: string; text: string; startedAt: number }; expected: ReturnType<typeof reconcile> }> = [
    {
      name: "a new checkpoint with the turn's prompt is the turn's",
      turns: [{ id: "u1", text: "Tidy" }],
      list: [checkpoint("cp-1", "Tidy")],
      ended: { id: "u1", text: "Tidy", startedAt: START + 60_000 },
      expected: { assign: { id: "u1", checkpoint: held("cp-1") } },
    },
    {
      name: "the prompt as the agent keeps it: its first 200 characters",
      turns: [{ id: "u1", text: "x".repeat(300) }],
      list: [checkpoint("cp-1", "x".repeat(200))],
      ended: { id: "u1", text: "x".repeat(300), startedAt: START + 60_000 },
      expected: { assign: { id: "u1", checkpoint: held("cp-1") } },
    },
    {
      name: "a turn that changed nothing: the newest is an earlier turn's",
      turns: [{ id: "u1", text: "Tidy", checkpoint: held("cp-1") }, { id: "u2", text: "Tidy" }],
      list: [checkpoint("cp-1", "Tidy")],
      ended: { id: "u2", text: "Tidy", startedAt: START + 60_000 },
      expected: {},
    },
    {
      name: "another prompt (a command's expansion), taken since the turn started",
      turns: [{ id: "u1", text: "/commit tidy" }],
      list: [checkpoint("cp-1", "Create a git commit")],
      ended: { id: "u1", text: "/commit tidy", startedAt: START + 500 },
      expected: { assign: { id: "u1", checkpoint: held("cp-1") } },
    },
    {
      name: "another prompt, taken before the turn: not its own",
      turns: [{ id: "u1", text: "Tidy" }],
      list: [checkpoint("cp-1", "Something else")],
      ended: { id: "u1", text: "Tidy", startedAt: START + 5000 },
      expected: {},
    },
    {
      name: "a turn's checkpoint gone from the list: it was undone (a typed /undo), up to the turn that ended",
      turns: [{ id: "u1", text: "One", checkpoint: held("cp-1") }, { id: "u2", text: "Two", checkpoint: held("cp-2") }, { id: "u3", text: "/undo" }],
      list: [checkpoint("cp-1", "One")],
      ended: { id: "u3", text: "/undo", startedAt: START + 60_000 },
      expected: { undoneFrom: "u2" },
    },
    {
      name: "an id numbered again after an undo is another checkpoint: known by its time too",
      turns: [{ id: "u1", text: "One", checkpoint: held("cp-1") }, { id: "u2", text: "Two" }],
      list: [checkpoint("cp-1", "Two", "2026-12-02T06:31:00Z")],
      ended: { id: "u2", text: "Two", startedAt: START + 60_000 },
      expected: { undoneFrom: "u1", assign: { id: "u2", checkpoint: held("cp-1", "2026-12-02T06:31:00Z") } },
    },
    {
      name: "undone turns hold nothing",
      turns: [{ id: "u1", text: "One", undone: true }, { id: "u2", text: "Two" }],
      list: [],
      ended: { id: "u2", text: "Two", startedAt: START },
      expected: {},
    },
  ];
  for (const c of cases) assert.deepEqual(reconcile(c.turns, c.list, c.ended), c.expected, c.name);
});

test("placeLoaded: a loaded session's checkpoints on its turns by prompt, newest on the latest", () => {
  const turns: TurnRef[] = [
    { id: "u1", text: "Fix it" },
    { id: "u2", text: "Explain" },
    { id: "u3", text: "Fix it" },
    { id: "u4", text: "Add tests" },
  ];
  assert.deepEqual(placeLoaded(turns, [checkpoint("cp-1", "Fix it"), checkpoint("cp-2", "Add tests")]).map((p) => [p.id, p.checkpoint.id]), [["u3", "cp-1"], ["u4", "cp-2"]]);
  assert.deepEqual(placeLoaded(turns, [checkpoint("cp-1", "Fix it"), checkpoint("cp-2", "Fix it")]).map((p) => [p.id, p.checkpoint.id]), [["u1", "cp-1"], ["u3", "cp-2"]]);
  assert.deepEqual(placeLoaded(turns, [checkpoint("cp-1", "Not asked")]), []);
});

test("turnOfCheckpoint: the turn holding it, else the latest turn with its prompt", () => {
  const turns: TurnRef[] = [
    { id: "u1", text: "Tidy", checkpoint: held("cp-1") },
    { id: "u2", text: "Tidy" },
    { id: "u3", text: "Other", undone: true },
  ];
  assert.equal(turnOfCheckpoint(turns, checkpoint("cp-1", "Tidy"))?.id, "u1");
  assert.equal(turnOfCheckpoint(turns, checkpoint("cp-2", "Tidy"))?.id, "u2");
  assert.equal(turnOfCheckpoint(turns, checkpoint("cp-3", "Other")), undefined);
});

test("undoSummary: what was restored and removed, and what was changed by you since, kept", () => {
  const undone = (restored: string[], removed: string[], kept: string[], prompt = "Tidy the project") => ({ checkpoint: checkpoint("cp-1", prompt), restored, removed, kept });
  assert.equal(undoSummary(undone(["a.txt", "b.txt"], ["gen/d.rs"], [])), "Undid “Tidy the project”: restored a.txt, b.txt; removed gen/d.rs.");
  assert.equal(undoSummary(undone([], [], ["c.txt"])), "Undid “Tidy the project”: no file needed restoring; c.txt changed by you since, kept.");
  assert.equal(
    undoSummary(undone(["1", "2", "3", "4", "5", "6", "7", "8"], [], [])),
    "Undid “Tidy the project”: restored 1, 2, 3, 4, 5, 6 and 2 more.",
  );
  assert.equal(undoSummary(undone(["a"], [], [], "")), "Undid “cp-1”: restored a.");
  assert.equal(shortPrompt("first line\nsecond"), "first line…");
  assert.equal(shortPrompt("é".repeat(70)), `${"é".repeat(59)}…`);
  assert.equal(promptKey("😀".repeat(250)), "😀".repeat(200));
});

test("the agent's answers are read leniently", () => {
  assert.deepEqual(checkpointsOf({ checkpoints: [checkpoint("cp-1", "x"), { id: 3 }, { id: "cp-2", createdAt: "t", files: "a" }] }), [
    checkpoint("cp-1", "x"),
    { id: "cp-2", createdAt: "t", prompt: "", files: [], skipped: [] },
  ]);
  assert.deepEqual(checkpointsOf(null), []);
  assert.deepEqual(checkpointsOf({ checkpoints: {} }), []);
  assert.equal(undoResponseOf({ restored: [] }), undefined);
  assert.deepEqual(undoResponseOf({ checkpoint: checkpoint("cp-1", "x"), restored: ["a"], removed: "b" }), { checkpoint: checkpoint("cp-1", "x"), restored: ["a"], removed: [], kept: [] });
});

test("a command's change summary: the marks and paths, a path with a comma in it", () => {
  assert.deepEqual(commandChangesOf("Files the command changed: changed /p/a.txt, deleted /p/b.txt, added /p/c, d.txt"), {
    files: [
      { change: "changed", path: "/p/a.txt" },
      { change: "deleted", path: "/p/b.txt" },
      { change: "added", path: "/p/c, d.txt" },
    ],
  });
  // What the project ignores is one line of its own, counted.
  assert.deepEqual(commandChangesOf("Files the command changed: changed /p/calc.py\nIgnored by the project: 3 files in `__pycache__/` (3)"), {
    files: [{ change: "changed", path: "/p/calc.py" }],
    ignored: { text: "3 files in `__pycache__/` (3)", count: 3 },
  });
  assert.deepEqual(commandChangesOf("Files the command changed: \nIgnored by the project: 1 file in `./` (1)"), { files: [], ignored: { text: "1 file in `./` (1)", count: 1 } });
  assert.equal(commandChangesOf("```sh\n$ ls\n```"), undefined);
  assert.equal(commandChangesOf("Files the command changed: renamed /p/a"), undefined);
  assert.equal(commandChangesOf("Files the command changed: "), undefined);
});

const text = (t: string): ToolCallContent => ({ type: "content", content: { type: "text", text: t } });

test("a command's changed files: one list after its output, each file with its diff's counts and index", () => {
  const content: ToolCallContent[] = [
    text("```sh\n$ tidy\n```"),
    text("Files the command changed: changed /p/a.txt, deleted /p/b.txt, added /p/logo.png, added /p/c.txt"),
    { type: "diff", path: "/p/a.txt", oldText: "one\n", newText: "uno\n" },
    { type: "diff", path: "/p/b.txt", oldText: "two\nthree\n", newText: "" },
    { type: "diff", path: "/p/c.txt", newText: "" },
  ];
  const views = toolContentViews(content);
  assert.deepEqual(views.map((v) => v.type), ["text", "changes"]);
  assert.deepEqual(views[1], {
    type: "changes",
    files: [
      { change: "changed", path: "/p/a.txt", added: 1, removed: 1, diff: 0 },
      { change: "deleted", path: "/p/b.txt", added: 0, removed: 2, diff: 1 },
      // A binary file has no diff to open.
      { change: "added", path: "/p/logo.png", added: 0, removed: 0 },
      { change: "added", path: "/p/c.txt", added: 0, removed: 0, diff: 2 },
    ],
  });
  // An edit's diffs keep their own index; a terminal comes before the summary as text would.
  const edit = toolContentViews([{ type: "diff", path: "/p/a", oldText: "a\n", newText: "b\n" }, { type: "diff", path: "/p/b", newText: "x\n" }]);
  assert.deepEqual(edit.map((v) => v.type === "diff" && [v.diff, v.isNew]), [[0, false], [1, true]]);
  const terminal = toolContentViews([{ type: "terminal", terminalId: "t1" }, text("Files the command changed: added /p/x"), { type: "diff", path: "/p/x", newText: "1\n" }]);
  assert.deepEqual(terminal.map((v) => v.type), ["terminal", "changes"]);
});

test("the transcript keeps a call's diffs whole, with the summary's marks", () => {
  const transcript = new Transcript();
  transcript.apply({ sessionUpdate: "tool_call", toolCallId: "b1", title: "tidy", kind: "execute", rawInput: { command: "rm b.txt", description: "tidy" } });
  transcript.apply({
    sessionUpdate: "tool_call_update",
    toolCallId: "b1",
    status: "completed",
    content: [text("Files the command changed: deleted /p/b.txt"), { type: "diff", path: "/p/b.txt", oldText: "two\n", newText: "" }],
  });
  assert.deepEqual(transcript.diffOf("b1", 0), { diff: { path: "/p/b.txt", oldText: "two\n", newText: "", change: "deleted" }, title: "tidy" });
  assert.equal(transcript.diffOf("b1", 1), undefined);
  assert.equal(transcript.diffOf("b9", 0), undefined);
  transcript.reset();
  assert.equal(transcript.diffOf("b1", 0), undefined);
});

test("the transcript: a turn's checkpoint, and an undo marking it and what follows, up to a given item", () => {
  const transcript = new Transcript();
  const first = transcript.addUserMessage("One");
  transcript.apply({ sessionUpdate: "agent_message_chunk", content: { type: "text", text: "did one" } });
  const second = transcript.addUserMessage("Two");
  transcript.apply({ sessionUpdate: "agent_message_chunk", content: { type: "text", text: "did two" } });
  const third = transcript.addUserMessage("/undo");
  transcript.setCheckpoint(first, held("cp-1"));
  transcript.setCheckpoint(second, held("cp-2"));
  transcript.markUndone(second, third);
  assert.deepEqual(transcript.items.map((i) => [i.type, i.undone ?? false]), [["user", false], ["agent", false], ["user", true], ["agent", true], ["user", false]]);
  assert.deepEqual(transcript.turns().map((t) => [t.id, t.checkpoint?.id, t.undone ?? false]), [[first, "cp-1", false], [second, undefined, true], [third, undefined, false]]);
  // An undone turn takes no checkpoint; text after an undone message starts a new item.
  transcript.setCheckpoint(second, held("cp-9"));
  assert.equal(transcript.turns()[1]!.checkpoint, undefined);
  transcript.markUndone(first);
  transcript.apply({ sessionUpdate: "agent_message_chunk", content: { type: "text", text: "later" } });
  assert.deepEqual(transcript.items.map((i) => [i.type, i.undone ?? false]), [["user", true], ["agent", true], ["user", true], ["agent", true], ["user", true], ["agent", false]]);
});

function newController(): SessionController {
  return new SessionController(
    { readTextFile: async () => "", writeTextFile: async () => {}, editorContext: () => undefined },
    { cwd: "/p", clientVersion: "0", sendEditorContext: () => false, log: () => {} },
  );
}

test("the session: each turn asks for the checkpoints and places the newest; undo sends _larik/undo and marks the turns undone", async () => {
  const fake = new FakeAgent().standard();
  const list: CheckpointInfo[] = [];
  let clock = Date.parse("2026-12-02T06:30:00Z");
  fake.agent.onRequest("_larik/checkpoints", () => ({ checkpoints: list }));
  fake.agent.onRequest("session/prompt", (params) => {
    const prompt: string = params.prompt[0].text;
    if (prompt.startsWith("change")) list.push(checkpoint(`cp-${list.length + 1}`, prompt, new Date((clock += 1000)).toISOString()));
    fake.update(params.sessionId, { sessionUpdate: "agent_message_chunk", content: { type: "text", text: `done: ${prompt}` } });
    return { stopReason: "end_turn" };
  });
  const asked: unknown[] = [];
  fake.agent.onRequest("_larik/undo", (params) => {
    asked.push(params);
    const at = list.findIndex((c) => c.id === params.checkpointId);
    if (at === -1) throw new ResponseError(-32602, `there is no checkpoint \`${params.checkpointId}\`; /checkpoints lists them`);
    const [undone] = list.splice(at);
    return { checkpoint: undone, restored: ["a.txt"], removed: ["new.txt"], kept: [] };
  });
  const controller = newController();
  await controller.connect(fake.client);
  await controller.prompt("change one");
  await controller.prompt("just talk");
  await controller.prompt("change two");
  const turns = () => controller.transcript.turns().map((t) => [t.text, t.checkpoint?.id, t.undone ?? false]);
  assert.deepEqual(turns(), [["change one", "cp-1", false], ["just talk", undefined, false], ["change two", "cp-2", false]]);

  const undone = await controller.undo("cp-1");
  assert.deepEqual(asked, [{ sessionId: "sess_1", checkpointId: "cp-1" }]);
  assert.equal(undone.checkpoint.prompt, "change one");
  assert.deepEqual(turns(), [["change one", undefined, true], ["just talk", undefined, true], ["change two", undefined, true]]);
  const notice = controller.transcript.items.at(-1)!;
  assert.deepEqual([notice.type, notice.type === "notice" && notice.text, notice.undone], ["notice", "Undid “change one”: restored a.txt; removed new.txt.", undefined]);

  // The ids start again: the next turn's cp-1 is its own.
  await controller.prompt("change three");
  assert.deepEqual(turns().at(-1), ["change three", "cp-1", false]);
  // A checkpoint that is gone: the agent's error, and the chat asks what is left.
  const asks = fake.methods().filter((m) => m === "_larik/checkpoints").length;
  await assert.rejects(controller.undo("cp-7"), (error) => error instanceof ResponseError && error.code === -32602);
  assert.equal(fake.methods().filter((m) => m === "_larik/checkpoints").length, asks + 1);
  fake.close();
});

test("the session: an agent without checkpoints is asked once; no undo while a turn runs", async () => {
  const fake = new FakeAgent().standard();
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  fake.agent.onRequest("session/prompt", async (params) => {
    if (params.prompt[0].text === "wait") await gate;
    return { stopReason: "end_turn" };
  });
  const controller = newController();
  await controller.connect(fake.client);
  await controller.prompt("one");
  await controller.prompt("two");
  assert.equal(fake.methods().filter((m) => m === "_larik/checkpoints").length, 1);
  assert.equal(await controller.listCheckpoints(), undefined);
  await assert.rejects(controller.undo(), (error) => error instanceof ResponseError && error.code === -32601);
  const turn = controller.prompt("wait");
  await assert.rejects(controller.undo(), /a turn is running/);
  release();
  await turn;
  fake.close();
});
