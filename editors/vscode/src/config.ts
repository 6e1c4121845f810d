// The extension's settings (`larik.*`), read fresh on every use so that changes apply at once
// where they can; `affectsServer` tells which changes need the agent restarted.

import * as vscode from "vscode";
import type { ServerSettings } from "./agentProcess";
import type { AutoApprovePolicy } from "./state/permissions";

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

  get autoApprove(): AutoApprovePolicy {
    const value = this.#section().get<string>("autoApprove", "never");
    return value === "edits" || value === "all" ? value : "never";
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
