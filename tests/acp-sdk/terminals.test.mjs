// Commands shown as terminals in the client. A client that advertises `terminal` gets bash runs
// as `terminal/create` + `wait_for_exit` + `output` + `release` (the harness runs each terminal as
// a real process, as an editor does), still confined by the agent's sandbox and still killed on
// cancel. A client that advertises Zed's `_meta.terminal_output` gets the output streamed into an
// agent-owned terminal instead, and no `terminal/*` request at all. As everywhere in this suite,
// every message is checked against the ACP v1 schema.

import assert from "node:assert/strict";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import test from "node:test";
import { PLAIN_INITIALIZE, ZED_INITIALIZE, alive, eventually, pidOf, toolResult, withAgent } from "./harness.mjs";

const TIMEOUT = { timeout: 120_000 };
const CANCEL_MS = 5_000;

const TERMINAL_INITIALIZE = { ...PLAIN_INITIALIZE, clientCapabilities: { ...PLAIN_INITIALIZE.clientCapabilities, terminal: true } };

const bashCall = (command) => ({ tool_calls: [{ id: "toolu_1", name: "bash", input: { command } }] });
const resultText = (body) => (toolResult(body, "toolu_1")?.content ?? []).map((part) => part.text ?? "").join("");
const callUpdates = (updates) => updates.filter((u) => u.toolCallId === "toolu_1");
test("a client with `terminal` runs bash in its own terminal, sandboxed, and every terminal is released", TIMEOUT, async (t) => {
  // A listener of the test's own: the connect can only fail because the sandbox stops it.
  const listener = createServer((socket) => socket.destroy());
  await new Promise((resolve) => listener.listen(0, "127.0.0.1", resolve));
  t.after(() => listener.close());
  const { port } = listener.address();
  const command = `echo hello from the editor; (echo > /dev/tcp/127.0.0.1/${port}) 2>/dev/null && echo reached || echo blocked; exit 3`;
  const scenario = { responses: [bashCall(command), { text: "It printed hello." }] };
  await withAgent(t, scenario, async (h) => {
    await h.initialize(TERMINAL_INITIALIZE);
    const session = await h.newSession();
    h.prompt(session, "Say hello.");
    const { updates, response } = await h.finishTurn(session);
    assert.equal(response.stopReason, "end_turn");

    const created = h.terminals.calls.filter((call) => call.method === "create");
    assert.equal(created.length, 1, `expected one terminal/create: ${JSON.stringify(h.terminals.calls)}`);
    const [{ terminalId, cwd, args }] = created;
    assert.equal(cwd, h.projectDir, "the terminal does not start in the project");
    assert.ok(args.at(-1).includes("hello from the editor"), `the command line is not in the terminal's arguments: ${JSON.stringify(args)}`);
    const sequence = h.terminals.calls.map((call) => call.method);
    assert.deepEqual(sequence, ["create", "wait_for_exit", "output", "release"], "the terminal was not waited for, read and released in order");
    assert.deepEqual(h.terminals.unreleased(), [], "a terminal was left unreleased");

    const embeds = (u) => u.content?.some((c) => c.type === "terminal" && c.terminalId === terminalId);
    const calls = callUpdates(updates);
    const announced = calls.findIndex((u) => u.sessionUpdate === "tool_call");
    const shown = calls.findIndex(embeds);
    assert.ok(shown !== -1, `the tool call never embedded terminal ${terminalId}: ${JSON.stringify(calls)}`);
    assert.ok(announced !== -1 && announced < shown, "the terminal was embedded in a call not yet announced");
    assert.ok(shown < calls.length - 1, "the terminal was shown only once the command had finished");
    const last = callUpdates(updates).at(-1);
    assert.equal(last.status, "failed", "exit code 3 should fail the call");
    assert.deepEqual(last.content, [{ type: "terminal", terminalId }], "the finished call should still show its terminal");

    const requests = await h.modelRequests();
    const result = resultText(requests[1]);
    assert.match(result, /hello from the editor/);
    assert.match(result, /exit code 3/);
    assert.match(result, /blocked/, "the command reached the network: the sandbox did not hold in the client's terminal");
    assert.doesNotMatch(result, /reached/);
  });
});

test("cancelling a turn kills and releases the client's terminal", TIMEOUT, async (t) => {
  const command = "exec sleep 30.4321";
  const scenario = { responses: [bashCall(command), { text: "not reached" }] };
  await withAgent(t, scenario, async (h) => {
    await h.initialize(TERMINAL_INITIALIZE);
    const session = await h.newSession();
    h.prompt(session, "Sleep for a while.");
    assert.ok(await eventually(() => pidOf(["sleep", "30.4321"]) !== undefined, 20_000), "the command never started");
    const pid = pidOf(["sleep", "30.4321"]);
    assert.ok(alive(pid), `the command (pid ${pid}) is not running`);

    await h.cancel(session.sessionId);
    const { response } = await h.wait(h.finishTurn(session), "the cancelled turn to end", CANCEL_MS);
    assert.equal(response.stopReason, "cancelled");
    assert.deepEqual(h.terminals.calls.map((call) => call.method), ["create", "wait_for_exit", "kill", "output", "release"]);
    assert.deepEqual(h.terminals.unreleased(), []);
    assert.ok(await eventually(() => !alive(pid), CANCEL_MS), `sleep (pid ${pid}) still runs after the turn was cancelled`);
  });
});

test("with Zed's `_meta.terminal_output`, output streams into an agent-owned terminal", TIMEOUT, async (t) => {
  // The second line is printed only after the first reached the client, so two pieces are certain.
  const command = "echo one; i=0; while [ ! -e go ] && [ $i -lt 1500 ]; do sleep 0.02; i=$((i+1)); done; echo two; exit 2";
  const scenario = { responses: [bashCall(command), { text: "Done." }] };
  await withAgent(t, scenario, async (h) => {
    await h.initialize(ZED_INITIALIZE);
    const session = await h.newSession();
    h.prompt(session, "Count.");

    const outputOf = (m) => m.kind === "session_update" && m.update._meta?.terminal_output;
    const before = await h.readUntil(session, (m) => outputOf(m) || m.kind === "stop", "the first piece of output");
    assert.ok(outputOf(before.at(-1)), "the turn ended before any output streamed");
    const call = before.map((m) => m.update).find((u) => u?.sessionUpdate === "tool_call" && u.toolCallId === "toolu_1");
    assert.deepEqual(call.content, [{ type: "terminal", terminalId: "toolu_1" }], "the call does not embed its terminal");
    assert.deepEqual(call._meta?.terminal_info, { terminal_id: "toolu_1", cwd: h.projectDir });
    assert.deepEqual(before.at(-1).update._meta.terminal_output, { terminal_id: "toolu_1", data: "one\n" });
    writeFileSync(join(h.projectDir, "go"), "");

    const { updates, response } = await h.finishTurn(session);
    assert.equal(response.stopReason, "end_turn");
    const streamed = [before.at(-1).update, ...updates]
      .filter((u) => u.toolCallId === "toolu_1" && u._meta?.terminal_output)
      .map((u) => u._meta.terminal_output.data)
      .join("");
    assert.equal(streamed, "one\ntwo\n");
    const last = callUpdates(updates).at(-1);
    assert.equal(last.status, "failed");
    assert.deepEqual(last._meta?.terminal_exit, { terminal_id: "toolu_1", exit_code: 2, signal: null });
    assert.deepEqual(last.content, [{ type: "terminal", terminalId: "toolu_1" }]);
    assert.deepEqual(h.terminals.calls, [], "an agent-owned terminal needs no terminal/* request");

    const result = resultText((await h.modelRequests())[1]);
    // What appeared in the project while the command ran is reported with it: here the test's
    // own signal file.
    assert.equal(result, "one\ntwo\n\n[exit code 2]\n[files changed: +go]");
  });
});
