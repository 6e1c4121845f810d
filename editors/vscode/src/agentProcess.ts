// The agent as a child process: how its command line is resolved from the settings, and its
// lifetime. The process gets its own process group so that stopping it also stops whatever it
// started (a shell command of a tool call), and it is always stopped with the extension.
//
// This module does not import `vscode`.

import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { Connection, type ConnectionOptions } from "./connection";

export interface ServerSettings {
  /** `larik.server.path`: a path or a name on PATH; empty: the extension's own, else `larik` on
   * PATH (src/binary.ts finds it). */
  path: string;
  args: string[];
  env: Record<string, string>;
}

export interface ServerCommand {
  command: string;
  args: string[];
  env: Record<string, string>;
  cwd: string;
}

/** Environment variable names under which stored API keys are passed to the agent. */
export const API_KEY_VARIABLES = ["ANTHROPIC_API_KEY", "OPENAI_API_KEY"] as const;

/**
 * The command to run. Precedence of environment variables, lowest first: the editor's own
 * environment, keys from the key store, the `larik.server.env` setting.
 */
export function resolveServerCommand(
  settings: ServerSettings,
  storedKeys: Partial<Record<string, string>>,
  baseEnv: NodeJS.ProcessEnv,
  cwd: string,
): ServerCommand {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(baseEnv)) if (value !== undefined) env[name] = value;
  for (const [name, value] of Object.entries(storedKeys)) if (value) env[name] = value;
  for (const [name, value] of Object.entries(settings.env ?? {})) if (typeof value === "string") env[name] = value;
  const path = settings.path.trim();
  return {
    command: path === "" ? "larik" : expandHome(path, baseEnv.HOME),
    args: settings.args.length > 0 ? [...settings.args] : ["acp"],
    env,
    cwd,
  };
}

function expandHome(path: string, home: string | undefined): string {
  return home && (path === "~" || path.startsWith("~/")) ? home + path.slice(1) : path;
}

export interface AgentProcessEvents {
  /** A line the agent wrote to stderr (its log). */
  onStderr?: (line: string) => void;
  /** The process ended; `expected` is true when `stop()` asked for it. */
  onExit?: (description: string, expected: boolean) => void;
}

export class AgentProcess {
  readonly connection: Connection;
  #child: ChildProcessWithoutNullStreams;
  #stopping = false;
  #exited: Promise<void>;

  private constructor(child: ChildProcessWithoutNullStreams, connection: Connection, exited: Promise<void>) {
    this.#child = child;
    this.connection = connection;
    this.#exited = exited;
  }

  /** Settles when the process has ended. */
  get exited(): Promise<void> {
    return this.#exited;
  }

  get pid(): number | undefined {
    return this.#child.pid;
  }

  /** Spawns the agent; rejects if the binary cannot be started. */
  static start(command: ServerCommand, events: AgentProcessEvents = {}, options: ConnectionOptions = {}): Promise<AgentProcess> {
    return new Promise((resolve, reject) => {
      const child = spawn(command.command, command.args, {
        cwd: command.cwd,
        env: command.env,
        stdio: ["pipe", "pipe", "pipe"],
        detached: true, // its own process group, stopped as a whole
      });
      let agent: AgentProcess | undefined;
      const exited = new Promise<void>((done) => {
        child.once("exit", (code, signal) => {
          const description = signal ? `killed by ${signal}` : `exited with code ${code}`;
          agent?.connection.close(`the agent ${description}`);
          events.onExit?.(description, agent ? agent.#stopping : false);
          done();
        });
      });
      child.once("error", (error) => {
        if (!agent) reject(new Error(`cannot start ${command.command}: ${error.message}`));
      });
      child.once("spawn", () => {
        const connection = new Connection({ readable: child.stdout, writable: child.stdin }, options);
        agent = new AgentProcess(child, connection, exited);
        // If the editor's host exits without deactivating us, the agent goes with it.
        const lastResort = () => agent?.killNow();
        process.once("exit", lastResort);
        void exited.then(() => process.removeListener("exit", lastResort));
        let pending = "";
        child.stderr.setEncoding("utf8");
        child.stderr.on("data", (chunk: string) => {
          pending += chunk;
          let nl: number;
          while ((nl = pending.indexOf("\n")) !== -1) {
            events.onStderr?.(pending.slice(0, nl));
            pending = pending.slice(nl + 1);
          }
        });
        resolve(agent);
      });
    });
  }

  #signal(signal: NodeJS.Signals): void {
    const pid = this.#child.pid;
    if (pid === undefined || this.#child.exitCode !== null || this.#child.signalCode !== null) return;
    try {
      process.kill(-pid, signal); // the whole group
    } catch {
      try {
        this.#child.kill(signal);
      } catch {
        // Already gone.
      }
    }
  }

  /** Stops the agent: end of input and SIGTERM, then SIGKILL after `graceMs`. */
  async stop(graceMs = 2000): Promise<void> {
    this.#stopping = true;
    this.connection.close("the agent was stopped");
    this.#child.stdin.end();
    this.#signal("SIGTERM");
    const timer = setTimeout(() => this.#signal("SIGKILL"), graceMs);
    await this.#exited;
    clearTimeout(timer);
  }

  /** Ends the agent's input, as an editor that goes away does; the agent should then exit. */
  closeInput(): void {
    this.#child.stdin.end();
  }

  /** Synchronous last resort for when the editor host exits without waiting. */
  killNow(): void {
    this.#stopping = true;
    this.#signal("SIGKILL");
  }
}
