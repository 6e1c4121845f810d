// Larik's `_larik/diagnostics` extension with the official SDK as the client. A client that sets
// `clientCapabilities._meta.larik.diagnostics` is asked for a file's problems after a read (what
// the file had) and after each edit; the errors the edit brought, and only those, reach the model
// in the edit's own result. A client whose answer is `null` leaves the agent to its own language
// servers, and the edit is just an edit. The SDK hands the request to a custom-method handler by
// its full name; params and answers are checked against `protocol-spec/schema/larik-extensions.json`,
// and, as everywhere in this suite, every message on the connection against the ACP v1 schema.

import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import test from "node:test";
import { fileURLToPath } from "node:url";
import Ajv2020 from "ajv/dist/2020.js";
import { DIAGNOSTICS_METHOD, PLAIN_INITIALIZE, toolResult, withAgent } from "./harness.mjs";

const TIMEOUT = { timeout: 120_000 };

const DIAGNOSTICS_INITIALIZE = {
  ...PLAIN_INITIALIZE,
  clientCapabilities: { ...PLAIN_INITIALIZE.clientCapabilities, _meta: { larik: { diagnostics: true } } },
};

/**
 * No language server of the agent's own, whatever is on PATH: one that reported the edit's error
 * itself would hide an answer of the client's that never arrived.
 */
const NO_SERVERS = { settings: { lsp: { enabled: false } } };

const APP = 'def greet(name: str) -> str:\n    return "hi " + name\n\n\nprint(greet("x"))\nprint(missing_name)\n';
const EDITED = APP.replace('print(greet("x"))', 'print(gret("x"))');

const scenario = {
  responses: [
    { tool_calls: [{ id: "toolu_1", name: "read", input: { path: "app.py" } }] },
    { tool_calls: [{ id: "toolu_2", name: "edit", input: { path: "app.py", old_string: 'print(greet("x"))', new_string: 'print(gret("x"))' } }] },
    { text: "Done." },
  ],
};

/** The problem app.py has before the edit. */
const ALREADY = { line: 6, character: 7, severity: "error", message: '"missing_name" is not defined', source: "Pylance" };
/** The problem the edit brings. */
const NEW = { line: 5, character: 7, severity: "error", message: '"gret" is not defined', source: "Pylance" };

const EXTENSIONS = JSON.parse(
  readFileSync(resolve(dirname(fileURLToPath(import.meta.url)), "../../protocol-spec/schema/larik-extensions.json"), "utf8"),
);
const ajv = new Ajv2020({ allErrors: true, strict: true });
ajv.addFormat("uint32", { type: "number", validate: (n) => Number.isInteger(n) && n >= 0 && n <= 2 ** 32 - 1 });
ajv.addFormat("uint64", { type: "number", validate: (n) => Number.isInteger(n) && n >= 0 && n <= Number.MAX_SAFE_INTEGER });
ajv.addSchema({ ...EXTENSIONS, $id: "larik-extensions" });

function assertValid(name, value) {
  const validate = ajv.getSchema(`larik-extensions#/$defs/${name}`);
  assert.ok(validate(value), `does not validate against ${name}: ${JSON.stringify(validate.errors)}\n  ${JSON.stringify(value)}`);
}

/** The text of the tool result for `id` in a model request body. */
function resultText(body, id) {
  const result = toolResult(body, id);
  assert.ok(result, `the model request lacks a tool_result for ${id}`);
  const { content } = result;
  return typeof content === "string" ? content : content.map((part) => part.text ?? "").join("\n");
}

/**
 * Runs the scenario's turn: answers each `_larik/diagnostics` request with `answers(i)` for the
 * i-th one (0: after the read, 1: after the edit) and allows the edit. Returns the requests, each
 * with the file's text on disk when it was asked, and the end of the turn.
 */
async function runTurn(h, answers) {
  const init = await h.initialize(DIAGNOSTICS_INITIALIZE);
  assert.equal(init.protocolVersion, 1);
  const session = await h.newSession();
  h.prompt(session, "Rename the call.");

  const asked = [];
  const answer = async () => {
    const request = await h.nextDiagnostics();
    const response = answers(asked.length);
    assertValid("DiagnosticsResponse", response);
    asked.push({ ...request, text: readFileSync(join(h.projectDir, "app.py"), "utf8") });
    request.respond(response);
  };
  await answer();
  const permission = await h.nextPermission();
  permission.respond({ outcome: { outcome: "selected", optionId: "allow_once" } });
  await answer();
  const turn = await h.finishTurn(session);
  return { session, asked, ...turn };
}

/** Both requests: by the SDK's name for them, about app.py, and valid. */
function assertAskedAboutApp(h, session, asked) {
  const path = join(h.projectDir, "app.py");
  assert.equal(asked.length, 2, "after the read and after the edit");
  for (const { method, params } of asked) {
    assert.equal(method, DIAGNOSTICS_METHOD, "the SDK handed the request over under another name");
    assertValid("DiagnosticsRequest", params);
    assert.equal(params.sessionId, session.sessionId);
    assert.equal(params.path, path, "asked about another file");
    assert.ok(params.waitMs > 0, `no time to wait given: ${JSON.stringify(params)}`);
  }
  assert.equal(asked[0].text, APP, "the baseline was asked for after the file changed");
  assert.equal(asked[1].text, EDITED, "asked after the edit before the edit was on disk");
  const methods = h.checker.agentRequestMethods();
  assert.equal(methods.filter((m) => m === DIAGNOSTICS_METHOD).length, 2, `agent requests: ${JSON.stringify(methods)}`);
}

test("a client with `diagnostics` is asked after the read and the edit; the model gets the new error only", TIMEOUT, async (t) => {
  await withAgent(
    t,
    scenario,
    async (h) => {
      writeFileSync(join(h.projectDir, "app.py"), APP);
      const { session, asked, response } = await runTurn(h, (i) => ({ diagnostics: i === 0 ? [ALREADY] : [ALREADY, NEW] }));
      assert.equal(response.stopReason, "end_turn");
      assertAskedAboutApp(h, session, asked);
      assert.equal(readFileSync(join(h.projectDir, "app.py"), "utf8"), EDITED);

      const requests = await h.modelRequests();
      assert.equal(requests.length, 3, "the model should be asked three times");
      assert.ok(!resultText(requests[1], "toolu_1").includes("reports new problems"), "a read reports no problems");
      const result = resultText(requests[2], "toolu_2");
      assert.notEqual(toolResult(requests[2], "toolu_2").is_error, true, `the edit was reported as an error: ${result}`);
      assert.ok(
        result.includes('the editor reports new problems in this file after the change:\nERROR 5:7 "gret" is not defined'),
        `the edit's result lacks the error it made: ${result}`,
      );
      assert.ok(!result.includes("missing_name"), `what the file had is not new: ${result}`);
    },
    NO_SERVERS,
  );
});

test("a client that answers `diagnostics: null` leaves the edit without a report, and the turn completes", TIMEOUT, async (t) => {
  await withAgent(
    t,
    scenario,
    async (h) => {
      writeFileSync(join(h.projectDir, "app.py"), APP);
      const { session, asked, updates, response } = await runTurn(h, () => ({ diagnostics: null }));
      assert.equal(response.stopReason, "end_turn");
      assertAskedAboutApp(h, session, asked);
      assert.equal(readFileSync(join(h.projectDir, "app.py"), "utf8"), EDITED);
      const failed = updates.filter((u) => u.sessionUpdate === "tool_call_update" && u.status === "failed");
      assert.deepEqual(failed, [], "a tool call failed");

      const requests = await h.modelRequests();
      assert.equal(requests.length, 3, "the model should be asked three times");
      const result = resultText(requests[2], "toolu_2");
      assert.notEqual(toolResult(requests[2], "toolu_2").is_error, true, `the edit was reported as an error: ${result}`);
      assert.ok(!result.includes("reports new problems"), `a report with no server to make it: ${result}`);
    },
    NO_SERVERS,
  );
});
