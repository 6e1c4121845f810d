// A user logging in to an OAuth-protected MCP server from their editor, with the conformance
// suite's mock MCP server and authorization server on the other side: run by the suite as the
// client under test (`conformance client --command "node acp-login.mjs" --scenario
// auth/scope-step-up`), with the server's URL as the last argument.
//
// The real `larik acp`, driven through the official ACP SDK as an editor that takes URL
// elicitations, with the server in the user's settings:
//   1. the background connection does not log in: `/mcp` says the server needs a login;
//   2. `/mcp login conformance` asks the editor to open the authorization page (a URL
//      elicitation); "the browser" (a fetch that follows the redirects) finishes it, the token is
//      saved 0600, and the server connects;
//   3. the model calls the server's tool (the user allows it), which needs a wider scope: the
//      server answers 403
//      `insufficient_scope`, Larik asks the editor to open the page again (step-up), and the call
//      then goes through: the model gets the tool's result, not an error.
// The suite then checks every OAuth step from its side. Exits non-zero on any failure here.

import assert from "node:assert/strict";
import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { Harness, ZED_INITIALIZE, stringsIn, toolResult } from "../acp-sdk/harness.mjs";

const url = process.argv.at(-1);
assert.match(url, /^http:\/\/localhost:\d+\//, `not a server URL: ${url}`);

const SCENARIO = {
  responses: [
    { tool_calls: [{ id: "toolu_1", name: "mcp__conformance__test-tool", input: {} }] },
    { text: "The tool answered." },
  ],
};

/** Answers the next URL elicitation as an editor does (accept, open the page), and checks it. */
async function openLoginPage(h) {
  const { params, respond } = await h.nextElicitation();
  assert.equal(params.mode, "url");
  assert.match(params.message, /Log in to the MCP server `conformance`/);
  respond({ action: "accept" });
  // The browser: the authorization server redirects to Larik's listener on localhost.
  fetch(params.url).catch((error) => console.error(`the login page could not be visited: ${error}`));
  return params;
}

/** The text of the agent's messages in a finished turn. */
function said(updates) {
  return updates
    .filter((update) => update.sessionUpdate === "agent_message_chunk")
    .map((update) => update.content.text)
    .join("");
}

const h = await Harness.start({ scenario: SCENARIO, settings: { mcpServers: { conformance: { type: "http", url } } } });
try {
  await h.initialize(ZED_INITIALIZE);
  const session = await h.newSession();

  h.prompt(session, "/mcp");
  const listed = said((await h.finishTurn(session)).updates);
  assert.match(listed, /conformance.*needs login: type `\/mcp login conformance`/, listed);

  h.prompt(session, "/mcp login conformance");
  const page = await openLoginPage(h);
  assert.notEqual(new URL(page.url).searchParams.get("code_challenge"), null, "PKCE");
  const login = said((await h.finishTurn(session)).updates);
  assert.match(login, /Logged in to the MCP server `conformance`/, login);
  const files = readdirSync(join(h.root, "data", "larik", "mcp-auth"));
  assert.equal(files.length, 1, `one token file: ${files}`);
  assert.equal(statSync(join(h.root, "data", "larik", "mcp-auth", files[0])).mode & 0o777, 0o600);

  const turn = h.prompt(session, "Use the conformance server's tool.");
  // The server does not say its tool is read-only: the user allows the call once.
  const permission = await h.nextPermission();
  assert.equal(permission.params.toolCall.title, "test-tool (conformance)");
  permission.respond({ outcome: { outcome: "selected", optionId: "allow_once" } });
  const stepUp = await openLoginPage(h);
  assert.match(new URL(stepUp.url).searchParams.get("scope") ?? "", /mcp:write/, "the wider scope is asked for");
  const { response } = await h.finishTurn(session);
  await turn;
  assert.equal(response.stopReason, "end_turn");
  const requests = await h.modelRequests();
  const result = toolResult(requests.at(-1), "toolu_1");
  assert.ok(result, "the tool's result reached the model");
  assert.notEqual(result.is_error, true, `the call succeeded after the step-up: ${JSON.stringify(result)}`);
  assert.ok([...stringsIn(result)].length > 0);
  h.assertProtocolClean();
} catch (error) {
  console.error(`${error?.stack ?? error}\n\n${h.diagnostics(String(error))}`);
  process.exitCode = 1;
} finally {
  await h.close();
}
