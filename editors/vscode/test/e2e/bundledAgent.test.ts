// End to end in a real VS Code with the platform package as a user installs it: code-server with
// dist/larik-linux-x64.vsix, which scripts/test.sh packs with the real `larik` as bin/larik, no
// `larik.server.path` setting and no `larik` on the editor's PATH. The extension finds the agent
// it carries, starts it, gets a session, and a prompt gets the mock model's answer.

import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { readlinkSync, realpathSync } from "node:fs";
import { join, sep } from "node:path";
import { after, before, test } from "node:test";
import { larikBinary } from "../support/agent";
import { sendPrompt, Workbench } from "../support/workbench";

const ANSWER = "Hello from the agent the package carries.";

let rig: Workbench;

before(async () => {
  rig = await Workbench.start({
    prefix: "larik-vscode-e2e-bundled-",
    files: { "a.txt": "alpha\n" },
    scenario: { responses: [{ text: ANSWER }] },
    bundledAgent: true,
  });
});

after(async () => {
  await rig?.stop();
});

test("no setting, no larik on PATH: the agent inside the package starts, and a prompt gets its answer", { timeout: 180_000 }, async () => {
  await rig.step("open the workbench: the agent connects", () => rig.open());
  const bundled = await rig.step("the extension started its own bin/larik", async () => {
    const log = rig.extensionLog();
    const started = /starting (\S+) \(bundled\) acp /.exec(log);
    assert.ok(started, "the log does not say the bundled agent was started");
    const path = started[1]!;
    assert.ok(path.startsWith(rig.server.extensionsDir + sep) && path.endsWith(join(sep, "bin", "larik")), `${path} is not inside the installed extension`);
    // The process that connected runs that file, and the file is the real agent.
    const pids = rig.agentPids();
    assert.equal(pids.length, 1, log);
    assert.equal(readlinkSync(`/proc/${pids[0]}/exe`), realpathSync(path));
    // Its name and version as the tests' binary says them (the commit it names may be newer by
    // now, if that binary was rebuilt since it was packed).
    const version = (binary: string) => /^larik \S+/.exec(spawnSync(binary, ["--version"], { encoding: "utf8" }).stdout)?.[0];
    assert.ok(version(path), `${path} --version does not answer as larik does`);
    assert.equal(version(path), version(larikBinary()), "bin/larik is not the agent the tests run");
    return path;
  });
  const chat = await rig.step("open the chat view", async () => {
    await rig.runCommand("Larik: Open Chat");
    return rig.chatFrame();
  });
  await rig.step("a prompt gets the model's answer", async () => {
    await sendPrompt(chat, "Say hello");
    await chat.locator(".item.agent", { hasText: ANSWER }).waitFor();
    await chat.locator('#status[data-status="idle"]').waitFor();
  });
  const requests = await rig.model.requests();
  assert.equal(requests.length, 1);
  assert.match(rig.extensionLog(), /"method":"session\/new"/, `no session was asked of ${bundled}`);
});
