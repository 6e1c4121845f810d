// The packages as scripts/test.sh makes them, like a release: dist/larik.vsix from `vsce package`
// after a clean build (its `vscode:prepublish`), and a platform package with the agent the tests
// run as bin/larik. Nothing built is tracked by git.

import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import test from "node:test";
import { EXTENSION_ROOT, larikBinary } from "../support/agent";

const manifest = JSON.parse(readFileSync(join(EXTENSION_ROOT, "package.json"), "utf8"));

function run(command: string, args: string[]): string {
  const result = spawnSync(command, args, { cwd: EXTENSION_ROOT, encoding: "utf8" });
  if (result.status !== 0) throw new Error(`${command} ${args.join(" ")} failed: ${result.stderr}`);
  return result.stdout;
}

function vsix(name: string, hint: string): string {
  const file = join(EXTENSION_ROOT, "dist", name);
  assert.ok(existsSync(file), `${file} is missing: run ${hint} (scripts/test.sh does)`);
  return file;
}

test("vsce package builds first: vscode:prepublish is the production build", () => {
  assert.equal(manifest.scripts["vscode:prepublish"], "node scripts/build.mjs --production");
  assert.match(manifest.scripts.package, /^vsce package /);
  // What the command line used to say, so that a bare `npx vsce package` packs the same.
  assert.deepEqual(manifest.vsce, { dependencies: false, allowMissingRepository: true });
});

test("a workspace extension: under Remote - SSH and in dev containers it runs where the files are", () => {
  // The agent it starts must see the workspace's files and run its commands there, and the
  // platform package's bin/larik is for the remote's platform.
  assert.deepEqual(manifest.extensionKind, ["workspace"]);
});

test("dist/larik.vsix holds the bundles, the manifest and the docs, nothing else", () => {
  const file = vsix("larik.vsix", "npm run package");
  const entries = run("unzip", ["-Z1", file]).trim().split("\n").sort();
  assert.deepEqual(entries, [
    "[Content_Types].xml",
    "extension.vsixmanifest",
    "extension/LICENSE.txt",
    "extension/changelog.md",
    "extension/dist/extension.js",
    "extension/dist/webview.js",
    "extension/media/chat.css",
    "extension/media/larik.svg",
    "extension/package.json",
    "extension/readme.md",
  ]);
  // The production build, not a development one left in dist/: no source maps.
  assert.doesNotMatch(run("unzip", ["-p", file, "extension/dist/extension.js"]), /sourceMappingURL/);
  assert.doesNotMatch(run("unzip", ["-p", file, "extension.vsixmanifest"]), /TargetPlatform/);
});

test("the platform package carries the agent as bin/larik, executable, for its target", () => {
  const file = vsix("larik-linux-x64.vsix", "npm run package:platform -- <path/to/larik> linux-x64");
  const listing = run("zipinfo", [file]);
  const entry = /^-rwxr-xr-x +\S+ +\S+ +(\d+) .* extension\/bin\/larik$/m.exec(listing);
  assert.ok(entry, `no executable extension/bin/larik in:\n${listing}`);
  // The real agent, not a stand-in script: a program of its size (the tests' binary may have
  // been rebuilt since it was packed, so not byte for byte).
  const head = spawnSync("sh", ["-c", 'unzip -p "$1" extension/bin/larik | head -c 4', "sh", file]).stdout;
  assert.deepEqual([...head], [0x7f, 0x45, 0x4c, 0x46], "bin/larik is not an ELF program");
  assert.ok(Number(entry[1]) > statSync(larikBinary()).size / 2, `bin/larik is ${entry[1]} bytes`);
  assert.match(run("unzip", ["-p", file, "extension.vsixmanifest"]), /TargetPlatform="linux-x64"/);
  assert.equal(existsSync(join(EXTENSION_ROOT, "bin")), false, "bin/ was left in the checkout");
});

test("nothing built is tracked: dist/, out/, bin/ and packages are ignored", () => {
  const paths = ["dist/extension.js", "dist/larik.vsix", "out/test/unit/package.test.js", "bin/larik", "larik-0.1.0.vsix"];
  const ignored = run("git", ["check-ignore", ...paths]).trim().split("\n");
  assert.deepEqual(ignored, paths);
  assert.equal(run("git", ["ls-files", "dist", "out", "bin", "*.vsix"]).trim(), "");
});
