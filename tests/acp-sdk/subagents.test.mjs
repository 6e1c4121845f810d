// Subagents (the `task` tool) as the official SDK's client sees them. A client that advertises
// ACP 1.20's `clientCapabilities.subagents` gets each child as a session of its own, announced in
// the parent's session with `subagent_update` before any of its traffic, stoppable on its own
// with `session/cancel`, and reported idle when it ends. A client without it gets no child
// sessions: the child's tool calls come in the parent's session, labelled with the task. As
// everywhere in this suite every message is validated; the 1.20 additions, which the SDK's
// schema predates, against the schema crate's (see NEWER_THAN_SDK_SCHEMA in harness.mjs).

import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import test from "node:test";
// The same SDK's entry point for ACP's unstable features. The default (stable) one drops every
// `subagent_update` before any client handler sees it (see the last test), so a client that
// advertises subagents has to be built with this one.
import * as unstable from "@agentclientprotocol/sdk/unstable";
import { CRATE_SCHEMA_TAG, PLAIN_INITIALIZE, ProtocolChecker, toolResult, withAgent } from "./harness.mjs";

const TIMEOUT = { timeout: 120_000 };

// The SDK sends request params as given (it validates what it receives, not what it sends), so
// the capability goes out as written: checked on the wire below.
const SUBAGENTS_INITIALIZE = {
  ...PLAIN_INITIALIZE,
  clientCapabilities: { ...PLAIN_INITIALIZE.clientCapabilities, subagents: {} },
};

const ALPHA = { subagent_type: "explore", description: "find alpha", prompt: "ALPHA-S: read alpha.txt" };
const STUCK = { subagent_type: "explore", description: "wait forever", prompt: "STUCK-S: wait" };
const task = (id, input) => ({ id, name: "task", input });

/** The parent calls `task` with `inputs`; the alpha child reads alpha.txt and reports. */
function scenario(...inputs) {
  return {
    responses: [
      { tool_calls: inputs.map(([id, input]) => task(id, input)) },
      // Children run side by side: each step answers only the conversation that names its marker.
      { when: "ALPHA-S", tool_calls: [{ id: "c1", name: "read", input: { path: "alpha.txt" } }] },
      { when: "ALPHA-S", text: "alpha done" },
      { when: "alpha done", text: "Done." },
      // Last: the parent's final request names both tasks and must not take this answer.
      { when: "STUCK-S", text: "", hang: true },
    ],
  };
}

const resultText = (body, id) => {
  const result = toolResult(body, id);
  assert.ok(result, `no tool_result for ${id} in the model's last request`);
  const { content } = result;
  return typeof content === "string" ? content : content.map((part) => part.text ?? "").join("");
};

const subagentUpdatesOnWire = (h) =>
  h.checker.log.filter(({ from, msg }) => from === "agent" && msg.method === "session/update" && msg.params?.update?.sessionUpdate === "subagent_update");

test("the checker takes the 1.20 additions from the schema crate's schema, and only those", () => {
  const checker = new ProtocolChecker();
  const send = (msg) => checker.clientMessage({ jsonrpc: "2.0", ...msg });
  const receive = (msg) => checker.agentLine(JSON.stringify({ jsonrpc: "2.0", ...msg }));
  const update = (sessionId, update) => receive({ method: "session/update", params: { sessionId, update } });
  const chunk = (sessionId) => update(sessionId, { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "x" } });
  const expectViolation = (pattern, act) => {
    const before = checker.violations.length;
    act();
    assert.equal(checker.violations.length, before + 1, `expected one violation matching ${pattern}: ${checker.violations.slice(before).join("\n")}`);
    assert.match(checker.violations.at(-1), pattern);
  };

  send({ id: 0, method: "initialize", params: SUBAGENTS_INITIALIZE });
  receive({ id: 0, result: { protocolVersion: 1, agentCapabilities: {} } });
  send({ id: 1, method: "session/prompt", params: { sessionId: "p", prompt: [{ type: "text", text: "hi" }] } });
  update("p", { sessionUpdate: "subagent_update", sessionId: "c", title: "t", capabilities: { cancel: {} }, state: { state: "running" } });
  chunk("c"); // a working child's output needs no prompt of its own
  update("p", { sessionUpdate: "subagent_update", sessionId: "c", state: { state: "idle", stopReason: "end_turn" } });
  assert.deepEqual(checker.violations, []);
  assert.equal(checker.validated.get(`SessionNotification${CRATE_SCHEMA_TAG}`), 2);
  assert.equal(checker.validated.get(`InitializeRequest${CRATE_SCHEMA_TAG}`), 1);

  // The crate's schema is a real check, not a pass: a malformed addition fails it.
  expectViolation(/SessionNotification \(schema crate/, () => update("p", { sessionUpdate: "subagent_update", sessionId: "c", capabilities: "yes" }));
  expectViolation(/InitializeRequest \(schema crate/, () => send({ id: 2, method: "initialize", params: { ...PLAIN_INITIALIZE, clientCapabilities: { subagents: 5 } } }));
  // Anything else the SDK's schema does not know still fails, whatever the crate's says.
  expectViolation(/does not validate against SessionNotification:/, () => update("p", { sessionUpdate: "plan_removed" }));
  // A child's output before its announcement, or after it went idle, is out of turn.
  expectViolation(/in flight/, () => chunk("c"));
  expectViolation(/in flight/, () => chunk("unannounced"));

  // Without the capability, no subagent may be announced at all.
  const plain = new ProtocolChecker();
  plain.clientMessage({ jsonrpc: "2.0", id: 0, method: "initialize", params: PLAIN_INITIALIZE });
  plain.agentLine(JSON.stringify({ jsonrpc: "2.0", method: "session/update", params: { sessionId: "p", update: { sessionUpdate: "subagent_update", sessionId: "c" } } }));
  assert.match(plain.violations.join("\n"), /did not advertise `subagents`/);
});

test("a client with `subagents` sees each child as a session of its own, announced first, and can stop one", TIMEOUT, async (t) => {
  await withAgent(
    t,
    scenario(["t1", ALPHA], ["t2", STUCK]),
    async (h) => {
      writeFileSync(join(h.projectDir, "alpha.txt"), "alpha\n");
      await h.initialize(SUBAGENTS_INITIALIZE);
      const sent = h.checker.log.find(({ from, msg }) => from === "client" && msg.method === "initialize").msg;
      assert.deepEqual(sent.params.clientCapabilities.subagents, {}, "the SDK did not send the capability as given");
      const session = await h.newSession();
      h.prompt(session, "look around");

      // Everything the SDK hands the client's session/update handler, for every session, until
      // both children are idle: the stuck one only once it has been stopped.
      const seen = [];
      const announced = new Map(); // title -> { child, update, at }
      const idle = new Map(); // child session -> stop reason
      while (idle.size < 2) {
        const params = await h.wait(h.sessionUpdates.next(), "both subagents to be reported idle");
        seen.push(params);
        const { update } = params;
        if (update.sessionUpdate !== "subagent_update") continue;
        assert.equal(params.sessionId, session.sessionId, `a subagent is reported outside the parent's session: ${JSON.stringify(params)}`);
        if (update.title != null) {
          announced.set(update.title, { child: update.sessionId, update, at: seen.length - 1 });
          // The user stops this one child; the other and the parent go on.
          if (update.title === "explore: wait forever") await h.cancel(update.sessionId);
        }
        if (update.state?.state === "idle") idle.set(update.sessionId, update.state.stopReason);
      }
      const { updates, response } = await h.finishTurn(session);
      assert.equal(response.stopReason, "end_turn");

      assert.deepEqual([...announced.keys()].sort(), ["explore: find alpha", "explore: wait forever"]);
      const alpha = announced.get("explore: find alpha");
      const stuck = announced.get("explore: wait forever");
      for (const [{ child, update, at }, call] of [
        [alpha, "t1"],
        [stuck, "t2"],
      ]) {
        assert.notEqual(child, session.sessionId);
        assert.deepEqual(update.capabilities, { cancel: {} }, `each child can be stopped: ${JSON.stringify(update)}`);
        assert.deepEqual(update.state, { state: "running" });
        assert.equal(update._meta?.larik?.toolCallId, call, `not tied to the task call that made it: ${JSON.stringify(update)}`);
        const first = seen.findIndex((params) => params.sessionId === child);
        assert.ok(first === -1 || first > at, `child ${child} had traffic before its announcement`);
      }
      assert.notEqual(alpha.child, stuck.child);

      const read = seen.find((params) => params.update.sessionUpdate === "tool_call" && params.update.toolCallId === "c1");
      assert.ok(read, `the child's tool call never reached the client: ${JSON.stringify(seen)}`);
      assert.equal(read.sessionId, alpha.child, "the child's call comes in its own session");
      assert.equal(read.update.title, "Read alpha.txt", "unlabelled: the session says whose it is");
      assert.ok(!updates.some((u) => u.toolCallId === "c1" || u.toolCallId === "t1/c1"), "the child's call also came in the parent's session");
      assert.deepEqual(
        Object.fromEntries(idle),
        { [alpha.child]: "end_turn", [stuck.child]: "cancelled" },
        "the children did not end as finished and stopped",
      );

      // The SDK handed over every announcement and state change, on the parent's ActiveSession
      // too, and every one was validated, against the crate's schema.
      const onWire = subagentUpdatesOnWire(h);
      assert.equal(onWire.length, 4, "two announcements, two idle reports");
      assert.equal(seen.filter((params) => params.update.sessionUpdate === "subagent_update").length, 4);
      assert.equal(updates.filter((u) => u.sessionUpdate === "subagent_update").length, 4);
      assert.equal(h.checker.validated.get(`SessionNotification${CRATE_SCHEMA_TAG}`), 4);
      assert.equal(h.checker.validated.get(`InitializeRequest${CRATE_SCHEMA_TAG}`), 1);

      const last = (await h.modelRequests()).at(-1);
      assert.equal(resultText(last, "t1"), "alpha done", "only the child's report reaches the parent");
      assert.match(resultText(last, "t2"), /it was cancelled/);
    },
    { sdk: unstable },
  );
});

test("a client without `subagents` gets no child sessions: the child's calls come labelled in the parent's", TIMEOUT, async (t) => {
  await withAgent(t, scenario(["t1", ALPHA]), async (h) => {
    writeFileSync(join(h.projectDir, "alpha.txt"), "alpha\n");
    await h.initialize(PLAIN_INITIALIZE);
    const session = await h.newSession();
    h.prompt(session, "look around");
    const { updates, response } = await h.finishTurn(session);
    assert.equal(response.stopReason, "end_turn");

    assert.deepEqual(subagentUpdatesOnWire(h), [], "subagent_update sent to a client that did not ask for it");
    const foreign = h.checker.log.filter(({ from, msg }) => from === "agent" && msg.method === "session/update" && msg.params.sessionId !== session.sessionId);
    assert.deepEqual(foreign.map(({ line }) => line), [], "updates for a session the client never opened");

    const calls = updates.filter((u) => u.toolCallId === "t1/c1");
    assert.equal(calls[0]?.sessionUpdate, "tool_call", `the child's call was not announced first: ${JSON.stringify(updates)}`);
    assert.equal(calls[0].title, "explore: find alpha — Read alpha.txt", "the call does not say which task it belongs to");
    assert.equal(calls.at(-1).status, "completed");
    const taskCall = updates.filter((u) => u.toolCallId === "t1");
    assert.equal(taskCall.at(-1).status, "completed");
    assert.ok(updates.indexOf(calls.at(-1)) < updates.indexOf(taskCall.at(-1)), "the child's call ended after its task");

    // All of it is plain ACP as the SDK's schema has it.
    const crateChecked = [...h.checker.validated.keys()].filter((name) => name.endsWith(CRATE_SCHEMA_TAG));
    assert.deepEqual(crateChecked, []);
    assert.equal(resultText((await h.modelRequests()).at(-1), "t1"), "alpha done");
  });
});

test("the SDK's stable entry point drops `subagent_update` but still hands over the child's own updates", TIMEOUT, async (t) => {
  // Its session/update handling parses each notification with the stable schema first; a
  // session update kind that schema lacks throws there, the SDK logs it and drops the message.
  const logged = t.mock.method(console, "error", () => {});
  await withAgent(t, scenario(["t1", ALPHA]), async (h) => {
    writeFileSync(join(h.projectDir, "alpha.txt"), "alpha\n");
    await h.initialize(SUBAGENTS_INITIALIZE);
    const session = await h.newSession();
    h.prompt(session, "look around");
    const { updates, response } = await h.finishTurn(session);
    assert.equal(response.stopReason, "end_turn");

    const onWire = subagentUpdatesOnWire(h);
    assert.equal(onWire.length, 2, "an announcement and an idle report");
    const child = onWire[0].msg.params.update.sessionId;
    // The SDK runs the client's handlers a few steps after it routes a message to its session:
    // a round trip to the agent makes sure every update before it has been handled.
    await h.barrier();
    const delivered = [];
    while (h.sessionUpdates.size > 0) delivered.push(await h.sessionUpdates.next());
    assert.deepEqual(delivered.filter((params) => params.update.sessionUpdate === "subagent_update"), [], "the stable SDK now delivers subagent_update: build the subagents client with it");
    assert.deepEqual(updates.filter((u) => u.sessionUpdate === "subagent_update"), []);
    const read = delivered.find((params) => params.update.sessionUpdate === "tool_call" && params.update.toolCallId === "c1");
    assert.equal(read?.sessionId, child, "the child's own updates still reach the client's handler");
    const drops = logged.mock.calls.filter((call) => call.arguments[0] === "Error handling notification");
    assert.equal(drops.length, 2, `the SDK did not log each dropped update: ${JSON.stringify(logged.mock.calls.map((c) => c.arguments))}`);
    assert.equal(drops[0].arguments[1].code, -32602);
  });
});
