// The extension's context object: it owns the agent process, the session controller, the views
// and one list of disposables, and it is the only place where they are wired together.
//
// Invariants: no agent process runs in an untrusted workspace; at most one agent process runs at
// a time; disposing the context stops the agent (its whole process group).

import * as os from "node:os";
import * as vscode from "vscode";
import { AgentProcess, API_KEY_VARIABLES, resolveServerCommand } from "./agentProcess";
import { findBinary, missingBinaryMessage } from "./binary";
import { Config } from "./config";
import { EditorDiagnostics } from "./editor/diagnostics";
import * as documents from "./editor/documents";
import { currentEditorContext, selectionAttachment } from "./editor/editorContext";
import { SessionController } from "./session";
import { StatusBar } from "./statusBar";
import { ChangeDiffs } from "./views/changeDiffs";
import { CHAT_VIEW_ID, ChatViewProvider, type ChatActions } from "./views/chatView";
import { DiffReview } from "./views/diffReview";
import { availableInstallers } from "./views/installOffer";
import { PermissionNotice } from "./views/permissionNotice";
import { noticeRetiredAutoApprove } from "./views/retiredSettings";
import { StartFailure } from "./views/startFailure";
import { TurnUndo } from "./views/undo";

const SECRET_PREFIX = "larik.apiKey.";
/** How long after a failed first start the agent is tried once more. */
const ACTIVATION_RETRY_MS = 1500;
/** How often a failed first start is tried again (after 1.5, 3, 4.5 and 6 s more). */
const ACTIVATION_RETRIES = 4;

export class Ctx implements vscode.Disposable, ChatActions {
  readonly config = new Config();
  readonly log: vscode.LogOutputChannel;
  readonly controller: SessionController;
  readonly statusBar: StatusBar;
  readonly chatView: ChatViewProvider;
  readonly review: DiffReview;
  readonly changes: ChangeDiffs;
  readonly undo: TurnUndo;
  readonly startFailure: StartFailure;
  #agent: AgentProcess | undefined;
  #starting: Promise<void> | undefined;
  #disposables: vscode.Disposable[] = [];
  #contextTimer: ReturnType<typeof setTimeout> | undefined;
  #retryTimer: ReturnType<typeof setTimeout> | undefined;

  constructor(readonly extension: vscode.ExtensionContext) {
    this.log = vscode.window.createOutputChannel("Larik", { log: true });
    const version = String((extension.extension?.packageJSON as { version?: string } | undefined)?.version ?? "0.0.0");
    // From activation on, so that a file the servers already reported on is answered at once.
    const diagnostics = new EditorDiagnostics({
      uriOf: (path) => vscode.Uri.file(path),
      getDiagnostics: (uri) => vscode.languages.getDiagnostics(uri as vscode.Uri),
      onDidChangeDiagnostics: (listener) => vscode.languages.onDidChangeDiagnostics((event) => listener(event.uris)),
      // A save also fires a change (of the dirty state) with no content change: not a new text.
      onDidChangeText: (listener) =>
        vscode.Disposable.from(
          vscode.workspace.onDidChangeTextDocument(
            (event) => event.contentChanges.length > 0 && listener(event.document.uri, { language: event.document.languageId, opened: false }),
          ),
          vscode.workspace.onDidOpenTextDocument((document) => listener(document.uri, { language: document.languageId, opened: true })),
        ),
      open: (uri) => vscode.workspace.openTextDocument(uri as vscode.Uri),
    });
    this.#disposables.push(diagnostics);
    this.controller = new SessionController(
      {
        readTextFile: documents.readTextFile,
        writeTextFile: documents.writeTextFile,
        editorContext: currentEditorContext,
        diagnostics: (params, signal) => diagnostics.answer(params, signal),
      },
      {
        cwd: this.cwd,
        clientVersion: version,
        sendEditorContext: () => this.config.editorContext,
        log: (level, message) => this.log[level](message),
      },
    );
    this.statusBar = new StatusBar();
    this.startFailure = new StartFailure(extension.extensionUri, this.log);
    this.review = new DiffReview(this.controller, this.config, this.log);
    this.changes = new ChangeDiffs();
    this.undo = new TurnUndo(this.controller, this.log);
    this.chatView = new ChatViewProvider(extension.extensionUri, this.controller, this, this.review);
    const notice = new PermissionNotice(this.controller, () => this.chatView.visible, this.review);
    const unsubscribe = this.controller.transcript.onChange((change) => {
      if (change.kind === "session" || change.kind === "reset") this.#sessionChanged();
    });
    this.#disposables.push(
      this.log,
      this.statusBar,
      this.chatView,
      this.review,
      this.changes,
      notice,
      { dispose: unsubscribe },
      vscode.window.registerWebviewViewProvider(CHAT_VIEW_ID, this.chatView),
      vscode.workspace.onDidChangeConfiguration((event) => this.#configurationChanged(event)),
      vscode.workspace.onDidGrantWorkspaceTrust(() => void this.startAgent()),
      vscode.window.onDidChangeActiveTextEditor(() => this.#scheduleEditorContext()),
      vscode.window.onDidChangeTextEditorSelection(() => this.#scheduleEditorContext()),
    );
  }

  get cwd(): string {
    return vscode.workspace.workspaceFolders?.[0]?.uri.fsPath ?? os.homedir();
  }

  push(...disposables: vscode.Disposable[]): void {
    this.#disposables.push(...disposables);
  }

  /** Starts the agent unless the workspace is untrusted. */
  async activate(): Promise<void> {
    void noticeRetiredAutoApprove(this.config.retiredAutoApprove, this.extension.globalState).catch(this.#report("the settings notice"));
    if (!vscode.workspace.isTrusted) {
      this.controller.disable("Larik only runs in trusted workspaces. Trust this workspace to start it.");
      this.log.info("untrusted workspace: the agent is not started");
      return;
    }
    await this.startAgent();
    // Right after a window reload the editor can hand its settings over late (seen taking
    // several seconds under load): a first start that failed is tried again with the settings
    // read again, a few times, each wait longer than the last.
    this.#retryStart(1);
  }

  #retryStart(attempt: number): void {
    if (this.#agent || attempt > ACTIVATION_RETRIES) return;
    this.#retryTimer = setTimeout(() => {
      void (async () => {
        try {
          if (!this.#agent && !this.#starting) await this.startAgent();
        } catch (error) {
          this.log.info(`start attempt ${attempt + 1} failed: ${String(error)}`);
        } finally {
          // A failed start may throw: the next attempt is scheduled all the same.
          this.#retryStart(attempt + 1);
        }
      })();
    }, ACTIVATION_RETRY_MS * attempt);
  }

  #sessionChanged(): void {
    const session = this.controller.transcript.session;
    this.statusBar.show(session.status, session.statusDetail);
    void vscode.commands.executeCommand("setContext", "larik.turnRunning", this.controller.turnRunning);
    void vscode.commands.executeCommand("setContext", "larik.canLoadSessions", session.canLoadSessions);
  }

  #configurationChanged(event: vscode.ConfigurationChangeEvent): void {
    if (event.affectsConfiguration("larik.trace.protocol") && this.#agent) {
      this.#agent.connection.tracer = this.#tracer();
    }
    if (Config.affectsServer(event) && vscode.workspace.isTrusted) {
      // Nothing runs (it could not start, e.g. with settings the editor handed over late after a
      // window reload): start with the new settings, there is nothing to interrupt.
      if (!this.#agent) {
        void (this.#starting ?? Promise.resolve()).then(() => {
          if (!this.#agent) void this.startAgent();
        });
        return;
      }
      // An idle agent is restarted at once: no turn is cut short, and an agent started before
      // the settings arrived (a window reload hands them over late) would otherwise keep running
      // with the wrong binary or environment. A turn in progress is not interrupted: ask.
      if (!this.controller.turnRunning) {
        this.log.info("the server settings changed; restarting the idle agent");
        void this.restartAgent().catch(this.#report("Restarting the agent"));
        return;
      }
      void vscode.window.showInformationMessage("Larik's server settings changed.", "Restart Agent").then((choice) => {
        if (choice) void this.restartAgent();
      });
    }
  }

  #tracer() {
    return this.config.traceProtocol
      ? (direction: "send" | "receive", line: string) => this.log.info(`${direction === "send" ? "→" : "←"} ${line}`)
      : undefined;
  }

  async #storedKeys(): Promise<Record<string, string>> {
    const keys: Record<string, string> = {};
    for (const name of API_KEY_VARIABLES) {
      const value = await this.extension.secrets.get(SECRET_PREFIX + name);
      if (value) keys[name] = value;
    }
    return keys;
  }

  startAgent(): Promise<void> {
    this.#starting ??= this.#startAgent().finally(() => {
      this.#starting = undefined;
    });
    return this.#starting;
  }

  async #startAgent(): Promise<void> {
    if (!vscode.workspace.isTrusted) return;
    if (this.#agent) await this.stopAgent();
    const settings = this.config.server;
    const command = resolveServerCommand(settings, await this.#storedKeys(), process.env, this.cwd);
    // Looked up on the PATH the agent gets (`larik.server.env` may set one).
    const search = findBinary({ setting: settings.path, extensionPath: this.extension.extensionPath, env: command.env });
    if (!search.found) {
      const message = missingBinaryMessage(search);
      this.log.error(`${message} Looked in: ${search.looked.join(", ")}`);
      this.controller.disconnect(message);
      void this.startFailure.missing(message, {
        installers: search.setting ? [] : availableInstallers(command.env),
        env: command.env,
        retry: () => void this.startAgent(),
      });
      return;
    }
    command.command = search.found.path;
    this.log.info(`starting ${command.command} (${search.found.source}) ${command.args.join(" ")} in ${command.cwd}`);
    this.controller.starting();
    try {
      const tracer = this.#tracer();
      const agent = await AgentProcess.start(
        command,
        {
          onStderr: (line) => this.log.info(`[agent] ${line}`),
          onExit: (description, expected) => {
            (expected ? this.log.info : this.log.error).call(this.log, `the agent ${description}`);
            if (this.#agent === agent) this.#agent = undefined;
          },
        },
        { ...(tracer ? { tracer } : {}), onProtocolError: (message) => this.log.warn(message) },
      );
      this.#agent = agent;
      await this.controller.connect(agent.connection);
      const info = this.controller.initializeResponse?.agentInfo;
      this.log.info(`connected to ${info?.title ?? info?.name ?? "the agent"} ${info?.version ?? ""} (pid ${agent.pid})`);
      this.startFailure.cleared();
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      this.log.error(`the agent could not start: ${message}`);
      // A process that started but never connected (or never ran) is not the agent: a later
      // attempt must not take it for a running one.
      const failed = this.#agent;
      this.#agent = undefined;
      void failed?.stop().catch(() => undefined);
      this.controller.disconnect(message);
      // The binary is there but does not run or answer: its own checks can say why.
      void this.startFailure.failed(message, command);
    }
  }

  async stopAgent(): Promise<void> {
    const agent = this.#agent;
    this.#agent = undefined;
    this.controller.disconnect("the agent was stopped");
    await agent?.stop();
  }

  async restartAgent(): Promise<void> {
    await this.stopAgent();
    await this.startAgent();
  }

  #scheduleEditorContext(): void {
    if (!this.controller.larik.editorContext) return;
    clearTimeout(this.#contextTimer);
    this.#contextTimer = setTimeout(() => this.controller.pushEditorContext(), 500);
  }

  #report(action: string): (error: unknown) => void {
    return (error) => {
      const message = error instanceof Error ? error.message : String(error);
      this.log.error(`${action} failed: ${message}`);
      void vscode.window.showErrorMessage(`Larik: ${action} failed: ${message}`);
    };
  }

  // --- ChatActions, called by the chat view and by commands ---------------------------------

  prompt(text: string): void {
    if (text.trim() === "") return;
    this.controller.prompt(text).catch(this.#report("the prompt"));
  }

  cancel(): void {
    this.controller.cancel();
  }

  stopSubagent(sessionId: string): void {
    if (!this.controller.stopSubagent(sessionId)) this.log.info(`subagent ${sessionId} is not running: nothing to stop`);
  }

  newSession(): void {
    if (!this.controller.connected) {
      void this.startAgent();
      return;
    }
    this.controller.newSession().catch(this.#report("starting a new session"));
  }

  async pickSession(): Promise<void> {
    try {
      const sessions = await this.controller.listSessions();
      const picked = await vscode.window.showQuickPick(
        sessions.map((s) => ({ label: s.title, description: s.updatedAt ? new Date(s.updatedAt).toLocaleString() : "", sessionId: s.sessionId })),
        { placeHolder: sessions.length ? "Load a past session" : "No past sessions" },
      );
      if (picked) this.loadSession(picked.sessionId);
    } catch (error) {
      this.#report("listing sessions")(error);
    }
  }

  loadSession(sessionId: string): void {
    this.controller.loadSession(sessionId).catch(this.#report("loading the session"));
  }

  setMode(id: string): void {
    this.controller.setMode(id).catch(this.#report("changing the mode"));
  }

  setModel(id: string): void {
    this.controller.setModel(id).catch(this.#report("changing the model"));
  }

  answerPermission(key: number, optionId: string, feedback?: string): void {
    if (!this.controller.permissions.answer(key, { optionId, ...(feedback ? { feedback } : {}) })) {
      this.log.warn(`permission ${key} was already answered`);
    }
  }

  viewDiff(key: number): void {
    this.review.open(key).catch(this.#report("opening the diff"));
  }

  openDiff(toolCallId: string, index: number): void {
    const found = this.controller.transcript.diffOf(toolCallId, index);
    if (!found) {
      this.log.warn(`no diff ${index} of tool call ${toolCallId}`);
      return;
    }
    this.changes.open(toolCallId, index, found.diff, found.title).catch(this.#report("opening the diff"));
  }

  undoTurn(checkpointId: string): void {
    this.undo.turn(checkpointId).catch(this.#report("the undo"));
  }

  openLocation(path: string, line?: number): void {
    const position = new vscode.Position(Math.max(0, (line ?? 1) - 1), 0);
    void vscode.window.showTextDocument(vscode.Uri.file(path), { selection: new vscode.Range(position, position), preserveFocus: false });
  }

  async focusChat(): Promise<void> {
    await vscode.commands.executeCommand(`${CHAT_VIEW_ID}.focus`);
  }

  async askAboutSelection(): Promise<void> {
    const attachment = selectionAttachment();
    if (!attachment) {
      void vscode.window.showInformationMessage("Select some code first.");
      return;
    }
    this.controller.attach(attachment);
    await this.focusChat();
    this.chatView.post({ type: "focusPrompt" });
  }

  async setApiKey(): Promise<void> {
    const variable = await vscode.window.showQuickPick([...API_KEY_VARIABLES], { placeHolder: "Which key?" });
    if (!variable) return;
    const value = await vscode.window.showInputBox({ prompt: `${variable} for Larik (kept in the editor's secret storage)`, password: true, ignoreFocusOut: true });
    if (!value) return;
    await this.extension.secrets.store(SECRET_PREFIX + variable, value);
    const choice = await vscode.window.showInformationMessage(`${variable} stored. Restart the agent to use it?`, "Restart Agent");
    if (choice) await this.restartAgent();
  }

  async clearApiKeys(): Promise<void> {
    for (const name of API_KEY_VARIABLES) await this.extension.secrets.delete(SECRET_PREFIX + name);
    void vscode.window.showInformationMessage("Larik's stored API keys were removed.");
  }

  async dispose(): Promise<void> {
    clearTimeout(this.#contextTimer);
    clearTimeout(this.#retryTimer);
    const agent = this.#agent;
    this.#agent = undefined;
    this.controller.disconnect("the extension was deactivated");
    await agent?.stop(1000);
    for (const d of this.#disposables.splice(0).reverse()) d.dispose();
  }
}
