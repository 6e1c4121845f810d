// Undo per turn, in the editor: the chat's Undo on a turn that changed files, "Larik: Undo Last
// Turn" and "Larik: Show Checkpoints" (a pick of the turn to go back to before). The agent puts
// the files back (`_larik/undo`); the editor is then brought in line with the disk
// (src/editor/diskChanges.ts) and a notification says what was restored, removed and kept.
//
// Going back to before a turn also undoes the turns after it: when later turns changed files too,
// the user is asked first.

import * as path from "node:path";
import * as vscode from "vscode";
import { ErrorCodes, ResponseError } from "../connection";
import { reflectDisk } from "../editor/diskChanges";
import type { CheckpointInfo, UndoResponse } from "../protocol/larik";
import type { SessionController } from "../session";
import { listed, shortPrompt, turnsAfter, undoQuestion, undoSummary } from "../state/checkpoints";

const UNDO = "Undo";

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** The notification after an undo: what it did, what it could not cover, what the editor kept. */
export function undoMessage(undone: UndoResponse, unsaved: readonly string[]): string {
  let text = undoSummary(undone);
  if (undone.checkpoint.skipped.length > 0) text += ` Not covered by checkpoints: ${listed(undone.checkpoint.skipped)}.`;
  if (unsaved.length > 0) text += ` Unsaved changes to ${listed(unsaved)} are left in the editor.`;
  return text;
}

export class TurnUndo {
  constructor(
    private readonly controller: SessionController,
    private readonly log: vscode.LogOutputChannel,
  ) {}

  /** From the chat: back to before the turn that took checkpoint `id`. */
  async turn(id: string): Promise<void> {
    const list = await this.#list();
    if (!list) return;
    const at = list.findIndex((c) => c.id === id);
    if (at === -1) {
      void vscode.window.showInformationMessage("This turn can no longer be undone: the agent no longer has its checkpoint.");
      return;
    }
    if (await this.#confirm(list, at)) await this.#run(id);
  }

  /** "Larik: Undo Last Turn": back to before the latest turn that changed files (asking first when
   * turns after it, which changed nothing, go too). */
  async last(): Promise<void> {
    const list = await this.#list();
    if (!list) return;
    if (list.length > 0 && !(await this.#confirm(list, list.length - 1))) return;
    await this.#run(list.at(-1)?.id);
  }

  /** "Larik: Show Checkpoints": the turns that changed files, newest first; the one picked is undone. */
  async pick(): Promise<void> {
    const list = await this.#list();
    if (!list) return;
    if (list.length === 0) {
      void vscode.window.showInformationMessage("No checkpoints: no turn of this session has changed a file yet.");
      return;
    }
    const items = list
      .map((checkpoint, at) => ({
        label: shortPrompt(checkpoint.prompt) || checkpoint.id,
        description: `${checkpoint.id} · ${new Date(checkpoint.createdAt).toLocaleString()}`,
        detail: `${checkpoint.files.length} ${checkpoint.files.length === 1 ? "file" : "files"}: ${listed(checkpoint.files, 8)}`,
        at,
      }))
      .reverse();
    const picked = await vscode.window.showQuickPick(items, {
      placeHolder: "Undo back to before a turn: its files, and those of the turns after it, go back as they were",
      matchOnDescription: true,
      matchOnDetail: true,
    });
    if (picked && (await this.#confirm(list, picked.at))) await this.#run(list[picked.at]!.id);
  }

  async #list(): Promise<CheckpointInfo[] | undefined> {
    try {
      const list = await this.controller.listCheckpoints();
      if (!list) void vscode.window.showInformationMessage("This agent keeps no checkpoints: it cannot undo turns.");
      return list;
    } catch (error) {
      this.log.error(`listing the checkpoints failed: ${describe(error)}`);
      void vscode.window.showErrorMessage(`Larik: the checkpoints could not be listed: ${describe(error)}`);
      return undefined;
    }
  }

  /** Asks before undoing the turns after this one too (changed files or not), naming them; true to go on. */
  async #confirm(list: CheckpointInfo[], at: number): Promise<boolean> {
    const checkpoint = list[at]!;
    const later = turnsAfter(this.controller.transcript.turns(), checkpoint);
    // Checkpoints of turns the chat does not show (typed elsewhere) still count.
    const question = undoQuestion(checkpoint, later.length > 0 ? later : list.slice(at + 1).map((c) => ({ id: c.id, text: c.prompt })));
    if (!question) return true;
    const choice = await vscode.window.showWarningMessage(question.message, { modal: true, detail: question.detail }, UNDO);
    return choice === UNDO;
  }

  async #run(id: string | undefined): Promise<void> {
    let undone: UndoResponse;
    try {
      undone = await this.controller.undo(id);
    } catch (error) {
      if (error instanceof ResponseError && error.code === ErrorCodes.InvalidParams) {
        void vscode.window.showInformationMessage(`Nothing was undone: ${error.message}.`);
      } else if (error instanceof ResponseError && error.code === ErrorCodes.MethodNotFound) {
        void vscode.window.showInformationMessage("This agent keeps no checkpoints: it cannot undo turns.");
      } else {
        this.log.error(`the undo failed: ${describe(error)}`);
        void vscode.window.showErrorMessage(`Larik: the undo failed: ${describe(error)}`);
      }
      return;
    }
    const cwd = this.controller.cwd;
    const absolute = (paths: string[]) => paths.map((p) => path.resolve(cwd, p));
    const unsaved = await reflectDisk({ restored: absolute(undone.restored), removed: absolute(undone.removed) });
    this.log.info(`undid ${undone.checkpoint.id}: restored ${undone.restored.length}, removed ${undone.removed.length}, kept ${undone.kept.length}`);
    void vscode.window.showInformationMessage(undoMessage(undone, unsaved.map((p) => path.relative(cwd, p))));
  }
}
