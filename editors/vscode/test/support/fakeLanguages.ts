// The editor's languages API as `src/editor/diagnostics.ts` sees it, driven by the test: it
// stands in for the editor's language servers.

import type { DiagnosticLike, EditorLanguages, TextChange, UriLike } from "../../src/editor/diagnostics";

export class FakeLanguages implements EditorLanguages {
  diagnostics = new Map<string, DiagnosticLike[]>();
  opened: string[] = [];
  #onDiagnostics: Array<(uris: readonly UriLike[]) => void> = [];
  #onText: Array<(uri: UriLike, change: TextChange) => void> = [];

  uriOf(path: string): UriLike {
    return { toString: () => `file://${path}` };
  }
  getDiagnostics(uri: UriLike): readonly DiagnosticLike[] {
    return this.diagnostics.get(uri.toString()) ?? [];
  }
  onDidChangeDiagnostics(listener: (uris: readonly UriLike[]) => void) {
    this.#onDiagnostics.push(listener);
    return { dispose: () => (this.#onDiagnostics = this.#onDiagnostics.filter((l) => l !== listener)) };
  }
  onDidChangeText(listener: (uri: UriLike, change: TextChange) => void) {
    this.#onText.push(listener);
    return { dispose: () => (this.#onText = this.#onText.filter((l) => l !== listener)) };
  }
  async open(uri: UriLike) {
    this.opened.push(uri.toString());
  }
  /** A server reports on `path` (an empty list: the file is clean). */
  report(path: string, list: DiagnosticLike[]): void {
    const uri = this.uriOf(path);
    this.diagnostics.set(uri.toString(), list);
    for (const l of this.#onDiagnostics) l([uri]);
  }
  /** The text of `path` changed (`opened`: the document was opened), in `language`. */
  edited(path: string, language = "python", opened = false): void {
    for (const l of this.#onText) l(this.uriOf(path), { language, opened });
  }
}

export const diagnosticAt = (line: number, character: number, message: string, severity = 0, source?: string): DiagnosticLike => ({
  range: { start: { line, character } },
  severity,
  message,
  ...(source ? { source } : {}),
});
