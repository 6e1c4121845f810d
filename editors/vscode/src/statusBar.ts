// The status bar item: what the agent is doing (idle / working / waiting for you); a click opens
// the chat.

import * as vscode from "vscode";
import type { AgentStatus } from "./webview/messages";

const LOOK: Record<AgentStatus, { text: string; tooltip: string }> = {
  starting: { text: "$(loading~spin) Larik: starting", tooltip: "Larik is starting" },
  idle: { text: "$(comment-discussion) Larik: idle", tooltip: "Larik is ready" },
  working: { text: "$(sync~spin) Larik: working", tooltip: "Larik is working on your request" },
  waiting: { text: "$(bell-dot) Larik: waiting for you", tooltip: "Larik is waiting for your answer" },
  stopped: { text: "$(error) Larik: stopped", tooltip: "The agent is not running" },
  disabled: { text: "$(workspace-untrusted) Larik: disabled", tooltip: "Larik only runs in trusted workspaces" },
};

export class StatusBar implements vscode.Disposable {
  #item = vscode.window.createStatusBarItem("larik.status", vscode.StatusBarAlignment.Right, 100);

  constructor() {
    this.#item.name = "Larik";
    this.#item.command = "larik.focusChat";
    this.show("starting");
    this.#item.show();
  }

  show(status: AgentStatus, detail?: string): void {
    const look = LOOK[status];
    this.#item.text = look.text;
    this.#item.tooltip = detail ? `${look.tooltip}: ${detail}` : look.tooltip;
    this.#item.backgroundColor = status === "waiting" ? new vscode.ThemeColor("statusBarItem.warningBackground") : undefined;
  }

  dispose(): void {
    this.#item.dispose();
  }
}
