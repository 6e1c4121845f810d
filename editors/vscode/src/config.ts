// The extension's settings (`larik.*`), read fresh on every use so that changes apply at once
// where they can; `affectsServer` tells which changes need the agent restarted.

import * as vscode from "vscode";
import type { ServerSettings } from "./agentProcess";

export type DiffStyle = "sideBySide" | "inline";

export class Config {
  #section(): vscode.WorkspaceConfiguration {
    return vscode.workspace.getConfiguration("larik");
  }

  get server(): ServerSettings {
    const c = this.#section();
    return {
      path: c.get<string>("server.path", ""),
      args: c.get<string[]>("server.args", ["acp"]),
      env: c.get<Record<string, string>>("server.env", {}),
    };
  }

  get diffStyle(): DiffStyle {
    return this.#section().get<DiffStyle>("diff.style", "sideBySide") === "inline" ? "inline" : "sideBySide";
  }

  get openDiffAutomatically(): boolean {
    return this.#section().get<boolean>("diff.openAutomatically", true);
  }

  /** `larik.autoApprove` as the user left it, if they did: a setting no longer read (the agent's
   * permission rules decide), only looked at to tell them so. */
  get retiredAutoApprove(): unknown {
    return this.#section().get<unknown>("autoApprove", undefined);
  }

  get editorContext(): boolean {
    return this.#section().get<boolean>("editorContext", true);
  }

  get traceProtocol(): boolean {
    return this.#section().get<boolean>("trace.protocol", false);
  }

  static affectsServer(event: vscode.ConfigurationChangeEvent): boolean {
    return ["larik.server.path", "larik.server.args", "larik.server.env"].some((key) => event.affectsConfiguration(key));
  }
}
