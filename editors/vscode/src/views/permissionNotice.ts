// A notification for a permission request while the chat view is hidden, so the agent is never
// left waiting unseen. Its buttons are the agent's options, verbatim, plus one to open the chat;
// while the edit's hunks are being decided in the editor, that review is the one place that
// decides, so the notification only points there.

import * as vscode from "vscode";
import type { SessionController } from "../session";
import type { HunkReviews } from "./chatView";

const OPEN_CHAT = "Open Chat";

export class PermissionNotice implements vscode.Disposable {
  #lastKey: number | undefined;
  #unsubscribe: () => void;

  constructor(
    private readonly controller: SessionController,
    private readonly isChatVisible: () => boolean,
    private readonly reviews?: Pick<HunkReviews, "isReviewingHunks">,
  ) {
    this.#unsubscribe = controller.permissions.onChange(() => this.#onChange());
  }

  #onChange(): void {
    const current = this.controller.permissions.current;
    if (!current || current.key === this.#lastKey) return;
    this.#lastKey = current.key;
    if (this.isChatVisible()) return;
    const call = current.request.toolCall.title ?? current.request.toolCall.toolCallId;
    // A subagent's request says which subagent asks.
    const subagent = this.controller.subagentAsking(current.request);
    const title = subagent !== undefined ? `${call} (for ${subagent})` : call;
    const reviewing = () => current.diff !== undefined && this.reviews?.isReviewingHunks(current.key) === true;
    if (reviewing()) {
      void vscode.window.showInformationMessage(`Larik waits for you to decide each hunk of ${title} in the editor.`);
      return;
    }
    const names = current.request.options.map((o) => o.name);
    void vscode.window.showInformationMessage(`Larik asks: ${title}`, ...names, OPEN_CHAT).then((choice) => {
      if (choice === undefined) return;
      if (choice === OPEN_CHAT) {
        void vscode.commands.executeCommand("larik.focusChat");
        return;
      }
      // A hunk review opened meanwhile decides instead.
      if (reviewing()) return;
      const option = current.request.options.find((o) => o.name === choice);
      if (option) this.controller.permissions.answer(current.key, { optionId: option.optionId });
    });
  }

  dispose(): void {
    this.#unsubscribe();
  }
}
