// What the user is looking at, gathered from the editor for `_larik/editor_context` and for
// "Ask Larik about Selection".

import * as path from "node:path";
import * as vscode from "vscode";
import type { ContentBlock } from "../protocol/acp";
import type { EditorContextParams, EditorDiagnostic } from "../protocol/larik";
import type { Attachment } from "../session";

const MAX_OPEN_FILES = 50;
const MAX_DIAGNOSTICS = 50;
const MAX_SELECTION_CHARS = 50_000;

const SEVERITY: Record<vscode.DiagnosticSeverity, EditorDiagnostic["severity"]> = {
  [vscode.DiagnosticSeverity.Error]: "error",
  [vscode.DiagnosticSeverity.Warning]: "warning",
  [vscode.DiagnosticSeverity.Information]: "information",
  [vscode.DiagnosticSeverity.Hint]: "hint",
};

/** 1-based inclusive lines of a selection; a selection ending at column 0 excludes that line. */
function selectionLines(selection: vscode.Selection): { startLine: number; endLine: number } {
  const end = selection.end.character === 0 && selection.end.line > selection.start.line ? selection.end.line - 1 : selection.end.line;
  return { startLine: selection.start.line + 1, endLine: end + 1 };
}

export function currentEditorContext(): Omit<EditorContextParams, "sessionId"> | undefined {
  const editor = vscode.window.activeTextEditor;
  const context: Omit<EditorContextParams, "sessionId"> = {};
  if (editor && editor.document.uri.scheme === "file") {
    const file = editor.document.uri.fsPath;
    context.activeFile = file;
    if (!editor.selection.isEmpty) {
      context.selection = { path: file, ...selectionLines(editor.selection), text: editor.document.getText(editor.selection).slice(0, MAX_SELECTION_CHARS) };
    }
  }
  const open = new Set<string>();
  for (const group of vscode.window.tabGroups.all) {
    for (const tab of group.tabs) {
      if (tab.input instanceof vscode.TabInputText && tab.input.uri.scheme === "file") open.add(tab.input.uri.fsPath);
    }
  }
  if (open.size > 0) context.openFiles = [...open].slice(0, MAX_OPEN_FILES);
  const diagnostics: EditorDiagnostic[] = [];
  for (const file of context.activeFile ? [context.activeFile, ...open] : open) {
    for (const d of vscode.languages.getDiagnostics(vscode.Uri.file(file))) {
      if (d.severity > vscode.DiagnosticSeverity.Warning) continue;
      diagnostics.push({ path: file, line: d.range.start.line + 1, severity: SEVERITY[d.severity], message: d.message });
      if (diagnostics.length >= MAX_DIAGNOSTICS) break;
    }
    if (diagnostics.length >= MAX_DIAGNOSTICS) break;
  }
  const unique = diagnostics.filter((d, i) => diagnostics.findIndex((e) => e.path === d.path && e.line === d.line && e.message === d.message) === i);
  if (unique.length > 0) context.diagnostics = unique;
  return Object.keys(context).length > 0 ? context : undefined;
}

/** The active editor's selection as a prompt attachment (an embedded resource). */
export function selectionAttachment(): Attachment | undefined {
  const editor = vscode.window.activeTextEditor;
  if (!editor || editor.selection.isEmpty) return undefined;
  const { startLine, endLine } = selectionLines(editor.selection);
  const uri = editor.document.uri;
  const text = editor.document.getText(editor.selection).slice(0, MAX_SELECTION_CHARS);
  const name = uri.scheme === "file" ? path.basename(uri.fsPath) : uri.path.split("/").pop() ?? uri.toString();
  const label = startLine === endLine ? `${name}:${startLine}` : `${name}:${startLine}-${endLine}`;
  const block: ContentBlock = {
    type: "resource",
    resource: { uri: `${uri.toString()}#L${startLine}-${endLine}`, text, mimeType: "text/plain" },
  };
  return { id: `selection:${uri.toString()}:${startLine}-${endLine}`, label, block };
}
