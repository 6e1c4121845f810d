import assert from "node:assert/strict";
import test from "node:test";
import type { ReadTextFileRequest, WriteTextFileRequest } from "../../src/protocol/acp";
import { CLIENT_CAPABILITIES, SessionController, type EditorHost } from "../../src/session";
import { waitFor } from "../support/agent";
import { FakeAgent } from "../support/fakeAgent";

const OPTIONS = [
  { optionId: "allow_once", name: "Allow once", kind: "allow_once" },
  { optionId: "allow_always", name: "Always allow `edit` in this project", kind: "allow_always" },
  { optionId: "reject_once", name: "Reject", kind: "reject_once" },
];

function setup(options: { editorContext?: boolean } = {}) {
  const reads: ReadTextFileRequest[] = [];
  const writes: WriteTextFileRequest[] = [];
  const host: EditorHost & { reads: ReadTextFileRequest[]; writes: WriteTextFileRequest[] } = {
    reads,
    writes,
    async readTextFile(params) {
      reads.push(params);
      return "unsaved text\n";
    },
    async writeTextFile(params) {
      writes.push(params);
    },
    editorContext: () => ({ activeFile: "/p/a.py", selection: { path: "/p/a.py", startLine: 2, endLine: 3, text: "x\ny\n" } }),
  };
  const logs: string[] = [];
  const controller = new SessionController(host, {
    cwd: "/p",
    clientVersion: "9.9.9",
    sendEditorContext: () => options.editorContext ?? true,
    log: (_level, message) => logs.push(message),
  });
  return { controller, host, logs, fake: new FakeAgent() };
}

test("connect: initialize with our capabilities, then a session in the workspace", async () => {
  const { controller, fake } = setup();
  fake.standard({ newSession: { modes: { currentModeId: "default", availableModes: [{ id: "default", name: "Default" }, { id: "plan", name: "Plan" }] } } });
  await controller.connect(fake.client);
  const init = await fake.sent((m) => m.method === "initialize", "initialize");
  assert.equal(init.params.protocolVersion, 1);
  assert.deepEqual(init.params.clientCapabilities, CLIENT_CAPABILITIES);
  assert.deepEqual(init.params.clientCapabilities._meta, { larik: { hunkReview: true, diagnostics: true } });
  // Subagents as child sessions (ACP 1.20), though the SDK's types do not have the field yet.
  assert.deepEqual(init.params.clientCapabilities.subagents, {});
  assert.equal(init.params.clientInfo.name, "larik-vscode");
  assert.equal(init.params.clientInfo.version, "9.9.9");
  const created = await fake.sent((m) => m.method === "session/new", "session/new");
  assert.deepEqual(created.params, { cwd: "/p", mcpServers: [] });
  assert.equal(controller.sessionId, "sess_1");
  assert.equal(controller.transcript.session.status, "idle");
  assert.equal(controller.transcript.session.mode?.current, "default");
  fake.close();
});

test("a turn: streamed text, a permission with the agent's options, the answer, end of turn", async () => {
  const { controller, fake } = setup();
  fake.standard();
  fake.agent.onRequest("session/prompt", async (params) => {
    fake.update(params.sessionId, { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "Editing " } });
    fake.update(params.sessionId, { sessionUpdate: "tool_call", toolCallId: "toolu_1", title: "Edit a.txt", kind: "edit" });
    const answer = await fake.agent.call<any>("session/request_permission", {
      sessionId: params.sessionId,
      toolCall: { toolCallId: "toolu_1", title: "Edit a.txt", kind: "edit", status: "pending", content: [{ type: "diff", path: "/p/a.txt", oldText: "a\n", newText: "b\n" }] },
      options: OPTIONS,
    });
    fake.update(params.sessionId, { sessionUpdate: "tool_call_update", toolCallId: "toolu_1", status: answer.outcome.optionId === "allow_once" ? "completed" : "failed" });
    fake.update(params.sessionId, { sessionUpdate: "agent_message_chunk", content: { type: "text", text: `done (${answer.outcome.optionId})` } });
    return { stopReason: "end_turn" };
  });
  await controller.connect(fake.client);
  const turn = controller.prompt("please edit");
  assert.equal(controller.turnRunning, true);
  await waitFor(() => controller.permissions.current, "the permission request");
  assert.equal(controller.transcript.session.status, "waiting");
  const pending = controller.permissions.current!;
  assert.deepEqual(pending.request.options, OPTIONS);
  assert.deepEqual(pending.diff, { path: "/p/a.txt", oldText: "a\n", newText: "b\n", isNew: false });
  controller.permissions.answer(pending.key, { optionId: "allow_once" });
  assert.equal(await turn, "end_turn");
  assert.equal(controller.transcript.session.status, "idle");
  const items = controller.transcript.items;
  assert.deepEqual(items.map((i) => i.type), ["user", "agent", "tool", "agent"]);
  assert.equal(items[3]!.type === "agent" && items[3]!.text, "done (allow_once)");
  assert.equal(items[2]!.type === "tool" && items[2]!.status, "completed");
  const prompt = await fake.sent((m) => m.method === "session/prompt", "session/prompt");
  assert.deepEqual(prompt.params, { sessionId: "sess_1", prompt: [{ type: "text", text: "please edit" }] });
  fake.close();
});

test("cancel: pending permissions answer cancelled, session/cancel is sent, the turn ends cancelled", async () => {
  const { controller, fake } = setup();
  fake.standard();
  let cancelled = false;
  fake.agent.onNotification("session/cancel", () => (cancelled = true));
  fake.agent.onRequest("session/prompt", async (params) => {
    const answer = await fake.agent.call<any>("session/request_permission", {
      sessionId: params.sessionId,
      toolCall: { toolCallId: "toolu_1", title: "Run ls", kind: "execute" },
      options: OPTIONS,
    });
    assert.deepEqual(answer, { outcome: { outcome: "cancelled" } });
    await waitFor(() => cancelled, "session/cancel");
    return { stopReason: "cancelled" };
  });
  await controller.connect(fake.client);
  const turn = controller.prompt("run it");
  await waitFor(() => controller.permissions.current, "the permission request");
  controller.cancel();
  assert.equal(await turn, "cancelled");
  assert.equal(controller.permissions.size, 0);
  assert.equal(controller.transcript.items.at(-1)?.type, "notice");
  fake.close();
});

test("the agent withdrawing a permission request ($/cancel_request) removes it", async () => {
  const { controller, fake } = setup();
  fake.standard();
  fake.agent.onRequest("session/prompt", async (params) => {
    const { id, response } = fake.agent.request<any>("session/request_permission", {
      sessionId: params.sessionId,
      toolCall: { toolCallId: "t", title: "Edit" },
      options: OPTIONS,
    });
    await waitFor(() => controller.permissions.size === 1, "the queued request");
    fake.agent.notify("$/cancel_request", { requestId: id });
    assert.deepEqual(await response, { outcome: { outcome: "cancelled" } });
    return { stopReason: "end_turn" };
  });
  await controller.connect(fake.client);
  await controller.prompt("x");
  assert.equal(controller.permissions.size, 0);
  fake.close();
});

test("editor context goes before the prompt when the agent reads it; attachments ride in the prompt", async () => {
  const { controller, fake } = setup();
  fake.standard({ larik: { editorContext: true } });
  fake.agent.onRequest("session/prompt", () => ({ stopReason: "end_turn" }));
  await controller.connect(fake.client);
  controller.attach({ id: "sel", label: "a.py:2-3", block: { type: "resource", resource: { uri: "file:///p/a.py#L2-3", text: "x\ny\n" } } });
  await controller.prompt("explain");
  const methods = fake.methods();
  assert.ok(methods.indexOf("_larik/editor_context") !== -1 && methods.indexOf("_larik/editor_context") < methods.indexOf("session/prompt"), methods.join());
  const context = await fake.sent((m) => m.method === "_larik/editor_context", "editor context");
  assert.deepEqual(context.params, { sessionId: "sess_1", activeFile: "/p/a.py", selection: { path: "/p/a.py", startLine: 2, endLine: 3, text: "x\ny\n" } });
  const prompt = await fake.sent((m) => m.method === "session/prompt", "prompt");
  assert.equal(prompt.params.prompt.length, 2);
  assert.equal(prompt.params.prompt[1].resource.uri, "file:///p/a.py#L2-3");
  assert.equal(controller.attachments.length, 0);
  const user = controller.transcript.items[0]!;
  assert.deepEqual(user.type === "user" && user.context, ["a.py:2-3"]);
  fake.close();
});

test("no editor context when the agent does not advertise it or the setting is off", async () => {
  for (const [larik, setting] of [[{}, true], [{ editorContext: true }, false]] as const) {
    const { controller, fake } = setup({ editorContext: setting });
    fake.standard({ larik });
    fake.agent.onRequest("session/prompt", () => ({ stopReason: "end_turn" }));
    await controller.connect(fake.client);
    await controller.prompt("hi");
    assert.ok(!fake.methods().includes("_larik/editor_context"));
    fake.close();
  }
});

test("fs requests go to the editor host", async () => {
  const { controller, fake, host } = setup();
  fake.standard();
  await controller.connect(fake.client);
  const read = await fake.agent.call<any>("fs/read_text_file", { sessionId: "sess_1", path: "/p/a.txt", line: 2, limit: 1 });
  assert.deepEqual(read, { content: "unsaved text\n" });
  assert.deepEqual(host.reads, [{ sessionId: "sess_1", path: "/p/a.txt", line: 2, limit: 1 }]);
  assert.deepEqual(await fake.agent.call("fs/write_text_file", { sessionId: "sess_1", path: "/p/b.txt", content: "new\n" }), {});
  assert.deepEqual(host.writes, [{ sessionId: "sess_1", path: "/p/b.txt", content: "new\n" }]);
  fake.close();
});

test("the client answers no permission request on its own: every one waits for the user", async () => {
  // What runs without asking is the agent's rules' to decide; an edit it asks about is asked.
  const { controller, fake } = setup();
  fake.standard();
  fake.agent.onRequest("session/prompt", async (params) => {
    const answer = await fake.agent.call<any>("session/request_permission", {
      sessionId: params.sessionId,
      toolCall: { toolCallId: "t", title: "Edit a", kind: "edit", content: [{ type: "diff", path: "/p/a", oldText: "a\n", newText: "b\n" }] },
      options: OPTIONS,
    });
    return { stopReason: answer.outcome.optionId === "reject_once" ? "end_turn" : "refusal" };
  });
  await controller.connect(fake.client);
  const turn = controller.prompt("go");
  await waitFor(() => controller.permissions.current, "the request in the queue");
  await new Promise((resolve) => setTimeout(resolve, 50));
  assert.equal(controller.permissions.size, 1, "the request was answered without the user");
  assert.ok(controller.permissions.answer(controller.permissions.current!.key, { optionId: "reject_once" }));
  assert.equal(await turn, "end_turn");
  fake.close();
});

test("modes through session/set_mode, the model through session/set_config_option", async () => {
  const { controller, fake } = setup();
  fake.standard({
    newSession: {
      modes: { currentModeId: "default", availableModes: [{ id: "default", name: "Default" }, { id: "plan", name: "Plan" }] },
      configOptions: [{ id: "model", name: "Model", category: "model", type: "select", currentValue: "m1", options: [{ value: "m1", name: "One" }, { value: "m2", name: "Two" }] }],
    },
  });
  fake.agent.onRequest("session/set_mode", () => ({}));
  fake.agent.onRequest("session/set_config_option", (p) => ({
    configOptions: [{ id: "model", name: "Model", category: "model", type: "select", currentValue: p.value, options: [{ value: "m1", name: "One" }, { value: "m2", name: "Two" }] }],
  }));
  await controller.connect(fake.client);
  await controller.setMode("plan");
  assert.deepEqual((await fake.sent((m) => m.method === "session/set_mode", "set_mode")).params, { sessionId: "sess_1", modeId: "plan" });
  assert.equal(controller.transcript.session.mode?.current, "plan");
  await controller.setModel("m2");
  assert.deepEqual((await fake.sent((m) => m.method === "session/set_config_option", "set_config_option")).params, { sessionId: "sess_1", configId: "model", value: "m2" });
  assert.equal(controller.transcript.session.model?.current, "m2");
  fake.close();
});

test("session list and load: history replayed into a fresh transcript", async () => {
  const { controller, fake } = setup();
  fake.standard({ agentCapabilities: { loadSession: true, sessionCapabilities: { list: {} } } });
  fake.agent.onRequest("session/list", (p) =>
    p.cursor
      ? { sessions: [{ sessionId: "old_2", cwd: "/p" }] }
      : { sessions: [{ sessionId: "old_1", cwd: "/p", title: "Fix parser", updatedAt: "2026-11-29T10:00:00Z" }], nextCursor: "c2" },
  );
  fake.agent.onRequest("session/load", (p) => {
    fake.update(p.sessionId, { sessionUpdate: "user_message_chunk", content: { type: "text", text: "What's 2+2?" } });
    fake.update(p.sessionId, { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "4" } });
    return {};
  });
  await controller.connect(fake.client);
  assert.equal(controller.transcript.session.canLoadSessions, true);
  assert.deepEqual(await controller.listSessions(), [
    { sessionId: "old_1", title: "Fix parser", updatedAt: "2026-11-29T10:00:00Z" },
    { sessionId: "old_2", title: "old_2" },
  ]);
  await controller.loadSession("old_1");
  assert.equal(controller.sessionId, "old_1");
  assert.deepEqual(controller.transcript.items.map((i) => [i.type, "text" in i ? i.text : ""]), [["user", "What's 2+2?"], ["agent", "4"]]);
  fake.close();
});

test("the commands announced right after session/new's answer, in the same read, are kept", async () => {
  const { controller, fake } = setup();
  fake.standard();
  // The answer is written by hand, together with the announcement that follows it.
  fake.agent.onRequest("session/new", () => new Promise(() => {}));
  const connected = controller.connect(fake.client);
  const created = await fake.sent((m) => m.method === "session/new", "session/new");
  const commands = [
    { name: "compact", description: "Summarize the conversation so far to free context" },
    { name: "code-review", description: "Review a change", input: { hint: "[path or branch]" } },
  ];
  fake.raw(
    { id: created.id, result: { sessionId: "sess_9" } },
    { method: "session/update", params: { sessionId: "sess_9", update: { sessionUpdate: "available_commands_update", availableCommands: commands } } },
    // A late update of a session that is gone stays ignored.
    { method: "session/update", params: { sessionId: "sess_old", update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "stray" } } } },
  );
  await connected;
  assert.equal(controller.sessionId, "sess_9");
  assert.deepEqual(controller.transcript.session.commands, [
    { name: "compact", description: "Summarize the conversation so far to free context" },
    { name: "code-review", description: "Review a change", hint: "[path or branch]" },
  ]);
  assert.deepEqual(controller.transcript.items, []);
  // Later updates go straight to the session.
  fake.update("sess_9", { sessionUpdate: "available_commands_update", availableCommands: [commands[0]] });
  await waitFor(() => controller.transcript.session.commands.length === 1, "the new list");
  fake.close();
});

test("updates of another session are ignored", async () => {
  const { controller, fake } = setup();
  fake.standard();
  await controller.connect(fake.client);
  fake.update("sess_other", { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "stray" } });
  fake.update("sess_1", { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "mine" } });
  await waitFor(() => controller.transcript.items.length === 1, "one item");
  assert.equal(controller.transcript.items[0]!.type === "agent" && controller.transcript.items[0]!.text, "mine");
  fake.close();
});

test("the agent going away mid-turn: the prompt fails, permissions are cancelled, status stopped", async () => {
  const { controller, fake } = setup();
  fake.standard();
  let answer: Promise<any> | undefined;
  fake.agent.onRequest("session/prompt", (params) => {
    answer = fake.agent.call("session/request_permission", { sessionId: params.sessionId, toolCall: { toolCallId: "t", title: "x" }, options: OPTIONS });
    return new Promise(() => {});
  });
  await controller.connect(fake.client);
  const turn = controller.prompt("x");
  await waitFor(() => controller.permissions.size === 1, "the permission");
  fake.close();
  await assert.rejects(turn);
  assert.equal(controller.transcript.session.status, "stopped");
  assert.equal(controller.permissions.size, 0);
  void answer?.catch(() => {});
});

const announce = (fake: FakeAgent, parent: string, child: string, call: string, title: string) =>
  fake.update(parent, { sessionUpdate: "subagent_update", sessionId: child, title, cwd: "/p", capabilities: { cancel: {} }, state: { state: "running" }, _meta: { larik: { toolCallId: call } } });
const ended = (fake: FakeAgent, parent: string, child: string, stopReason: string) =>
  fake.update(parent, { sessionUpdate: "subagent_update", sessionId: child, state: { state: "idle", stopReason } });

test("subagents: child updates go to the child, its permission is labelled and answered, Stop cancels that child alone", async () => {
  const { controller, fake } = setup();
  fake.standard();
  const cancels: string[] = [];
  fake.agent.onNotification("session/cancel", (p) => cancels.push(p.sessionId));
  let childAnswer: Promise<any> | undefined;
  let stuckAnswer: Promise<any> | undefined;
  fake.agent.onRequest("session/prompt", async ({ sessionId }) => {
    for (const [call, title] of [["t1", "explore: find alpha"], ["t2", "explore: wait forever"]]) {
      fake.update(sessionId, { sessionUpdate: "tool_call", toolCallId: call, title, status: "in_progress" });
    }
    announce(fake, sessionId, `${sessionId}-t1`, "t1", "explore: find alpha");
    announce(fake, sessionId, `${sessionId}-t2`, "t2", "explore: wait forever");
    fake.update(`${sessionId}-t1`, { sessionUpdate: "tool_call", toolCallId: "c1", title: "Read alpha.txt", kind: "read" });
    fake.update(`${sessionId}-t1`, { sessionUpdate: "tool_call_update", toolCallId: "c1", status: "completed" });
    childAnswer = fake.agent.call("session/request_permission", {
      sessionId: `${sessionId}-t1`,
      toolCall: { toolCallId: "c2", title: "Edit alpha.txt", kind: "edit", status: "pending" },
      options: OPTIONS,
    });
    const answer = await childAnswer;
    fake.update(`${sessionId}-t1`, { sessionUpdate: "tool_call_update", toolCallId: "c2", status: answer.outcome.optionId === "allow_once" ? "completed" : "failed" });
    fake.update(`${sessionId}-t1`, { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "alpha done" } });
    ended(fake, sessionId, `${sessionId}-t1`, "end_turn");
    fake.update(sessionId, { sessionUpdate: "tool_call_update", toolCallId: "t1", status: "completed", content: [{ type: "content", content: { type: "text", text: "alpha done" } }] });
    // The stuck child asks too; Stop answers its request for it.
    stuckAnswer = fake.agent.call("session/request_permission", { sessionId: `${sessionId}-t2`, toolCall: { toolCallId: "c9", title: "Run sleep", kind: "execute" }, options: OPTIONS });
    await waitFor(() => cancels.includes(`${sessionId}-t2`), "session/cancel of the stuck child");
    ended(fake, sessionId, `${sessionId}-t2`, "cancelled");
    fake.update(sessionId, { sessionUpdate: "tool_call_update", toolCallId: "t2", status: "failed" });
    fake.update(sessionId, { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "One found, one stopped." } });
    return { stopReason: "end_turn" };
  });
  await controller.connect(fake.client);
  const turn = controller.prompt("look around");
  const pending = await waitFor(() => controller.permissions.current, "the child's permission request");
  assert.equal(pending.request.sessionId, "sess_1-t1");
  assert.equal(controller.subagentAsking(pending.request), "explore: find alpha");
  assert.equal(controller.subagents.get("sess_1-t1")?.phase, "waiting");
  assert.equal(controller.transcript.session.status, "waiting");
  // The request's call shows in the child, not in the session.
  assert.deepEqual(controller.subagents.get("sess_1-t1")?.tools.map((t) => [t.toolCallId, t.status]), [["c1", "completed"], ["c2", "pending"]]);
  controller.permissions.answer(pending.key, { optionId: "allow_once" });
  assert.deepEqual(await childAnswer, { outcome: { outcome: "selected", optionId: "allow_once" } });
  await waitFor(() => controller.permissions.current?.request.sessionId === "sess_1-t2", "the stuck child's request");
  assert.equal(controller.stopSubagent("sess_1-t2"), true);
  assert.equal(controller.subagents.get("sess_1-t2")?.stopping, true);
  assert.deepEqual(await stuckAnswer, { outcome: { outcome: "cancelled" } });
  assert.equal(await turn, "end_turn");
  assert.deepEqual(cancels, ["sess_1-t2"], "only the child was cancelled");
  assert.equal(controller.stopSubagent("sess_1-t2"), false, "a stopped child is not stopped again");
  const [alpha, stuck] = controller.subagents.views();
  assert.deepEqual([alpha?.phase, alpha?.toolCallId, alpha?.text], ["done", "t1", "alpha done"]);
  assert.deepEqual([stuck?.phase, stuck?.toolCallId, stuck?.canStop], ["stopped", "t2", false]);
  // The session's transcript has its own items only: the task calls and its text.
  assert.deepEqual(
    controller.transcript.items.map((i) => (i.type === "tool" ? i.id : i.type)),
    ["user", "tool:t1", "tool:t2", "agent"],
  );
  fake.close();
});

test("subagents: a background task's child reports after the turn; Stop works then too; a new session forgets it", async () => {
  const { controller, fake } = setup();
  fake.standard();
  const cancels: string[] = [];
  fake.agent.onNotification("session/cancel", (p) => cancels.push(p.sessionId));
  fake.agent.onRequest("session/prompt", ({ sessionId }) => {
    fake.update(sessionId, { sessionUpdate: "tool_call", toolCallId: "t1", title: "explore: watch", status: "completed" });
    announce(fake, sessionId, `${sessionId}-t1`, "t1", "explore: watch");
    return { stopReason: "end_turn" };
  });
  await controller.connect(fake.client);
  await controller.prompt("start it in the background");
  assert.equal(controller.turnRunning, false);
  fake.update("sess_1-t1", { sessionUpdate: "tool_call", toolCallId: "c1", title: "Grep TODO", kind: "search" });
  await waitFor(() => controller.subagents.get("sess_1-t1")?.tools.length === 1, "the child's call after the turn");
  assert.equal(controller.subagents.get("sess_1-t1")?.phase, "running");
  assert.equal(controller.transcript.session.status, "idle");
  assert.equal(controller.stopSubagent("sess_1-t1"), true);
  await fake.sent((m) => m.method === "session/cancel" && m.params.sessionId === "sess_1-t1", "session/cancel of the child");
  await controller.newSession();
  assert.deepEqual(controller.subagents.views(), []);
  // Its late updates are then another session's: ignored.
  fake.update("sess_1-t1", { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "late" } });
  fake.update("sess_2", { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "mine" } });
  await waitFor(() => controller.transcript.items.length === 1, "one item");
  assert.equal(controller.subagents.has("sess_1-t1"), false);
  fake.close();
});

test("subagents: cancelling the turn answers its children's requests, not a background child's", async () => {
  const { controller, fake } = setup();
  fake.standard();
  const answers: Record<string, Promise<any>> = {};
  let cancelled = false;
  fake.agent.onNotification("session/cancel", () => (cancelled = true));
  fake.agent.onRequest("session/prompt", async ({ sessionId }) => {
    fake.update(sessionId, { sessionUpdate: "tool_call", toolCallId: "bg", title: "explore: background", status: "completed" });
    fake.update(sessionId, { sessionUpdate: "tool_call", toolCallId: "fg", title: "explore: now", status: "in_progress" });
    announce(fake, sessionId, "child-bg", "bg", "explore: background");
    announce(fake, sessionId, "child-fg", "fg", "explore: now");
    for (const child of ["child-bg", "child-fg"]) {
      answers[child] = fake.agent.call("session/request_permission", { sessionId: child, toolCall: { toolCallId: `c-${child}`, title: "Run ls", kind: "execute" }, options: OPTIONS });
    }
    await waitFor(() => cancelled, "session/cancel");
    return { stopReason: "cancelled" };
  });
  await controller.connect(fake.client);
  const turn = controller.prompt("go");
  await waitFor(() => controller.permissions.size === 2, "both children's requests");
  controller.cancel();
  assert.deepEqual(await answers["child-fg"], { outcome: { outcome: "cancelled" } });
  assert.equal(await turn, "cancelled");
  assert.deepEqual(controller.permissions.all().map((p) => p.request.sessionId), ["child-bg"], "the background child's request was answered");
  controller.permissions.answer(controller.permissions.current!.key, { optionId: "allow_once" });
  assert.deepEqual(await answers["child-bg"], { outcome: { outcome: "selected", optionId: "allow_once" } });
  fake.close();
});

test("subagents: the agent going away leaves running children ended", async () => {
  const { controller, fake } = setup();
  fake.standard();
  await controller.connect(fake.client);
  announce(fake, "sess_1", "sess_1-t1", "t1", "explore: find alpha");
  await waitFor(() => controller.subagents.has("sess_1-t1"), "the announcement");
  fake.close();
  await waitFor(() => controller.transcript.session.status === "stopped", "stopped");
  assert.deepEqual([controller.subagents.get("sess_1-t1")?.phase, controller.subagents.get("sess_1-t1")?.canStop], ["ended", false]);
  assert.equal(controller.stopSubagent("sess_1-t1"), false);
});
