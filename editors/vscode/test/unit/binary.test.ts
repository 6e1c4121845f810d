// Which `larik` the extension runs: the setting, then the binary inside the extension, then PATH;
// and what the user is told when there is none.

import assert from "node:assert/strict";
import { chmodSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import test from "node:test";
import { findBinary, missingBinaryMessage } from "../../src/binary";
import { Sandbox } from "../support/agent";

/** A search over a made-up file system: `present` lists the executable files. */
function search(setting: string, present: string[], env: Record<string, string> = { PATH: "/usr/bin:/opt/larik/bin", HOME: "/home/u" }) {
  return findBinary({ setting, extensionPath: "/ext", env, platform: "linux", isExecutable: (file) => present.includes(file) });
}

test("the setting first, then the extension's bin/larik, then PATH", () => {
  const all = ["/custom/larik", "/ext/bin/larik", "/opt/larik/bin/larik"];
  assert.deepEqual(search("/custom/larik", all).found, { path: "/custom/larik", source: "setting" });
  assert.deepEqual(search("", all).found, { path: "/ext/bin/larik", source: "bundled" });
  assert.deepEqual(search("", ["/opt/larik/bin/larik"]).found, { path: "/opt/larik/bin/larik", source: "path" });
  // The first directory of PATH that has it.
  assert.deepEqual(search("", ["/usr/bin/larik", "/opt/larik/bin/larik"]).found, { path: "/usr/bin/larik", source: "path" });
  assert.deepEqual(search("", []).looked, ["/ext/bin/larik", "larik on PATH"]);
});

test("the setting: ~ expanded, a bare name looked up on PATH", () => {
  assert.deepEqual(search("~/bin/larik", ["/home/u/bin/larik"]).found, { path: "/home/u/bin/larik", source: "setting" });
  assert.deepEqual(search("larik-nightly", ["/opt/larik/bin/larik-nightly"]).found, { path: "/opt/larik/bin/larik-nightly", source: "setting" });
  assert.deepEqual(search("  ", ["/ext/bin/larik"]).found?.source, "bundled", "a blank setting is no setting");
});

test("a setting that names nothing usable is reported, not passed over for another binary", () => {
  const result = search("/custom/larik", ["/ext/bin/larik", "/opt/larik/bin/larik"]);
  assert.equal(result.found, undefined);
  assert.equal(missingBinaryMessage(result), 'Larik cannot find its binary: the setting larik.server.path is "/custom/larik", which does not exist.');
  assert.match(missingBinaryMessage(search("larik-nightly", [])), /"larik-nightly", which is not on PATH/);
});

test("nothing anywhere: the message says where it looked", () => {
  const result = search("", []);
  assert.equal(result.found, undefined);
  assert.equal(missingBinaryMessage(result), "Larik cannot find its binary: there is none in the extension (bin/larik) nor on PATH, and larik.server.path is not set.");
});

test("on disk: only an executable file counts, a folder or a plain file does not", (t) => {
  const sandbox = new Sandbox();
  t.after(() => sandbox.remove());
  const ext = join(sandbox.root, "ext");
  const pathDir = join(sandbox.root, "path");
  mkdirSync(join(ext, "bin"), { recursive: true });
  mkdirSync(join(pathDir, "larik"), { recursive: true }); // a folder named larik on PATH
  writeFileSync(join(ext, "bin", "larik"), "#!/bin/sh\n"); // not executable yet
  const env = { PATH: pathDir };
  assert.equal(findBinary({ setting: "", extensionPath: ext, env }).found, undefined);
  assert.match(missingBinaryMessage(findBinary({ setting: join(ext, "bin", "larik"), extensionPath: ext, env })), /is not an executable file/);
  chmodSync(join(ext, "bin", "larik"), 0o755);
  assert.deepEqual(findBinary({ setting: "", extensionPath: ext, env }).found, { path: join(ext, "bin", "larik"), source: "bundled" });
});
