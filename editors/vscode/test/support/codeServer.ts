// code-server (VS Code's server and workbench) from .cache/code-server, run on 127.0.0.1 with
// private user-data, extensions and home directories, stopped with its whole process group.

import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, statSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { delimiter, dirname, join } from "node:path";
import { isExecutableFile } from "../../src/binary";
import { EXTENSION_ROOT, larikBinary, waitFor, withTimeout } from "./agent";

export const CODE_SERVER_ENTRY = join(EXTENSION_ROOT, ".cache", "code-server", "node_modules", "code-server", "out", "node", "entry.js");

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

export interface CodeServerOptions {
  root: string;
  workspace: string;
  vsix: string;
  settings: Record<string, unknown>;
  /** false: no `larik` on the editor's PATH at all, not even one the user installed. */
  agentOnPath?: boolean;
}

/** PATH without the folders that hold a `larik`. */
function pathWithoutAgent(path: string): string {
  return path
    .split(delimiter)
    .filter((dir) => dir !== "" && !isExecutableFile(join(dir, "larik")))
    .join(delimiter);
}

export class CodeServer {
  readonly userDataDir: string;
  readonly url: string;
  private constructor(
    private readonly child: ChildProcess,
    readonly port: number,
    userDataDir: string,
    /** Where the .vsix was installed: one folder per extension. */
    readonly extensionsDir: string,
    readonly output: { text: string },
  ) {
    this.userDataDir = userDataDir;
    this.url = `http://127.0.0.1:${port}`;
  }

  static async start(options: CodeServerOptions): Promise<CodeServer> {
    if (!existsSync(CODE_SERVER_ENTRY)) throw new Error(`code-server is not installed at ${CODE_SERVER_ENTRY}: run scripts/setup.sh`);
    const userDataDir = join(options.root, "cs-user");
    const extensionsDir = join(options.root, "cs-extensions");
    const home = join(options.root, "cs-home");
    for (const dir of [join(userDataDir, "User"), extensionsDir, home]) mkdirSync(dir, { recursive: true });
    writeFileSync(
      join(userDataDir, "User", "settings.json"),
      JSON.stringify(
        {
          "workbench.startupEditor": "none",
          "security.workspace.trust.enabled": false,
          "telemetry.telemetryLevel": "off",
          "extensions.autoCheckUpdates": false,
          "extensions.autoUpdate": false,
          "update.mode": "none",
          "workbench.tips.enabled": false,
          "files.autoSave": "off",
          "chat.disableAIFeatures": true,
          ...options.settings,
        },
        null,
        2,
      ),
    );
    let path = pathWithoutAgent(process.env.PATH ?? "");
    if (options.agentOnPath ?? true) {
      // The agent is also on PATH, as a user's install would be: right after a window reload the
      // extension host can read its settings late, and then starts `larik` by name.
      const agentDir = dirname(larikBinary());
      // After a reload the extension host takes its environment from a login shell, and the
      // system's profile resets PATH there: the user's own profile puts the agent back on it.
      const profile = `export PATH="${agentDir}:$PATH"\n`;
      writeFileSync(join(home, ".profile"), profile);
      writeFileSync(join(home, ".bash_profile"), profile);
      path = `${agentDir}${delimiter}${path}`;
    }
    const env = { PATH: path, HOME: home, XDG_CONFIG_HOME: join(home, ".config"), XDG_DATA_HOME: join(home, ".local", "share") };
    const base = ["--user-data-dir", userDataDir, "--extensions-dir", extensionsDir];
    const install = spawnSync(process.execPath, [CODE_SERVER_ENTRY, ...base, "--install-extension", options.vsix], { env, encoding: "utf8", timeout: 60_000 });
    if (install.status !== 0) throw new Error(`installing the .vsix failed:\n${install.stdout}\n${install.stderr}`);

    const port = await freePort();
    const child = spawn(
      process.execPath,
      [
        CODE_SERVER_ENTRY,
        "--auth", "none",
        "--bind-addr", `127.0.0.1:${port}`,
        "--disable-telemetry",
        "--disable-update-check",
        "--disable-workspace-trust",
        "--disable-getting-started-override",
        ...base,
        options.workspace,
      ],
      { env, stdio: ["ignore", "pipe", "pipe"], detached: true },
    );
    const output = { text: "" };
    const keep = (chunk: Buffer) => (output.text = (output.text + chunk.toString()).slice(-50_000));
    child.stdout!.on("data", keep);
    child.stderr!.on("data", keep);
    const server = new CodeServer(child, port, userDataDir, extensionsDir, output);
    try {
      await waitFor(
        async () => {
          if (child.exitCode !== null) throw new Error(`code-server exited (${child.exitCode}):\n${output.text}`);
          const response = await fetch(`${server.url}/healthz`).catch(() => undefined);
          return response?.ok;
        },
        "code-server to listen",
        60_000,
        200,
      );
    } catch (error) {
      await server.stop();
      throw error;
    }
    return server;
  }

  /** The extension's log files (one per extension host run), oldest first. */
  extensionLogs(): string[] {
    const found: Array<{ path: string; mtime: number }> = [];
    const walk = (dir: string) => {
      for (const name of readdirSync(dir)) {
        const path = join(dir, name);
        const stat = statSync(path);
        if (stat.isDirectory()) walk(path);
        else if (name === "Larik.log") found.push({ path, mtime: stat.mtimeMs });
      }
    };
    const logs = join(this.userDataDir, "logs");
    if (existsSync(logs)) walk(logs);
    return found.sort((a, b) => a.mtime - b.mtime).map((f) => f.path);
  }

  async stop(): Promise<void> {
    const pid = this.child.pid;
    if (pid === undefined || this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = new Promise((resolve) => this.child.once("exit", resolve));
    const signal = (s: NodeJS.Signals) => {
      try {
        process.kill(-pid, s);
      } catch {
        // Gone already.
      }
    };
    signal("SIGTERM");
    await withTimeout(exited, 10_000, "code-server to exit").catch(() => signal("SIGKILL"));
    // Children that outlive the main process (the file watcher) share its group.
    signal("SIGKILL");
  }
}
