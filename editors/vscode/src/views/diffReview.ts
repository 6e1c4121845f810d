// Review of a proposed edit in the editor, answered through the pending permission request.
//
// Side by side (Cline's shape): VS Code's diff editor with the original on the left and the
// proposal on the right, both virtual and read-only, with Accept / Reject in the title bar and on
// keys, gated by the `larik.diffVisible` context key. Inline (Continue's shape): one unified
// view, "calc.py (Larik proposal)", with removed and added lines highlighted and Accept / Reject
// CodeLens above each hunk; its gutter numbers lines as in the file on disk (the editor's own
// numbers would count removed and added lines alike), and decided hunks look decided.
//
// One review surface per file: opening one shape closes the other's tab. While the inline
// review is open the chat card does not offer the permission's options (see `isReviewingHunks`):
// the hunks are decided there, in one place.
//
// Accepting answers the permission with the agent's allow option (with `acceptedHunks` when only
// some hunks were kept), rejecting with its reject option; the agent then writes the file, or
// not. A review closes its tabs as soon as its permission is settled, however that happened.

import * as path from "node:path";
import * as vscode from "vscode";
import type { DiffStyle } from "../config";
import type { SessionController } from "../session";
import { computeHunks, placeHunks, reviewLines, unifiedView, type PlacedHunk, type ReviewLineLook, type UnifiedView } from "../state/hunks";
import { optionOfKind, type PendingPermission } from "../state/permissions";
import { INLINE_SCHEME, keyOf, ORIGINAL_SCHEME, PROPOSED_SCHEME, REVIEW_SCHEMES, ReviewDocuments, reviewUri } from "./reviewDocuments";

export const DIFF_VISIBLE_CONTEXT = "larik.diffVisible";
export const PENDING_EDIT_CONTEXT = "larik.hasPendingEdit";

export interface Review {
  key: number;
  pending: PendingPermission;
  original: vscode.Uri;
  proposed: vscode.Uri;
  inline: vscode.Uri;
  /** The agent's hunks placed in the old text: per-hunk answers are possible. */
  agentHunks: PlacedHunk[] | undefined;
  /** What the inline view shows: the agent's hunks, else hunks computed here. */
  view: UnifiedView;
  /** Per-hunk decisions so far (hunk index -> kept). */
  decisions: Map<number, boolean>;
}

export class DiffReview implements vscode.Disposable {
  readonly documents = new ReviewDocuments();
  #reviews = new Map<number, Review>();
  #disposables: vscode.Disposable[] = [];
  #codeLensChanged = new vscode.EventEmitter<void>();
  #reviewingChanged = new vscode.EventEmitter<void>();
  /** Fires when an inline review opens or closes (the chat card shows or hides its options). */
  readonly onDidChangeReviewing = this.#reviewingChanged.event;
  #reviewing = new Set<number>();
  #looks = lineLooks();
  #gutter = vscode.window.createTextEditorDecorationType({});
  #lastShownKey: number | undefined;

  constructor(
    private readonly controller: SessionController,
    private readonly settings: { diffStyle: DiffStyle; openDiffAutomatically: boolean },
    private readonly log: vscode.LogOutputChannel,
  ) {
    const provider = this.documents;
    this.#disposables.push(
      this.documents,
      this.#codeLensChanged,
      this.#reviewingChanged,
      this.#gutter,
      ...this.#looks.values(),
      ...REVIEW_SCHEMES.map((scheme) => vscode.workspace.registerTextDocumentContentProvider(scheme, provider)),
      vscode.languages.registerCodeLensProvider({ scheme: INLINE_SCHEME }, { provideCodeLenses: (doc) => this.#codeLenses(doc), onDidChangeCodeLenses: this.#codeLensChanged.event }),
      vscode.window.onDidChangeVisibleTextEditors((editors) => editors.forEach((e) => this.#decorate(e))),
      vscode.window.onDidChangeActiveTextEditor(() => this.#updateContextKey()),
      vscode.window.tabGroups.onDidChangeTabs(() => {
        this.#updateContextKey();
        this.#updateReviewing();
      }),
    );
    const unsubscribe = controller.permissions.onChange(() => this.#onPermissionsChanged());
    this.#disposables.push({ dispose: unsubscribe });
  }

  #onPermissionsChanged(): void {
    const pendingKeys = new Set(this.controller.permissions.all().map((p) => p.key));
    for (const key of [...this.#reviews.keys()]) if (!pendingKeys.has(key)) void this.#close(key);
    const current = this.controller.permissions.current;
    if (current?.diff && this.settings.openDiffAutomatically && current.key !== this.#lastShownKey) {
      this.#lastShownKey = current.key;
      void this.open(current.key).catch((error) => this.log.error(`opening the review failed: ${String(error)}`));
    }
    this.#updateContextKey();
  }

  #review(key: number): Review | undefined {
    const existing = this.#reviews.get(key);
    if (existing) return existing;
    const pending = this.controller.permissions.get(key);
    if (!pending?.diff) return undefined;
    const { path: file, oldText, newText } = pending.diff;
    const agentHunks = pending.hunks ? placeHunks(oldText, newText, pending.hunks) : undefined;
    if (pending.hunks && !agentHunks) this.log.warn(`the agent's hunks for ${file} do not match its diff; reviewing the whole file`);
    const shown = agentHunks ?? placeHunks(oldText, newText, computeHunks(oldText, newText)) ?? [];
    const review: Review = {
      key,
      pending,
      original: reviewUri(ORIGINAL_SCHEME, file, key),
      proposed: reviewUri(PROPOSED_SCHEME, file, key),
      inline: reviewUri(INLINE_SCHEME, file, key),
      agentHunks,
      view: unifiedView(oldText, shown),
      decisions: new Map(),
    };
    this.documents.set(review.original, oldText);
    this.documents.set(review.proposed, newText);
    this.documents.set(review.inline, review.view.text);
    this.#reviews.set(key, review);
    return review;
  }

  /** Whether the hunks of this permission's edit are being decided in the inline review. */
  isReviewingHunks(key: number): boolean {
    return this.#reviewing.has(key);
  }

  /** Opens the review of a pending permission in the given style, else the one already open for
   * it, else the configured one; the other style's tab closes (one review surface per file). */
  async open(key: number, style?: DiffStyle): Promise<void> {
    const review = this.#review(key);
    if (!review) return;
    const shown = style ?? (this.#tabsOf(key, [INLINE_SCHEME]).length > 0 ? "inline" : this.settings.diffStyle);
    const name = path.basename(review.pending.diff!.path);
    if (shown === "inline") {
      const original = await vscode.workspace.openTextDocument(review.original);
      let document = await vscode.workspace.openTextDocument(review.inline);
      // The name ends in "(Larik proposal)": take the language from the real file's name.
      if (document.languageId !== original.languageId) document = await vscode.languages.setTextDocumentLanguage(document, original.languageId);
      const editor = await vscode.window.showTextDocument(document, { preview: false });
      this.#decorate(editor);
      await this.#closeTabs(this.#tabsOf(key, [ORIGINAL_SCHEME, PROPOSED_SCHEME]));
    } else {
      const title = review.pending.diff!.isNew ? `${name} (new file): Larik's proposal` : `${name}: Original ↔ Larik's proposal`;
      await vscode.commands.executeCommand("vscode.diff", review.original, review.proposed, title, { preview: false });
      await this.#closeTabs(this.#tabsOf(key, [INLINE_SCHEME]));
    }
    this.#updateContextKey();
    this.#updateReviewing();
  }

  /** Opens the review the user means in the inline view, where hunks are decided one by one. */
  async openInline(uri?: unknown): Promise<void> {
    const review = this.#target(uri);
    if (review) await this.open(review.key, "inline");
  }

  /** The review the user means: the one in the active editor, else the current permission's. */
  #target(uri?: unknown): Review | undefined {
    const fromArg = uri instanceof vscode.Uri ? keyOf(uri) : typeof uri === "number" ? uri : undefined;
    const key = fromArg ?? this.#activeKey() ?? this.controller.permissions.current?.key;
    return key === undefined ? undefined : this.#review(key);
  }

  #activeKey(): number | undefined {
    const tab = vscode.window.tabGroups.activeTabGroup.activeTab;
    const input = tab?.input;
    if (input instanceof vscode.TabInputTextDiff) return keyOf(input.modified) ?? keyOf(input.original);
    if (input instanceof vscode.TabInputText) return keyOf(input.uri);
    return keyOf(vscode.window.activeTextEditor?.document.uri);
  }

  /** Accepts the whole edit, or the hunks not rejected yet in the inline view. */
  accept(uri?: unknown): boolean {
    const review = this.#target(uri);
    if (!review) return false;
    const rejected = [...review.decisions].filter(([, kept]) => !kept).map(([index]) => index);
    if (review.agentHunks && rejected.length > 0) {
      const kept = review.agentHunks.map((p) => p.hunk.index).filter((i) => !rejected.includes(i));
      return this.#answer(review, kept);
    }
    return this.#answer(review, "all");
  }

  reject(uri?: unknown): boolean {
    const review = this.#target(uri);
    return review ? this.#answer(review, "none") : false;
  }

  /** Records one hunk's decision; answers the permission once every hunk is decided. */
  decideHunk(key: number, index: number, keep: boolean): void {
    const review = this.#reviews.get(key);
    if (!review?.agentHunks) return;
    review.decisions.set(index, keep);
    this.#codeLensChanged.fire();
    for (const editor of vscode.window.visibleTextEditors) this.#decorate(editor);
    const all = review.agentHunks.map((p) => p.hunk.index);
    if (all.every((i) => review.decisions.has(i))) {
      this.#answer(review, all.filter((i) => review.decisions.get(i)));
    }
  }

  #answer(review: Review, kept: "all" | "none" | number[]): boolean {
    const { request } = review.pending;
    const total = review.agentHunks?.length ?? 0;
    const everything = kept === "all" || (Array.isArray(kept) && kept.length === total);
    const nothing = kept === "none" || (Array.isArray(kept) && kept.length === 0);
    const option = nothing ? optionOfKind(request, "reject_once", "reject_always") : optionOfKind(request, "allow_once", "allow_always");
    if (!option) {
      void vscode.window.showWarningMessage(`Larik offered no ${nothing ? "reject" : "allow"} option for this edit.`);
      return false;
    }
    this.log.info(`review of ${review.pending.diff!.path}: ${option.optionId}${Array.isArray(kept) && !everything && !nothing ? ` hunks ${kept.join(",")}` : ""}`);
    return this.controller.permissions.answer(review.key, {
      optionId: option.optionId,
      ...(Array.isArray(kept) && !everything && !nothing ? { acceptedHunks: kept } : {}),
    });
  }

  /** The tabs showing a review's documents of the given schemes. */
  #tabsOf(key: number, schemes: string[]): vscode.Tab[] {
    const ours = (uri: vscode.Uri) => schemes.includes(uri.scheme) && keyOf(uri) === key;
    return vscode.window.tabGroups.all.flatMap((group) =>
      group.tabs.filter((tab) => {
        const input = tab.input;
        if (input instanceof vscode.TabInputTextDiff) return ours(input.original) || ours(input.modified);
        if (input instanceof vscode.TabInputText) return ours(input.uri);
        return false;
      }),
    );
  }

  async #closeTabs(tabs: vscode.Tab[]): Promise<void> {
    if (tabs.length > 0) await vscode.window.tabGroups.close(tabs, true);
  }

  async #close(key: number): Promise<void> {
    const review = this.#reviews.get(key);
    if (!review) return;
    this.#reviews.delete(key);
    try {
      await this.#closeTabs(this.#tabsOf(key, REVIEW_SCHEMES));
    } finally {
      for (const uri of [review.original, review.proposed, review.inline]) this.documents.delete(uri);
      this.#updateContextKey();
      this.#updateReviewing();
    }
  }

  /** Recomputes which permissions have their inline review open; tells listeners of a change. */
  #updateReviewing(): void {
    const now = new Set([...this.#reviews.keys()].filter((key) => this.#tabsOf(key, [INLINE_SCHEME]).length > 0));
    const same = now.size === this.#reviewing.size && [...now].every((key) => this.#reviewing.has(key));
    this.#reviewing = now;
    if (!same) this.#reviewingChanged.fire();
  }

  #updateContextKey(): void {
    const key = this.#activeKey();
    const visible = key !== undefined && this.#reviews.has(key) && this.controller.permissions.get(key) !== undefined;
    void vscode.commands.executeCommand("setContext", DIFF_VISIBLE_CONTEXT, visible);
    const pendingEdit = this.controller.permissions.all().some((p) => p.diff !== undefined);
    void vscode.commands.executeCommand("setContext", PENDING_EDIT_CONTEXT, pendingEdit);
  }

  #decorate(editor: vscode.TextEditor): void {
    if (editor.document.uri.scheme !== INLINE_SCHEME) return;
    const key = keyOf(editor.document.uri);
    const review = key === undefined ? undefined : this.#reviews.get(key);
    if (!review) return;
    // Our gutter stands for the line numbers (see reviewLines).
    editor.options = { ...editor.options, lineNumbers: vscode.TextEditorLineNumbersStyle.Off };
    const lines = reviewLines(review.view, review.decisions).slice(0, editor.document.lineCount);
    for (const [look, type] of this.#looks) {
      editor.setDecorations(type, lines.flatMap((line, i) => (line.look === look ? [editor.document.lineAt(i).range] : [])));
    }
    editor.setDecorations(
      this.#gutter,
      lines.map((line, i) => ({ range: new vscode.Range(i, 0, i, 0), renderOptions: { before: { contentText: line.gutter, color: new vscode.ThemeColor("editorLineNumber.foreground") } } })),
    );
  }

  #codeLenses(document: vscode.TextDocument): vscode.CodeLens[] {
    const key = keyOf(document.uri);
    const review = key === undefined ? undefined : this.#reviews.get(key);
    if (!review || key === undefined) return [];
    const top = new vscode.Range(0, 0, 0, 0);
    const lenses = [
      new vscode.CodeLens(top, { title: "$(check) Accept all", command: "larik.acceptDiff", arguments: [key] }),
      new vscode.CodeLens(top, { title: "$(close) Reject all", command: "larik.rejectDiff", arguments: [key] }),
    ];
    if (!review.agentHunks) return lenses;
    for (const range of review.view.ranges) {
      const at = new vscode.Range(range.start, 0, range.start, 0);
      const decided = review.decisions.get(range.index);
      if (decided === undefined) {
        lenses.push(
          new vscode.CodeLens(at, { title: "$(check) Accept", command: "larik.acceptHunk", arguments: [key, range.index] }),
          new vscode.CodeLens(at, { title: "$(close) Reject", command: "larik.rejectHunk", arguments: [key, range.index] }),
        );
      } else {
        const title = decided ? "$(check) Accepted (click to reject)" : "$(close) Rejected (click to accept)";
        lenses.push(new vscode.CodeLens(at, { title, command: decided ? "larik.rejectHunk" : "larik.acceptHunk", arguments: [key, range.index] }));
      }
    }
    return lenses;
  }

  dispose(): void {
    for (const d of this.#disposables.splice(0)) d.dispose();
    this.#reviews.clear();
  }
}

/** One decoration per look of a review line. Undecided hunks are in diff colours; an accepted
 * hunk's removed lines lose their colour (they are going), a rejected hunk's added lines too (they
 * are not coming); either way what is decided is dimmed and struck through. */
function lineLooks(): Map<ReviewLineLook, vscode.TextEditorDecorationType> {
  const added = new vscode.ThemeColor("diffEditor.insertedLineBackground");
  const removed = new vscode.ThemeColor("diffEditor.removedLineBackground");
  const ruler = (color: string) => ({ overviewRulerColor: new vscode.ThemeColor(color), overviewRulerLane: vscode.OverviewRulerLane.Left });
  const dropped = { textDecoration: "line-through", opacity: "0.45" };
  const looks: Array<[ReviewLineLook, vscode.DecorationRenderOptions]> = [
    ["added", { isWholeLine: true, backgroundColor: added, ...ruler("editorOverviewRuler.addedForeground") }],
    ["removed", { isWholeLine: true, backgroundColor: removed, textDecoration: "line-through", opacity: "0.7", ...ruler("editorOverviewRuler.deletedForeground") }],
    ["accepted-added", { isWholeLine: true, backgroundColor: added, fontWeight: "bold" }],
    ["accepted-removed", { isWholeLine: true, ...dropped }],
    ["rejected-added", { isWholeLine: true, ...dropped }],
    ["rejected-removed", { isWholeLine: true }],
  ];
  return new Map(looks.map(([look, options]) => [look, vscode.window.createTextEditorDecorationType(options)]));
}
