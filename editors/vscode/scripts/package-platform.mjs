// Packs a platform-specific .vsix that carries the agent: the given `larik` binary is copied to
// bin/larik (where the extension looks for it after the `larik.server.path` setting and before
// PATH, see src/binary.ts) and `vsce package --target` packs it with the extension, built fresh
// by `vscode:prepublish`. bin/ is removed again afterwards, so that a development checkout never
// runs a stale copy.
//
//   npm run package:platform -- <path/to/larik> [target]     (target: linux-x64 by default here)
//
// The package lands in dist/larik-<target>.vsix.

import { spawnSync } from "node:child_process";
import { chmodSync, copyFileSync, existsSync, mkdirSync, rmSync, statSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const [binaryArg, targetArg] = process.argv.slice(2);
if (!binaryArg) {
  console.error("usage: npm run package:platform -- <path/to/larik> [target]");
  process.exit(2);
}
const binary = resolve(binaryArg);
if (!existsSync(binary) || !statSync(binary).isFile()) {
  console.error(`package:platform: ${binary} is not a file`);
  process.exit(2);
}
// vsce's names: linux-x64, linux-arm64, darwin-arm64, win32-x64, …
const target = targetArg ?? `${process.platform}-${process.arch}`;
const windows = target.startsWith("win32-");
const bin = join(root, "bin");
const out = join(root, "dist", `larik-${target}.vsix`);

rmSync(bin, { recursive: true, force: true });
mkdirSync(bin, { recursive: true });
mkdirSync(dirname(out), { recursive: true });
let status = 1;
try {
  const copy = join(bin, windows ? "larik.exe" : "larik");
  copyFileSync(binary, copy);
  chmodSync(copy, 0o755);
  const vsce = join(root, "node_modules", ".bin", "vsce");
  const run = spawnSync(vsce, ["package", "--target", target, "--out", out], { cwd: root, stdio: "inherit" });
  status = run.status ?? 1;
} finally {
  rmSync(bin, { recursive: true, force: true });
}
process.exit(status);
