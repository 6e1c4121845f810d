// activate()/deactivate() under the vscode stub: what gets registered, the manifest agrees with
// it, no agent in an untrusted workspace, and the agent process is stopped on deactivate.

import assert from "node:assert/strict";
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import test from "node:test";
import * as vscode from "vscode";
import { commandTable } from "../../src/commands";
import type { Ctx } from "../../src/ctx";
import { activate, deactivate } from "../../src/extension";
import { CHAT_VIEW_ID } from "../../src/views/chatView";
import { AUTO_APPROVE_NOTICE, AUTO_APPROVE_NOTICE_SHOWN } from "../../src/views/retiredSettings";
import { INSTALL_TERMINAL, RETRY } from "../../src/views/installOffer";
import { HOW_TO_INSTALL, RUN_DOCTOR, SET_PATH } from "../../src/views/startFailure";
import { EXTENSION_ROOT, Sandbox, waitFor } from "../support/agent";

const stub = (vscode as unknown as { __stub: any }).__stub;
const manifest = JSON.parse(readFileSync(join(EXTENSION_ROOT, "package.json"), "utf8"));
const FAKE_AGENT = join(EXTENSION_ROOT, "test", "fixtures", "fake-agent.cjs");

function extensionContext(root = EXTENSION_ROOT, globalState = new Map<string, unknown>()): vscode.ExtensionContext {
  const secrets = new Map<string, string>();
  return {
    subscriptions: [],
    extensionUri: vscode.Uri.file(root),
    extensionPath: root,
    extension: { packageJSON: manifest },
    globalState: {
      get: (k: string) => globalState.get(k),
      update: async (k: string, v: unknown) => void globalState.set(k, v),
      keys: () => [...globalState.keys()],
    },
    secrets: {
      get: async (k: string) => secrets.get(k),
      store: async (k: string, v: string) => void secrets.set(k, v),
      delete: async (k: string) => void secrets.delete(k),
    },
  } as unknown as vscode.ExtensionContext;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

function useFakeAgent(sandbox: Sandbox): string {
  const pidFile = join(sandbox.root, "agent.pid");
  stub.folder = sandbox.project;
  stub.settings["larik.server.path"] = process.execPath;
  stub.settings["larik.server.args"] = [FAKE_AGENT, pidFile];
  return pidFile;
}

/** What a test gives the helpers: a place to register clean-up. */
type Cleanup = { after: (fn: () => unknown) => void };

/** Activates with the fake agent as the server and waits until it is ready. */
async function activateWithFakeAgent(t: Cleanup, context = extensionContext()): Promise<{ ctx: Ctx; pidFile: string }> {
  stub.reset();
  const sandbox = new Sandbox();
  t.after(() => sandbox.remove());
  const pidFile = useFakeAgent(sandbox);
  const ctx = (await activate(context)) as Ctx;
  t.after(() => deactivate());
  await waitFor(() => ctx.controller.transcript.session.status === "idle", "the agent to be ready");
  return { ctx, pidFile };
}

test("activate registers every contributed command, the chat view, the review providers", async (t) => {
  stub.reset();
  const sandbox = new Sandbox();
  t.after(() => sandbox.remove());
  useFakeAgent(sandbox);
  const ctx = (await activate(extensionContext())) as Ctx;
  t.after(() => deactivate());
  const contributed = manifest.contributes.commands.map((c: { command: string }) => c.command).sort();
  assert.deepEqual([...stub.commands.keys()].sort(), contributed);
  assert.deepEqual(Object.keys(commandTable(ctx)).sort(), contributed);
  assert.ok(stub.webviewProviders.has(CHAT_VIEW_ID));
  assert.deepEqual([...stub.contentProviders.keys()].sort(), ["larik-after", "larik-before", "larik-original", "larik-proposed", "larik-review"]);
  assert.deepEqual(stub.codeLensProviders.map((p: any) => p.selector), [{ scheme: "larik-review" }]);
  assert.equal(stub.statusBarItems.length, 1);
  await waitFor(() => ctx.controller.transcript.session.status === "idle", "the agent to be ready");
  assert.match(stub.statusBarItems[0].text, /Larik: idle/);
  // Accept/Reject with nothing to review do nothing, quietly.
  assert.equal(await vscode.commands.executeCommand("larik.acceptDiff"), false);
  assert.equal(await vscode.commands.executeCommand("larik.rejectDiff"), false);
});

test("the manifest: menus and keybindings name contributed commands; the view is a webview", () => {
  const commands = new Set(manifest.contributes.commands.map((c: { command: string }) => c.command));
  for (const [menu, entries] of Object.entries(manifest.contributes.menus) as Array<[string, Array<{ command: string }>]>) {
    for (const entry of entries) assert.ok(commands.has(entry.command), `${menu}: unknown command ${entry.command}`);
  }
  for (const binding of manifest.contributes.keybindings) assert.ok(commands.has(binding.command), `keybinding: ${binding.command}`);
  const accept = manifest.contributes.keybindings.find((k: { command: string }) => k.command === "larik.acceptDiff");
  assert.equal(accept.when, "larik.diffVisible");
  assert.deepEqual(manifest.contributes.views.larik, [{ type: "webview", id: CHAT_VIEW_ID, name: "Chat" }]);
  assert.equal(manifest.capabilities.untrustedWorkspaces.supported, "limited");
  for (const c of manifest.contributes.commands) assert.equal(c.category, "Larik", c.command);
  const props = manifest.contributes.configuration.properties;
  for (const key of ["larik.server.path", "larik.server.args", "larik.server.env", "larik.diff.style", "larik.trace.protocol"]) {
    assert.ok(props[key], `setting ${key}`);
  }
  // The agent's permission rules are the one policy: no setting of the editor's answers for the user.
  assert.equal(props["larik.autoApprove"], undefined);
  for (const [name, version] of Object.entries(manifest.devDependencies as Record<string, string>)) {
    assert.match(version, /^\d+\.\d+\.\d+$/, `${name} is not pinned exactly`);
  }
});

test("untrusted workspace: no agent until trust is granted", async (t) => {
  stub.reset();
  const sandbox = new Sandbox();
  t.after(() => sandbox.remove());
  const pidFile = useFakeAgent(sandbox);
  stub.trusted = false;
  const ctx = (await activate(extensionContext())) as Ctx;
  t.after(() => deactivate());
  await waitFor(() => ctx.controller.transcript.session.status === "disabled", "the disabled status");
  assert.match(ctx.controller.transcript.session.statusDetail ?? "", /trusted/);
  assert.match(stub.statusBarItems[0].text, /disabled/);
  assert.equal(existsSync(pidFile), false, "an agent was started in an untrusted workspace");
  stub.trusted = true;
  for (const listener of stub.listeners.trust) listener();
  await waitFor(() => ctx.controller.transcript.session.status === "idle", "the agent after trust was granted");
  assert.ok(existsSync(pidFile));
});

test("deactivate stops the agent process", async (t) => {
  const { pidFile } = await activateWithFakeAgent(t);
  const pid = Number(readFileSync(pidFile, "utf8"));
  assert.ok(alive(pid));
  await deactivate();
  await waitFor(() => !alive(pid), "the agent process to end", 5000);
});

/** Activates with a server path that does not exist; returns once the agent is reported stopped. */
async function activateWithoutBinary(t: Cleanup): Promise<{ ctx: Ctx; sandbox: Sandbox }> {
  stub.reset();
  const sandbox = new Sandbox();
  t.after(() => sandbox.remove());
  stub.folder = sandbox.project;
  stub.settings["larik.server.path"] = join(sandbox.root, "no-such-larik");
  const ctx = (await activate(extensionContext())) as Ctx;
  t.after(() => deactivate());
  await waitFor(() => ctx.controller.transcript.session.status === "stopped", "the stopped status");
  return { ctx, sandbox };
}

test("a setting naming no binary leaves the extension up, stopped, saying so with how to install", async (t) => {
  const { sandbox } = await activateWithoutBinary(t);
  const shown = await waitFor(() => stub.messages.find((m: any) => m.level === "error"), "the error message");
  assert.equal(shown.message, `Larik cannot find its binary: the setting larik.server.path is "${join(sandbox.root, "no-such-larik")}", which does not exist.`);
  assert.deepEqual(shown.items, [HOW_TO_INSTALL, SET_PATH]);
  assert.doesNotMatch(shown.message, /ENOENT/);
});

test("no binary, npm on PATH: the error offers to install with npm, in a terminal, then starts the agent again", async (t) => {
  stub.reset();
  const sandbox = new Sandbox();
  t.after(() => sandbox.remove());
  const pidFile = join(sandbox.root, "agent.pid");
  // A PATH with npm, but neither pipx nor larik; npm itself is never run (the stub's terminal runs nothing).
  const bin = join(sandbox.root, "tools");
  mkdirSync(bin, { recursive: true });
  writeFileSync(join(bin, "npm"), "#!/bin/sh\nexit 0\n");
  chmodSync(join(bin, "npm"), 0o755);
  stub.folder = sandbox.project;
  stub.settings["larik.server.env"] = { PATH: bin };
  stub.answerMessage = (_message: string, items: string[]) => {
    if (items.includes("Install with npm")) return "Install with npm";
    if (!items.includes(RETRY)) return undefined;
    // The install is done: a larik is on PATH now.
    writeFileSync(join(bin, "larik"), `#!/bin/sh\nexec "${process.execPath}" "${FAKE_AGENT}" "${pidFile}"\n`);
    chmodSync(join(bin, "larik"), 0o755);
    return RETRY;
  };
  const ctx = (await activate(extensionContext(sandbox.root))) as Ctx;
  t.after(() => deactivate());
  const shown = await waitFor(() => stub.messages.find((m: any) => m.level === "error"), "the error message");
  assert.deepEqual(shown.items, ["Install with npm", HOW_TO_INSTALL, SET_PATH]);
  const terminal = await waitFor(() => stub.terminals[0], "the install's terminal");
  assert.equal(terminal.options.name, INSTALL_TERMINAL);
  assert.equal(terminal.options.env.PATH, bin);
  assert.deepEqual(terminal.sent, ["npm install -g larik"]);
  assert.ok(terminal.shown);
  await waitFor(() => ctx.controller.transcript.session.status === "idle", "the agent, started again after the install");
  assert.ok(stub.logLines.some((l: any) => l.message.includes(`starting ${join(bin, "larik")} (path)`)));
});

test("no binary anywhere: the error's How to Install opens the bundled README in the Markdown preview", async (t) => {
  stub.reset();
  const sandbox = new Sandbox();
  t.after(() => sandbox.remove());
  stub.folder = sandbox.project;
  stub.settings["larik.server.env"] = { PATH: join(sandbox.root, "empty-bin") };
  stub.answerMessage = (_message: string, items: string[]) => (items.includes(HOW_TO_INSTALL) ? HOW_TO_INSTALL : undefined);
  const ctx = (await activate(extensionContext(sandbox.root))) as Ctx;
  t.after(() => deactivate());
  await waitFor(() => ctx.controller.transcript.session.status === "stopped", "the stopped status");
  const shown = await waitFor(() => stub.messages.find((m: any) => m.level === "error"), "the error message");
  assert.equal(shown.message, "Larik cannot find its binary: there is none in the extension (bin/larik) nor on PATH, and larik.server.path is not set.");
  const preview = await waitFor(() => stub.executed.find((e: any) => e.id === "markdown.showPreview"), "the README preview");
  assert.equal(preview.args[0].fsPath, join(sandbox.root, "README.md"));
  // The first start is tried again a few times: the same failure is not stacked up.
  await new Promise((resolve) => setTimeout(resolve, 1800));
  assert.equal(stub.messages.filter((m: any) => m.level === "error").length, 1);
});

test("with no setting, the binary inside the extension (bin/larik) is the one run", async (t) => {
  stub.reset();
  const sandbox = new Sandbox();
  t.after(() => sandbox.remove());
  const pidFile = join(sandbox.root, "agent.pid");
  const bin = join(sandbox.root, "ext", "bin");
  mkdirSync(bin, { recursive: true });
  writeFileSync(join(bin, "larik"), `#!/bin/sh\nexec "${process.execPath}" "${FAKE_AGENT}" "${pidFile}"\n`);
  chmodSync(join(bin, "larik"), 0o755);
  stub.folder = sandbox.project;
  stub.settings["larik.server.env"] = { PATH: "/usr/bin:/bin" };
  const ctx = (await activate(extensionContext(join(sandbox.root, "ext")))) as Ctx;
  t.after(() => deactivate());
  await waitFor(() => ctx.controller.transcript.session.status === "idle", "the bundled agent to be ready");
  assert.ok(existsSync(pidFile));
  assert.ok(stub.logLines.some((l: any) => l.message.includes(`starting ${join(bin, "larik")} (bundled)`)));
});

test("a binary that is there but does not start: the error offers larik doctor, run in a terminal", async (t) => {
  stub.reset();
  const sandbox = new Sandbox();
  t.after(() => sandbox.remove());
  const broken = join(sandbox.root, "larik");
  writeFileSync(broken, "#!/bin/sh\necho 'larik: cannot open the data directory' >&2\nexit 3\n");
  chmodSync(broken, 0o755);
  stub.folder = sandbox.project;
  stub.settings["larik.server.path"] = broken;
  stub.answerMessage = (_message: string, items: string[]) => (items.includes(RUN_DOCTOR) ? RUN_DOCTOR : undefined);
  const ctx = (await activate(extensionContext())) as Ctx;
  t.after(() => deactivate());
  await waitFor(() => ctx.controller.transcript.session.status === "stopped", "the stopped status");
  const shown = await waitFor(() => stub.messages.find((m: any) => m.level === "error"), "the error message");
  assert.match(shown.message, /^Larik could not start: /);
  assert.deepEqual(shown.items, [RUN_DOCTOR, "Show Log", "Open Settings"]);
  const terminal = await waitFor(() => stub.terminals[0], "the doctor's terminal");
  assert.equal(terminal.options.shellPath, broken);
  assert.deepEqual(terminal.options.shellArgs, ["doctor"]);
  assert.equal(terminal.options.cwd, sandbox.project);
  assert.ok(terminal.shown);
});

test("a larik.autoApprove still set is told once that it is no longer read", async (t) => {
  const state = new Map<string, unknown>();
  for (const round of [1, 2]) {
    stub.reset();
    const sandbox = new Sandbox();
    t.after(() => sandbox.remove());
    useFakeAgent(sandbox);
    stub.settings["larik.autoApprove"] = "edits";
    const ctx = (await activate(extensionContext(EXTENSION_ROOT, state))) as Ctx;
    await waitFor(() => ctx.controller.transcript.session.status === "idle", "the agent to be ready");
    const notices = stub.messages.filter((m: any) => m.message === AUTO_APPROVE_NOTICE);
    assert.equal(notices.length, round === 1 ? 1 : 0, `round ${round}`);
    await deactivate();
  }
  assert.equal(state.get(AUTO_APPROVE_NOTICE_SHOWN), true);
  assert.match(AUTO_APPROVE_NOTICE, /\.claude\/settings\.json/);
  assert.match(AUTO_APPROVE_NOTICE, /~\/\.config\/larik\/settings\.json/);
});

test("without larik.autoApprove there is no notice", async (t) => {
  await activateWithFakeAgent(t);
  assert.ok(!stub.messages.some((m: any) => m.message === AUTO_APPROVE_NOTICE));
});

test("settings that arrive after a failed start start the agent, without asking", async (t) => {
  // As after a window reload that hands the settings over late: the first read finds none usable.
  const { ctx, sandbox } = await activateWithoutBinary(t);
  const pidFile = useFakeAgent(sandbox);
  const event = { affectsConfiguration: (key: string) => key.startsWith("larik.server") };
  for (const listener of stub.listeners.config) listener(event);
  await waitFor(() => ctx.controller.transcript.session.status === "idle", "the agent started with the new settings");
  assert.ok(existsSync(pidFile));
  assert.ok(!stub.messages.some((m: any) => /settings changed/.test(m.message)), "asked to restart an agent that was not running");
});

test("a first start that fails is tried again with the settings read again", async (t) => {
  const { ctx, sandbox } = await activateWithoutBinary(t);
  // The settings become readable without any change event, as the editor finishes loading.
  const pidFile = useFakeAgent(sandbox);
  await waitFor(() => ctx.controller.transcript.session.status === "idle", "the agent on the second try", 5000);
  assert.ok(existsSync(pidFile));
});

test("settings that stay unreadable past the first retry still start the agent on a later one", async (t) => {
  const { ctx, sandbox } = await activateWithoutBinary(t);
  // The editor hands the settings over only after the first retry has failed too.
  await new Promise((resolve) => setTimeout(resolve, 2000));
  assert.notEqual(ctx.controller.transcript.session.status, "idle", "nothing could start yet");
  const pidFile = useFakeAgent(sandbox);
  await waitFor(() => ctx.controller.transcript.session.status === "idle", "the agent on a later try", 8000);
  assert.ok(existsSync(pidFile));
});

test("the chat webview: strict CSP with a nonce, a snapshot on ready", async (t) => {
  await activateWithFakeAgent(t);
  const posted: any[] = [];
  let receive: (m: unknown) => void = () => {};
  const webview = {
    options: {},
    html: "",
    cspSource: "vscode-resource:",
    asWebviewUri: (uri: vscode.Uri) => uri,
    postMessage: async (m: unknown) => void posted.push(m),
    onDidReceiveMessage: (listener: (m: unknown) => void) => {
      receive = listener;
      return new vscode.Disposable(() => {});
    },
  };
  const view = { webview, visible: true, onDidDispose: () => new vscode.Disposable(() => {}) };
  stub.webviewProviders.get(CHAT_VIEW_ID).resolveWebviewView(view);
  const csp = /http-equiv="Content-Security-Policy" content="([^"]+)"/.exec(webview.html)?.[1] ?? "";
  assert.match(csp, /default-src 'none'/);
  const nonce = /script-src 'nonce-([^']+)'/.exec(csp)?.[1];
  assert.ok(nonce);
  const scripts = [...webview.html.matchAll(/<script([^>]*)>/g)].map((m) => m[1]);
  assert.deepEqual(scripts, [` nonce="${nonce}" src="${vscode.Uri.file(join(EXTENSION_ROOT, "dist", "webview.js")).toString()}"`]);
  assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval/);
  receive({ type: "ready" });
  const snapshot = posted.find((m) => m.type === "snapshot");
  assert.ok(snapshot);
  assert.equal(snapshot.session.status, "idle");
  assert.equal(snapshot.session.sessionId, "sess_fake");
});

test("a permission while the chat is hidden raises a notification with the agent's options", async (t) => {
  const { ctx } = await activateWithFakeAgent(t);
  stub.answerMessage = (_message: string, items: string[]) => items.find((i) => i === "Reject");
  const answer = ctx.controller.permissions.enqueue({
    sessionId: "sess_fake",
    toolCall: { toolCallId: "t1", title: "Run rm -rf build", kind: "execute" },
    options: [
      { optionId: "allow_once", name: "Allow once", kind: "allow_once" },
      { optionId: "reject_once", name: "Reject", kind: "reject_once" },
    ],
  });
  assert.deepEqual(await answer, { outcome: { outcome: "selected", optionId: "reject_once" } });
  const shown = stub.messages.find((m: any) => /Run rm -rf build/.test(m.message));
  assert.deepEqual(shown.items, ["Allow once", "Reject", "Open Chat"]);
  assert.match(stub.statusBarItems[0].text, /idle/);
});

test("an API key from the key store reaches the agent's environment", async (t) => {
  const context = extensionContext();
  await context.secrets.store("larik.apiKey.ANTHROPIC_API_KEY", "sk-test-123");
  const { pidFile } = await activateWithFakeAgent(t, context);
  const pid = Number(readFileSync(pidFile, "utf8"));
  const environ = readFileSync(`/proc/${pid}/environ`, "utf8").split("\0");
  assert.ok(environ.includes("ANTHROPIC_API_KEY=sk-test-123"));
  assert.ok(!stub.logLines.some((l: any) => l.message.includes("sk-test-123")), "the key was logged");
});

test("while the edit's hunks are decided in the editor, the hidden-chat notification offers no options", async () => {
  const { PermissionNotice } = await import("../../src/views/permissionNotice");
  const { PermissionQueue } = await import("../../src/state/permissions");
  stub.messages.length = 0;
  // The notice reads only the controller's permission queue (and who asks).
  const controller = { permissions: new PermissionQueue(), subagentAsking: () => undefined } as unknown as import("../../src/session").SessionController;
  let reviewing = true;
  const notice = new PermissionNotice(controller, () => false, { isReviewingHunks: () => reviewing });
  void controller.permissions.enqueue({
    sessionId: "s",
    toolCall: { toolCallId: "t1", title: "Edit c.txt", kind: "edit", content: [{ type: "diff", path: "/p/c.txt", oldText: "a\n", newText: "b\n" }] },
    options: [{ optionId: "allow_once", name: "Allow once", kind: "allow_once" }],
  });
  const shown = stub.messages.find((m: any) => /Edit c\.txt/.test(m.message));
  assert.ok(shown, "the user hears of it");
  assert.deepEqual(shown.items ?? [], [], "no option to answer with: the review decides");
  assert.match(shown.message, /decide each hunk/);
  reviewing = false;
  notice.dispose();
});

test("the hidden-chat notification of a subagent's request names the subagent", async () => {
  const { PermissionNotice } = await import("../../src/views/permissionNotice");
  const { PermissionQueue } = await import("../../src/state/permissions");
  stub.messages.length = 0;
  const controller = { permissions: new PermissionQueue(), subagentAsking: () => "explore: find alpha" } as unknown as import("../../src/session").SessionController;
  const notice = new PermissionNotice(controller, () => false);
  void controller.permissions.enqueue({
    sessionId: "sess_1-t1",
    toolCall: { toolCallId: "c1", title: "Run ls", kind: "execute" },
    options: [{ optionId: "allow_once", name: "Allow once", kind: "allow_once" }],
  });
  const shown = stub.messages.find((m: any) => /Run ls/.test(m.message));
  assert.equal(shown?.message, "Larik asks: Run ls (for explore: find alpha)");
  notice.dispose();
});
