// The agent's file access through the editor (`fs/read_text_file`, `fs/write_text_file`): reads
// see unsaved changes of open documents, writes go through a WorkspaceEdit (so the user can undo
// them) and are saved, so that the agent's later commands see the file it wrote. A document
// without unsaved changes is read from the disk: right after the files changed behind the
// editor's back (an undo), the editor may not have reloaded it yet, or it may hold a file that
// is gone.

import * as vscode from "vscode";
import type { ReadTextFileRequest, WriteTextFileRequest } from "../protocol/acp";
import { sliceLines } from "../state/lines";

function openDocument(path: string): vscode.TextDocument | undefined {
  const target = vscode.Uri.file(path).fsPath;
  return vscode.workspace.textDocuments.find((d) => d.uri.scheme === "file" && d.uri.fsPath === target);
}

export async function readTextFile(params: ReadTextFileRequest): Promise<string> {
  const open = openDocument(params.path);
  const text = open?.isDirty ? open.getText() : new TextDecoder().decode(await vscode.workspace.fs.readFile(vscode.Uri.file(params.path)));
  return sliceLines(text, params.line, params.limit);
}

async function exists(uri: vscode.Uri): Promise<boolean> {
  try {
    await vscode.workspace.fs.stat(uri);
    return true;
  } catch {
    return false;
  }
}

export async function writeTextFile(params: WriteTextFileRequest): Promise<void> {
  const uri = vscode.Uri.file(params.path);
  const edit = new vscode.WorkspaceEdit();
  let document = openDocument(params.path);
  if (!document && (await exists(uri))) document = await vscode.workspace.openTextDocument(uri);
  if (document) {
    const whole = new vscode.Range(document.positionAt(0), document.positionAt(document.getText().length));
    edit.replace(uri, whole, params.content);
  } else {
    edit.createFile(uri, { ignoreIfExists: true });
    edit.insert(uri, new vscode.Position(0, 0), params.content);
  }
  if (!(await vscode.workspace.applyEdit(edit))) throw new Error("the editor refused the edit");
  document ??= openDocument(params.path) ?? (await vscode.workspace.openTextDocument(uri));
  if (!(await document.save())) throw new Error("the editor could not save the file");
}
