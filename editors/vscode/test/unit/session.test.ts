import assert from "node:assert/strict";
import test from "node:test";
import type { ReadTextFileRequest, WriteTextFileRequest } from "../../src/protocol/acp";
import { CLIENT_CAPABILITIES, SessionController, type EditorHost } from "../../src/session";
import type { AutoApprovePolicy } from "../../src/state/permissions";
import { waitFor } from "../support/agent";
import { FakeAgent } from "../support/fakeAgent";

const OPTIONS = [
  { optionId: "allow_once", name: "Allow once", kind: "allow_once" },
  { optionId: "allow_always", name: "Always allow `edit` in this project", kind: "allow_always" },
  { optionId: "reject_once", name: "Reject", kind: "reject_once" },
];

function setup(options: { policy?: AutoApprovePolicy; editorContext?: boolean } = {}) {
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
    autoApprove: () => options.policy ?? "never",
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
  assert.deepEqual(init.params.clientCapabilities._meta, { larik: { hunkReview: true } });
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

test("auto-approve answers without queueing", async () => {
  const { controller, fake, logs } = setup({ policy: "edits" });
  fake.standard();
  fake.agent.onRequest("session/prompt", async (params) => {
    const answer = await fake.agent.call<any>("session/request_permission", {
      sessionId: params.sessionId,
      toolCall: { toolCallId: "t", title: "Edit a", kind: "edit" },
      options: OPTIONS,
    });
    return { stopReason: answer.outcome.optionId === "allow_once" ? "end_turn" : "refusal" };
  });
  await controller.connect(fake.client);
  assert.equal(await controller.prompt("go"), "end_turn");
  assert.ok(logs.some((l) => l.includes("auto-approved")));
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
