// Which `larik` binary the extension runs. In order:
//
//   1. the `larik.server.path` setting: a path (`~` expanded), or a bare name looked up on PATH;
//   2. the binary shipped inside the extension, `bin/larik`, as a platform-specific package
//      (`npm run package:platform`) carries it;
//   3. `larik` on PATH.
//
// A setting that names nothing usable is reported as it is, not passed over for another binary:
// the user chose that one, and running a different one without a word would hide the mistake.
// The search never starts anything; a binary found may still fail to start (`larik doctor` then
// says why).
//
// This module does not import `vscode`.

import { accessSync, constants, statSync } from "node:fs";
import * as path from "node:path";

export type BinarySource = "setting" | "bundled" | "path";

export interface BinarySearch {
  /** The binary to run, when one was found. */
  found?: { path: string; source: BinarySource };
  /** Set when the search failed because of the setting: what it names and what is wrong with it. */
  setting?: { value: string; problem: string };
  /** Every place looked in, in order. */
  looked: string[];
}

export interface BinarySearchOptions {
  /** `larik.server.path`; empty: not set. */
  setting: string;
  /** The extension's folder, where a platform package keeps `bin/larik`. */
  extensionPath: string | undefined;
  /** The agent's environment: its PATH and HOME. */
  env: Record<string, string | undefined>;
  platform?: NodeJS.Platform;
  /** Whether a path is a file this process may execute (a stand-in in tests). */
  isExecutable?: (file: string) => boolean;
}

export const BINARY_NAME = "larik";

export function isExecutableFile(file: string): boolean {
  try {
    if (!statSync(file).isFile()) return false;
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

function exists(file: string): boolean {
  try {
    statSync(file);
    return true;
  } catch {
    return false;
  }
}

function executableName(name: string, platform: NodeJS.Platform): string {
  return platform === "win32" && !name.toLowerCase().endsWith(".exe") ? `${name}.exe` : name;
}

/** The first directory of PATH holding an executable `name`. */
export function findOnPath(
  name: string,
  env: BinarySearchOptions["env"],
  platform: NodeJS.Platform = process.platform,
  isExecutable: (file: string) => boolean = isExecutableFile,
): string | undefined {
  const delimiter = platform === "win32" ? ";" : ":";
  for (const dir of (env.PATH ?? "").split(delimiter)) {
    if (dir === "") continue;
    const candidate = path.join(dir, executableName(name, platform));
    if (isExecutable(candidate)) return candidate;
  }
  return undefined;
}

function expandHome(file: string, home: string | undefined): string {
  return home && (file === "~" || file.startsWith("~/")) ? home + file.slice(1) : file;
}

export function findBinary(options: BinarySearchOptions): BinarySearch {
  const platform = options.platform ?? process.platform;
  const isExecutable = options.isExecutable ?? isExecutableFile;
  const setting = options.setting.trim();
  if (setting !== "") {
    const isName = !setting.includes("/") && !setting.includes("\\") && !setting.startsWith("~");
    if (isName) {
      const file = findOnPath(setting, options.env, platform, isExecutable);
      if (file) return { found: { path: file, source: "setting" }, looked: [`${setting} on PATH`] };
      return { setting: { value: setting, problem: "is not on PATH" }, looked: [`${setting} on PATH`] };
    }
    const file = expandHome(setting, options.env.HOME);
    if (isExecutable(file)) return { found: { path: file, source: "setting" }, looked: [file] };
    return { setting: { value: setting, problem: exists(file) ? "is not an executable file" : "does not exist" }, looked: [file] };
  }
  const looked: string[] = [];
  if (options.extensionPath) {
    const bundled = path.join(options.extensionPath, "bin", executableName(BINARY_NAME, platform));
    looked.push(bundled);
    if (isExecutable(bundled)) return { found: { path: bundled, source: "bundled" }, looked };
  }
  looked.push(`${BINARY_NAME} on PATH`);
  const file = findOnPath(BINARY_NAME, options.env, platform, isExecutable);
  return file ? { found: { path: file, source: "path" }, looked } : { looked };
}

/** What to tell the user when the search found nothing. */
export function missingBinaryMessage(search: BinarySearch): string {
  if (search.setting) {
    return `Larik cannot find its binary: the setting larik.server.path is "${search.setting.value}", which ${search.setting.problem}.`;
  }
  return "Larik cannot find its binary: there is none in the extension (bin/larik) nor on PATH, and larik.server.path is not set.";
}
