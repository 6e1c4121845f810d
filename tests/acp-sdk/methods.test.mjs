// The rest of the ACP v1 surface of `larik acp`: modes and config options, the commands and
// updates around a turn, request cancellation, authentication, slash commands, steering, and the
// session lifecycle (list, load, resume, close, delete) across a restart of the agent process.
// As in conformance.test.mjs, every message on every connection is checked against the ACP v1
// schema shipped with the SDK, and any violation fails the test.

import assert from "node:assert/strict";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import test from "node:test";
import * as acp from "@agentclientprotocol/sdk";
import { PLAIN_INITIALIZE, ProtocolChecker, alive, eventually, pidOf, stringsIn, toolResult, withAgent } from "./harness.mjs";

const TIMEOUT = { timeout: 120_000 };
/** How long the agent may take to end a turn once it has been cancelled. */
const CANCEL_MS = 5_000;

const MODES = ["default", "accept-edits", "plan", "yolo"];
const CONFIG_IDS = ["mode", "model", "thought_level"];
const COMMANDS = ["compact", "clear", "mode", "model", "mcp", "plugin", "tasks", "budget", "undo", "checkpoints", "sandbox", "config"];

// ---------------------------------------------------------------------------
// Reading the wire log

const isUpdate = (entry, sessionId) =>
  entry.from === "agent" && entry.msg.method === "session/update" && (sessionId === undefined || entry.msg.params?.sessionId === sessionId);

/**
 * The client's last `method` request (for `sessionId`, when given): its log position, the
 * position of the agent's answer, and that answer as sent on the wire.
 */
function exchange(h, method, sessionId) {
  const { log } = h.checker;
  const request = log.findLastIndex(
    ({ from, msg }) => from === "client" && msg.method === method && "id" in msg && (sessionId === undefined || msg.params?.sessionId === sessionId),
  );
  assert.notEqual(request, -1, `no ${method} request was sent`);
  const { id } = log[request].msg;
  const response = h.checker.responseIndex(id);
  assert.notEqual(response, -1, `the answer to ${method} (id ${id}) was not seen on the wire`);
  return { id, request, response, answer: log[response].msg };
}

/** The `session/update`s for `sessionId` at log positions strictly between `from` and `to`. */
function updatesBetween(h, sessionId, from, to = h.checker.log.length) {
  return h.checker.log
    .slice(from + 1, to)
    .filter((entry) => isUpdate(entry, sessionId))
    .map(({ msg }) => msg.params.update);
}

/** The updates the agent sent for `sessionId` while answering its last `method` request. */
function updatesDuring(h, method, sessionId) {
  const { request, response } = exchange(h, method, sessionId);
  return updatesBetween(h, sessionId, request, response);
}

/**
 * Fails if a `session/update` for `sessionId` arrived after the answer to its last `method`
 * request and before the client's next request about that session (or until now), other than
 * one of the `except` kinds.
 */
async function assertNothingAfter(h, method, sessionId, { except = [] } = {}) {
  await h.barrier();
  const { response } = exchange(h, method, sessionId);
  const rest = h.checker.log.slice(response + 1);
  const next = rest.findIndex(({ from, msg }) => from === "client" && "id" in msg && msg.params?.sessionId === sessionId);
  const late = (next === -1 ? rest : rest.slice(0, next))
    .filter((entry) => isUpdate(entry, sessionId))
    .filter(({ msg }) => !except.includes(msg.params.update?.sessionUpdate));
  assert.deepEqual(late.map(({ line }) => line), [], `session/update arrived after the ${method} response`);
}

const kinds = (updates) => updates.map((u) => u.sessionUpdate);

const text = (updates, kind = "agent_message_chunk") =>
  updates
    .filter((u) => u.sessionUpdate === kind && u.content.type === "text")
    .map((u) => u.content.text)
    .join("");

const option = (configOptions, id) => {
  const found = configOptions.find((o) => o.id === id);
  assert.ok(found, `no config option ${id} in ${JSON.stringify(configOptions)}`);
  return found;
};

const currentValues = (configOptions) => Object.fromEntries(configOptions.map((o) => [o.id, o.currentValue]));

/** Awaits a request that must fail; returns the JSON-RPC error. */
async function rejection(h, promise, what) {
  const error = await h.wait(
    promise.then(
      (result) => assert.fail(`${what} succeeded: ${JSON.stringify(result)}`),
      (e) => e,
    ),
    what,
  );
  assert.ok(error instanceof acp.RequestError, `${what} failed without a JSON-RPC error: ${error}`);
  return error;
}

/** Each of the schema's `$defs` `names` was used to validate at least one message. */
function assertValidated(h, names) {
  for (const name of names) assert.ok(h.checker.validated.get(name) > 0, `no message was validated against ${name}`);
}

const request = (h, method, params) => h.wait(h.agent.request(method, params), `the ${method} response`);

// ---------------------------------------------------------------------------

test("the wire-log helpers and the checker tell updates inside an answer window from late ones", async () => {
  const checker = new ProtocolChecker();
  const h = { checker, barrier: async () => {} };
  const send = (msg) => checker.clientMessage({ jsonrpc: "2.0", ...msg });
  const receive = (msg) => checker.agentLine(JSON.stringify({ jsonrpc: "2.0", ...msg }));
  const update = (sessionId, sessionUpdate, words) =>
    receive({ method: "session/update", params: { sessionId, update: { sessionUpdate, content: { type: "text", text: words } } } });
  send({ id: 0, method: "initialize", params: PLAIN_INITIALIZE });
  receive({ id: 0, result: { protocolVersion: 1, agentCapabilities: {} } });

  // A load replays inside its window, like a prompt streams inside its own.
  send({ id: 1, method: "session/load", params: { sessionId: "s", cwd: "/p", mcpServers: [] } });
  update("s", "user_message_chunk", "question");
  update("s", "agent_message_chunk", "answer");
  receive({ id: 1, result: {} });
  assert.deepEqual(checker.violations, []);
  assert.deepEqual(updatesDuring(h, "session/load", "s").map((u) => u.content.text), ["question", "answer"]);
  await assertNothingAfter(h, "session/load", "s");
  update("s", "user_message_chunk", "late replay");
  assert.match(checker.violations.join("\n"), /'user_message_chunk' update while no session\/prompt is in flight/);
  await assert.rejects(assertNothingAfter(h, "session/load", "s"), /after the session\/load response/);

  send({ id: 2, method: "session/prompt", params: { sessionId: "t", prompt: [{ type: "text", text: "hi" }] } });
  send({ id: 3, method: "session/prompt", params: { sessionId: "s", prompt: [{ type: "text", text: "hi" }] } });
  update("s", "agent_message_chunk", "mine");
  update("t", "agent_message_chunk", "other session");
  receive({ id: 3, result: { stopReason: "end_turn" } });
  receive({ id: 2, result: { stopReason: "end_turn" } });
  assert.equal(checker.violations.length, 1);
  assert.deepEqual(updatesDuring(h, "session/prompt", "s").map((u) => u.content.text), ["mine"]);
  await assertNothingAfter(h, "session/prompt", "s");
  update("s", "agent_message_chunk", "late");
  assert.equal(checker.violations.length, 2);
  await assert.rejects(assertNothingAfter(h, "session/prompt", "s"), /after the session\/prompt response/);
});

test("initialize advertises session lifecycle, the api-key method and the extensions", TIMEOUT, async (t) => {
  await withAgent(t, { responses: [] }, async (h) => {
    const init = await h.initialize();
    const caps = init.agentCapabilities;
    assert.equal(caps.loadSession, true);
    for (const capability of ["list", "resume", "close", "delete"]) {
      assert.ok(caps.sessionCapabilities?.[capability], `sessionCapabilities.${capability} is not advertised: ${JSON.stringify(caps.sessionCapabilities)}`);
    }
    assert.deepEqual(init.authMethods.map((m) => m.id), ["api-key"]);
    assert.equal(init._meta?.steering?.supported, true, "the steering extension is not advertised in the result's _meta");
    assert.equal(caps._meta?.larik?.version, 1, "agentCapabilities._meta.larik.version is not 1");
  });
});

test("session/new: modes and config options, then available_commands_update right after the response", TIMEOUT, async (t) => {
  await withAgent(t, { responses: [] }, async (h) => {
    await h.initialize();
    const session = await h.newSession();
    const created = session.newSessionResponse;
    assert.equal(created.modes.currentModeId, "default");
    assert.deepEqual(created.modes.availableModes.map((m) => m.id), MODES);
    assert.deepEqual(created.configOptions.map((o) => o.id), CONFIG_IDS);
    assert.deepEqual(option(created.configOptions, "mode").options.map((o) => o.value), MODES);
    assert.deepEqual(currentValues(created.configOptions), { mode: "default", model: "claude-mock", thought_level: "off" });

    const first = await h.wait(session.nextUpdate(), "the first session/update of the new session");
    assert.equal(first.kind, "session_update");
    assert.equal(first.update.sessionUpdate, "available_commands_update");
    assert.deepEqual(first.update.availableCommands.map((c) => c.name), COMMANDS);
    for (const command of first.update.availableCommands) assert.equal(typeof command.description, "string");

    const { request: sent, response } = exchange(h, "session/new");
    assert.deepEqual(updatesBetween(h, session.sessionId, sent, response), [], "session/update for the session before session/new answered");
    const announced = h.checker.log.findIndex(
      (entry) => isUpdate(entry, session.sessionId) && entry.msg.params.update.sessionUpdate === "available_commands_update",
    );
    assert.ok(announced > response, "available_commands_update did not come after the session/new response");
  });
});

test("session/set_mode: each mode sends current_mode_update and config_option_update before {}", TIMEOUT, async (t) => {
  const scenario = { responses: [{ tool_calls: [{ id: "toolu_1", name: "write", input: { path: "plan.txt", content: "x\n" } }] }, { text: "ok" }] };
  await withAgent(t, scenario, async (h) => {
    await h.initialize();
    const session = await h.newSession();
    const { sessionId } = session;

    for (const modeId of ["accept-edits", "plan", "yolo", "default", "plan"]) {
      const result = await request(h, acp.methods.agent.session.setMode, { sessionId, modeId });
      assert.deepEqual(result, {});
      const { answer } = exchange(h, "session/set_mode", sessionId);
      assert.deepEqual(answer.result, {}, "session/set_mode did not answer {}");
      const updates = updatesDuring(h, "session/set_mode", sessionId);
      assert.deepEqual(kinds(updates), ["current_mode_update", "config_option_update"], `${modeId}: updates before the answer`);
      assert.equal(updates[0].currentModeId, modeId);
      assert.deepEqual(updates[1].configOptions.map((o) => o.id), CONFIG_IDS);
      assert.equal(option(updates[1].configOptions, "mode").currentValue, modeId);
    }

    const unknown = await rejection(h, h.agent.request(acp.methods.agent.session.setMode, { sessionId, modeId: "turbo" }), "set_mode turbo");
    assert.equal(unknown.code, -32602);
    const noSession = await rejection(h, h.agent.request(acp.methods.agent.session.setMode, { sessionId: "sess_nope", modeId: "plan" }), "set_mode on an unknown session");
    assert.equal(noSession.code, -32002);

    // The session is in plan mode now: a write is refused without asking.
    h.prompt(session, "Write plan.txt.");
    const { updates, response } = await h.finishTurn(session);
    assert.equal(response.stopReason, "end_turn");
    const statuses = updates.filter((u) => u.sessionUpdate === "tool_call_update" && u.toolCallId === "toolu_1").map((u) => u.status);
    assert.ok(statuses.includes("failed"), `the write in plan mode did not fail: ${JSON.stringify(statuses)}`);
    assert.equal(existsSync(join(h.projectDir, "plan.txt")), false, "a file was written in plan mode");
    assert.deepEqual(h.checker.agentRequestMethods(), [], "the agent asked for permission in plan mode");
    assertValidated(h, ["SetSessionModeRequest", "SetSessionModeResponse", "SessionNotification", "Error"]);
  });
});

test("session/set_config_option: mode, model and thought_level, each answered with every option", TIMEOUT, async (t) => {
  const settings = { models: ["claude-mock", "claude-mock-2"] };
  await withAgent(
    t,
    { responses: [{ text: "thinking hard" }] },
    async (h) => {
      await h.initialize();
      const session = await h.newSession();
      const { sessionId } = session;
      assert.deepEqual(option(session.newSessionResponse.configOptions, "model").options.map((o) => o.value), settings.models);
      const expected = { mode: "default", model: "claude-mock", thought_level: "off" };

      for (const [configId, value] of [
        ["mode", "accept-edits"],
        ["model", "claude-mock-2"],
        ["thought_level", "high"],
      ]) {
        const result = await request(h, acp.methods.agent.session.setConfigOption, { sessionId, configId, value });
        expected[configId] = value;
        assert.deepEqual(result.configOptions.map((o) => o.id), CONFIG_IDS, `${configId}: the answer lacks options`);
        assert.deepEqual(currentValues(result.configOptions), expected, `${configId}: current values`);
        const updates = updatesDuring(h, "session/set_config_option", sessionId);
        if (configId === "mode") {
          assert.deepEqual(updates.map((u) => [u.sessionUpdate, u.currentModeId]), [["current_mode_update", "accept-edits"]]);
        } else {
          assert.deepEqual(kinds(updates), [], `${configId}: unexpected updates`);
        }
      }

      for (const [configId, value, what] of [
        ["model", "claude-nope", "an unconfigured model"],
        ["thought_level", "extreme", "an unknown thought level"],
        ["mode", "turbo", "an unknown mode"],
        ["colour", "blue", "an unknown option"],
      ]) {
        const error = await rejection(h, h.agent.request(acp.methods.agent.session.setConfigOption, { sessionId, configId, value }), `setting ${what}`);
        assert.equal(error.code, -32602, `setting ${what}`);
      }

      // The switched model and thought level reach the model request.
      h.prompt(session, "Think about it.");
      const { response } = await h.finishTurn(session);
      assert.equal(response.stopReason, "end_turn");
      const [body] = await h.modelRequests();
      assert.equal(body.model, "claude-mock-2");
      assert.equal(body.thinking?.type, "enabled", `thought_level high did not turn thinking on: ${JSON.stringify(body.thinking)}`);
      assertValidated(h, ["SetSessionConfigOptionRequest", "SetSessionConfigOptionResponse", "Error"]);
    },
    { settings },
  );
});

test("a turn streams tool calls, plan, usage_update and the session title before its response", TIMEOUT, async (t) => {
  const todos = [
    { content: "Read the code", status: "completed" },
    { content: "Fix the bug", status: "in_progress" },
    { content: "Run the tests", status: "pending" },
  ];
  const scenario = {
    responses: [
      { text: "Let me plan.", tool_calls: [{ id: "toolu_1", name: "todo", input: { todos } }] },
      { text: "Planned." },
      { text: "Second answer." },
    ],
  };
  await withAgent(t, scenario, async (h) => {
    await h.initialize();
    const session = await h.newSession();
    const { sessionId } = session;
    const announced = await h.wait(session.nextUpdate(), "available_commands_update");
    assert.equal(announced.update?.sessionUpdate, "available_commands_update");
    h.prompt(session, "Plan the bug fix");
    const { updates, response } = await h.finishTurn(session);
    assert.equal(response.stopReason, "end_turn");
    assert.equal(text(updates), "Let me plan.Planned.");

    const titles = updates.filter((u) => u.sessionUpdate === "session_info_update");
    assert.equal(titles.length, 1, `expected one session_info_update: ${JSON.stringify(titles)}`);
    assert.equal(typeof titles[0].title, "string");
    assert.notEqual(titles[0].title.trim(), "");

    const plans = updates.filter((u) => u.sessionUpdate === "plan");
    assert.equal(plans.length, 1, `expected one plan update: ${JSON.stringify(plans)}`);
    assert.deepEqual(
      plans[0].entries.map(({ content, status }) => ({ content, status })),
      todos,
    );

    // The plan is shown once, as the plan: the todo call itself is not a tool call to show.
    assert.equal(updates.filter((u) => u.toolCallId === "toolu_1").length, 0, "the todo call was shown as a tool call");

    const usage = updates.filter((u) => u.sessionUpdate === "usage_update");
    assert.ok(usage.length >= 1, "no usage_update");
    for (const u of usage) {
      assert.ok(Number.isInteger(u.used) && u.used > 0, `usage_update.used: ${u.used}`);
      assert.ok(Number.isInteger(u.size) && u.size >= u.used, `usage_update.size: ${u.size}`);
    }
    // The updates read through the SDK are exactly those on the wire before the answer.
    assert.deepEqual(updatesDuring(h, "session/prompt", sessionId), updates);
    await assertNothingAfter(h, "session/prompt", sessionId);

    // Only the first prompt names the session; the name is what session/list shows.
    h.prompt(session, "And then?");
    const second = await h.finishTurn(session);
    assert.equal(text(second.updates), "Second answer.");
    assert.deepEqual(second.updates.filter((u) => u.sessionUpdate === "session_info_update"), []);
    await assertNothingAfter(h, "session/prompt", sessionId);
    const { sessions } = await request(h, acp.methods.agent.session.list, {});
    assert.equal(sessions.find((s) => s.sessionId === sessionId)?.title, titles[0].title);
  });
});

test("$/cancel_request for a pending session/prompt ends it as cancelled", TIMEOUT, async (t) => {
  const story = "Once upon a time there was a very long story. ".repeat(40);
  const scenario = { responses: [{ text: story, chunk_delay_ms: 50, hang: true }, { text: "still here" }] };
  await withAgent(t, scenario, async (h) => {
    await h.initialize();
    const session = await h.newSession();
    const abort = new AbortController();
    // The SDK sends `$/cancel_request` for the prompt's id when the signal aborts.
    const answered = session.prompt("Tell me a long story.", { cancellationSignal: abort.signal });
    answered.catch(() => {});

    const isChunk = (m) => m.kind === "session_update" && m.update.sessionUpdate === "agent_message_chunk";
    const before = await h.readUntil(session, (m) => isChunk(m) || m.kind === "stop", "the first agent_message_chunk");
    assert.ok(isChunk(before.at(-1)), `the turn ended before any text arrived: ${JSON.stringify(before.at(-1))}`);
    abort.abort();

    const response = await h.wait(answered, "the cancelled prompt's response", CANCEL_MS);
    assert.equal(response.stopReason, "cancelled");
    const { updates } = await h.wait(h.finishTurn(session), "the end of the cancelled turn", CANCEL_MS);
    const streamed = text([...before.filter(isChunk).map((m) => m.update), ...updates]);
    assert.ok(streamed.length < story.length, "the whole story was streamed despite the cancellation");

    const { id } = exchange(h, "session/prompt", session.sessionId);
    const cancels = h.checker.log.filter(({ from, msg }) => from === "client" && msg.method === "$/cancel_request");
    assert.deepEqual(cancels.map(({ msg }) => msg.params), [{ requestId: id }], "the client did not send exactly one $/cancel_request for the prompt");
    assert.ok(!h.checker.log.some(({ msg }) => msg.method === "session/cancel"), "session/cancel was sent too");
    assert.ok(h.checker.validated.get("CancelRequestNotification") > 0, "$/cancel_request was not validated");
    await assertNothingAfter(h, "session/prompt", session.sessionId);

    h.prompt(session, "Are you there?");
    const next = await h.finishTurn(session);
    assert.equal(next.response.stopReason, "end_turn");
    assert.equal(text(next.updates), "still here");
  });
});

test("session/cancel during a running bash command kills it and ends the turn as cancelled", TIMEOUT, async (t) => {
  const command = "exec sleep 30.1234";
  const scenario = { responses: [{ tool_calls: [{ id: "toolu_1", name: "bash", input: { command } }] }, { text: "not reached" }] };
  await withAgent(t, scenario, async (h) => {
    await h.initialize();
    const session = await h.newSession();
    h.prompt(session, "Sleep for a while.");

    const running = (m) => m.kind === "session_update" && m.update.sessionUpdate === "tool_call_update" && m.update.status === "in_progress";
    const before = await h.readUntil(session, (m) => running(m) || m.kind === "stop", "the bash call to start");
    assert.ok(running(before.at(-1)), `the turn ended before bash ran: ${JSON.stringify(before.at(-1))}`);
    assert.deepEqual(h.checker.agentRequestMethods(), [], "sandboxed bash asked for permission");
    assert.ok(await eventually(() => pidOf(["sleep", "30.1234"]) !== undefined), "the command never started");
    const pid = pidOf(["sleep", "30.1234"]);
    assert.ok(Number.isInteger(pid) && alive(pid), `the command (pid ${pid}) is not running`);

    await h.cancel(session.sessionId);
    const { updates, response } = await h.wait(h.finishTurn(session), "the cancelled turn to end", CANCEL_MS);
    assert.equal(response.stopReason, "cancelled");
    const statuses = updates.filter((u) => u.sessionUpdate === "tool_call_update" && u.toolCallId === "toolu_1").map((u) => u.status);
    assert.deepEqual(statuses, ["failed"], "the killed command should end as failed");
    assert.ok(await eventually(() => !alive(pid), CANCEL_MS), `sleep (pid ${pid}) still runs after the turn was cancelled`);
    assert.equal((await h.modelRequests()).length, 1, "the model was asked again after the cancellation");
    await assertNothingAfter(h, "session/prompt", session.sessionId);
  });
});

test("authenticate api-key succeeds when ANTHROPIC_API_KEY is set", TIMEOUT, async (t) => {
  await withAgent(t, { responses: [] }, async (h) => {
    await h.initialize();
    const result = await request(h, acp.methods.agent.authenticate, { methodId: "api-key" });
    assert.deepEqual(result, {});
    assert.deepEqual(exchange(h, "authenticate").answer.result, {}, "authenticate did not answer {}");
    const unknown = await rejection(h, h.agent.request(acp.methods.agent.authenticate, { methodId: "oauth" }), "authenticate oauth");
    assert.equal(unknown.code, -32602);
    assertValidated(h, ["AuthenticateRequest", "AuthenticateResponse", "Error"]);
  });
});

test("authenticate api-key fails with -32000 without ANTHROPIC_API_KEY, and so does a prompt", TIMEOUT, async (t) => {
  await withAgent(
    t,
    { responses: [{ text: "must not be asked" }] },
    async (h) => {
      await h.initialize();
      const error = await rejection(h, h.agent.request(acp.methods.agent.authenticate, { methodId: "api-key" }), "authenticate without a key");
      assert.equal(error.code, -32000);
      assert.match(error.message, /ANTHROPIC_API_KEY/);

      const session = await h.newSession();
      const prompted = await rejection(h, h.prompt(session, "Hello?"), "a prompt without a key");
      assert.equal(prompted.code, -32000);
      assert.equal((await h.modelRequests()).length, 0, "the model was called without a key");
    },
    { env: { ANTHROPIC_API_KEY: undefined } },
  );
});

test("the /mode slash command switches mode without calling the model", TIMEOUT, async (t) => {
  await withAgent(t, { responses: [] }, async (h) => {
    await h.initialize();
    const session = await h.newSession();
    await h.wait(session.nextUpdate(), "available_commands_update");
    h.prompt(session, "/mode plan");
    const { updates, response } = await h.finishTurn(session);
    assert.equal(response.stopReason, "end_turn");
    const mode = updates.find((u) => u.sessionUpdate === "current_mode_update");
    assert.equal(mode?.currentModeId, "plan", `no current_mode_update to plan: ${JSON.stringify(updates)}`);
    const config = updates.find((u) => u.sessionUpdate === "config_option_update");
    assert.equal(option(config?.configOptions ?? [], "mode").currentValue, "plan");
    assert.match(text(updates), /plan/);
    assert.equal((await h.modelRequests()).length, 0, "the model was called for a slash command");
    await assertNothingAfter(h, "session/prompt", session.sessionId);

    // The mode stuck: the next answer about options reflects it.
    const { configOptions } = await request(h, acp.methods.agent.session.setConfigOption, { sessionId: session.sessionId, configId: "thought_level", value: "low" });
    assert.equal(option(configOptions, "mode").currentValue, "plan");
  });
});

test("_session/steering adds words to the running turn, and asks for a prompt when idle", TIMEOUT, async (t) => {
  // The command waits for a file the test creates, so the turn is certainly running when steered
  // (bounded, so a failed test leaves no endless loop behind).
  const command = "i=0; while [ ! -e go ] && [ $i -lt 1500 ]; do sleep 0.02; i=$((i+1)); done; echo went";
  const scenario = { responses: [{ tool_calls: [{ id: "toolu_1", name: "bash", input: { command } }] }, { text: "Will do." }] };
  await withAgent(t, scenario, async (h) => {
    await h.initialize();
    const session = await h.newSession();
    const steer = (words) => request(h, "_session/steering", { sessionId: session.sessionId, prompt: [{ type: "text", text: words }] });
    assert.deepEqual(await steer("anyone there?"), { outcome: "promptRequired" });

    h.prompt(session, "Wait for go.");
    const running = (m) => m.kind === "session_update" && m.update.sessionUpdate === "tool_call_update" && m.update.status === "in_progress";
    const before = await h.readUntil(session, (m) => running(m) || m.kind === "stop", "the bash call to start");
    assert.ok(running(before.at(-1)), `the turn ended before bash ran: ${JSON.stringify(before.at(-1))}`);
    assert.deepEqual(await steer("also update the changelog"), { outcome: "injected" });
    writeFileSync(join(h.projectDir, "go"), "");

    const { response } = await h.finishTurn(session);
    assert.equal(response.stopReason, "end_turn");
    const requests = await h.modelRequests();
    assert.equal(requests.length, 2);
    assert.ok(
      [...stringsIn(requests[1].messages)].some((s) => s.includes("also update the changelog")),
      "the steering words did not reach the next model request",
    );
    assert.ok(!JSON.stringify(requests[0]).includes("changelog"), "the steering words reached the model too early");
    await assertNothingAfter(h, "session/prompt", session.sessionId);
  });
});

test("sessions survive a restart: list, load (replay first), resume (no replay), close, delete", TIMEOUT, async (t) => {
  const first = {
    responses: [
      { tool_calls: [{ id: "toolu_1", name: "read", input: { path: "notes.txt" } }] },
      { text: "The notes say hello." },
      { text: "I will remember 42." },
    ],
  };
  const second = { responses: [{ text: "Still here." }, { text: "It was 42." }] };
  const prompt = (h, sessionId, words) => request(h, acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: words }] });

  await withAgent(t, first, async (a) => {
    writeFileSync(join(a.projectDir, "notes.txt"), "hello\n");
    await a.initialize();
    const loaded = await a.newSession();
    const untouched = await a.newSession();
    const resumed = await a.newSession();

    a.prompt(loaded, "Read notes.txt");
    assert.equal((await a.finishTurn(loaded)).response.stopReason, "end_turn");
    await assertNothingAfter(a, "session/prompt", loaded.sessionId);
    a.prompt(resumed, "Remember the number 42");
    assert.equal((await a.finishTurn(resumed)).response.stopReason, "end_turn");
    await assertNothingAfter(a, "session/prompt", resumed.sessionId);

    const titles = {};
    for (const { sessionId } of [loaded, resumed]) {
      titles[sessionId] = updatesDuring(a, "session/prompt", sessionId).find((u) => u.sessionUpdate === "session_info_update")?.title;
      assert.equal(typeof titles[sessionId], "string", `the first prompt of ${sessionId} did not name it`);
    }

    assert.equal(await a.endInput(), 0, "larik did not exit cleanly when its stdin closed");

    await withAgent(
      t,
      second,
      async (b) => {
        await b.initialize();

        // list: the prompted sessions, with their titles; not the one never prompted.
        const { sessions } = await request(b, acp.methods.agent.session.list, {});
        const listed = new Map(sessions.map((s) => [s.sessionId, s]));
        for (const id of [loaded.sessionId, resumed.sessionId]) {
          assert.ok(listed.has(id), `${id} is not listed after the restart: ${JSON.stringify(sessions)}`);
          assert.equal(listed.get(id).cwd, b.projectDir);
          assert.equal(listed.get(id).title, titles[id]);
        }
        assert.ok(!listed.has(untouched.sessionId), "a session never prompted is listed");
        const here = await request(b, acp.methods.agent.session.list, { cwd: b.projectDir });
        assert.deepEqual(here.sessions.map((s) => s.sessionId).sort(), [loaded.sessionId, resumed.sessionId].sort());
        const elsewhere = await request(b, acp.methods.agent.session.list, { cwd: join(b.root, "home") });
        assert.deepEqual(elsewhere.sessions, [], "sessions of another cwd are listed");

        // load: the history is replayed before the answer, and nothing after it.
        const loadResult = await request(b, acp.methods.agent.session.load, { sessionId: loaded.sessionId, cwd: b.projectDir, mcpServers: [] });
        assert.equal(loadResult.modes?.currentModeId, "default");
        assert.deepEqual(loadResult.configOptions?.map((o) => o.id), CONFIG_IDS);
        const replay = updatesDuring(b, "session/load", loaded.sessionId);
        const { request: loadSent, response: loadAnswered } = exchange(b, "session/load", loaded.sessionId);
        const foreign = b.checker.log.slice(loadSent + 1, loadAnswered).filter((e) => isUpdate(e) && !isUpdate(e, loaded.sessionId));
        assert.deepEqual(foreign, [], "the replay carried updates of other sessions");
        assert.equal(text(replay, "user_message_chunk"), "Read notes.txt");
        assert.equal(text(replay), "The notes say hello.");
        const user = replay.findIndex((u) => u.sessionUpdate === "user_message_chunk");
        const call = replay.findIndex((u) => u.sessionUpdate === "tool_call" && u.toolCallId === "toolu_1");
        const answer = replay.findIndex((u) => u.sessionUpdate === "agent_message_chunk");
        assert.ok(user !== -1 && user < call && call < answer, `replay out of order: ${JSON.stringify(kinds(replay))}`);
        assert.equal(replay[call].status, "completed");
        assert.ok([...stringsIn(replay[call].content)].some((s) => s.includes("hello")), "the replayed read lacks its output");
        // The commands menu follows a load as it follows session/new (the skills were read
        // again); no replay does.
        await assertNothingAfter(b, "session/load", loaded.sessionId, { except: ["available_commands_update"] });

        // The loaded session goes on with its whole history.
        assert.equal((await prompt(b, loaded.sessionId, "Anything else?")).stopReason, "end_turn");
        assert.equal(text(updatesDuring(b, "session/prompt", loaded.sessionId)), "Still here.");
        await assertNothingAfter(b, "session/prompt", loaded.sessionId);
        const [afterLoad] = await b.modelRequests();
        assert.ok([...stringsIn(afterLoad.messages)].some((s) => s.includes("Read notes.txt")), "the first prompt is missing after load");
        assert.ok(toolResult(afterLoad, "toolu_1"), "the read's result is missing after load");

        // resume: no replay, before or after the answer, but the model still sees the history.
        const resumeResult = await request(b, acp.methods.agent.session.resume, { sessionId: resumed.sessionId, cwd: b.projectDir });
        assert.deepEqual(resumeResult.configOptions?.map((o) => o.id), CONFIG_IDS);
        assert.deepEqual(updatesDuring(b, "session/resume", resumed.sessionId), [], "session/resume replayed the session");
        await assertNothingAfter(b, "session/resume", resumed.sessionId, { except: ["available_commands_update"] });
        assert.equal((await prompt(b, resumed.sessionId, "Which number?")).stopReason, "end_turn");
        assert.equal(text(updatesDuring(b, "session/prompt", resumed.sessionId)), "It was 42.");
        await assertNothingAfter(b, "session/prompt", resumed.sessionId);
        const afterResume = (await b.modelRequests())[1];
        assert.ok([...stringsIn(afterResume.messages)].some((s) => s.includes("Remember the number 42")), "the history is missing after resume");

        // close: the session is gone from this connection but stays saved.
        assert.deepEqual(await request(b, acp.methods.agent.session.close, { sessionId: loaded.sessionId }), {});
        assert.deepEqual(exchange(b, "session/close", loaded.sessionId).answer.result, {});
        const closed = await rejection(b, b.agent.request(acp.methods.agent.session.prompt, { sessionId: loaded.sessionId, prompt: [{ type: "text", text: "hi" }] }), "a prompt on a closed session");
        assert.equal(closed.code, -32002);
        const afterClose = await request(b, acp.methods.agent.session.list, {});
        assert.ok(afterClose.sessions.some((s) => s.sessionId === loaded.sessionId), "a closed session is no longer listed");

        // delete: idempotent on the wire (the SDK would hide a -32002), and the session is gone.
        for (let i = 0; i < 2; i++) {
          assert.deepEqual(await request(b, acp.methods.agent.session.delete, { sessionId: loaded.sessionId }), {});
          const { answer } = exchange(b, "session/delete", loaded.sessionId);
          assert.deepEqual(answer.result, {}, `delete #${i + 1} did not answer {}: ${JSON.stringify(answer)}`);
        }
        const afterDelete = await request(b, acp.methods.agent.session.list, {});
        assert.deepEqual(afterDelete.sessions.map((s) => s.sessionId), [resumed.sessionId]);
        const gone = await rejection(b, b.agent.request(acp.methods.agent.session.load, { sessionId: loaded.sessionId, cwd: b.projectDir, mcpServers: [] }), "loading a deleted session");
        assert.equal(gone.code, -32002);
        assert.deepEqual(updatesDuring(b, "session/load", loaded.sessionId), [], "loading a deleted session replayed something");

        assertValidated(b, [
          "ListSessionsRequest",
          "ListSessionsResponse",
          "LoadSessionRequest",
          "LoadSessionResponse",
          "ResumeSessionRequest",
          "ResumeSessionResponse",
          "CloseSessionRequest",
          "CloseSessionResponse",
          "DeleteSessionRequest",
          "DeleteSessionResponse",
          "Error",
        ]);
      },
      { root: a.root },
    );
  });
});
