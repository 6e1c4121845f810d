// The "Larik" chat view in the activity bar: a webview fed from the session's transcript.
//
// The webview may be destroyed whenever it is hidden (no retainContextWhenHidden): on every
// (re)load it says `ready` and gets a full snapshot, then incremental messages. Content is
// locked down by a CSP that allows only our bundle (by nonce) and our stylesheet.

import { randomBytes } from "node:crypto";
import * as vscode from "vscode";
import type { SessionController } from "../session";
import type { TranscriptChange } from "../state/transcript";
import type { HostToWebview, PermissionsView, WebviewToHost } from "../webview/messages";

export const CHAT_VIEW_ID = "larik.chat";

export interface ChatActions {
  prompt(text: string): void;
  cancel(): void;
  stopSubagent(sessionId: string): void;
  loadSession(sessionId: string): void;
  setMode(id: string): void;
  setModel(id: string): void;
  answerPermission(key: number, optionId: string, feedback?: string): void;
  viewDiff(key: number): void;
  openLocation(path: string, line?: number): void;
  /** Opens one of a tool call's diffs in the editor. */
  openDiff(toolCallId: string, index: number): void;
  /** Undoes back to before the turn that took checkpoint `checkpointId`. */
  undoTurn(checkpointId: string): void;
  restartAgent(): Promise<void>;
}

/** What the chat needs to know of the reviews in the editor. */
export interface HunkReviews {
  /** The permission's edit is being decided hunk by hunk in the editor. */
  isReviewingHunks(key: number): boolean;
  readonly onDidChangeReviewing: vscode.Event<void>;
}

export function permissionsView(controller: SessionController, reviews?: Pick<HunkReviews, "isReviewingHunks">): PermissionsView {
  const current = controller.permissions.current;
  if (!current) return { queued: 0 };
  const { request } = current;
  const input = (request.toolCall.rawInput ?? {}) as { command?: unknown; description?: unknown; sandbox?: unknown };
  const command = typeof input.command === "string" ? input.command : undefined;
  const description = typeof input.description === "string" && input.description.trim() ? input.description.trim() : undefined;
  // A command is named by its description: the agent's title repeats the command with raw backticks.
  const title = command !== undefined ? (description ?? "Run a command") : (request.toolCall.title ?? request.toolCall.toolCallId);
  // One place decides: while the hunks are decided in the editor, the card offers no options.
  const reviewing = current.diff !== undefined && reviews?.isReviewingHunks(current.key) === true;
  // A subagent's request comes under its own session id: the card says which one asks.
  const subagent = controller.subagentAsking(request);
  return {
    current: {
      key: current.key,
      toolCallId: request.toolCall.toolCallId,
      title,
      ...(command !== undefined ? { command, outsideSandbox: input.sandbox === false } : {}),
      toolKind: request.toolCall.kind ?? "other",
      options: reviewing ? [] : request.options.map((o) => ({ optionId: o.optionId, name: o.name, kind: o.kind })),
      ...(current.diff ? { diffPath: current.diff.path } : {}),
      ...(reviewing ? { reviewingHunks: true } : {}),
      acceptsFeedback: controller.larik.permissionFeedback === true,
      ...(subagent !== undefined ? { subagent } : {}),
    },
    queued: controller.permissions.size - 1,
  };
}

export class ChatViewProvider implements vscode.WebviewViewProvider, vscode.Disposable {
  #view: vscode.WebviewView | undefined;
  #disposables: vscode.Disposable[] = [];
  #viewDisposables: vscode.Disposable[] = [];

  constructor(
    private readonly extensionUri: vscode.Uri,
    private readonly controller: SessionController,
    private readonly actions: ChatActions,
    private readonly reviews: HunkReviews,
  ) {
    const unsubscribe = controller.transcript.onChange((change) => this.#forward(change));
    const unsubscribeSubagents = controller.subagents.onChange((subagent) => this.post({ type: "subagent", subagent }));
    const postPermissions = () => this.post({ type: "permissions", permissions: permissionsView(controller, reviews) });
    const unsubscribePermissions = controller.permissions.onChange(postPermissions);
    controller.onAttachmentsChange(() => this.post({ type: "context", context: this.#context() }));
    this.#disposables.push({ dispose: unsubscribe }, { dispose: unsubscribeSubagents }, { dispose: unsubscribePermissions }, reviews.onDidChangeReviewing(postPermissions));
  }

  get visible(): boolean {
    return this.#view?.visible ?? false;
  }

  resolveWebviewView(view: vscode.WebviewView): void {
    this.#view = view;
    for (const d of this.#viewDisposables.splice(0)) d.dispose();
    const roots = [vscode.Uri.joinPath(this.extensionUri, "dist"), vscode.Uri.joinPath(this.extensionUri, "media")];
    view.webview.options = { enableScripts: true, localResourceRoots: roots };
    view.webview.html = this.#html(view.webview);
    this.#viewDisposables.push(
      view.webview.onDidReceiveMessage((message: WebviewToHost) => this.#receive(message)),
      view.onDidDispose(() => {
        if (this.#view === view) this.#view = undefined;
      }),
    );
  }

  post(message: HostToWebview): void {
    void this.#view?.webview.postMessage(message);
  }

  #context() {
    return this.controller.attachments.map((a) => ({ id: a.id, label: a.label }));
  }

  #snapshot(): HostToWebview {
    const { transcript } = this.controller;
    return {
      type: "snapshot",
      items: structuredClone(transcript.items),
      subagents: this.controller.subagents.views(),
      session: structuredClone(transcript.session),
      permissions: permissionsView(this.controller, this.reviews),
      context: this.#context(),
    };
  }

  #forward(change: TranscriptChange): void {
    switch (change.kind) {
      case "reset":
        this.post(this.#snapshot());
        break;
      case "item":
        this.post({ type: "item", item: structuredClone(change.item) });
        break;
      case "append":
        this.post({ type: "append", id: change.id, text: change.text });
        break;
      case "session":
        this.post({ type: "session", session: structuredClone(this.controller.transcript.session) });
        break;
    }
  }

  #receive(message: WebviewToHost): void {
    switch (message.type) {
      case "ready":
        this.post(this.#snapshot());
        break;
      case "prompt":
        this.actions.prompt(message.text);
        break;
      case "cancel":
        this.actions.cancel();
        break;
      case "stopSubagent":
        this.actions.stopSubagent(message.sessionId);
        break;
      case "answerPermission":
        this.actions.answerPermission(message.key, message.optionId, message.feedback);
        break;
      case "viewDiff":
        this.actions.viewDiff(message.key);
        break;
      case "setMode":
        this.actions.setMode(message.id);
        break;
      case "setModel":
        this.actions.setModel(message.id);
        break;
      case "loadSession":
        this.actions.loadSession(message.sessionId);
        break;
      case "removeContext":
        this.controller.detachAttachment(message.id);
        break;
      case "restart":
        void this.actions.restartAgent();
        break;
      case "openLocation":
        this.actions.openLocation(message.path, message.line);
        break;
      case "openDiff":
        this.actions.openDiff(message.toolCallId, message.index);
        break;
      case "undo":
        this.actions.undoTurn(message.checkpointId);
        break;
    }
  }

  #html(webview: vscode.Webview): string {
    const nonce = randomBytes(16).toString("base64");
    const script = webview.asWebviewUri(vscode.Uri.joinPath(this.extensionUri, "dist", "webview.js"));
    const style = webview.asWebviewUri(vscode.Uri.joinPath(this.extensionUri, "media", "chat.css"));
    const csp = [
      "default-src 'none'",
      `style-src ${webview.cspSource}`,
      `script-src 'nonce-${nonce}'`,
      `img-src ${webview.cspSource} data:`,
      `font-src ${webview.cspSource}`,
    ].join("; ");
    return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<link rel="stylesheet" href="${style}">
<title>Larik</title>
</head>
<body>
<div id="app"></div>
<script nonce="${nonce}" src="${script}"></script>
</body>
</html>`;
  }

  dispose(): void {
    for (const d of [...this.#viewDisposables.splice(0), ...this.#disposables.splice(0)]) d.dispose();
  }
}
