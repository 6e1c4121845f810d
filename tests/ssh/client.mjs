// The editor's side of `ssh host larik acp`, driven by tests/ssh/run.sh: the official ACP
// TypeScript SDK client talks to `larik acp` through a real `ssh` to a real sshd, as an editor
// configured with that agent command does. Three connections, one after the other:
//   1. a turn the mock model answers with text, then a clean end of input;
//   2. a turn whose bash call (`sleep`) runs, with an MCP server in the session, when the ssh
//      client is killed with SIGKILL: within 2 s no larik, no sleep and no MCP server may be left
//      on the remote side;
//   3. a new connection that loads the session: its history replayed, the interrupted call
//      reported as failed, and the next prompt answered.
// Every process is found by a marker only this run uses (the agent's HOME, an argument), so
// other agents on the machine are never mistaken for ours. Exits non-zero on any failure.

import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { once } from "node:events";
import { readFileSync, readdirSync, readlinkSync } from "node:fs";
import { createRequire } from "node:module";
import { Readable, Writable } from "node:stream";
import { pathToFileURL } from "node:url";

const require = createRequire(new URL("../acp-sdk/package.json", import.meta.url));
const acp = await import(pathToFileURL(require.resolve("@agentclientprotocol/sdk")).href);

const config = JSON.parse(process.env.LARIK_SSH_TEST);
const WAIT_MS = 20_000;
/** How long a dropped connection may leave anything running on the remote side. */
const GONE_MS = 2_000;

function log(line) {
  console.log(`ssh: ${line}`);
}

function withTimeout(promise, ms, what) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms waiting for ${what}`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

async function eventually(check, ms, what) {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

// ---------------------------------------------------------------------------
// The remote side's processes

function readProc(pid, file) {
  try {
    return readFileSync(`/proc/${pid}/${file}`);
  } catch {
    return undefined; // gone meanwhile, or not ours to read
  }
}

/** Every process that belongs to this run's remote side, with why it counts as one. */
function remoteProcesses() {
  const found = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    const args = (readProc(entry, "cmdline") ?? Buffer.alloc(0)).toString("utf8").split("\0").filter(Boolean);
    const environ = (readProc(entry, "environ") ?? Buffer.alloc(0)).toString("utf8").split("\0");
    let what;
    if (args[0] === "sleep" && args[1] === config.sleepArgument) what = "sleep";
    else if (args.includes(config.mcpMarker)) what = "mcp";
    else if (environ.includes(`HOME=${config.remoteHome}`)) what = args[0]?.endsWith("larik") ? "larik" : "other";
    if (what) found.push({ pid: Number(entry), what, args: args.join(" ") });
  }
  return found;
}

/** What a surviving process is waiting on: its state, parent, signals it ignores, its stdio. */
function describe({ pid, what, args }) {
  const status = (readProc(pid, "status") ?? "").toString();
  const field = (name) => new RegExp(`^${name}:\\s*(.*)$`, "m").exec(status)?.[1] ?? "?";
  const fd = (n) => {
    try {
      return readlinkSync(`/proc/${pid}/fd/${n}`);
    } catch {
      return "closed";
    }
  };
  return `${what} (pid ${pid}: ${args}; state ${field("State")}, parent ${field("PPid")}, ignored signals ${field("SigIgn")}, stdin ${fd(0)}, stdout ${fd(1)})`;
}

// ---------------------------------------------------------------------------
// One connection: ssh to the remote side, `larik acp` there, the SDK client here

class Connection {
  /** Every `session/update` the client received, in order. */
  updates = [];
  /** Every `session/request_permission` the agent sent; each is allowed once. */
  permissions = [];
  stderr = "";

  constructor(name) {
    this.name = name;
    const remoteCommand = [
      "env",
      `HOME=${config.remoteHome}`,
      `XDG_CONFIG_HOME=${config.remoteHome}/.config`,
      `XDG_DATA_HOME=${config.remoteHome}/.local/share`,
      `XDG_STATE_HOME=${config.remoteHome}/.local/state`,
      `XDG_CACHE_HOME=${config.remoteHome}/.cache`,
      `PATH=${config.remoteBin}:/usr/local/bin:/usr/bin:/bin`,
      `ANTHROPIC_BASE_URL=${config.mockUrl}`,
      "ANTHROPIC_API_KEY=test",
      "LARIK_MODEL=claude-mock",
      "larik",
      "acp",
    ].join(" ");
    this.child = spawn("ssh", [...config.sshOptions, remoteCommand], { stdio: ["pipe", "pipe", "pipe"] });
    this.exited = once(this.child, "exit");
    this.child.stderr.setEncoding("utf8");
    this.child.stderr.on("data", (text) => {
      this.stderr = (this.stderr + text).slice(-8000);
    });
    this.child.stdin.on("error", () => {}); // EPIPE once ssh is gone is expected in phase 2
    const stream = acp.ndJsonStream(Writable.toWeb(this.child.stdin), Readable.toWeb(this.child.stdout));
    this.connection = acp
      .client({ name: "larik-ssh-test" })
      .onNotification(acp.methods.client.session.update, ({ params }) => {
        this.updates.push(params);
      })
      .onRequest(acp.methods.client.session.requestPermission, ({ params }) => {
        this.permissions.push(params);
        return { outcome: { outcome: "selected", optionId: "allow_once" } };
      })
      .connect(stream);
    this.agent = this.connection.agent;
  }

  wait(promise, what, ms = WAIT_MS) {
    return withTimeout(promise, ms, `${what} (${this.name}); ssh stderr: ${this.stderr.trim() || "(empty)"}`);
  }

  request(method, params, what) {
    return this.wait(this.agent.request(method, params), what);
  }

  /** The updates of `sessionId` received from position `from` on. */
  updatesOf(sessionId, from = 0) {
    return this.updates.slice(from).filter((u) => u.sessionId === sessionId).map((u) => u.update);
  }

  /** Closes the agent's input as an editor does when it quits; waits for ssh to end. */
  async end() {
    this.child.stdin.end();
    await this.wait(this.exited, "ssh to exit after its input closed");
    this.connection.close();
  }
}

const text = (updates) =>
  updates
    .filter((u) => u.sessionUpdate === "agent_message_chunk" && u.content.type === "text")
    .map((u) => u.content.text)
    .join("");

async function initialize(connection) {
  const response = await connection.request(
    acp.methods.agent.initialize,
    { protocolVersion: 1, clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false }, clientInfo: { name: "larik-ssh-test", version: "0.0.0" } },
    "the initialize response",
  );
  assert.equal(response.protocolVersion, 1);
  return response;
}

async function prompt(connection, sessionId, words) {
  const from = connection.updates.length;
  const response = await connection.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: words }] }, `the answer to "${words}"`);
  return { response, updates: connection.updatesOf(sessionId, from) };
}

// ---------------------------------------------------------------------------
// The three connections

async function aTurn() {
  const connection = new Connection("first connection");
  const { agentCapabilities } = await initialize(connection);
  assert.equal(agentCapabilities.loadSession, true, "the agent does not advertise session/load");
  const { sessionId } = await connection.request(acp.methods.agent.session.new, { cwd: config.project, mcpServers: [] }, "the session/new response");
  const { response, updates } = await prompt(connection, sessionId, "FIRST: say hello");
  assert.equal(response.stopReason, "end_turn");
  assert.equal(text(updates), "Hello over ssh.");
  await connection.end();
  await eventually(() => remoteProcesses().length === 0, GONE_MS, "larik to exit once its input closed");
  log("a turn over ssh: end_turn, and larik exits when the input closes");
}

async function aDroppedConnection(interrupted) {
  const connection = new Connection("second connection");
  await initialize(connection);
  const server = { name: "everything", command: config.node, args: [config.mcpServer, "stdio", config.mcpMarker], env: [] };
  const { sessionId } = await connection.request(acp.methods.agent.session.new, { cwd: config.project, mcpServers: [server] }, "the session/new response");
  interrupted.sessionId = sessionId;
  await eventually(() => remoteProcesses().some((p) => p.what === "mcp"), WAIT_MS, "the MCP server to start");

  const turn = connection.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "SECOND: sleep a while" }] });
  turn.catch(() => {}); // rejected when the connection goes
  const running = () => connection.updatesOf(sessionId).some((u) => u.sessionUpdate === "tool_call_update" && u.toolCallId === "toolu_sleep" && u.status === "in_progress");
  await connection.wait(eventually(running, WAIT_MS, "the bash call to be in progress"), "the bash call to be in progress");
  await eventually(() => remoteProcesses().some((p) => p.what === "sleep"), WAIT_MS, "sleep to run");
  const before = remoteProcesses();
  log(`mid-turn, on the remote side: ${before.map((p) => `${p.what} (pid ${p.pid})`).join(", ")}`);
  log(connection.permissions.length === 0 ? "bash ran sandboxed, without asking" : `bash asked for permission (${connection.permissions.length}x), allowed once`);

  connection.child.kill("SIGKILL");
  await connection.exited;
  connection.connection.close();
  const started = Date.now();
  try {
    await eventually(() => remoteProcesses().length === 0, GONE_MS, "the remote side to end");
  } catch {
    const left = remoteProcesses();
    throw new Error(
      `${GONE_MS} ms after the ssh client was killed, still running on the remote side:\n  ${left.map(describe).join("\n  ")}\n` +
        "sshd gives a command run without a terminal no signal when the connection drops: it only closes " +
        "the command's stdin (EOF) and its stdout/stderr pipes.",
    );
  }
  log(`killed the ssh client mid-turn: larik, sleep and the MCP server were gone after ${Date.now() - started} ms`);
}

async function aResumedSession(sessionId) {
  const connection = new Connection("third connection");
  const { agentCapabilities } = await initialize(connection);
  log(`the agent advertises loadSession: ${agentCapabilities.loadSession}, resume: ${agentCapabilities.sessionCapabilities?.resume != null}; the test loads (a resume replays nothing)`);
  await connection.request(acp.methods.agent.session.load, { sessionId, cwd: config.project, mcpServers: [] }, "the session/load response");
  const replay = connection.updatesOf(sessionId);
  const said = replay.filter((u) => u.sessionUpdate === "user_message_chunk").map((u) => u.content.text).join("");
  assert.ok(said.includes("SECOND: sleep a while"), `the replay lacks the interrupted prompt: ${JSON.stringify(replay)}`);
  const call = replay.filter((u) => (u.sessionUpdate === "tool_call" || u.sessionUpdate === "tool_call_update") && u.toolCallId === "toolu_sleep");
  assert.ok(call.length > 0, `the replay lacks the interrupted bash call: ${JSON.stringify(replay)}`);
  const status = call.map((u) => u.status).filter(Boolean).at(-1);
  assert.ok(status === "failed", `the interrupted bash call is replayed as ${status}, not failed: ${JSON.stringify(call)}`);

  const { response, updates } = await prompt(connection, sessionId, "THIRD: are you back?");
  assert.equal(response.stopReason, "end_turn");
  assert.equal(text(updates), "Back, after the interruption.");
  // The interrupted call has a result in the history the model is sent, or the provider would
  // reject the request (every tool_use needs its tool_result).
  const requests = await (await fetch(`${config.mockUrl}/requests`)).json();
  const last = JSON.stringify(requests.at(-1));
  assert.ok(last.includes('"tool_use_id":"toolu_sleep"'), `the model was not sent a result for the interrupted call: ${last.slice(0, 2000)}`);
  await connection.end();
  await eventually(() => remoteProcesses().length === 0, GONE_MS, "larik to exit once its input closed");
  log(`a new connection loaded the session: the history replayed (the bash call ${status}), and the next prompt answered`);
}

/** Ends what this run left on the remote side, by pid. */
function killRemote() {
  for (const { pid } of remoteProcesses()) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // Gone meanwhile.
    }
  }
}

let failed = false;
try {
  await aTurn();
  const interrupted = {};
  try {
    await aDroppedConnection(interrupted);
  } catch (error) {
    failed = true;
    log(`FAILED: ${error.message}`);
    // The reconnect is tried all the same, as a user would; what survived is reported above.
    killRemote();
  }
  if (interrupted.sessionId) await aResumedSession(interrupted.sessionId);
} catch (error) {
  failed = true;
  log(`FAILED: ${error.stack ?? error}`);
} finally {
  killRemote();
}
process.exit(failed ? 1 : 0);
