// Shared by the tests that run the real agent: where the binaries are, the mock model server,
// isolated directories and environments, and waiting on a condition with a timeout.

import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";

/** The extension's folder (editors/vscode), found from wherever the compiled test runs. */
export const EXTENSION_ROOT = (() => {
  let dir = __dirname;
  for (;;) {
    const manifest = join(dir, "package.json");
    if (existsSync(manifest) && JSON.parse(readFileSync(manifest, "utf8")).name === "larik") return dir;
    const parent = dirname(dir);
    if (parent === dir) throw new Error(`cannot find the extension's package.json above ${__dirname}`);
    dir = parent;
  }
})();

export const REPO_ROOT = resolve(EXTENSION_ROOT, "../..");

/** A binary from `$envVar`, else `$CARGO_TARGET_DIR/debug/name`, else `<repo>/target/debug/name`. */
export function binary(envVar: string, name: string): string {
  const fromEnv = process.env[envVar];
  const path = fromEnv
    ? resolve(fromEnv)
    : join(process.env.CARGO_TARGET_DIR ? resolve(REPO_ROOT, process.env.CARGO_TARGET_DIR) : join(REPO_ROOT, "target"), "debug", name);
  if (!existsSync(path)) throw new Error(`${name} not found at ${path}: build it (cargo build) or set ${envVar}`);
  return path;
}

export const larikBinary = () => binary("LARIK_BIN", "larik");
export const mockModelBinary = () => binary("LARIK_MOCK_LLM_BIN", "larik-mock-llm");

export function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms waiting for ${what}`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** Polls `probe` until it returns a value other than undefined/false; fails after `ms`. */
export async function waitFor<T>(probe: () => T | undefined | false | Promise<T | undefined | false>, what: string, ms = 20_000, every = 50): Promise<T> {
  const deadline = Date.now() + ms;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined && value !== false) return value;
    } catch (error) {
      lastError = error;
    }
    if (Date.now() > deadline) {
      throw new Error(`timed out after ${ms} ms waiting for ${what}${lastError ? ` (last error: ${String(lastError)})` : ""}`);
    }
    await new Promise((r) => setTimeout(r, every));
  }
}

/** A temporary directory tree: project/, home/, config/, data/, state/, cache/. */
export class Sandbox {
  readonly root: string;
  constructor(prefix = "larik-vscode-") {
    this.root = realpathSync(mkdtempSync(join(tmpdir(), prefix)));
    for (const dir of ["project", "home", "config", "data", "state", "cache"]) mkdirSync(join(this.root, dir));
  }
  get project(): string {
    return join(this.root, "project");
  }
  /** The agent's HOME, where it finds the user's `~/.claude` (its XDG directories are beside it). */
  get agentHome(): string {
    return join(this.root, "home");
  }
  /** The agent's XDG_CONFIG_HOME, where it finds the user's `larik/settings.json`. */
  get agentConfig(): string {
    return join(this.root, "config");
  }
  /** The environment for the agent: private home and XDG directories, the mock model. */
  agentEnv(modelUrl: string): Record<string, string> {
    return {
      HOME: this.agentHome,
      XDG_CONFIG_HOME: this.agentConfig,
      XDG_DATA_HOME: join(this.root, "data"),
      XDG_STATE_HOME: join(this.root, "state"),
      XDG_CACHE_HOME: join(this.root, "cache"),
      ANTHROPIC_BASE_URL: modelUrl,
      ANTHROPIC_API_KEY: "test-key",
      LARIK_MODEL: "claude-mock",
    };
  }
  remove(): void {
    if (!process.env.LARIK_KEEP_TMP) rmSync(this.root, { recursive: true, force: true });
  }
}

export type ScenarioStep = Record<string, unknown>;

/** The mock model server, one scenario step per model request. */
export class MockModel {
  private constructor(
    readonly url: string,
    private readonly child: ChildProcess,
  ) {}

  static async start(scenario: { responses: ScenarioStep[] }, dir: string): Promise<MockModel> {
    const file = join(dir, `scenario-${Date.now()}-${Math.random().toString(36).slice(2)}.json`);
    writeFileSync(file, JSON.stringify(scenario));
    const child = spawn(mockModelBinary(), ["--scenario", file, "--port", "0"], {
      cwd: dir,
      env: { PATH: process.env.PATH ?? "" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    const firstLine = new Promise<string>((resolveLine, reject) => {
      let buffered = "";
      child.stdout!.setEncoding("utf8");
      child.stdout!.on("data", (s: string) => {
        buffered += s;
        const nl = buffered.indexOf("\n");
        if (nl !== -1) resolveLine(buffered.slice(0, nl));
      });
      child.once("exit", (code) => reject(new Error(`larik-mock-llm exited (${code}) before announcing its URL`)));
      child.once("error", reject);
    });
    const { url } = JSON.parse(await withTimeout(firstLine, 20_000, "larik-mock-llm to print its URL")) as { url: string };
    return new MockModel(url, child);
  }

  /** Every request body the model received, in order. */
  async requests(): Promise<unknown[]> {
    const response = await fetch(`${this.url}/requests`);
    return (await response.json()) as unknown[];
  }

  async stop(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = new Promise((r) => this.child.once("exit", r));
    this.child.kill("SIGTERM");
    await withTimeout(exited, 5000, "larik-mock-llm to exit").catch(() => this.child.kill("SIGKILL"));
  }
}

/** Every string nested anywhere in a value (to search model request bodies). */
export function* stringsIn(value: unknown): Generator<string> {
  if (typeof value === "string") yield value;
  else if (value !== null && typeof value === "object") for (const child of Object.values(value)) yield* stringsIn(child);
}

/** Makes `dir` a git repository with everything in it committed, as a user's project would be. */
export function gitCommitAll(dir: string): void {
  const git = (...args: string[]) => {
    const run = spawnSync("git", ["-c", "user.name=Test", "-c", "user.email=test@example.com", ...args], { cwd: dir, encoding: "utf8" });
    if (run.status !== 0) throw new Error(`git ${args.join(" ")} failed: ${run.stderr}`);
  };
  git("init", "-q");
  git("add", ".");
  git("commit", "-qm", "start");
}
