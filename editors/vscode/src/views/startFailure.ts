// What the user is told when the agent does not run, with the way out as a button:
//
// - no binary found: installing it with npm or pipx when they are on PATH (installOffer.ts), how
//   to install it otherwise (the README's first section, in the Markdown preview), or the setting
//   that names it;
// - a binary that is there but does not start, or stops before it answers: `larik doctor` in a
//   terminal, whose checks say what is wrong (its exit code is non-zero on a blocking problem),
//   or the log.
//
// One message is not shown twice in a row: the first start is tried again a few times after a
// window reload, and the same failure each time would stack up the same notification.

import * as vscode from "vscode";
import type { ServerCommand } from "../agentProcess";
import { install, type Installer } from "./installOffer";

export const HOW_TO_INSTALL = "How to Install";
export const RUN_DOCTOR = "Run larik doctor";
export const OPEN_SETTINGS = "Open Settings";
export const SET_PATH = "Set the path…";
export const SHOW_LOG = "Show Log";

export class StartFailure {
  #lastShown: string | undefined;

  constructor(
    private readonly extensionUri: vscode.Uri,
    private readonly log: vscode.LogOutputChannel,
  ) {}

  /** The agent runs: a later failure is news again. */
  cleared(): void {
    this.#lastShown = undefined;
  }

  #once(message: string): boolean {
    if (this.#lastShown === message) return false;
    this.#lastShown = message;
    return true;
  }

  /** No binary to run: `message` says where the search looked. `offer` holds the installers to
   * offer (none when a setting names the binary: an install would not change what runs), the
   * agent's environment, and how to start the agent again after an install. */
  async missing(message: string, offer?: { installers: Installer[]; env: Record<string, string | undefined>; retry: () => void }): Promise<void> {
    if (!this.#once(message)) return;
    const installers = offer?.installers ?? [];
    const choice = await vscode.window.showErrorMessage(message, ...installers.map((i) => i.label), HOW_TO_INSTALL, SET_PATH);
    const installer = installers.find((i) => i.label === choice);
    if (installer && offer && (await install(installer, offer.env, this.log))) {
      // The same failure after the retry is news: the install may not have worked.
      this.cleared();
      offer.retry();
    }
    if (choice === HOW_TO_INSTALL) await this.showInstallInstructions();
    if (choice === SET_PATH) await vscode.commands.executeCommand("workbench.action.openSettings", "larik.server.path");
  }

  /** A binary that did not start or did not answer; `command` is what was run. */
  async failed(message: string, command: ServerCommand): Promise<void> {
    const text = `Larik could not start: ${message}`;
    if (!this.#once(text)) return;
    const choice = await vscode.window.showErrorMessage(text, RUN_DOCTOR, SHOW_LOG, OPEN_SETTINGS);
    if (choice === RUN_DOCTOR) this.runDoctor(command);
    if (choice === SHOW_LOG) this.log.show();
    if (choice === OPEN_SETTINGS) await vscode.commands.executeCommand("workbench.action.openSettings", "larik.server");
  }

  /** The README shipped in the extension opens with its install section. */
  async showInstallInstructions(): Promise<void> {
    const readme = vscode.Uri.joinPath(this.extensionUri, "README.md");
    try {
      await vscode.commands.executeCommand("markdown.showPreview", readme);
    } catch {
      // An editor without the built-in Markdown extension: the text itself.
      await vscode.window.showTextDocument(readme);
    }
  }

  /** `larik doctor` with the agent's own environment and folder, in a terminal that stays open
   * on its report. The binary is run directly: no shell to quote its path for. */
  runDoctor(command: ServerCommand): vscode.Terminal {
    this.log.info(`running ${command.command} doctor in a terminal`);
    const terminal = vscode.window.createTerminal({
      name: "larik doctor",
      shellPath: command.command,
      shellArgs: ["doctor"],
      cwd: command.cwd,
      env: command.env,
      strictEnv: true,
    });
    terminal.show();
    return terminal;
  }
}
