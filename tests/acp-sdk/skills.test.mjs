// Claude Code's skills and custom commands as ACP slash commands, seen by the official SDK's
// client: a user's skill in `~/.claude/skills` and a project's commands in `.claude/commands`
// (one nested in a folder) are offered in `available_commands_update` after the built-ins, after
// session/new, session/load, session/resume and the prompt `/clear` (which reads them again),
// and `/name args` sends the model the body with `$ARGUMENTS` put in. As everywhere in this
// suite, every message on the connection is checked against the ACP v1 schema.

import assert from "node:assert/strict";
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import test from "node:test";
import * as acp from "@agentclientprotocol/sdk";
import { withAgent } from "./harness.mjs";

const TIMEOUT = { timeout: 120_000 };

/** The commands every session offers, first and in this order. */
const BUILT_IN = ["compact", "clear", "mode", "model", "mcp", "plugin", "tasks", "budget", "undo", "checkpoints", "sandbox", "config"];
/** What the user's and the project's files below add, after the built-ins. */
const USERS = ["code-review", "commit", "git:recent"];

const REVIEW = "Review a change for correctness, tests and style";
const REVIEW_EDITED = "Review a change for correctness, security and tests";

function write(path, text) {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, text);
}

/**
 * The skill as a Claude Code user writes it, with `description`. The hint is unquoted, as users
 * write it, although YAML alone would read it as a list.
 */
const reviewSkill = (description) =>
  `---\nname: code-review\ndescription: ${description}\nargument-hint: [path or branch]\n---\n\nReview $ARGUMENTS carefully.\n`;

/**
 * The user's skill in the private HOME and the project's commands, one of them nested and without
 * frontmatter. Skills are read per session, so writing them before session/new is as good as
 * before the agent started. Returns the skill's path, to edit it.
 */
function claudeFiles(h) {
  const skill = join(h.root, "home", ".claude", "skills", "code-review", "SKILL.md");
  write(skill, reviewSkill(REVIEW));
  const commands = join(h.projectDir, ".claude", "commands");
  write(join(commands, "commit.md"), "---\ndescription: Create a git commit from the staged changes\n---\n\nWrite a commit message for the staged changes in the imperative mood, then commit them.\n");
  write(join(commands, "git", "recent.md"), "Summarize the recent commits\n\nLook at `git log --oneline -10` and summarize the recent work in three bullet points.\n");
  write(join(h.projectDir, "src", "a.py"), "def add(a, b):\n    return a - b\n");
  return skill;
}

/**
 * Checks an `available_commands_update`: the built-ins first, then exactly the user's skill and
 * the project's commands, each as its file describes it. Returns the commands by name.
 */
function assertMenu(update, { review = REVIEW } = {}) {
  assert.equal(update.sessionUpdate, "available_commands_update");
  const names = update.availableCommands.map((c) => c.name);
  assert.deepEqual(names.slice(0, BUILT_IN.length), BUILT_IN, `the built-ins do not come first: ${JSON.stringify(names)}`);
  assert.deepEqual(names.slice(BUILT_IN.length).sort(), USERS, `the skill and commands offered: ${JSON.stringify(names)}`);
  const byName = new Map(update.availableCommands.map((c) => [c.name, c]));
  const skill = byName.get("code-review");
  assert.equal(skill.description, review);
  assert.equal(skill.input?.hint, "[path or branch]", `the skill's argument-hint: ${JSON.stringify(skill)}`);
  const commit = byName.get("commit");
  assert.equal(commit.description, "Create a git commit from the staged changes");
  assert.equal(commit.input ?? null, null, `a command without an argument-hint offers no hint: ${JSON.stringify(commit)}`);
  // Without frontmatter a command is described by its first line, as in Claude Code.
  assert.equal(byName.get("git:recent").description, "Summarize the recent commits");
  return byName;
}

const isCommands = (m) => m.kind === "session_update" && m.update.sessionUpdate === "available_commands_update";

/** The next `available_commands_update` on an `ActiveSession` (one that session/new started). */
async function nextMenu(h, session, what) {
  const read = await h.readUntil(session, (m) => isCommands(m) || m.kind === "stop", what);
  assert.ok(isCommands(read.at(-1)), `the turn ended without ${what}`);
  return read.at(-1).update;
}

/**
 * The next `available_commands_update` for `sessionId` among all the updates the SDK handed the
 * client's handler: a loaded or resumed session has no `ActiveSession` to read from.
 */
async function nextMenuFor(h, sessionId, what) {
  for (;;) {
    const params = await h.wait(h.sessionUpdates.next(), what);
    if (params.sessionId === sessionId && params.update.sessionUpdate === "available_commands_update") return params.update;
  }
}

/**
 * Whether the agent's answer to the client's last `method` request about `sessionId` (for
 * session/new: the one that answered with it) came before the next commands menu for it.
 */
function menuFollowsAnswer(h, method, sessionId) {
  const { log } = h.checker;
  const about = ({ msg }) =>
    method === "session/new" ? log[h.checker.responseIndex(msg.id)]?.msg.result?.sessionId === sessionId : msg.params?.sessionId === sessionId;
  const sent = log.findLastIndex((entry) => entry.from === "client" && entry.msg.method === method && "id" in entry.msg && about(entry));
  assert.notEqual(sent, -1, `no ${method} about ${sessionId} was sent`);
  const answered = h.checker.responseIndex(log[sent].msg.id);
  assert.notEqual(answered, -1, `the ${method} answer was not seen on the wire`);
  const menu = log.findIndex(
    ({ from, msg }, i) =>
      i > sent && from === "agent" && msg.method === "session/update" && msg.params?.sessionId === sessionId && msg.params.update?.sessionUpdate === "available_commands_update",
  );
  assert.notEqual(menu, -1, `no available_commands_update followed ${method}`);
  return menu > answered;
}

/** The text of the last user message of a model request. */
function lastUserText(body) {
  const message = body.messages.findLast((m) => m.role === "user");
  assert.ok(message, `no user message in ${JSON.stringify(body.messages)}`);
  if (typeof message.content === "string") return message.content;
  return message.content
    .filter((part) => part.type === "text")
    .map((part) => part.text)
    .join("\n");
}

// ---------------------------------------------------------------------------

test("session/new offers the user's skill and the project's commands after the built-ins", TIMEOUT, async (t) => {
  await withAgent(t, { responses: [] }, async (h) => {
    claudeFiles(h);
    await h.initialize();
    const session = await h.newSession();
    assertMenu(await nextMenu(h, session, "the commands after session/new"));
    assert.ok(menuFollowsAnswer(h, "session/new", session.sessionId), "the commands came before the session/new answer");
    assert.equal((await h.modelRequests()).length, 0, "the model was called without a prompt");
  });
});

test("/code-review src/a.py sends the model the skill's body with $ARGUMENTS put in", TIMEOUT, async (t) => {
  await withAgent(t, { responses: [{ text: "`add` subtracts: it should return a + b." }] }, async (h) => {
    claudeFiles(h);
    await h.initialize();
    const session = await h.newSession();
    assertMenu(await nextMenu(h, session, "the commands after session/new"));

    h.prompt(session, "/code-review src/a.py");
    const { response } = await h.finishTurn(session);
    assert.equal(response.stopReason, "end_turn");
    const requests = await h.modelRequests();
    assert.equal(requests.length, 1, "the skill did not make exactly one model request");
    assert.equal(lastUserText(requests[0]).trim(), "Review src/a.py carefully.");
    // The typed `/code-review src/a.py` stands for that message, it is not sent besides it.
    assert.equal(requests[0].messages.length, 1, `the model got more than the skill's message: ${JSON.stringify(requests[0].messages)}`);
  });
});

test("/clear reads the skills again: an edited description is offered in the new menu", TIMEOUT, async (t) => {
  await withAgent(t, { responses: [] }, async (h) => {
    const skill = claudeFiles(h);
    await h.initialize();
    const session = await h.newSession();
    assertMenu(await nextMenu(h, session, "the commands after session/new"));

    write(skill, reviewSkill(REVIEW_EDITED));
    h.prompt(session, "/clear");
    const { updates, response } = await h.finishTurn(session);
    assert.equal(response.stopReason, "end_turn");
    const menus = updates.filter((u) => u.sessionUpdate === "available_commands_update");
    assert.equal(menus.length, 1, `/clear sent ${menus.length} commands menus`);
    assertMenu(menus[0], { review: REVIEW_EDITED });
    assert.equal((await h.modelRequests()).length, 0, "the model was called for /clear");
  });
});

test("session/load and session/resume offer the skills and commands again after their answers", TIMEOUT, async (t) => {
  await withAgent(t, { responses: [{ text: "Hello." }] }, async (a) => {
    claudeFiles(a);
    await a.initialize();
    const session = await a.newSession();
    assertMenu(await nextMenu(a, session, "the commands after session/new"));
    // Only a prompted session is saved, and so can be loaded.
    a.prompt(session, "Hello?");
    assert.equal((await a.finishTurn(session)).response.stopReason, "end_turn");
    assert.equal(await a.endInput(), 0, "larik did not exit cleanly when its stdin closed");
    const { sessionId } = session;

    // An editor reopening the session: a new agent process on the same home and project.
    await withAgent(
      t,
      { responses: [] },
      async (b) => {
        const { agentCapabilities } = await b.initialize();
        assert.equal(agentCapabilities.loadSession, true, "session/load is not advertised");
        assert.ok(agentCapabilities.sessionCapabilities?.resume, `session/resume is not advertised: ${JSON.stringify(agentCapabilities.sessionCapabilities)}`);
        assert.ok(agentCapabilities.sessionCapabilities?.close, "session/close is not advertised");

        await b.wait(b.agent.request(acp.methods.agent.session.load, { sessionId, cwd: b.projectDir, mcpServers: [] }), "the session/load response");
        assertMenu(await nextMenuFor(b, sessionId, "the commands after session/load"));
        assert.ok(menuFollowsAnswer(b, "session/load", sessionId), "the commands came before the session/load answer");

        // Closed, then resumed as a client without load's replay would.
        await b.wait(b.agent.request(acp.methods.agent.session.close, { sessionId }), "the session/close response");
        await b.wait(b.agent.request(acp.methods.agent.session.resume, { sessionId, cwd: b.projectDir }), "the session/resume response");
        assertMenu(await nextMenuFor(b, sessionId, "the commands after session/resume"));
        assert.ok(menuFollowsAnswer(b, "session/resume", sessionId), "the commands came before the session/resume answer");
        assert.equal((await b.modelRequests()).length, 0, "the model was called without a prompt");
      },
      { root: a.root },
    );
  });
});
