// The agent's `_larik/diagnostics` answered from the editor's own language servers, so that the
// agent does not start a second server for a file the editor already checks (see
// protocol-spec/spec/extensions.md, "Diagnostics from the editor's own language servers").
//
// The agent asks after a read (what the file had) and right after writing the file through
// `fs/write_text_file`, when the servers may not have seen the new text yet. So the answer waits,
// up to `waitMs`, for a report on the file newer than its last change, then gives what
// `getDiagnostics` shows, 1-based.
//
// Some servers stay quiet when nothing changed for them: VS Code's TypeScript support skips the
// report when a clean file stays clean. After such an edit no report comes, and waiting out the
// whole `waitMs` would cost every such edit 3 s. So each language's servers are timed, from a
// change of a document's text to their first report on it after that; a file of a language
// whose servers reported after recent changes is waited for three times the slowest of those
// times (at least 750 ms, at most `waitMs`). An open is not timed: a server's first report on a
// file includes loading the project.
//
// `null` ("nothing of the editor's checks this file", the agent then asks its own servers) is
// answered when nothing ever reported on the file: no diagnostics change for its uri since the
// extension started, before or during the wait, and no diagnostics now. VS Code cannot say which
// language has a diagnostics provider, but a server that checks a file reports on it, clean or
// not, once it has seen it; that is why the document is opened (not shown) first. A file answered
// `null` is answered `null` at once until something reports on it: the agent asks after every
// edit, and a plain text file would otherwise cost the whole wait each time.
//
// The editor API is injected (`EditorLanguages`), so this module does not import `vscode` and
// its tests fake the servers.

import type { DiagnosticsRequest, DiagnosticsResponse, DiagnosticsSeverity, WireDiagnostic } from "../protocol/larik";

interface Disposable {
  dispose(): unknown;
}

/** The part of a `vscode.Uri` used here: its string form keys the bookkeeping. */
export interface UriLike {
  toString(): string;
}

/** The part of a `vscode.Diagnostic` the agent is told. */
export interface DiagnosticLike {
  range: { start: { line: number; character: number } };
  severity?: number;
  message: string;
  source?: string;
}

/** What of `vscode.languages` and `vscode.workspace` the answer needs. */
export interface EditorLanguages {
  uriOf(path: string): UriLike;
  getDiagnostics(uri: UriLike): readonly DiagnosticLike[];
  onDidChangeDiagnostics(listener: (uris: readonly UriLike[]) => void): Disposable;
  /** A document's text changed, or it was opened: its diagnostics so far are about older text. */
  onDidChangeText(listener: (uri: UriLike, change: TextChange) => void): Disposable;
  /** Opens the document without showing it, so that the servers for its language see it. */
  open(uri: UriLike): PromiseLike<unknown>;
}

/** What is known of a document's text change. */
export interface TextChange {
  /** The document's language id: servers are timed per language. */
  language: string;
  /** The document was opened rather than changed. */
  opened: boolean;
}

/** How many of a language's latest report times are kept. */
const TIMED_REPORTS = 8;
/** A language's wait is this many times the slowest of its kept report times... */
const WAIT_MARGIN = 3;
/** ...and never shorter than this. */
const MIN_WAIT_MS = 750;

// `vscode.DiagnosticSeverity`'s values, which are stable API: Error 0, Warning 1, Information 2, Hint 3.
const SEVERITIES: readonly DiagnosticsSeverity[] = ["error", "warning", "information", "hint"];

/** One of the editor's diagnostics as the agent reads it: 1-based, severity by name. */
export function toWire(diagnostic: DiagnosticLike): WireDiagnostic {
  const { line, character } = diagnostic.range.start;
  return {
    line: line + 1,
    character: character + 1,
    severity: SEVERITIES[diagnostic.severity ?? 0] ?? "error",
    message: diagnostic.message,
    ...(typeof diagnostic.source === "string" && diagnostic.source !== "" ? { source: diagnostic.source } : {}),
  };
}

export class EditorDiagnostics implements Disposable {
  #api: EditorLanguages;
  /** Events counted in the order they came, so "reported after the last change" needs no clock. */
  #tick = 0;
  /** Per uri: the tick of the last diagnostics change, and the last text change. */
  #reported = new Map<string, number>();
  #changed = new Map<string, { tick: number; at: number } & TextChange>();
  /** Per language: how long its servers took, in ms, to report after each of the latest changes. */
  #reportTimes = new Map<string, number[]>();
  /** Uris answered `null` after a whole wait: nothing of the editor's checks them, so far. */
  #uncovered = new Set<string>();
  /** Answers waiting for a report on their uri; each ends its wait when called with it (or none, to give up). */
  #waiters = new Set<(key?: string) => void>();
  #subscriptions: Disposable[];
  #disposed = false;

  constructor(api: EditorLanguages) {
    this.#api = api;
    this.#subscriptions = [
      api.onDidChangeDiagnostics((uris) => {
        const tick = ++this.#tick;
        for (const uri of uris) {
          const key = uri.toString();
          this.#timeReport(key);
          this.#reported.set(key, tick);
          this.#uncovered.delete(key);
          for (const waiter of [...this.#waiters]) waiter(key);
        }
      }),
      api.onDidChangeText((uri, change) => this.#changed.set(uri.toString(), { tick: ++this.#tick, at: performance.now(), ...change })),
    ];
  }

  async answer(params: DiagnosticsRequest, signal?: AbortSignal): Promise<DiagnosticsResponse> {
    const uri = this.#api.uriOf(params.path);
    const key = uri.toString();
    try {
      await this.#api.open(uri);
    } catch {
      // A file that is gone or not text: its diagnostics, if any, are still what the editor shows.
    }
    if (!this.#fresh(key) && !this.#uncovered.has(key)) await this.#report(key, this.#waitFor(key, Math.max(0, params.waitMs)), signal);
    const diagnostics = this.#api.getDiagnostics(uri);
    if (diagnostics.length === 0 && !this.#reported.has(key)) {
      if (!signal?.aborted) this.#uncovered.add(key);
      return { diagnostics: null };
    }
    return { diagnostics: diagnostics.map(toWire) };
  }

  /** Whether the file's diagnostics were reported after its text last changed. */
  #fresh(key: string): boolean {
    const reported = this.#reported.get(key);
    return reported !== undefined && reported > (this.#changed.get(key)?.tick ?? 0);
  }

  /** On a report on `key`: the first since its text changed tells how long its language's servers take. */
  #timeReport(key: string): void {
    const change = this.#changed.get(key);
    if (!change || change.opened || this.#fresh(key)) return;
    const times = this.#reportTimes.get(change.language) ?? [];
    times.push(performance.now() - change.at);
    this.#reportTimes.set(change.language, times.slice(-TIMED_REPORTS));
  }

  /** How long to wait for a report on `key`: up to `most`, less where its language's servers are known to be quick. */
  #waitFor(key: string, most: number): number {
    const language = this.#changed.get(key)?.language;
    const times = language === undefined ? undefined : this.#reportTimes.get(language);
    if (!times?.length) return most;
    return Math.min(most, Math.max(MIN_WAIT_MS, WAIT_MARGIN * Math.max(...times)));
  }

  /** Resolves on the next report on `key`, after `ms`, or when the request is cancelled. */
  #report(key: string, ms: number, signal?: AbortSignal): Promise<void> {
    // Cancelled or disposed while the document was being opened: there is nothing to wait for.
    if (signal?.aborted || this.#disposed) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.#waiters.delete(waiter);
        signal?.removeEventListener("abort", done);
        resolve();
      };
      const waiter = (reported?: string) => {
        if (reported === undefined || reported === key) done();
      };
      const timer = setTimeout(done, ms);
      this.#waiters.add(waiter);
      signal?.addEventListener("abort", done);
    });
  }

  dispose(): void {
    this.#disposed = true;
    for (const subscription of this.#subscriptions) subscription.dispose();
    for (const waiter of [...this.#waiters]) waiter();
  }
}
