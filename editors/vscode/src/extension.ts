// Entry point: activation only. Everything the extension owns lives in the context object.

import type * as vscode from "vscode";
import { registerCommands } from "./commands";
import { Ctx } from "./ctx";

let ctx: Ctx | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<Ctx> {
  ctx = new Ctx(context);
  ctx.push(...registerCommands(ctx));
  // The agent starts in the background: activation never waits for it.
  void ctx.activate();
  return ctx;
}

export async function deactivate(): Promise<void> {
  const current = ctx;
  ctx = undefined;
  await current?.dispose();
}
