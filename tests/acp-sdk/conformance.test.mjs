// ACP v1 conformance of `larik acp`, driven by the official ACP TypeScript SDK client.
//
//   cargo build                  # builds target/debug/larik and target/debug/larik-mock-llm
//   cd tests/acp-sdk && npm ci && npm test
//
// Binaries are taken from LARIK_BIN / LARIK_MOCK_LLM_BIN, else $CARGO_TARGET_DIR/debug or
// ../../target/debug. Set LARIK_KEEP_TMP=1 to keep each test's temp directory, LARIK_LOG to pass a
// log filter to the agent (its stderr tail is printed when a test fails).
// Every test also fails if any message on the connection breaks the ACP v1 schema shipped
// with the SDK (see ProtocolChecker in harness.mjs).

import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import test from "node:test";
import {
  PERMISSION_OPTIONS,
  PLAIN_INITIALIZE,
  ProtocolChecker,
  ZED_INITIALIZE,
  stringsIn,
  toolResult,
  toolUse,
  withAgent,
} from "./harness.mjs";

const TIMEOUT = { timeout: 120_000 };
/** How long the agent may take to end a turn once it has been cancelled. */
const CANCEL_MS = 5_000;

const writeHello = (second) => ({
  responses: [
    { tool_calls: [{ id: "toolu_1", name: "write", input: { path: "hello.txt", content: "hi\n" } }] },
    { text: second },
  ],
});

const text = (updates) =>
  updates
    .filter((u) => u.sessionUpdate === "agent_message_chunk" && u.content.type === "text")
    .map((u) => u.content.text)
    .join("");

const optionsOf = (permission) => permission.params.options.map((o) => `${o.optionId}:${o.kind}`);

/** Every `session/update` the agent sent for `sessionId` came before its answer to the prompt. */
async function assertNothingAfterPromptResponse(h, sessionId) {
  await h.barrier();
  const { log } = h.checker;
  const request = log.findIndex(({ from, msg }) => from === "client" && msg.method === "session/prompt" && msg.params.sessionId === sessionId);
  assert.notEqual(request, -1, "no session/prompt was sent");
  const answered = h.checker.responseIndex(log[request].msg.id);
  assert.notEqual(answered, -1, "the session/prompt response was not seen on the wire");
  const late = log
    .slice(answered + 1)
    .filter(({ from, msg }) => from === "agent" && msg.method === "session/update" && msg.params?.sessionId === sessionId);
  assert.deepEqual(late.map(({ line }) => line), [], "session/update arrived after the session/prompt response");
}

function assertValidated(h, names) {
  for (const name of names) assert.ok(h.checker.validated.get(name) > 0, `no message was validated against ${name}`);
}

test("the schema checker flags messages that break the ACP v1 schema", () => {
  const opened = () => {
    const c = new ProtocolChecker();
    c.clientMessage({ jsonrpc: "2.0", id: 0, method: "initialize", params: PLAIN_INITIALIZE });
    c.agentLine(JSON.stringify({ jsonrpc: "2.0", id: 0, result: { protocolVersion: 1, agentCapabilities: {} } }));
    c.clientMessage({ jsonrpc: "2.0", id: 1, method: "session/prompt", params: { sessionId: "s", prompt: [{ type: "text", text: "hi" }] } });
    return c;
  };
  const update = (u) => JSON.stringify({ jsonrpc: "2.0", method: "session/update", params: { sessionId: "s", update: u } });

  const good = opened();
  good.agentLine(update({ sessionUpdate: "agent_message_chunk", content: { type: "text", text: "x" } }));
  good.agentLine(JSON.stringify({ jsonrpc: "2.0", id: 1, result: { stopReason: "end_turn" } }));
  assert.deepEqual(good.violations, []);
  assert.equal(good.validated.get("PromptResponse"), 1);
  assert.equal(good.validated.get("SessionNotification"), 1);

  const bad = {
    "not JSON": ["{oops", /not JSON/],
    "no jsonrpc member": [JSON.stringify({ id: 1, result: { stopReason: "end_turn" } }), /JSON-RPC envelope/],
    "unknown stop reason": [JSON.stringify({ jsonrpc: "2.0", id: 1, result: { stopReason: "finished" } }), /PromptResponse/],
    "tool_call_update without toolCallId": [update({ sessionUpdate: "tool_call_update", status: "completed" }), /SessionNotification/],
    "unknown update kind": [update({ sessionUpdate: "agent_message", content: { type: "text", text: "x" } }), /SessionNotification/],
    "bad permission option kind": [
      JSON.stringify({
        jsonrpc: "2.0",
        id: 0,
        method: "session/request_permission",
        params: { sessionId: "s", toolCall: { toolCallId: "t" }, options: [{ optionId: "a", name: "Allow", kind: "allow" }] },
      }),
      /RequestPermissionRequest/,
    ],
    "response to an unknown id": [JSON.stringify({ jsonrpc: "2.0", id: 42, result: {} }), /unknown request id/],
  };
  for (const [name, [line, expected]] of Object.entries(bad)) {
    const c = opened();
    c.agentLine(line);
    assert.ok(c.violations.length > 0, `${name}: not flagged`);
    assert.match(c.violations.join("\n"), expected, name);
  }

  const idle = opened();
  idle.agentLine(JSON.stringify({ jsonrpc: "2.0", id: 1, result: { stopReason: "end_turn" } }));
  idle.agentLine(update({ sessionUpdate: "agent_message_chunk", content: { type: "text", text: "late" } }));
  assert.match(idle.violations.join("\n"), /no session\/prompt is in flight/);
});

test("initialize with Zed's capabilities, then session/new", TIMEOUT, async (t) => {
  await withAgent(t, { responses: [] }, async (h) => {
    const init = await h.initialize(ZED_INITIALIZE);
    assert.equal(init.protocolVersion, 1);

    const session = await h.newSession();
    assert.equal(typeof session.sessionId, "string");
    assert.notEqual(session.sessionId, "");
    assertValidated(h, ["InitializeResponse", "NewSessionResponse"]);
  });
});

test("allowed write: permission round trip, diff, file on disk, streamed reply", TIMEOUT, async (t) => {
  await withAgent(t, writeHello("done"), async (h) => {
    await h.initialize();
    const session = await h.newSession();
    const ask = "Please create hello.txt containing hi.";
    h.prompt(session, ask);

    const permission = await h.nextPermission();
    assert.equal(permission.params.sessionId, session.sessionId);
    assert.deepEqual(optionsOf(permission), PERMISSION_OPTIONS);
    permission.respond({ outcome: { outcome: "selected", optionId: "allow_once" } });

    const { updates, response } = await h.finishTurn(session);
    assert.equal(response.stopReason, "end_turn");
    assert.equal(text(updates), "done");

    const call = updates.find((u) => u.sessionUpdate === "tool_call");
    assert.ok(call, "no tool_call update");
    assert.equal(permission.params.toolCall.toolCallId, call.toolCallId, "permission asked for another tool call");
    const later = updates.slice(updates.indexOf(call) + 1).filter((u) => u.sessionUpdate === "tool_call_update" && u.toolCallId === call.toolCallId);
    assert.ok(later.some((u) => u.status === "completed"), `no completed tool_call_update after the tool_call: ${JSON.stringify(later)}`);
    const file = join(h.projectDir, "hello.txt");
    const diffs = later.flatMap((u) => u.content ?? []).filter((c) => c.type === "diff");
    assert.ok(
      diffs.some((d) => d.path === file && d.newText === "hi\n" && d.oldText == null),
      `no diff of a new ${file} with "hi\\n": ${JSON.stringify(diffs)}`,
    );
    assert.equal(readFileSync(file, "utf8"), "hi\n");

    const requests = await h.modelRequests();
    assert.equal(requests.length, 2, "the model should be asked twice");
    assert.equal(requests[0].model, "claude-mock");
    assert.ok([...stringsIn(requests[0])].some((s) => s.includes(ask)), "the prompt text did not reach the model");
    assert.ok(toolUse(requests[1], "toolu_1"), "the second model request lacks the tool_use toolu_1");
    const result = toolResult(requests[1], "toolu_1");
    assert.ok(result, "the second model request lacks a tool_result for toolu_1");
    assert.notEqual(result.is_error, true, `the write was reported as an error: ${JSON.stringify(result)}`);

    await assertNothingAfterPromptResponse(h, session.sessionId);
    assert.deepEqual(h.checker.agentRequestMethods(), ["session/request_permission"]);
    assertValidated(h, ["InitializeResponse", "NewSessionResponse", "SessionNotification", "RequestPermissionRequest", "PromptResponse"]);
  });
});

test("rejected write: nothing written, tool call failed, model told it was rejected", TIMEOUT, async (t) => {
  await withAgent(t, writeHello("understood"), async (h) => {
    await h.initialize();
    const session = await h.newSession();
    h.prompt(session, "Please create hello.txt containing hi.");

    const permission = await h.nextPermission();
    assert.deepEqual(optionsOf(permission), PERMISSION_OPTIONS);
    permission.respond({ outcome: { outcome: "selected", optionId: "reject_once" } });

    const { updates, response } = await h.finishTurn(session);
    assert.equal(response.stopReason, "end_turn");
    assert.equal(text(updates), "understood");
    const id = permission.params.toolCall.toolCallId;
    const statuses = updates.filter((u) => u.sessionUpdate === "tool_call_update" && u.toolCallId === id).map((u) => u.status);
    assert.ok(statuses.includes("failed"), `no failed tool_call_update, statuses: ${JSON.stringify(statuses)}`);
    assert.ok(!statuses.includes("completed"), "a rejected tool call was reported completed");
    assert.equal(existsSync(join(h.projectDir, "hello.txt")), false, "hello.txt was written despite the rejection");

    const requests = await h.modelRequests();
    assert.equal(requests.length, 2);
    const result = toolResult(requests[1], "toolu_1");
    assert.ok(result, "the second model request lacks a tool_result for toolu_1");
    assert.equal(result.is_error, true);
    assert.match([...stringsIn(result.content)].join(" "), /reject|denied|declin/i);

    await assertNothingAfterPromptResponse(h, session.sessionId);
  });
});

test("session/cancel while the model streams ends the turn as cancelled", TIMEOUT, async (t) => {
  const story = "The quick brown fox jumps over the lazy dog. ".repeat(40);
  const scenario = { responses: [{ text: story, chunk_delay_ms: 50, hang: true }, { text: "still here" }] };
  await withAgent(t, scenario, async (h) => {
    await h.initialize();
    const session = await h.newSession();
    h.prompt(session, "Tell me a long story.");

    const isChunk = (m) => m.kind === "session_update" && m.update.sessionUpdate === "agent_message_chunk";
    const before = await h.readUntil(session, (m) => isChunk(m) || m.kind === "stop", "the first agent_message_chunk");
    assert.ok(isChunk(before.at(-1)), `the turn ended before any text arrived: ${JSON.stringify(before.at(-1))}`);

    await h.cancel(session.sessionId);
    const { updates, response } = await h.wait(h.finishTurn(session), "the cancelled turn to end", CANCEL_MS);
    assert.equal(response.stopReason, "cancelled");
    const streamed = text([...before.filter(isChunk).map((m) => m.update), ...updates]);
    assert.ok(story.startsWith(streamed), "streamed text is not a prefix of the model's text");
    assert.ok(streamed.length < story.length, "the whole story was streamed despite the cancel");

    // The session stays usable.
    h.prompt(session, "Are you still there?");
    const next = await h.finishTurn(session);
    assert.equal(next.response.stopReason, "end_turn");
    assert.equal(text(next.updates), "still here");
    assert.equal((await h.modelRequests()).length, 2);
  });
});

test("session/cancel while a permission request is pending ends the turn as cancelled", TIMEOUT, async (t) => {
  // Sandboxed bash runs without asking, so the call that waits on the user is a write.
  const scenario = { responses: [{ tool_calls: [{ id: "toolu_1", name: "write", input: { path: "ran.txt", content: "ran\n" } }] }] };
  await withAgent(t, scenario, async (h) => {
    await h.initialize();
    const session = await h.newSession();
    h.prompt(session, "Write the file.");

    const permission = await h.nextPermission();
    assert.deepEqual(optionsOf(permission), PERMISSION_OPTIONS);
    await h.cancel(session.sessionId);
    permission.respond({ outcome: { outcome: "cancelled" } });

    const { response } = await h.wait(h.finishTurn(session), "the cancelled turn to end", CANCEL_MS);
    assert.equal(response.stopReason, "cancelled");
    assert.equal(existsSync(join(h.projectDir, "ran.txt")), false, "the file was written although permission was never given");
    assert.equal((await h.modelRequests()).length, 1, "the model was asked again after the turn was cancelled");
  });
});
