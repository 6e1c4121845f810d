// A tool call's change of a file in VS Code's diff editor: an edit's, or a file a command
// changed, as it was before and after the call. Both sides come from the texts the call carried,
// not from the file as it is now (it may have changed since, or be gone), as read-only virtual
// documents under the file's own path so the editor picks its language; the call's id and the
// diff's index are in the query, so two calls' versions of one file are two documents.

import * as path from "node:path";
import * as vscode from "vscode";
import type { ToolDiff } from "../state/transcript";
import { ReviewDocuments } from "./reviewDocuments";

export const BEFORE_SCHEME = "larik-before";
export const AFTER_SCHEME = "larik-after";

/** The diff tab's title: "a.txt: before ↔ after “tidy”", "c.txt (added by “tidy”)". */
export function changeTitle(diff: ToolDiff, call: string): string {
  const name = path.basename(diff.path);
  return diff.change === "changed" ? `${name}: before ↔ after “${call}”` : `${name} (${diff.change} by “${call}”)`;
}

export class ChangeDiffs implements vscode.Disposable {
  readonly #documents = new ReviewDocuments();
  readonly #disposables: vscode.Disposable[];

  constructor() {
    this.#disposables = [this.#documents, ...[BEFORE_SCHEME, AFTER_SCHEME].map((scheme) => vscode.workspace.registerTextDocumentContentProvider(scheme, this.#documents))];
  }

  /** Opens diff `index` of tool call `toolCallId`, titled with the call's title. */
  async open(toolCallId: string, index: number, diff: ToolDiff, call: string): Promise<void> {
    const query = `call=${encodeURIComponent(toolCallId)}&diff=${index}`;
    const before = vscode.Uri.from({ scheme: BEFORE_SCHEME, path: diff.path, query });
    const after = vscode.Uri.from({ scheme: AFTER_SCHEME, path: diff.path, query });
    this.#documents.set(before, diff.oldText);
    this.#documents.set(after, diff.newText);
    await vscode.commands.executeCommand("vscode.diff", before, after, changeTitle(diff, call), { preview: true });
  }

  dispose(): void {
    for (const d of this.#disposables.splice(0)) d.dispose();
  }
}
