// Installing the `larik` binary when none is found, where the extension runs: under Remote - SSH
// or in a dev container that is the remote side, whose PATH is the one searched.
//
// An install is offered only with a package manager found on the agent's PATH, and it runs in a
// terminal the user sees, typed there as the user would type it: nothing is installed silently.
// The terminal stays open on the package manager's output, errors included. A command typed in a
// shell gives no sign when it ends, so the user says when: Retry starts the agent again.

import * as vscode from "vscode";
import { findOnPath } from "../binary";

export interface Installer {
  /** The package manager, looked up on PATH. */
  tool: string;
  /** The button that runs it. */
  label: string;
  /** What is typed in the terminal. */
  command: string;
}

export const INSTALLERS: readonly Installer[] = [
  { tool: "npm", label: "Install with npm", command: "npm install -g larik" },
  { tool: "pipx", label: "Install with pipx", command: "pipx install larik" },
];
export const INSTALL_TERMINAL = "Install Larik";
export const RETRY = "Retry";

type Env = Record<string, string | undefined>;

/** The installers whose package manager is on `env`'s PATH, in the order of INSTALLERS. */
export function availableInstallers(env: Env): Installer[] {
  return INSTALLERS.filter((installer) => findOnPath(installer.tool, env) !== undefined);
}

/** Runs `installer` in a new terminal, shown, with the agent's PATH (so the package manager run
 * is the one found); resolves to whether the user asked to start the agent again. */
export async function install(installer: Installer, env: Env, log: vscode.LogOutputChannel): Promise<boolean> {
  log.info(`running ${installer.command} in the terminal "${INSTALL_TERMINAL}"`);
  const terminal = vscode.window.createTerminal({ name: INSTALL_TERMINAL, ...(env.PATH ? { env: { PATH: env.PATH } } : {}) });
  terminal.show();
  terminal.sendText(installer.command);
  const choice = await vscode.window.showInformationMessage(
    `Installing Larik with ${installer.tool} in the terminal "${INSTALL_TERMINAL}". Once it has finished, start the agent again.`,
    RETRY,
  );
  return choice === RETRY;
}
