// The client side against the real `larik acp` and the mock model: the same SessionController
// the extension uses, with an editor host that reads and writes the disk.

import assert from "node:assert/strict";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import test, { type TestContext } from "node:test";
import { AgentProcess, resolveServerCommand } from "../../src/agentProcess";
import { EditorDiagnostics } from "../../src/editor/diagnostics";
import type { ReadTextFileRequest, WriteTextFileRequest } from "../../src/protocol/acp";
import type { DiagnosticsRequest } from "../../src/protocol/larik";
import { SessionController } from "../../src/session";
import { ResponseError } from "../../src/connection";
import { undoSummary } from "../../src/state/checkpoints";
import { placeHunks } from "../../src/state/hunks";
import { gitCommitAll, larikBinary, MockModel, Sandbox, stringsIn, waitFor, withTimeout, type ScenarioStep } from "../support/agent";
import { diagnosticAt, FakeLanguages } from "../support/fakeLanguages";

const TEN = "one\ntwo\nthree\nfour\nfive\nsix\nseven\neight\nnine\nten\n";

interface Run {
  sandbox: Sandbox;
  model: MockModel;
  agent: AgentProcess;
  controller: SessionController;
  host: { reads: ReadTextFileRequest[]; writes: WriteTextFileRequest[]; context: boolean; onWrite?: (params: WriteTextFileRequest) => void };
  file: (name: string) => string;
}

/** `files` go in the project, `homeFiles` in the agent's home; either may name folders. */
/** With `languages`, `_larik/diagnostics` is answered as the extension does, from that stand-in for the editor's servers. */
/** With `git`, the project is a git repository with its files committed. */
async function start(t: TestContext, responses: ScenarioStep[], files: Record<string, string> = {}, homeFiles: Record<string, string> = {}, languages?: FakeLanguages, options: { git?: boolean } = {}): Promise<Run> {
  const sandbox = new Sandbox();
  const write = (path: string, text: string) => {
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, text);
  };
  for (const [name, text] of Object.entries(files)) write(join(sandbox.project, name), text);
  for (const [name, text] of Object.entries(homeFiles)) write(join(sandbox.agentHome, name), text);
  if (options.git) gitCommitAll(sandbox.project);
  const model = await MockModel.start({ responses }, sandbox.root);
  const command = resolveServerCommand({ path: larikBinary(), args: ["acp"], env: sandbox.agentEnv(model.url) }, {}, { PATH: process.env.PATH ?? "" }, sandbox.project);
  const stderr: string[] = [];
  const agent = await AgentProcess.start(command, { onStderr: (l) => stderr.push(l) });
  const host = {
    reads: [] as ReadTextFileRequest[],
    writes: [] as WriteTextFileRequest[],
    context: false,
    onWrite: undefined as ((params: WriteTextFileRequest) => void) | undefined,
    async readTextFile(params: ReadTextFileRequest) {
      this.reads.push(params);
      return readFileSync(params.path, "utf8");
    },
    async writeTextFile(params: WriteTextFileRequest) {
      this.writes.push(params);
      writeFileSync(params.path, params.content);
      this.onWrite?.(params);
    },
    editorContext() {
      this.context = true;
      return { activeFile: join(sandbox.project, "a.txt"), selection: { path: join(sandbox.project, "a.txt"), startLine: 2, endLine: 2, text: "two\n" } };
    },
  };
  const editorDiagnostics = languages && new EditorDiagnostics(languages);
  // Added to the host itself, so that its methods' `this` stays the host the test drives.
  if (editorDiagnostics) Object.assign(host, { diagnostics: (params: DiagnosticsRequest, signal: AbortSignal) => editorDiagnostics.answer(params, signal) });
  const controller = new SessionController(host, {
    cwd: sandbox.project,
    clientVersion: "0.0.0-test",
    sendEditorContext: () => true,
    log: () => {},
  });
  t.after(async () => {
    editorDiagnostics?.dispose();
    await agent.stop();
    await model.stop();
    sandbox.remove();
  });
  await controller.connect(agent.connection);
  return { sandbox, model, agent, controller, host, file: (name) => join(sandbox.project, name) };
}

const readThenEdit = (oldString: string, newString: string): ScenarioStep[] => [
  { text: "Reading first.", tool_calls: [{ id: "toolu_1", name: "read", input: { path: "a.txt" } }] },
  { tool_calls: [{ id: "toolu_2", name: "edit", input: { path: "a.txt", old_string: oldString, new_string: newString } }] },
  { text: "All done." },
];

test("allowed edit: the permission carries the diff, the file changes, the reply streams", { timeout: 60_000 }, async (t) => {
  const run = await start(t, readThenEdit("two\n", "TWO\n"), { "a.txt": TEN });
  const turn = run.controller.prompt("Change two to TWO in a.txt");
  const pending = await waitFor(() => run.controller.permissions.current, "the permission request");
  assert.deepEqual(
    pending.request.options.map((o) => `${o.optionId}:${o.kind}`),
    ["allow_once:allow_once", "allow_always:allow_always", "reject_once:reject_once"],
  );
  assert.equal(pending.diff?.path, run.file("a.txt"));
  assert.equal(pending.diff?.oldText, TEN);
  assert.equal(pending.diff?.newText, TEN.replace("two\n", "TWO\n"));
  assert.equal(run.controller.transcript.session.status, "waiting");
  run.controller.permissions.answer(pending.key, { optionId: "allow_once" });
  assert.equal(await turn, "end_turn");
  assert.equal(readFileSync(run.file("a.txt"), "utf8"), TEN.replace("two\n", "TWO\n"));
  const items = run.controller.transcript.items;
  const agentText = items.filter((i) => i.type === "agent").map((i) => ("text" in i ? i.text : "")).join("|");
  assert.equal(agentText, "Reading first.|All done.");
  const tools = items.filter((i) => i.type === "tool");
  assert.deepEqual(tools.map((i) => i.type === "tool" && [i.title, i.status]), [["Read a.txt", "completed"], ["Edit a.txt", "completed"]]);
});

test("rejected edit with a reason: the file is unchanged and the model is told", { timeout: 60_000 }, async (t) => {
  const run = await start(t, readThenEdit("three\n", "3\n"), { "a.txt": TEN });
  const turn = run.controller.prompt("Change three");
  const pending = await waitFor(() => run.controller.permissions.current, "the permission request");
  run.controller.permissions.answer(pending.key, { optionId: "reject_once", feedback: "keep words, not digits" });
  assert.equal(await turn, "end_turn");
  assert.equal(readFileSync(run.file("a.txt"), "utf8"), TEN);
  const requests = await run.model.requests();
  assert.equal(requests.length, 3);
  assert.ok([...stringsIn(requests[2])].some((s) => s.includes("keep words, not digits")), "the feedback did not reach the model");
  const edit = run.controller.transcript.items.find((i) => i.type === "tool" && i.title === "Edit a.txt");
  assert.ok(edit && edit.type === "tool" && edit.status === "failed", JSON.stringify(edit));
});

test("the editor's own diagnostics: the edit's result names the problem it brought, not the file's old ones", { timeout: 60_000 }, async (t) => {
  const app = 'def greet(name: str) -> str:\n    return "hi " + name\n\n\nprint(greet("x"))\nprint(missing_name)\n';
  const languages = new FakeLanguages();
  const run = await start(
    t,
    [
      { tool_calls: [{ id: "r1", name: "read", input: { path: "app.py" } }] },
      { tool_calls: [{ id: "e1", name: "edit", input: { path: "app.py", old_string: 'print(greet("x"))', new_string: 'print(gret("x"))' } }] },
      { text: "Done." },
    ],
    { "app.py": app },
    {},
    languages,
  );
  const path = run.file("app.py");
  const already = diagnosticAt(5, 6, '"missing_name" is not defined', 0, "Pylance");
  // The stand-in server: what the file has before the prompt, and the new error once the text has `gret`, a moment later.
  languages.report(path, [already]);
  run.host.onWrite = (params) => {
    languages.edited(params.path);
    if (params.content.includes("gret")) setTimeout(() => languages.report(path, [already, diagnosticAt(4, 6, '"gret" is not defined', 0, "Pylance")]), 200);
  };
  const turn = run.controller.prompt("rename the call");
  const pending = await waitFor(() => run.controller.permissions.current, "the permission request");
  run.controller.permissions.answer(pending.key, { optionId: "allow_once" });
  assert.equal(await turn, "end_turn");
  const requests = await run.model.requests();
  assert.equal(requests.length, 3);
  const result = [...stringsIn(requests[2])].find((s) => s.includes("the editor reports"));
  assert.ok(result?.includes('the editor reports new problems in this file after the change:\nERROR 5:7 "gret" is not defined'), String(result));
  assert.ok(!result!.includes("missing_name"), `what the file had is not new: ${result}`);
});

test("cancel while the model hangs ends the turn as cancelled", { timeout: 60_000 }, async (t) => {
  const run = await start(t, [{ text: "Thinking about it", hang: true }]);
  const turn = run.controller.prompt("take your time");
  await waitFor(() => run.controller.transcript.items.some((i) => i.type === "agent"), "the first streamed text");
  run.controller.cancel();
  assert.equal(await turn, "cancelled");
  assert.equal(run.controller.transcript.session.status, "idle");
});

test("a command asks with the agent's own options, verbatim", { timeout: 60_000 }, async (t) => {
  // Outside the sandbox and off the agent's safe list, so that it asks.
  const run = await start(t, [{ tool_calls: [{ id: "toolu_1", name: "bash", input: { command: "touch made.txt", sandbox: false } }] }, { text: "ok" }]);
  const turn = run.controller.prompt("say hi");
  const pending = await waitFor(() => run.controller.permissions.current, "the permission request");
  assert.equal(pending.request.toolCall.kind, "execute");
  assert.ok(pending.request.options.every((o) => o.name.length > 0));
  assert.equal(pending.diff, undefined);
  run.controller.permissions.answer(pending.key, { optionId: "reject_once" });
  assert.equal(await turn, "end_turn");
  assert.equal(existsSync(run.file("made.txt")), false, "the rejected command ran");
});

test("per-hunk review: the agent sends hunks and applies only the accepted ones", { timeout: 60_000 }, async (t) => {
  const old = TEN;
  const run = await start(
    t,
    [
      { tool_calls: [{ id: "toolu_1", name: "read", input: { path: "a.txt" } }] },
      { tool_calls: [{ id: "toolu_2", name: "write", input: { path: "a.txt", content: old.replace("two\n", "TWO\n").replace("nine\n", "NINE\n") } }] },
      { text: "done" },
    ],
    { "a.txt": old },
  );
  assert.equal(run.controller.larik.hunkReview, true, "the agent does not advertise hunkReview");
  const turn = run.controller.prompt("uppercase two and nine");
  const pending = await waitFor(() => run.controller.permissions.current, "the permission request");
  assert.ok(pending.hunks, `no _meta.larik.hunks on the tool call: ${JSON.stringify(pending.request.toolCall._meta)}`);
  assert.equal(pending.hunks.length, 2);
  assert.ok(placeHunks(pending.diff!.oldText, pending.diff!.newText, pending.hunks), "the hunks do not match the diff");
  run.controller.permissions.answer(pending.key, { optionId: "allow_once", acceptedHunks: [1] });
  await turn;
  assert.equal(readFileSync(run.file("a.txt"), "utf8"), old.replace("nine\n", "NINE\n"));
  const requests = await run.model.requests();
  assert.ok([...stringsIn(requests.at(-1))].some((s) => /hunk/i.test(s)), "the model was not told which hunks were kept");
});

test("client fs: reads and writes go through fs/read_text_file and fs/write_text_file", { timeout: 60_000 }, async (t) => {
  const run = await start(t, readThenEdit("two\n", "TWO\n"), { "a.txt": TEN });
  const turn = run.controller.prompt("edit");
  const pending = await waitFor(() => run.controller.permissions.current, "the permission request");
  run.controller.permissions.answer(pending.key, { optionId: "allow_once" });
  await turn;
  assert.ok(run.host.reads.some((r) => r.path === run.file("a.txt")), "no fs/read_text_file for a.txt");
  assert.ok(run.host.writes.some((w) => w.path === run.file("a.txt") && w.content === TEN.replace("two\n", "TWO\n")), "no fs/write_text_file for a.txt");
});

test("editor context reaches the model with the next prompt", { timeout: 60_000 }, async (t) => {
  const run = await start(t, [{ text: "I see it." }], { "a.txt": TEN });
  assert.equal(run.controller.larik.editorContext, true, "the agent does not advertise editorContext");
  await run.controller.prompt("what is selected?");
  assert.ok(run.host.context, "the extension did not send the context");
  const requests = await run.model.requests();
  assert.ok([...stringsIn(requests[0])].some((s) => s.includes("a.txt")), "the model request does not mention the active file");
});

test("modes: session/new lists them and session/set_mode switches", { timeout: 60_000 }, async (t) => {
  const run = await start(t, []);
  const mode = run.controller.transcript.session.mode;
  assert.ok(mode, "session/new returned no modes");
  assert.deepEqual(mode.options.map((o) => o.id).sort(), ["accept-edits", "default", "plan", "yolo"]);
  await run.controller.setMode("plan");
  assert.equal(run.controller.transcript.session.mode?.current, "plan");
});

test("config options: the model picker switches through session/set_config_option", { timeout: 60_000 }, async (t) => {
  const run = await start(t, []);
  const model = run.controller.transcript.session.model;
  assert.ok(model && model.options.length > 0, "session/new returned no model config option");
  await run.controller.setModel(model.options.at(-1)!.id);
  assert.equal(run.controller.transcript.session.model?.current, model.options.at(-1)!.id);
});

test("session history: session/list shows the last session and session/load replays it", { timeout: 60_000 }, async (t) => {
  const run = await start(t, [{ text: "first answer" }]);
  await run.controller.prompt("first question");
  const first = run.controller.sessionId!;
  await run.controller.newSession();
  assert.equal(run.controller.canLoadSessions, true, "the agent does not advertise loadSession and session list");
  const sessions = await run.controller.listSessions();
  assert.ok(sessions.some((s) => s.sessionId === first));
  await run.controller.loadSession(first);
  const texts = run.controller.transcript.items.map((i) => ("text" in i ? i.text : ""));
  assert.deepEqual(texts, ["first question", "first answer"]);
});

test("slash commands: the built-ins, the user's skills and the project's commands with their hints, after new, /clear and load", { timeout: 60_000 }, async (t) => {
  const skill = "---\ndescription: Review a change for correctness, tests and style\nargument-hint: [path or branch]\n---\nReview $ARGUMENTS.\n";
  const run = await start(
    t,
    [{ when: "Commit: tidy", text: "Committed." }],
    { ".claude/commands/commit.md": "---\ndescription: Create a git commit from the staged changes\n---\nCommit: $ARGUMENTS\n", ".claude/commands/git/recent.md": "Summarize what changed in the last commits\n" },
    { ".claude/skills/code-review/SKILL.md": skill },
  );
  const commands = () => run.controller.transcript.session.commands;
  const find = (name: string) => commands().find((c) => c.name === name);
  await waitFor(() => find("code-review"), "the user's skill in the commands");
  assert.deepEqual(find("code-review"), { name: "code-review", description: "Review a change for correctness, tests and style", hint: "[path or branch]" });
  assert.deepEqual(find("commit"), { name: "commit", description: "Create a git commit from the staged changes" });
  assert.equal(find("git:recent")?.description, "Summarize what changed in the last commits");
  for (const name of ["compact", "clear", "mode", "model", "mcp", "tasks"]) assert.ok(find(name), `no built-in ${name}`);
  assert.equal(find("mode")?.hint, "default, accept-edits, plan or yolo");
  // Run as the prompt: the model gets the body with the argument put in.
  await run.controller.prompt("/commit tidy");
  const last = [...stringsIn((await run.model.requests()).at(-1))];
  assert.ok(last.some((s) => s.includes("Commit: tidy")), "the command's body did not reach the model");
  // /clear reads the skills again and announces them again.
  writeFileSync(join(run.sandbox.agentHome, ".claude/skills/code-review/SKILL.md"), skill.replace("Review a change", "Audit a change"));
  await run.controller.prompt("/clear");
  await waitFor(() => find("code-review")?.description.startsWith("Audit a change"), "the edited skill after /clear");
  // A loaded session has its commands too.
  const id = run.controller.sessionId!;
  await run.controller.newSession();
  await run.controller.loadSession(id);
  await waitFor(() => find("commit"), "the commands of the loaded session");
});

test("usage: the agent reports context usage after a model call", { timeout: 60_000 }, async (t) => {
  const run = await start(t, [{ text: "hi" }]);
  await run.controller.prompt("hello");
  assert.ok(run.controller.transcript.session.usage, "no usage_update");
});

test("the agent exits when the editor closes its input", { timeout: 60_000 }, async (t) => {
  const run = await start(t, [{ text: "hi" }]);
  await run.controller.prompt("hello");
  run.agent.connection.close("the test closed the connection");
  run.agent.closeInput();
  await withTimeout(run.agent.exited, 5000, "larik acp to exit after the end of its input");
});

test("the plan: shown from plan updates only, before the prompt of a later call in the same response", { timeout: 60_000 }, async (t) => {
  const todos = [
    { content: "Read the code", status: "completed" },
    { content: "Fix the bug", status: "in_progress" },
    { content: "Run the tests", status: "pending" },
  ];
  const run = await start(
    t,
    [
      {
        tool_calls: [
          { id: "toolu_1", name: "todo", input: { todos } },
          { id: "toolu_2", name: "bash", input: { command: "python3 -m unittest -v", description: "Run the tests", sandbox: false } },
        ],
      },
      { text: "planned" },
    ],
    { "a.txt": TEN },
  );
  const turn = run.controller.prompt("plan it");
  const pending = await waitFor(() => run.controller.permissions.current, "the test run's permission request");
  // The plan is already there while the later call waits for its answer.
  assert.deepEqual(
    run.controller.transcript.session.plan.map((e) => [e.content, e.status]),
    todos.map((e) => [e.content, e.status]),
  );
  assert.equal(pending.request.toolCall.toolCallId, "toolu_2");
  assert.equal(optionName(pending, "allow_always"), "Always allow `bash(python3 -m unittest*)` in this project");
  run.controller.permissions.answer(pending.key, { optionId: "reject_once" });
  await turn;
  // The todo call itself never shows as a tool card: only the bash call does, saying what was decided.
  const tools = run.controller.transcript.items.flatMap((i) => (i.type === "tool" ? [[i.id, i.decision]] : []));
  assert.deepEqual(tools, [["tool:toolu_2", { text: "Rejected", allowed: false }]]);
  // Once the turn ended its plan is no longer pinned: it stays in the transcript with the turn.
  assert.deepEqual(run.controller.transcript.session.plan, []);
  assert.equal(run.controller.transcript.items.at(-1)?.type, "plan");
});

function optionName(pending: { request: { options: Array<{ kind: string; name: string }> } }, kind: string): string | undefined {
  return pending.request.options.find((o) => o.kind === kind)?.name;
}

test("subagents: each child under its task call, a child's edit asks in its own name, Stop ends one child and the turn goes on", { timeout: 60_000 }, async (t) => {
  const task = (id: string, type: string, description: string, prompt: string) => ({ id, name: "task", input: { subagent_type: type, description, prompt } });
  const run = await start(
    t,
    [
      { text: "Splitting this up.", tool_calls: [task("t1", "general-purpose", "fix alpha", "ALPHA-S: uppercase alpha.txt"), task("t2", "explore", "wait forever", "STUCK-S: wait")] },
      { when: "ALPHA-S", tool_calls: [{ id: "c1", name: "read", input: { path: "alpha.txt" } }] },
      { when: "ALPHA-S", tool_calls: [{ id: "c2", name: "edit", input: { path: "alpha.txt", old_string: "alpha\n", new_string: "ALPHA\n" } }] },
      { when: "ALPHA-S", text: "alpha fixed" },
      { when: "alpha fixed", text: "One fixed, one stopped." },
      // Last: the parent's last request names both tasks and must not take the stuck child's answer.
      { when: "STUCK-S", text: "", hang: true },
    ],
    { "alpha.txt": "alpha\n" },
  );
  const { controller } = run;
  const turn = controller.prompt("fix alpha and wait");
  const stuck = await waitFor(() => controller.subagents.views().find((v) => v.title === "explore: wait forever"), "the stuck child's announcement");
  assert.equal(stuck.toolCallId, "t2");
  assert.equal(stuck.canStop, true);
  const pending = await waitFor(() => controller.permissions.current, "the child's edit permission");
  assert.notEqual(pending.request.sessionId, controller.sessionId, "asked in the child's session");
  assert.equal(controller.subagentAsking(pending.request), "general-purpose: fix alpha");
  assert.equal(pending.diff?.newText, "ALPHA\n");
  controller.permissions.answer(pending.key, { optionId: "allow_once" });
  await waitFor(() => controller.subagents.views().find((v) => v.title === "general-purpose: fix alpha")?.phase === "done", "the alpha child done");
  assert.equal(controller.stopSubagent(stuck.sessionId), true);
  assert.equal(await withTimeout(turn, 30_000, "the turn"), "end_turn");
  assert.equal(readFileSync(run.file("alpha.txt"), "utf8"), "ALPHA\n");
  const views = Object.fromEntries(controller.subagents.views().map((v) => [v.title, v]));
  const alpha = views["general-purpose: fix alpha"]!;
  assert.deepEqual([alpha.toolCallId, alpha.phase, alpha.text], ["t1", "done", "alpha fixed"]);
  assert.deepEqual(alpha.tools.map((tool) => [tool.kind, tool.status]), [["read", "completed"], ["edit", "completed"]]);
  assert.equal(views["explore: wait forever"]?.phase, "stopped");
  // The session's own transcript holds the task calls, not the children's calls.
  const tools = controller.transcript.items.filter((i) => i.type === "tool").map((i) => i.id);
  assert.deepEqual(tools, ["tool:t1", "tool:t2"]);
  const last = controller.transcript.items.at(-1);
  assert.equal(last?.type === "agent" && last.text, "One fixed, one stopped.");
});

/** Answers every permission request of the run with allow once, as it comes. */
function allowEverything(t: TestContext, run: Run): void {
  const { permissions } = run.controller;
  const unsubscribe = permissions.onChange(() => {
    const current = permissions.current;
    if (current) queueMicrotask(() => permissions.answer(current.key, { optionId: "allow_once" }));
  });
  t.after(unsubscribe);
}

const TIDY = "sed -i 's/one/uno/' a.txt && rm b.txt && touch c.txt && printf 'x\\n' > d.txt";

test("checkpoints: a command's changed files show with their diffs; undoing the turn puts back what the write and the command did, keeps a hand edit, rewinds", { timeout: 60_000 }, async (t) => {
  const run = await start(
    t,
    [
      { tool_calls: [{ id: "toolu_w", name: "write", input: { path: "notes.md", content: "# Notes\n" } }] },
      { tool_calls: [{ id: "toolu_b", name: "bash", input: { command: TIDY, description: "tidy" } }] },
      { text: "Tidied." },
      { text: "Starting again." },
    ],
    { "a.txt": "one\n", "b.txt": "two\n", ".gitignore": "target/\n" },
    {},
    undefined,
    { git: true },
  );
  allowEverything(t, run);
  const { controller } = run;
  assert.equal(await controller.prompt("Tidy the project"), "end_turn");
  const bash = controller.transcript.items.find((i) => i.id === "tool:toolu_b");
  assert.ok(bash?.type === "tool", "no bash card");
  const changes = bash.content.find((c) => c.type === "changes");
  assert.ok(changes?.type === "changes", `no list of changed files: ${JSON.stringify(bash.content)}`);
  assert.deepEqual(
    changes.files.map((f) => [f.change, f.path, f.added, f.removed]),
    [["changed", run.file("a.txt"), 1, 1], ["deleted", run.file("b.txt"), 0, 1], ["added", run.file("c.txt"), 0, 0], ["added", run.file("d.txt"), 1, 0]],
  );
  // The diffs are not shown a second time beside the list, and each opens whole.
  assert.equal(bash.content.filter((c) => c.type === "diff").length, 0);
  const diffOf = (name: string) => controller.transcript.diffOf("toolu_b", changes.files.find((f) => f.path === run.file(name))!.diff!)?.diff;
  assert.deepEqual(diffOf("a.txt"), { path: run.file("a.txt"), oldText: "one\n", newText: "uno\n", change: "changed" });
  assert.deepEqual(diffOf("b.txt"), { path: run.file("b.txt"), oldText: "two\n", newText: "", change: "deleted" });

  const user = controller.transcript.items[0]!;
  assert.ok(user.type === "user" && user.checkpoint, `the turn has no checkpoint: ${JSON.stringify(user)}`);
  assert.deepEqual(user.checkpoint.files, ["a.txt", "b.txt", "c.txt", "d.txt", "notes.md"]);

  // A file of the turn changed by hand since: the undo leaves it and says so.
  writeFileSync(run.file("c.txt"), "mine\n");
  const undone = await controller.undo(user.checkpoint.id);
  assert.deepEqual([undone.restored.sort(), undone.removed.sort(), undone.kept], [["a.txt", "b.txt"], ["d.txt", "notes.md"], ["c.txt"]]);
  assert.equal(readFileSync(run.file("a.txt"), "utf8"), "one\n");
  assert.equal(readFileSync(run.file("b.txt"), "utf8"), "two\n");
  assert.equal(readFileSync(run.file("c.txt"), "utf8"), "mine\n");
  assert.ok(!existsSync(run.file("d.txt")) && !existsSync(run.file("notes.md")), "what the turn created is still there");
  const items = controller.transcript.items;
  assert.ok(items.slice(0, -1).every((i) => i.undone), "the turn is not marked undone");
  assert.equal(items[0]!.type === "user" && items[0]!.checkpoint, undefined);
  const notice = items.at(-1)!;
  assert.ok(notice.type === "notice" && !notice.undone);
  assert.equal(notice.text, undoSummary(undone));
  assert.match(notice.text, /^Undid “Tidy the project”: restored .*; removed .*; c\.txt changed by you since, kept\.$/);

  // The agent forgot the turn: the next request starts afresh, and there is nothing left to undo.
  await controller.prompt("Start again");
  const requests = await run.model.requests();
  assert.equal((requests[3] as { messages: unknown[] }).messages.length, 1);
  await assert.rejects(controller.undo(), (error) => error instanceof ResponseError && error.code === -32602 && /nothing to undo/.test(error.message));
});

test("checkpoints: /undo typed as a prompt marks the turn undone; a loaded session's turns keep their Undo", { timeout: 60_000 }, async (t) => {
  const run = await start(
    t,
    [
      { tool_calls: [{ id: "toolu_1", name: "write", input: { path: "one.txt", content: "1\n" } }] },
      { text: "Wrote one." },
      { tool_calls: [{ id: "toolu_2", name: "write", input: { path: "two.txt", content: "2\n" } }] },
      { text: "Wrote two." },
      { text: "Nothing to do." },
    ],
    { "a.txt": "a\n" },
    {},
    undefined,
    { git: true },
  );
  allowEverything(t, run);
  const { controller } = run;
  await controller.prompt("Write one");
  await controller.prompt("Write two");
  await controller.prompt("Just say something");
  const turns = () => controller.transcript.turns();
  assert.deepEqual(turns().map((turn) => [turn.text, turn.checkpoint?.id]), [["Write one", "cp-1"], ["Write two", "cp-2"], ["Just say something", undefined]]);
  // The agent's own command, as a client without the extension methods would send it.
  await controller.prompt("/undo");
  assert.ok(!existsSync(run.file("two.txt")) && existsSync(run.file("one.txt")));
  assert.deepEqual(turns().map((turn) => [turn.text, turn.checkpoint?.id, turn.undone ?? false]), [
    ["Write one", "cp-1", false],
    ["Write two", undefined, true],
    ["Just say something", undefined, true],
    ["/undo", undefined, false],
  ]);
  // The same session loaded again: its turn that changed a file can still be undone.
  const id = controller.sessionId!;
  await controller.newSession();
  await controller.loadSession(id);
  const loaded = turns().find((turn) => turn.text === "Write one");
  assert.equal(loaded?.checkpoint?.id, "cp-1", JSON.stringify(turns()));
});
