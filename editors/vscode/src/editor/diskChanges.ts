// After the agent changed files behind the editor's back (an undo writes files back and deletes
// others), the editor is brought in line with the disk: an open document without unsaved changes
// shows the file's text (VS Code's file watcher reloads it; one shown in a tab that it has not
// reloaded within a moment is reverted), and the tab of a file that is gone is closed. Documents
// with unsaved changes are left as they are and named, so that nothing the user typed is lost.

import * as vscode from "vscode";

/** Absolute paths of what changed on disk. */
export interface DiskChanges {
  restored: string[];
  removed: string[];
}

/** How long the file watcher is given to reload a document before it is reverted. */
const WATCHER_MS = 1500;

const samePath = (uri: vscode.Uri, path: string) => uri.scheme === "file" && uri.fsPath === vscode.Uri.file(path).fsPath;

function tabsOf(path: string): vscode.Tab[] {
  return vscode.window.tabGroups.all.flatMap((group) => group.tabs.filter((tab) => tab.input instanceof vscode.TabInputText && samePath(tab.input.uri, path)));
}

async function diskText(path: string): Promise<string | undefined> {
  try {
    return new TextDecoder().decode(await vscode.workspace.fs.readFile(vscode.Uri.file(path)));
  } catch {
    return undefined;
  }
}

/** Resolves true once the document's text is `text`, false after `ms`. */
function settled(document: vscode.TextDocument, text: string, ms: number): Promise<boolean> {
  if (document.getText() === text) return Promise.resolve(true);
  return new Promise((resolve) => {
    const done = (value: boolean) => {
      clearTimeout(timer);
      listener.dispose();
      resolve(value);
    };
    const timer = setTimeout(() => done(document.getText() === text), ms);
    const listener = vscode.workspace.onDidChangeTextDocument((event) => {
      if (event.document === document && document.getText() === text) done(true);
    });
  });
}

/** Reverts a document from disk through its editor, then gives the editor that was active back. */
async function revert(document: vscode.TextDocument): Promise<void> {
  const previous = vscode.window.activeTextEditor;
  await vscode.window.showTextDocument(document, { preview: false, preserveFocus: true });
  await vscode.commands.executeCommand("workbench.action.files.revert");
  if (previous && previous.document !== document) await vscode.window.showTextDocument(previous.document, { viewColumn: previous.viewColumn, preserveFocus: true });
}

/** Brings the open documents of `changes` in line with the disk; returns the paths left with
 * unsaved changes. */
export async function reflectDisk(changes: DiskChanges, watcherMs = WATCHER_MS): Promise<string[]> {
  const unsaved: string[] = [];
  for (const path of changes.removed) {
    const tabs = tabsOf(path);
    if (tabs.some((tab) => tab.isDirty)) unsaved.push(path);
    else if (tabs.length > 0) await vscode.window.tabGroups.close(tabs, true);
  }
  const stale = await Promise.all(
    changes.restored.map(async (path) => {
      const document = vscode.workspace.textDocuments.find((d) => samePath(d.uri, path));
      if (!document) return undefined;
      if (document.isDirty) {
        unsaved.push(path);
        return undefined;
      }
      const text = await diskText(path);
      if (text === undefined || (await settled(document, text, watcherMs))) return undefined;
      // A document no tab shows is not brought into view: the agent's reads of files without
      // unsaved changes go to the disk.
      return tabsOf(path).length > 0 ? document : undefined;
    }),
  );
  // One at a time: each takes the active editor for a moment.
  for (const document of stale) if (document) await revert(document);
  return unsaved;
}
