// A notification for a permission request while the chat view is hidden, so the agent is never
// left waiting unseen. Its buttons are the agent's options, verbatim, plus one to open the chat.

import * as vscode from "vscode";
import type { SessionController } from "../session";

const OPEN_CHAT = "Open Chat";

export class PermissionNotice implements vscode.Disposable {
  #lastKey: number | undefined;
  #unsubscribe: () => void;

  constructor(
    private readonly controller: SessionController,
    private readonly isChatVisible: () => boolean,
  ) {
    this.#unsubscribe = controller.permissions.onChange(() => this.#onChange());
  }

  #onChange(): void {
    const current = this.controller.permissions.current;
    if (!current || current.key === this.#lastKey) return;
    this.#lastKey = current.key;
    if (this.isChatVisible()) return;
    const title = current.request.toolCall.title ?? current.request.toolCall.toolCallId;
    const names = current.request.options.map((o) => o.name);
    void vscode.window.showInformationMessage(`Larik asks: ${title}`, ...names, OPEN_CHAT).then((choice) => {
      if (choice === undefined) return;
      if (choice === OPEN_CHAT) {
        void vscode.commands.executeCommand("larik.focusChat");
        return;
      }
      const option = current.request.options.find((o) => o.name === choice);
      if (option) this.controller.permissions.answer(current.key, { optionId: option.optionId });
    });
  }

  dispose(): void {
    this.#unsubscribe();
  }
}
