// Read-only virtual documents for reviewing an edit: the original (left side of the diff), the
// proposal (right side) and the unified inline view. Their URIs keep the real file's path, so
// the editor picks the right language, and carry the permission's key in the query. The inline
// view's name says it is a proposal ("calc.py (Larik proposal)"): its tab sits beside the real
// file's, and a tab label is the last segment of the path; its language is set when it opens.

import * as vscode from "vscode";

export const ORIGINAL_SCHEME = "larik-original";
export const PROPOSED_SCHEME = "larik-proposed";
export const INLINE_SCHEME = "larik-review";
export const REVIEW_SCHEMES = [ORIGINAL_SCHEME, PROPOSED_SCHEME, INLINE_SCHEME];

export const PROPOSAL_SUFFIX = " (Larik proposal)";

export function reviewUri(scheme: string, path: string, key: number): vscode.Uri {
  return vscode.Uri.from({ scheme, path: scheme === INLINE_SCHEME ? path + PROPOSAL_SUFFIX : path, query: `key=${key}` });
}

/** The permission key a review URI belongs to. */
export function keyOf(uri: vscode.Uri | undefined): number | undefined {
  if (!uri || !REVIEW_SCHEMES.includes(uri.scheme)) return undefined;
  const match = /(?:^|&)key=(\d+)/.exec(uri.query);
  return match ? Number(match[1]) : undefined;
}

export class ReviewDocuments implements vscode.TextDocumentContentProvider, vscode.Disposable {
  #texts = new Map<string, string>();
  #changed = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this.#changed.event;

  set(uri: vscode.Uri, text: string): void {
    this.#texts.set(uri.toString(), text);
    this.#changed.fire(uri);
  }

  delete(uri: vscode.Uri): void {
    this.#texts.delete(uri.toString());
  }

  provideTextDocumentContent(uri: vscode.Uri): string {
    return this.#texts.get(uri.toString()) ?? "";
  }

  dispose(): void {
    this.#changed.dispose();
    this.#texts.clear();
  }
}
