// One end-to-end rig: a sandboxed project, the mock model, code-server with the packaged .vsix and
// the real agent, and a Chromium page on its workbench. Shared by the end-to-end suites, with the
// ways they drive it: commands, the chat webview's frame, prompts, the extension's log (with
// the protocol trace), screenshots, and steps that say what failed with the log's tail.

import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import type { Browser, Frame, Page } from "playwright-core";
import { EXTENSION_ROOT, larikBinary, MockModel, Sandbox, waitFor, type ScenarioStep } from "./agent";
import { launchChromium } from "./browser";
import { CodeServer } from "./codeServer";

export const STEP_MS = 30_000;
export const VSIX = process.env.LARIK_VSIX ?? join(EXTENSION_ROOT, "dist", "larik.vsix");
/** The platform package, carrying the agent as bin/larik (scripts/test.sh packs the real one). */
export const PLATFORM_VSIX = process.env.LARIK_PLATFORM_VSIX ?? join(EXTENSION_ROOT, "dist", "larik-linux-x64.vsix");
export const RESULTS = join(EXTENSION_ROOT, "test-results");
/** Where the README's pictures go: screenshots/ (committed) with LARIK_SCREENSHOTS=1, as
 * `npm run screenshots` sets it; else test-results/, so that a test run leaves the tree clean. */
export const PICTURES = process.env.LARIK_SCREENSHOTS === "1" ? join(EXTENSION_ROOT, "screenshots") : RESULTS;

export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

export class Workbench {
  private constructor(
    readonly sandbox: Sandbox,
    readonly model: MockModel,
    readonly server: CodeServer,
    readonly browser: Browser,
    readonly page: Page,
  ) {}

  /** Writes `files` into a fresh project (and `homeFiles` into the agent's private home, where it
   * finds the user's `~/.claude` skills and commands, `agentSettings` as the agent's user settings)
   * and starts everything, with `settings` added to the editor's user settings; the page is not
   * opened yet. Names may have folders. `setup` runs on the project once its files are written
   * (to make it a git repository, say). With `bundledAgent`, the platform package is installed
   * instead, `larik.server.path` is not set and no `larik` is on the editor's PATH: the only
   * agent to run is the one the package carries. */
  static async start(options: {
    prefix: string;
    files: Record<string, string>;
    setup?: (project: string) => void;
    homeFiles?: Record<string, string>;
    agentSettings?: Record<string, unknown>;
    settings?: Record<string, unknown>;
    scenario: { responses: ScenarioStep[] };
    bundledAgent?: boolean;
  }): Promise<Workbench> {
    const bundled = options.bundledAgent ?? false;
    const vsix = bundled ? PLATFORM_VSIX : VSIX;
    if (!existsSync(vsix)) throw new Error(`${vsix} is missing: run ${bundled ? "npm run package:platform -- <path/to/larik> linux-x64" : "npm run package"} first`);
    const sandbox = new Sandbox(options.prefix);
    let model: MockModel | undefined;
    let server: CodeServer | undefined;
    let browser: Browser | undefined;
    try {
      const write = (path: string, text: string) => {
        mkdirSync(dirname(path), { recursive: true });
        writeFileSync(path, text);
      };
      for (const [name, text] of Object.entries(options.files)) write(join(sandbox.project, name), text);
      for (const [name, text] of Object.entries(options.homeFiles ?? {})) write(join(sandbox.agentHome, name), text);
      if (options.agentSettings) write(join(sandbox.agentConfig, "larik", "settings.json"), JSON.stringify(options.agentSettings, null, 2));
      options.setup?.(sandbox.project);
      model = await MockModel.start(options.scenario, sandbox.root);
      server = await CodeServer.start({
        root: sandbox.root,
        workspace: sandbox.project,
        vsix,
        agentOnPath: !bundled,
        settings: {
          ...(bundled ? {} : { "larik.server.path": larikBinary() }),
          "larik.server.env": sandbox.agentEnv(model.url),
          "larik.trace.protocol": true,
          ...options.settings,
        },
      });
      browser = await launchChromium();
      const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
      page.setDefaultTimeout(STEP_MS);
      return new Workbench(sandbox, model, server, browser, page);
    } catch (error) {
      // What did start is stopped: a failed start leaves no process behind.
      await browser?.close().catch(() => {});
      await server?.stop();
      await model?.stop();
      sandbox.remove();
      throw error;
    }
  }

  /** Stops everything, a screenshot first if the run failed. */
  async stop(): Promise<void> {
    try {
      if (process.exitCode) await this.screenshot("e2e-failure");
    } catch {
      // Best effort.
    }
    await this.browser.close();
    const agents = this.agentPids();
    await this.server.stop();
    // An agent still running once the editor is gone is stopped here, and said so: `larik acp`
    // should exit when its input closes.
    for (const pid of agents) {
      const gone = await waitFor(() => !alive(pid), "the agent to exit", 3000).then(() => true, () => false);
      if (!gone) {
        process.kill(pid, "SIGKILL");
        console.log(`# the agent (pid ${pid}) outlived code-server and was killed`);
      }
    }
    await this.model.stop();
    this.sandbox.remove();
  }

  /** The extension's log, every extension host run of it. */
  extensionLog(): string {
    return this.server.extensionLogs().map((path) => readFileSync(path, "utf8")).join("\n");
  }

  /** Process ids of every agent the extension started, from its log. */
  agentPids(): number[] {
    return [...this.extensionLog().matchAll(/connected to .*\(pid (\d+)\)/g)].map((m) => Number(m[1]));
  }

  async screenshot(name: string): Promise<void> {
    mkdirSync(RESULTS, { recursive: true });
    await this.page.screenshot({ path: join(RESULTS, `${name}.png`) });
  }

  /** One of the README's pictures (see PICTURES), cut to `clip`; returns its path. */
  async picture(name: string, clip: { x: number; y: number; width: number; height: number }): Promise<string> {
    mkdirSync(PICTURES, { recursive: true });
    const path = join(PICTURES, `${name}.png`);
    await this.page.screenshot({ path, clip });
    return path;
  }

  /** Context for a failed wait: the tail of the extension's log. */
  diagnostics(): string {
    return `\n--- Larik.log (tail) ---\n${this.extensionLog().slice(-4000)}\n--- code-server (tail) ---\n${this.server.output.text.slice(-2000)}`;
  }

  /** Runs one named step; a failure gets a screenshot and the log's tail. */
  async step<T>(what: string, body: () => Promise<T>): Promise<T> {
    try {
      return await body();
    } catch (error) {
      await this.screenshot(`e2e-${what.replace(/\W+/g, "-")}`).catch(() => {});
      if (error instanceof Error) error.message = `${what}: ${error.message}${this.diagnostics()}`;
      throw error;
    }
  }

  /** Opens the workbench on the project and waits for the agent to be idle. */
  async open(): Promise<void> {
    await this.page.goto(`${this.server.url}/?folder=${encodeURIComponent(this.sandbox.project)}`);
    await this.page.locator(".monaco-workbench").waitFor({ timeout: 60_000 });
    await this.page.locator(".statusbar-item", { hasText: "Larik: idle" }).waitFor({ timeout: 60_000 });
  }

  async runCommand(title: string): Promise<void> {
    const { page } = this;
    await page.keyboard.press("F1");
    const input = page.locator(".quick-input-widget input");
    await input.waitFor({ state: "visible" });
    await input.fill(`>${title}`);
    await page.locator(".quick-input-list .monaco-list-row", { hasText: title }).first().waitFor();
    await input.press("Enter");
  }

  /** The chat webview's frame (VS Code nests it in two iframes). */
  async chatFrame(): Promise<Frame> {
    return waitFor(
      async () => {
        for (const frame of this.page.frames()) {
          const found = await frame.evaluate(() => document.querySelector("#prompt") !== null).catch(() => false);
          if (found) return frame;
        }
        return undefined;
      },
      "the chat webview",
      STEP_MS,
      250,
    );
  }
}

export async function sendPrompt(chat: Frame, text: string): Promise<void> {
  const prompt = chat.locator("#prompt");
  await chat.locator('#status[data-status="idle"]').waitFor();
  await prompt.fill(text);
  await prompt.press("Enter");
}
