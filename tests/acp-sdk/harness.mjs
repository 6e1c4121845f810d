// Test harness: runs the real `larik acp` binary against `larik-mock-llm`, talks to it
// through the official ACP TypeScript SDK client, and checks every JSON-RPC line the
// agent writes (and every message the client sends) against the ACP v1 JSON schema
// shipped inside the SDK package (and the few ACP 1.20 additions that schema predates
// against the schema crate's, see NEWER_THAN_SDK_SCHEMA).

import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { once } from "node:events";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { Readable, Writable } from "node:stream";
import { fileURLToPath } from "node:url";
import * as acp from "@agentclientprotocol/sdk";
import Ajv2020 from "ajv/dist/2020.js";

const require = createRequire(import.meta.url);
const HERE = dirname(fileURLToPath(import.meta.url));
const WORKSPACE = resolve(HERE, "../..");

/** How long any single wait on the agent may take before the test fails. */
export const WAIT_MS = 20_000;

// ---------------------------------------------------------------------------
// Binaries

function binary(envVar, name) {
  let path;
  if (process.env[envVar]) {
    path = resolve(process.env[envVar]);
  } else {
    const targetDir = process.env.CARGO_TARGET_DIR
      ? resolve(WORKSPACE, process.env.CARGO_TARGET_DIR)
      : join(WORKSPACE, "target");
    path = join(targetDir, "debug", name);
  }
  if (!existsSync(path)) {
    throw new Error(
      `${name} binary not found at ${path}. Run \`cargo build\` in the workspace first, ` +
        `or point ${envVar} at the binary.`,
    );
  }
  return path;
}

// ---------------------------------------------------------------------------
// Small async helpers

/** Rejects with a descriptive error if `promise` does not settle within `ms`. */
export function withTimeout(promise, ms, what) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms waiting for ${what}`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** Polls `check` until it holds or `ms` pass; returns its last answer. */
export async function eventually(check, ms = WAIT_MS) {
  const deadline = Date.now() + ms;
  for (;;) {
    if (check()) return true;
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** Whether a process with this pid exists. */
export function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    if (error.code === "ESRCH") return false;
    throw error;
  }
}

/**
 * The pid, as this test sees it, of a running process whose command line is exactly `args`.
 * Sandboxed commands run in their own PID namespace, where `$$` means nothing out here.
 */
export function pidOf(args) {
  const wanted = args.join("\0") + "\0";
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/cmdline`, "utf8") === wanted) return Number(entry);
    } catch {
      // Gone meanwhile.
    }
  }
  return undefined;
}

/** Unbounded FIFO whose `next()` waits for the next pushed value. */
class Queue {
  #items = [];
  #waiters = [];
  push(item) {
    const waiter = this.#waiters.shift();
    if (waiter) waiter(item);
    else this.#items.push(item);
  }
  next() {
    if (this.#items.length > 0) return Promise.resolve(this.#items.shift());
    return new Promise((resolve) => this.#waiters.push(resolve));
  }
  get size() {
    return this.#items.length;
  }
}

function truncate(text, max = 2000) {
  return text.length > max ? `${text.slice(0, max)}… (${text.length - max} more chars)` : text;
}

// ---------------------------------------------------------------------------
// Schema validation

const SCHEMA = require("@agentclientprotocol/sdk/schema/v1/schema.json");
const SCHEMA_ID = "acp-v1";

// Annotation keywords the schema uses beyond JSON Schema 2020-12. `discriminator` is only a
// hint here: the `oneOf` it annotates is still enforced.
const ANNOTATIONS = [
  "discriminator",
  "x-deserialize-default-on-error",
  "x-deserialize-default-on-null",
  "x-deserialize-skip-invalid-items",
  "x-docs-ignore",
  "x-method",
  "x-side",
];

function intFormat(min, max) {
  return { type: "number", validate: (n) => Number.isInteger(n) && n >= min && n <= max };
}

// Every `format` the schema uses, checked for real rather than ignored.
const FORMATS = {
  uint16: intFormat(0, 0xffff),
  int32: intFormat(-(2 ** 31), 2 ** 31 - 1),
  uint32: intFormat(0, 2 ** 32 - 1),
  int64: intFormat(Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER),
  uint64: intFormat(0, Number.MAX_SAFE_INTEGER),
  double: { type: "number", validate: (n) => Number.isFinite(n) },
  uri: {
    type: "string",
    validate: (s) => {
      try {
        new URL(s);
        return true;
      } catch {
        return false;
      }
    },
  },
};

// The schema of the Rust schema crate Larik is built against (1.20), kept generated in
// protocol-spec/ (a Rust test fails while it is stale). Only used for NEWER_THAN_SDK_SCHEMA.
const CRATE_SCHEMA = JSON.parse(readFileSync(join(WORKSPACE, "protocol-spec", "schema", "acp-v1.json"), "utf8"));
const CRATE_SCHEMA_ID = "acp-v1-schema-crate";
/** Appended to a `$defs` name in `validated` when the crate's schema checked the message. */
export const CRATE_SCHEMA_TAG = " (schema crate 1.20)";

/**
 * What ACP 1.20 added that the SDK's schema predates, and nothing else. A message that uses one
 * of these is validated against the schema crate's definition of the same name; against the
 * SDK's too where the SDK's schema can express the message at all (it lets an unknown
 * capability through untyped, so only the crate's schema checks that capability). Every other
 * message, and every other part of these, still has to pass the SDK's schema. An entry the SDK's
 * schema has learnt is reported, so the list cannot outlive its reason.
 */
const NEWER_THAN_SDK_SCHEMA = [
  {
    what: "the `subagent_update` session update",
    key: "client:session/update:Notification",
    uses: (params) => params?.update?.sessionUpdate === "subagent_update",
    // A variant missing from the SDK's closed union of session updates: it can only fail there.
    sdkCanExpress: false,
  },
  {
    what: "the `subagents` client capability",
    key: "agent:initialize:Request",
    uses: (params) => params?.clientCapabilities?.subagents !== undefined,
    sdkCanExpress: true,
  },
];

const ajv = new Ajv2020({ allErrors: true, strict: true });
ajv.addVocabulary(ANNOTATIONS);
for (const [name, format] of Object.entries(FORMATS)) ajv.addFormat(name, format);
ajv.addSchema({ ...SCHEMA, $id: SCHEMA_ID });
ajv.addSchema({ ...CRATE_SCHEMA, $id: CRATE_SCHEMA_ID });

/**
 * `$defs` keyed by `side:method:Kind`: e.g. `agent:session/prompt:Response` is
 * `PromptResponse`, `client:session/update:Notification` is `SessionNotification`.
 * `side` is the side that handles the method.
 */
function defsByMethod(schema) {
  const defs = new Map();
  for (const [name, def] of Object.entries(schema.$defs)) {
    const kind = /(Request|Response|Notification)$/.exec(name)?.[1];
    if (def["x-method"] && kind) defs.set(`${def["x-side"]}:${def["x-method"]}:${kind}`, name);
  }
  return defs;
}
const DEFS_BY_METHOD = defsByMethod(SCHEMA);
const CRATE_DEFS_BY_METHOD = defsByMethod(CRATE_SCHEMA);

const validators = new Map();
function validator(pointer, schemaId = SCHEMA_ID) {
  const ref = `${schemaId}#${pointer}`;
  let v = validators.get(ref);
  if (!v) {
    v = ajv.compile({ $ref: ref });
    validators.set(ref, v);
  }
  return v;
}

const ENVELOPE = { agent: "/anyOf/0", client: "/anyOf/1", protocol: "/anyOf/2" };
const TURN_UPDATES = new Set([
  "user_message_chunk",
  "agent_message_chunk",
  "agent_thought_chunk",
  "tool_call",
  "tool_call_update",
  "plan",
]);

/**
 * Follows one connection in both directions, pairs responses with their requests, validates
 * every message against the schema and checks that turn output only arrives while a
 * `session/prompt` is in flight. Problems are collected in `violations`.
 */
export class ProtocolChecker {
  violations = [];
  /** Called with each violation as it is found. */
  onViolation = () => {};
  /** Every message seen, in order: `{ from: "agent" | "client", msg, line? }`. */
  log = [];
  /** `$defs` name -> how many messages were validated against it. */
  validated = new Map();
  #clientRequests = new Map(); // id of a request the client sent -> method
  #agentRequests = new Map(); // id of a request the agent sent -> method
  #prompts = new Map(); // id of an unanswered session/prompt -> sessionId
  /**
   * Session id of each subagent announced by a `subagent_update` -> whether it is working: from
   * its announcement, and after any state but `idle`. A working child's session gets turn
   * output without a prompt of its own; before its announcement it may get none.
   */
  #subagents = new Map();
  /** Whether the client's `initialize` advertised `subagents`, without which none may be announced. */
  #subagentsAdvertised = false;

  /** Feeds one raw stdout line written by the agent. */
  agentLine(line) {
    if (line.trim() === "") return;
    let msg;
    try {
      msg = JSON.parse(line);
    } catch (error) {
      this.#violation("agent", `stdout line is not JSON (${error.message})`, line);
      return;
    }
    this.log.push({ from: "agent", msg, line });
    this.#check("agent", msg, line);
  }

  /** Feeds one message the client is about to send. */
  clientMessage(msg) {
    this.log.push({ from: "client", msg });
    this.#check("client", msg, JSON.stringify(msg));
  }

  /** Prompts in flight per session. */
  #promptsFor(sessionId) {
    return [...this.#prompts.values()].filter((s) => s === sessionId).length;
  }

  /** Whether turn output for `sessionId` may arrive now. */
  #inTurn(sessionId) {
    return this.#promptsFor(sessionId) > 0 || this.#subagents.get(sessionId) === true;
  }

  #subagentUpdate(update, line) {
    if (!this.#subagentsAdvertised) this.#violation("agent", "subagent_update sent to a client that did not advertise `subagents`", line);
    if (typeof update?.sessionId !== "string") return; // the schema check reports it
    const known = this.#subagents.has(update.sessionId);
    if (!known || update.state !== undefined) this.#subagents.set(update.sessionId, update.state?.state !== "idle");
  }

  #check(from, msg, line) {
    if (msg === null || typeof msg !== "object" || Array.isArray(msg)) {
      this.#violation(from, "message is not a JSON object", line);
      return;
    }
    const peer = from === "agent" ? "client" : "agent";
    const isProtocol = typeof msg.method === "string" && msg.method.startsWith("$/");
    this.#validate(from, isProtocol ? ENVELOPE.protocol : ENVELOPE[from], msg, line, "JSON-RPC envelope");

    if ("method" in msg && "id" in msg) {
      // A request: remember it so the answer can be checked, then check its params.
      (from === "agent" ? this.#agentRequests : this.#clientRequests).set(msg.id, msg.method);
      // A load replays the history as turn updates before it answers, like a prompt would.
      if (from === "client" && (msg.method === "session/prompt" || msg.method === "session/load")) this.#prompts.set(msg.id, msg.params?.sessionId);
      if (from === "client" && msg.method === "initialize") this.#subagentsAdvertised = msg.params?.clientCapabilities?.subagents != null;
      if (from === "agent" && msg.method === "session/request_permission" && !this.#inTurn(msg.params?.sessionId)) {
        this.#violation(from, "permission requested while no session/prompt is in flight for that session (nor is it a working subagent's)", line);
      }
      this.#validateDef(from, `${peer}:${msg.method}:Request`, msg.params, line);
    } else if ("method" in msg) {
      const side = isProtocol ? "protocol" : peer;
      this.#validateDef(from, `${side}:${msg.method}:Notification`, msg.params, line);
      if (from === "agent" && msg.method === "session/update") {
        const kind = msg.params?.update?.sessionUpdate;
        if (kind === "subagent_update") this.#subagentUpdate(msg.params.update, line);
        if (TURN_UPDATES.has(kind) && !this.#inTurn(msg.params?.sessionId)) {
          this.#violation(from, `'${kind}' update while no session/prompt is in flight for that session (nor is it a working subagent's)`, line);
        }
      }
    } else if ("id" in msg) {
      const pending = from === "agent" ? this.#clientRequests : this.#agentRequests;
      const method = pending.get(msg.id);
      if (method === undefined) {
        this.#violation(from, `response to unknown request id ${JSON.stringify(msg.id)}`, line);
        return;
      }
      pending.delete(msg.id);
      if (from === "agent") this.#prompts.delete(msg.id);
      if ("error" in msg) this.#validate(from, "/$defs/Error", msg.error, line, "Error");
      else this.#validateDef(from, `${from}:${method}:Response`, msg.result, line);
    } else {
      this.#violation(from, "neither a request, a notification nor a response", line);
    }
  }

  #validateDef(from, key, value, line) {
    const name = DEFS_BY_METHOD.get(key);
    if (!name) {
      const method = key.split(":")[1];
      // Extension methods (leading underscore) are free-form by design.
      if (!method.startsWith("_")) this.#violation(from, `no schema definition for ${key}`, line);
      return;
    }
    const newer = NEWER_THAN_SDK_SCHEMA.find((addition) => addition.key === key && addition.uses(value));
    if (!newer) {
      this.#validate(from, `/$defs/${name}`, value ?? {}, line, name);
      return;
    }
    const crateName = CRATE_DEFS_BY_METHOD.get(key);
    if (!crateName) {
      this.#violation(from, `uses ${newer.what}, but the schema crate's schema has no definition for ${key}`, line);
      return;
    }
    this.#validate(from, `/$defs/${crateName}`, value ?? {}, line, crateName + CRATE_SCHEMA_TAG, CRATE_SCHEMA_ID);
    if (newer.sdkCanExpress) this.#validate(from, `/$defs/${name}`, value ?? {}, line, name);
    else if (validator(`/$defs/${name}`)(value ?? {})) {
      this.#violation(from, `uses ${newer.what}, which the SDK's schema now knows: drop it from NEWER_THAN_SDK_SCHEMA`, line);
    }
  }

  #validate(from, pointer, value, line, name, schemaId = SCHEMA_ID) {
    const v = validator(pointer, schemaId);
    if (v(value)) {
      this.validated.set(name, (this.validated.get(name) ?? 0) + 1);
      return;
    }
    const errors = v.errors
      .slice(0, 12)
      .map((e) => `    ${e.instancePath || "/"} ${e.message} ${JSON.stringify(e.params)} (${e.schemaPath})`)
      .join("\n");
    this.#violation(from, `does not validate against ${name}:\n${errors}`, line);
  }

  #violation(from, problem, line) {
    const violation = `${from} message ${problem}\n  message: ${truncate(line)}`;
    this.violations.push(violation);
    this.onViolation(violation);
  }

  /** Agent-sent request methods, in order. */
  agentRequestMethods() {
    return this.log.filter(({ from, msg }) => from === "agent" && "method" in msg && "id" in msg).map(({ msg }) => msg.method);
  }

  /** Position in `log` of the agent's response to the client request `id`. */
  responseIndex(id) {
    return this.log.findIndex(({ from, msg }) => from === "agent" && !("method" in msg) && msg.id === id);
  }
}

/** Splits a byte stream into lines, handing each complete line to `onLine` before passing the bytes on. */
function lineTap(onLine) {
  const decoder = new TextDecoder();
  let pending = "";
  return new TransformStream({
    transform(chunk, controller) {
      pending += decoder.decode(chunk, { stream: true });
      let nl;
      while ((nl = pending.indexOf("\n")) !== -1) {
        onLine(pending.slice(0, nl));
        pending = pending.slice(nl + 1);
      }
      controller.enqueue(chunk);
    },
    flush() {
      pending += decoder.decode();
      if (pending !== "") onLine(pending);
    },
  });
}

// ---------------------------------------------------------------------------
// Processes

const live = new Set();
process.on("exit", () => {
  for (const child of live) child.kill("SIGKILL");
});

function track(child) {
  live.add(child);
  child.once("exit", () => live.delete(child));
  return child;
}

async function stop(child) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, "exit");
  child.kill("SIGTERM");
  const timer = setTimeout(() => child.kill("SIGKILL"), 3000);
  await exited;
  clearTimeout(timer);
}

function capture(stream) {
  const out = { text: "" };
  stream.setEncoding("utf8");
  stream.on("data", (s) => {
    out.text = (out.text + s).slice(-20_000);
  });
  return out;
}

/** Larik's extension method that asks the client for a file's diagnostics. */
export const DIAGNOSTICS_METHOD = "_larik/diagnostics";

/** The permission options every asking tool offers, as `optionId:kind`. */
export const PERMISSION_OPTIONS = ["allow_once:allow_once", "allow_always:allow_always", "reject_once:reject_once"];

/**
 * The client side of `terminal/*`, as an editor implements it: each terminal is a real process
 * started with the command, arguments and directory the agent asked for. Output is kept up to
 * `outputByteLimit` bytes (the oldest dropped first); `calls` logs every request in order.
 */
export class TerminalHost {
  calls = [];
  #terminals = new Map();
  #next = 1;

  create({ command, args = [], cwd, env = [], outputByteLimit }) {
    const terminalId = `term_${this.#next++}`;
    const child = spawn(command, args, {
      cwd: cwd ?? undefined,
      env: { ...process.env, ...Object.fromEntries(env.map(({ name, value }) => [name, value])) },
      stdio: ["ignore", "pipe", "pipe"],
    });
    const terminal = { child, command, args, cwd, output: Buffer.alloc(0), truncated: false, limit: outputByteLimit, exitStatus: null, released: false };
    terminal.exited = new Promise((resolve) => {
      child.once("error", (error) => {
        terminal.output = Buffer.from(String(error));
        terminal.exitStatus = { exitCode: 127, signal: null };
        resolve(terminal.exitStatus);
      });
      child.once("close", (code, signal) => {
        terminal.exitStatus = { exitCode: code, signal };
        resolve(terminal.exitStatus);
      });
    });
    const collect = (chunk) => {
      terminal.output = Buffer.concat([terminal.output, chunk]);
      if (terminal.limit != null && terminal.output.length > terminal.limit) {
        terminal.output = terminal.output.subarray(terminal.output.length - terminal.limit);
        terminal.truncated = true;
      }
    };
    child.stdout.on("data", collect);
    child.stderr.on("data", collect);
    live.add(child);
    child.once("exit", () => live.delete(child));
    this.#terminals.set(terminalId, terminal);
    this.calls.push({ method: "create", terminalId, command, args, cwd });
    return { terminalId };
  }

  #get(terminalId, method) {
    this.calls.push({ method, terminalId });
    const terminal = this.#terminals.get(terminalId);
    if (!terminal || terminal.released) throw acp.RequestError.invalidParams({ terminalId }, `no terminal ${terminalId}`);
    return terminal;
  }

  output({ terminalId }) {
    const terminal = this.#get(terminalId, "output");
    return { output: terminal.output.toString("utf8"), truncated: terminal.truncated, ...(terminal.exitStatus ? { exitStatus: terminal.exitStatus } : {}) };
  }

  async waitForExit({ terminalId }) {
    return await this.#get(terminalId, "wait_for_exit").exited;
  }

  kill({ terminalId }) {
    this.#get(terminalId, "kill").child.kill("SIGKILL");
    return {};
  }

  release({ terminalId }) {
    const terminal = this.#get(terminalId, "release");
    if (terminal.exitStatus === null) terminal.child.kill("SIGKILL");
    terminal.released = true;
    return {};
  }

  /** Ids of terminals created and not released. */
  unreleased() {
    return [...this.#terminals].filter(([, terminal]) => !terminal.released).map(([id]) => id);
  }
}

/** The capabilities Zed sends in `initialize`. */
export const ZED_INITIALIZE = {
  protocolVersion: 1,
  clientCapabilities: {
    fs: { readTextFile: true, writeTextFile: true },
    terminal: true,
    auth: { terminal: true },
    session: { configOptions: { boolean: {} } },
    elicitation: { form: {}, url: {} },
    _meta: { terminal_output: true, "terminal-auth": true },
  },
  clientInfo: { name: "zed", title: "Zed", version: "0.230.0" },
};

/** A client that advertises nothing, so the agent must use its own built-in tools. */
export const PLAIN_INITIALIZE = {
  protocolVersion: 1,
  clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false },
  clientInfo: { name: "larik-acp-sdk-conformance", version: "0.0.0" },
};

/**
 * One agent under test: temp dirs, the mock model, `larik acp`, and an SDK client
 * connection whose traffic is checked by a `ProtocolChecker`.
 */
export class Harness {
  checker = new ProtocolChecker();
  /** Pending `session/request_permission` requests: `{ params, respond(response) }`. */
  permissions = new Queue();
  /** Pending `elicitation/create` requests: `{ params, respond(response) }`. */
  elicitations = new Queue();
  /**
   * Pending `_larik/diagnostics` requests, for clients that advertise
   * `_meta.larik.diagnostics`: `{ method, params, respond(response) }`, `method` as the SDK
   * named it to the handler.
   */
  diagnosticsRequests = new Queue();
  /** Answers `terminal/*` requests, for clients that advertise `terminal`. */
  terminals = new TerminalHost();
  /**
   * Every `session/update` the SDK handed the client's handler, for any session (a subagent's
   * too), in arrival order: the params, as the SDK parsed them.
   */
  sessionUpdates = new Queue();
  /** The SDK entry point the client is built with (see `start`). */
  sdk = acp;
  #children = [];
  #mockStderr;
  #agentStderr;
  /** Rejects at the first protocol violation, so waits fail fast instead of timing out. */
  #violated = new Promise((_, reject) => {
    this.checker.onViolation = (violation) => reject(new Error(`protocol violation:\n${violation}`));
  });
  #agentExit = "";
  #closing = false;
  #agent;
  /** Whether `root` was made by this harness (and is removed by `close()`). */
  #ownsRoot = false;

  constructor() {
    this.#violated.catch(() => {}); // nobody may be waiting when it happens
  }

  /**
   * `root`: the directory of another harness, to run a second agent process on the same
   * home, configuration and data (it stays owned, and is removed, by that harness).
   * `settings`: written to the user's settings.json. `env`: overrides the agent's environment;
   * a key set to `undefined` is removed. `sdk`: the SDK entry point to build the client with,
   * the stable `@agentclientprotocol/sdk` unless a test needs `@agentclientprotocol/sdk/unstable`
   * (the same client, also knowing ACP's unstable features).
   */
  static async start({ scenario, root, settings, env = {}, sdk = acp }) {
    const h = new Harness();
    h.sdk = sdk;
    try {
      await h.#start(scenario, { root, settings, env });
    } catch (error) {
      await h.close();
      if (error instanceof Error) error.message += `\n${h.#stderrTail()}`;
      throw error;
    }
    return h;
  }

  async #start(scenario, { root, settings, env }) {
    const larik = binary("LARIK_BIN", "larik");
    const mockLlm = binary("LARIK_MOCK_LLM_BIN", "larik-mock-llm");

    if (root) {
      this.root = root;
    } else {
      this.root = realpathSync(mkdtempSync(join(tmpdir(), "larik-acp-sdk-")));
      this.#ownsRoot = true;
      for (const dir of ["project", "home", "config", "data", "state", "cache"]) mkdirSync(join(this.root, dir));
    }
    this.projectDir = join(this.root, "project");
    if (settings) {
      mkdirSync(join(this.root, "config", "larik"), { recursive: true });
      writeFileSync(join(this.root, "config", "larik", "settings.json"), JSON.stringify(settings));
    }
    const scenarioFile = join(mkdtempSync(join(this.root, "mock-")), "scenario.json");
    writeFileSync(scenarioFile, JSON.stringify(scenario));

    // Mock model: its first stdout line announces where it listens.
    const mock = track(
      spawn(mockLlm, ["--scenario", scenarioFile, "--port", "0"], {
        cwd: this.root,
        env: { PATH: process.env.PATH ?? "" },
        stdio: ["ignore", "pipe", "pipe"],
      }),
    );
    this.#children.push(mock);
    this.#mockStderr = capture(mock.stderr);
    const firstLine = new Promise((resolve, reject) => {
      let buffered = "";
      mock.stdout.setEncoding("utf8");
      mock.stdout.on("data", (s) => {
        buffered += s;
        const nl = buffered.indexOf("\n");
        if (nl !== -1) resolve(buffered.slice(0, nl));
      });
      mock.once("exit", (code, signal) => reject(new Error(`larik-mock-llm exited (${code ?? signal}) before announcing its URL`)));
    });
    const announced = JSON.parse(await withTimeout(firstLine, WAIT_MS, "larik-mock-llm to print its URL"));
    assert.match(announced.url, /^http:\/\/127\.0\.0\.1:\d+$/, "larik-mock-llm announced an unexpected URL");
    this.mockUrl = announced.url;

    // The agent, with a private home and configuration.
    const agentEnv = {
      PATH: process.env.PATH ?? "",
      HOME: join(this.root, "home"),
      XDG_CONFIG_HOME: join(this.root, "config"),
      XDG_DATA_HOME: join(this.root, "data"),
      XDG_STATE_HOME: join(this.root, "state"),
      XDG_CACHE_HOME: join(this.root, "cache"),
      ANTHROPIC_BASE_URL: this.mockUrl,
      ANTHROPIC_API_KEY: "test-key",
      LARIK_MODEL: "claude-mock",
      RUST_BACKTRACE: "1",
      ...(process.env.LARIK_LOG ? { LARIK_LOG: process.env.LARIK_LOG } : {}),
      ...env,
    };
    for (const [key, value] of Object.entries(agentEnv)) if (value === undefined) delete agentEnv[key];
    const agent = track(spawn(larik, ["acp"], { cwd: this.projectDir, env: agentEnv, stdio: ["pipe", "pipe", "pipe"] }));
    this.#agent = agent;
    this.#children.push(agent);
    agent.once("exit", (code, signal) => {
      if (!this.#closing) this.#agentExit = `larik exited on its own (${code ?? signal})`;
    });
    this.#agentStderr = capture(agent.stderr);
    agent.stdin.on("error", () => {}); // EPIPE after the agent exits is reported through the SDK.

    // Agent stdout goes through the checker before the SDK parses it, so by the time an SDK
    // promise resolves the checker has already seen the line that resolved it.
    const fromAgent = Readable.toWeb(agent.stdout).pipeThrough(lineTap((line) => this.checker.agentLine(line)));
    const sdk = this.sdk;
    const sdkStream = sdk.ndJsonStream(Writable.toWeb(agent.stdin), fromAgent);
    const writer = sdkStream.writable.getWriter();
    const checker = this.checker;
    const stream = {
      readable: sdkStream.readable,
      writable: new WritableStream({
        write(msg) {
          checker.clientMessage(msg);
          return writer.write(msg);
        },
        close: () => writer.close(),
        abort: (reason) => writer.abort(reason),
      }),
    };

    const app = sdk
      .client({ name: "larik-acp-sdk-conformance" })
      // Sessions started with `newSession()` also get their own updates on their `ActiveSession`;
      // this handler is what sees a subagent's session, which no `session/new` started.
      .onNotification(sdk.methods.client.session.update, ({ params }) => this.sessionUpdates.push(params))
      .onRequest(sdk.methods.client.session.requestPermission, ({ params }) =>
        new Promise((respond) => this.permissions.push({ params, respond })),
      )
      .onRequest(sdk.methods.client.elicitation.create, ({ params }) =>
        new Promise((respond) => this.elicitations.push({ params, respond })),
      )
      .onRequest(DIAGNOSTICS_METHOD, (params) => params, ({ method, params }) =>
        new Promise((respond) => this.diagnosticsRequests.push({ method, params, respond })),
      )
      .onRequest(sdk.methods.client.terminal.create, ({ params }) => this.terminals.create(params))
      .onRequest(sdk.methods.client.terminal.output, ({ params }) => this.terminals.output(params))
      .onRequest(sdk.methods.client.terminal.waitForExit, ({ params }) => this.terminals.waitForExit(params))
      .onRequest(sdk.methods.client.terminal.kill, ({ params }) => this.terminals.kill(params))
      .onRequest(sdk.methods.client.terminal.release, ({ params }) => this.terminals.release(params));
    this.connection = app.connect(stream);
    /** SDK context for calling the agent. */
    this.agent = this.connection.agent;
  }

  #stderrTail() {
    return [
      ["larik", this.#agentStderr],
      ["larik-mock-llm", this.#mockStderr],
    ]
      .filter(([, out]) => out?.text)
      .map(([name, out]) => `--- ${name} stderr (tail) ---\n${out.text.slice(-4000)}`)
      .concat(this.#agentExit ? [this.#agentExit] : [])
      .join("\n");
  }

  /** Awaits `promise`; fails after `ms`, or as soon as a protocol violation is seen. */
  wait(promise, what, ms = WAIT_MS) {
    return withTimeout(Promise.race([promise, this.#violated]), ms, what);
  }

  initialize(params = PLAIN_INITIALIZE) {
    return this.wait(this.agent.request(this.sdk.methods.agent.initialize, params), "the initialize response");
  }

  /** Starts a session through the SDK's session helper; returns an `ActiveSession`. */
  newSession() {
    return this.wait(
      this.agent.buildSession({ cwd: this.projectDir, mcpServers: [] }).start(),
      "the session/new response",
    );
  }

  /** Sends a prompt; the returned promise is safe to leave unawaited for a while. */
  prompt(session, text) {
    const response = session.prompt(text);
    response.catch(() => {});
    return response;
  }

  /** Reads session messages until `until(message)` holds; returns all read, the last included. */
  async readUntil(session, until, what) {
    const read = [];
    for (;;) {
      const message = await this.wait(session.nextUpdate(), what);
      read.push(message);
      if (until(message)) return read;
    }
  }

  /** Reads the rest of a turn; returns its updates and the prompt response. */
  async finishTurn(session) {
    const read = await this.readUntil(session, (m) => m.kind === "stop", "the end of the prompt turn");
    return { updates: read.filter((m) => m.kind === "session_update").map((m) => m.update), response: read.at(-1).response };
  }

  nextElicitation() {
    return this.wait(this.elicitations.next(), "an elicitation/create request");
  }

  nextPermission() {
    return this.wait(this.permissions.next(), "a session/request_permission request");
  }

  nextDiagnostics() {
    return this.wait(this.diagnosticsRequests.next(), `a ${DIAGNOSTICS_METHOD} request`);
  }

  cancel(sessionId) {
    return this.agent.notify(this.sdk.methods.agent.session.cancel, { sessionId });
  }

  /**
   * A full request/response round trip after which anything the agent wrote before
   * answering has been seen: used to prove nothing more arrives after a turn ended.
   */
  barrier() {
    return this.wait(
      this.agent.request(this.sdk.methods.agent.session.new, { cwd: this.projectDir, mcpServers: [] }),
      "the response to a barrier session/new",
    );
  }

  /**
   * Closes the agent's stdin, as an editor does when it quits, and waits for the agent to exit
   * on its own; returns its exit code (null if a signal ended it).
   */
  async endInput() {
    const agent = this.#agent;
    this.#closing = true;
    const exited = agent.exitCode !== null || agent.signalCode !== null ? Promise.resolve() : once(agent, "exit");
    agent.stdin.end();
    await this.wait(exited, "larik to exit after its stdin was closed");
    return agent.exitCode;
  }

  /** Request bodies the mock model has received, in order. */
  async modelRequests() {
    const res = await this.wait(fetch(`${this.mockUrl}/requests`), "GET /requests on the mock model");
    assert.equal(res.status, 200, "GET /requests on the mock model failed");
    return res.json();
  }

  /** Fails with every schema or ordering problem seen on the connection. */
  assertProtocolClean() {
    const { violations } = this.checker;
    assert.equal(
      violations.length,
      0,
      `${violations.length} protocol violation(s):\n\n${violations.join("\n\n")}\n\n${this.#stderrTail()}`,
    );
  }

  /** Violations and stderr tails not already part of `message`. */
  diagnostics(message = "") {
    const violations = this.checker.violations.filter((v) => !message.includes(v));
    const v = violations.length ? `protocol violations:\n\n${violations.join("\n\n")}\n\n` : "";
    return `${v}${this.#stderrTail()}`;
  }

  async close() {
    this.#closing = true;
    this.connection?.close();
    await Promise.all(this.#children.map(stop));
    if (this.root && this.#ownsRoot && !process.env.LARIK_KEEP_TMP) rmSync(this.root, { recursive: true, force: true });
  }
}

/**
 * Runs `body(h)` against a fresh agent, then cleans up and fails on any protocol violation
 * seen on the connection, also when the body itself passed. `options` go to `Harness.start`.
 */
export async function withAgent(t, scenario, body, options = {}) {
  const h = await Harness.start({ ...options, scenario });
  t.after(() => h.close()); // safety net if the test times out
  try {
    await body(h);
  } catch (error) {
    await h.close();
    if (error instanceof Error) error.message += `\n\n${h.diagnostics(error.message)}`;
    throw error;
  }
  await h.close();
  h.assertProtocolClean();
  return h;
}

// ---------------------------------------------------------------------------
// Inspecting model request bodies

/** Every object nested anywhere in `value` (depth-first, including `value`). */
export function* objectsIn(value) {
  if (value === null || typeof value !== "object") return;
  if (!Array.isArray(value)) yield value;
  for (const child of Object.values(value)) yield* objectsIn(child);
}

/** Every string nested anywhere in `value`. */
export function* stringsIn(value) {
  if (typeof value === "string") yield value;
  else if (value !== null && typeof value === "object") for (const child of Object.values(value)) yield* stringsIn(child);
}

export function toolResult(body, toolUseId) {
  return [...objectsIn(body)].find((o) => o.type === "tool_result" && o.tool_use_id === toolUseId);
}

export function toolUse(body, id) {
  return [...objectsIn(body)].find((o) => o.type === "tool_use" && o.id === id);
}
