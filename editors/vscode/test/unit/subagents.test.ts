import assert from "node:assert/strict";
import test from "node:test";
import { subagentUpdateOf, type SubagentUpdate } from "../../src/protocol/subagents";
import { Subagents, TEXT_PREVIEW } from "../../src/state/subagents";
import type { SubagentView } from "../../src/webview/messages";

const ANNOUNCED = {
  sessionUpdate: "subagent_update",
  sessionId: "sess_1-t1",
  title: "explore: find alpha",
  cwd: "/p",
  capabilities: { cancel: {} },
  state: { state: "running" },
  _meta: { larik: { toolCallId: "t1" } },
};

function recorded() {
  const subagents = new Subagents();
  const views: SubagentView[] = [];
  subagents.onChange((v) => views.push(structuredClone(v)));
  const update = (raw: object) => subagents.update(subagentUpdateOf(raw)!);
  return { subagents, views, update };
}

test("subagent_update is read leniently: the task call from _meta.larik, malformed fields as omitted", () => {
  assert.deepEqual(subagentUpdateOf(ANNOUNCED), {
    sessionUpdate: "subagent_update",
    sessionId: "sess_1-t1",
    title: "explore: find alpha",
    cwd: "/p",
    capabilities: { cancel: {} },
    state: { state: "running" },
    toolCallId: "t1",
  } satisfies SubagentUpdate);
  assert.deepEqual(subagentUpdateOf({ sessionUpdate: "subagent_update", sessionId: "c", title: 3, state: { stopReason: "x" }, capabilities: { cancel: true }, _meta: { larik: { toolCallId: 7 } } }), {
    sessionUpdate: "subagent_update",
    sessionId: "c",
    capabilities: {},
  });
  assert.deepEqual(subagentUpdateOf({ sessionUpdate: "subagent_update", sessionId: "c", title: null, state: null, capabilities: null }), {
    sessionUpdate: "subagent_update",
    sessionId: "c",
    title: null,
    state: null,
    capabilities: null,
  });
  assert.equal(subagentUpdateOf({ sessionUpdate: "subagent_update" }), undefined);
  assert.equal(subagentUpdateOf({ sessionUpdate: "tool_call", sessionId: "c" }), undefined);
  assert.equal(subagentUpdateOf(null), undefined);
});

test("announced, then its calls and text merge into its view; the end shows it done", () => {
  const { subagents, views, update } = recorded();
  update(ANNOUNCED);
  assert.deepEqual(views.at(-1), {
    sessionId: "sess_1-t1",
    toolCallId: "t1",
    title: "explore: find alpha",
    phase: "running",
    canStop: true,
    stopping: false,
    tools: [],
    text: "",
    textTruncated: false,
  });
  assert.equal(subagents.applyChild("sess_1-t1", { sessionUpdate: "tool_call", toolCallId: "c1", title: "Read alpha.txt", kind: "read" }), true);
  subagents.applyChild("sess_1-t1", { sessionUpdate: "tool_call_update", toolCallId: "c1", status: "completed" });
  subagents.applyChild("sess_1-t1", { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "alpha " } });
  subagents.applyChild("sess_1-t1", { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "done" } });
  assert.deepEqual(views.at(-1)?.tools, [{ toolCallId: "c1", title: "Read alpha.txt", kind: "read", status: "completed" }]);
  assert.equal(views.at(-1)?.text, "alpha done");
  update({ sessionUpdate: "subagent_update", sessionId: "sess_1-t1", state: { state: "idle", stopReason: "end_turn" } });
  const done = views.at(-1)!;
  // The patch kept the title and the task call.
  assert.deepEqual([done.phase, done.title, done.toolCallId, done.canStop], ["done", "explore: find alpha", "t1", false]);
  assert.equal(subagents.applyChild("sess_other", { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "x" } }), false);
});

test("a running child can be stopped once; it ends stopped, its unfinished calls cancelled", () => {
  const { subagents, views, update } = recorded();
  update(ANNOUNCED);
  subagents.applyChild("sess_1-t1", { sessionUpdate: "tool_call", toolCallId: "c1", title: "Grep alpha", kind: "search", status: "in_progress" });
  assert.equal(subagents.markStopping("sess_1-t1"), true);
  assert.deepEqual([views.at(-1)?.stopping, views.at(-1)?.canStop], [true, true]);
  assert.deepEqual(subagents.running(), ["sess_1-t1"]);
  update({ sessionUpdate: "subagent_update", sessionId: "sess_1-t1", state: { state: "idle", stopReason: "cancelled" } });
  assert.deepEqual([views.at(-1)?.phase, views.at(-1)?.stopping, views.at(-1)?.canStop], ["stopped", false, false]);
  assert.equal(views.at(-1)?.tools[0]?.status, "cancelled");
  assert.deepEqual(subagents.running(), []);
  assert.equal(subagents.markStopping("sess_1-t1"), false, "an ended child cannot be stopped");
  assert.equal(subagents.markStopping("unknown"), false);
});

test("without the cancel capability there is no Stop; capabilities null clears it", () => {
  const { subagents, update } = recorded();
  update({ ...ANNOUNCED, capabilities: undefined });
  assert.equal(subagents.get("sess_1-t1")?.canStop, false);
  assert.equal(subagents.markStopping("sess_1-t1"), false);
  update({ sessionUpdate: "subagent_update", sessionId: "sess_1-t1", capabilities: { cancel: {} } });
  assert.equal(subagents.get("sess_1-t1")?.canStop, true);
  update({ sessionUpdate: "subagent_update", sessionId: "sess_1-t1", capabilities: null });
  assert.equal(subagents.get("sess_1-t1")?.canStop, false);
});

test("phases: waiting while it asks, other stop reasons in words, unreported, lost with the connection", () => {
  const { subagents, update } = recorded();
  update(ANNOUNCED);
  update({ ...ANNOUNCED, sessionId: "c2", title: null, _meta: undefined });
  update({ ...ANNOUNCED, sessionId: "c3", state: undefined });
  subagents.setWaiting(new Set(["sess_1-t1"]));
  assert.equal(subagents.get("sess_1-t1")?.phase, "waiting");
  assert.equal(subagents.get("sess_1-t1")?.canStop, true);
  subagents.setWaiting(new Set());
  assert.equal(subagents.get("sess_1-t1")?.phase, "running");
  // No title: a fallback; no task call: none claimed.
  assert.deepEqual([subagents.get("c2")?.title, subagents.get("c2")?.toolCallId], ["Subagent", undefined]);
  assert.equal(subagents.get("c3")?.phase, "unknown");
  update({ sessionUpdate: "subagent_update", sessionId: "c2", state: { state: "idle", stopReason: "max_turn_requests" } });
  assert.deepEqual([subagents.get("c2")?.phase, subagents.get("c2")?.stopReason], ["ended", "max turn requests"]);
  update({ sessionUpdate: "subagent_update", sessionId: "c3", state: { state: "requires_action" } });
  assert.equal(subagents.get("c3")?.phase, "waiting");
  subagents.settle();
  assert.deepEqual([subagents.get("sess_1-t1")?.phase, subagents.get("sess_1-t1")?.stopReason, subagents.get("sess_1-t1")?.canStop], ["ended", "the agent stopped", false]);
  assert.equal(subagents.get("c2")?.stopReason, "max turn requests", "an ended child stays as it ended");
  assert.deepEqual(subagents.views().map((v) => v.sessionId), ["sess_1-t1", "c2", "c3"], "in the order announced");
});

test("the report is previewed: a chunk forwards at most the preview, the whole is the task call's output", () => {
  const { subagents, views, update } = recorded();
  update(ANNOUNCED);
  const long = "x".repeat(TEXT_PREVIEW * 3);
  subagents.applyChild("sess_1-t1", { sessionUpdate: "agent_message_chunk", content: { type: "text", text: long } });
  subagents.applyChild("sess_1-t1", { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "tail" } });
  assert.equal(views.at(-1)?.text.length, TEXT_PREVIEW);
  assert.equal(views.at(-1)?.textTruncated, true);
  // Its latest message is the report: narration before its calls is not.
  subagents.applyChild("sess_1-t1", { sessionUpdate: "tool_call", toolCallId: "c1", title: "Read a", kind: "read" });
  subagents.applyChild("sess_1-t1", { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "short" } });
  assert.deepEqual([views.at(-1)?.text, views.at(-1)?.textTruncated], ["short", false]);
});

test("clear forgets every child, silently", () => {
  const { subagents, views, update } = recorded();
  update(ANNOUNCED);
  const before = views.length;
  subagents.clear();
  assert.equal(views.length, before);
  assert.deepEqual(subagents.views(), []);
  assert.equal(subagents.has("sess_1-t1"), false);
});
