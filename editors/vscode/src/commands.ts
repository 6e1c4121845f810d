// The commands of `contributes.commands`, each a thin call into the context object.

import * as vscode from "vscode";
import type { Ctx } from "./ctx";

export function commandTable(ctx: Ctx): Record<string, (...args: any[]) => unknown> {
  return {
    "larik.focusChat": () => ctx.focusChat(),
    "larik.newSession": () => ctx.newSession(),
    "larik.loadSession": () => ctx.pickSession(),
    "larik.cancel": () => ctx.cancel(),
    "larik.askAboutSelection": () => ctx.askAboutSelection(),
    "larik.acceptDiff": (target?: unknown) => ctx.review.accept(target),
    "larik.rejectDiff": (target?: unknown) => ctx.review.reject(target),
    "larik.reviewInline": (target?: unknown) => ctx.review.openInline(target),
    "larik.acceptHunk": (key: number, index: number) => ctx.review.decideHunk(key, index, true),
    "larik.rejectHunk": (key: number, index: number) => ctx.review.decideHunk(key, index, false),
    "larik.undoLastTurn": () => ctx.undo.last(),
    "larik.showCheckpoints": () => ctx.undo.pick(),
    "larik.restartAgent": () => ctx.restartAgent(),
    "larik.showLog": () => ctx.log.show(),
    "larik.setApiKey": () => ctx.setApiKey(),
    "larik.clearApiKeys": () => ctx.clearApiKeys(),
  };
}

export function registerCommands(ctx: Ctx): vscode.Disposable[] {
  return Object.entries(commandTable(ctx)).map(([id, run]) => vscode.commands.registerCommand(id, run));
}
