import assert from "node:assert/strict";
import test from "node:test";
import type { RequestPermissionRequest } from "../../src/protocol/acp";
import type { SessionController } from "../../src/session";
import { decisionOf, PermissionQueue } from "../../src/state/permissions";
import { permissionsView } from "../../src/views/chatView";

const OPTIONS = [
  { optionId: "allow_once", name: "Allow once", kind: "allow_once" as const },
  { optionId: "allow_always", name: "Always allow `edit` in this project", kind: "allow_always" as const },
  { optionId: "reject_once", name: "Reject", kind: "reject_once" as const },
];

function request(toolCallId: string, extra: Partial<RequestPermissionRequest["toolCall"]> = {}, sessionId = "s1"): RequestPermissionRequest {
  return { sessionId, toolCall: { toolCallId, title: `Edit ${toolCallId}`, kind: "edit", ...extra }, options: OPTIONS };
}

test("requests queue; the head is current; answers resolve in any order", async () => {
  const queue = new PermissionQueue();
  let changes = 0;
  queue.onChange(() => changes++);
  const first = queue.enqueue(request("t1"));
  const second = queue.enqueue(request("t2"));
  assert.equal(queue.size, 2);
  assert.equal(queue.current?.request.toolCall.toolCallId, "t1");
  assert.equal(queue.answer(queue.current!.key, { optionId: "allow_once" }), true);
  assert.deepEqual(await first, { outcome: { outcome: "selected", optionId: "allow_once" } });
  assert.equal(queue.current?.request.toolCall.toolCallId, "t2");
  queue.cancel(queue.current!.key);
  assert.deepEqual(await second, { outcome: { outcome: "cancelled" } });
  assert.equal(queue.size, 0);
  assert.equal(changes, 4);
});

test("an option the request does not offer, or a stale key, is refused", () => {
  const queue = new PermissionQueue();
  void queue.enqueue(request("t1"));
  const key = queue.current!.key;
  assert.equal(queue.answer(key, { optionId: "allow" }), false);
  assert.equal(queue.answer(key + 1, { optionId: "allow_once" }), false);
  assert.equal(queue.answer(key, { optionId: "reject_once" }), true);
  assert.equal(queue.answer(key, { optionId: "reject_once" }), false);
});

test("feedback rides on rejections, acceptedHunks on allows of hunked requests", async () => {
  const queue = new PermissionQueue();
  const hunks = [
    { index: 0, oldStart: 1, oldLines: 1, newStart: 1, newLines: 1, oldText: "a\n", newText: "A\n" },
    { index: 1, oldStart: 3, oldLines: 1, newStart: 3, newLines: 1, oldText: "c\n", newText: "C\n" },
  ];
  const rejected = queue.enqueue(request("t1"));
  queue.answer(queue.current!.key, { optionId: "reject_once", feedback: "  put it in docs/ instead " });
  assert.deepEqual(await rejected, { outcome: { outcome: "selected", optionId: "reject_once" }, _meta: { larik: { feedback: "put it in docs/ instead" } } });

  const partial = queue.enqueue(request("t2", { _meta: { larik: { hunks } } }));
  assert.equal(queue.current!.hunks?.length, 2);
  queue.answer(queue.current!.key, { optionId: "allow_once", acceptedHunks: [1], feedback: "ignored on allow" });
  assert.deepEqual(await partial, { outcome: { outcome: "selected", optionId: "allow_once" }, _meta: { larik: { acceptedHunks: [1] } } });

  const plain = queue.enqueue(request("t3"));
  queue.answer(queue.current!.key, { optionId: "allow_once", acceptedHunks: [0] });
  assert.deepEqual(await plain, { outcome: { outcome: "selected", optionId: "allow_once" } }, "no acceptedHunks without the agent's hunks");
});

test("cancelAll answers cancelled for one session or all; an aborted signal cancels", async () => {
  const queue = new PermissionQueue();
  const a = queue.enqueue(request("a", {}, "s1"));
  const b = queue.enqueue(request("b", {}, "s2"));
  queue.cancelAll("s1");
  assert.deepEqual(await a, { outcome: { outcome: "cancelled" } });
  assert.equal(queue.size, 1);
  const controller = new AbortController();
  const c = queue.enqueue(request("c"), controller.signal);
  controller.abort();
  assert.deepEqual(await c, { outcome: { outcome: "cancelled" } });
  const aborted = new AbortController();
  aborted.abort();
  assert.deepEqual(await queue.enqueue(request("d"), aborted.signal), { outcome: { outcome: "cancelled" } });
  queue.cancelAll();
  assert.deepEqual(await b, { outcome: { outcome: "cancelled" } });
});

test("the diff of the tool call is picked up", () => {
  const queue = new PermissionQueue();
  void queue.enqueue(request("t1", { content: [{ type: "diff", path: "/p/new.txt", newText: "hi\n" }] }));
  assert.deepEqual(queue.current!.diff, { path: "/p/new.txt", oldText: "", newText: "hi\n", isNew: true });
});

test("the chat card offers no options while the edit's hunks are decided in the editor", () => {
  const queue = new PermissionQueue();
  void queue.enqueue(request("t1", { content: [{ type: "diff", path: "/p/c.txt", oldText: "a\n", newText: "b\n" }] }));
  const controller = { permissions: queue, larik: { permissionFeedback: true }, subagentAsking: () => undefined } as unknown as SessionController;
  const key = queue.current!.key;
  const elsewhere = permissionsView(controller, { isReviewingHunks: () => false }).current!;
  assert.deepEqual(elsewhere.options.map((o) => o.kind), ["allow_once", "allow_always", "reject_once"]);
  assert.equal(elsewhere.reviewingHunks, undefined);
  const reviewing = permissionsView(controller, { isReviewingHunks: (k) => k === key }).current!;
  assert.deepEqual(reviewing.options, []);
  assert.equal(reviewing.reviewingHunks, true);
  assert.equal(reviewing.diffPath, "/p/c.txt");
});

test("a subagent's request names the subagent that asks", () => {
  const queue = new PermissionQueue();
  void queue.enqueue(request("c1", {}, "sess_1-t1"));
  void queue.enqueue(request("t2", {}, "sess_1"));
  const titles: Record<string, string> = { "sess_1-t1": "explore: find alpha" };
  const controller = { permissions: queue, larik: {}, subagentAsking: (r: RequestPermissionRequest) => titles[r.sessionId] } as unknown as SessionController;
  assert.equal(permissionsView(controller).current?.subagent, "explore: find alpha");
  queue.answer(queue.current!.key, { optionId: "allow_once" });
  assert.equal("subagent" in permissionsView(controller).current!, false);
});

test("what was decided reads on the call's card: allowed once or always, rejected and why, hunks kept", () => {
  const hunks = [
    { index: 0, oldStart: 1, oldLines: 1, newStart: 1, newLines: 1, oldText: "a\n", newText: "A\n" },
    { index: 1, oldStart: 3, oldLines: 1, newStart: 3, newLines: 1, oldText: "c\n", newText: "C\n" },
  ];
  const plain = request("t1");
  const hunked = request("t2", { _meta: { larik: { hunks } } });
  const selected = (optionId: string, larik?: object) => ({ outcome: { outcome: "selected" as const, optionId }, ...(larik ? { _meta: { larik } } : {}) });
  assert.deepEqual(decisionOf(plain, selected("allow_once")), { text: "Allowed once", allowed: true });
  assert.deepEqual(decisionOf(plain, selected("allow_always")), { text: "Always allowed", allowed: true });
  assert.deepEqual(decisionOf(plain, selected("reject_once", { feedback: "not there" })), { text: "Rejected: “not there”", allowed: false });
  assert.deepEqual(decisionOf(hunked, selected("allow_once", { acceptedHunks: [1] })), { text: "1 of 2 hunks accepted", allowed: true });
  assert.deepEqual(decisionOf(hunked, selected("allow_once", { acceptedHunks: [0, 1] })), { text: "All 2 hunks accepted", allowed: true });
  assert.deepEqual(decisionOf(hunked, selected("reject_once", { acceptedHunks: [] })), { text: "All 2 hunks rejected", allowed: false });
  assert.equal(decisionOf(plain, { outcome: { outcome: "cancelled" } }), undefined);
});
