// One conversation with the agent over one connection: the ACP client side of Larik.
//
// It owns the transcript, the permission queue and the attachments of the next prompt, answers
// the agent's requests (permission, fs) and turns user intents into ACP calls. The editor is
// reached only through `EditorHost`, so the whole flow runs under plain Node in tests.
//
// Invariants:
// - at most one turn runs at a time; `cancel()` sends `session/cancel` and answers every pending
//   permission request of the session with `cancelled`, as ACP requires;
// - updates of other sessions (a stale one after "new session") are ignored, but for the
//   session's subagents: child sessions announced by `subagent_update`, whose updates and
//   permission requests are routed to them (src/state/subagents.ts), during a turn or after it
//   (a background task can outlive the turn that started it);
// - updates that arrive while `session/new` is answered, before its session id is known here
//   (the agent announces the new session's commands right after its answer, and both can come
//   in one read), are held and applied once it is known;
// - the status shown to the user is derived here and only here: waiting (a permission is pending)
//   beats working (a turn runs) beats idle;
// - after each turn (and after a load) the agent's checkpoints are asked for and placed on the
//   chat's turns (src/state/checkpoints.ts); an undo runs only between turns, and marks the turn
//   it went back to before, with every later one, undone.
//
// This module does not import `vscode`.

import { ErrorCodes, ResponseError, type Connection } from "./connection";
import {
  Methods,
  PROTOCOL_VERSION,
  type ClientCapabilities,
  type ContentBlock,
  type InitializeResponse,
  type ListSessionsResponse,
  type LoadSessionResponse,
  type NewSessionResponse,
  type PromptResponse,
  type ReadTextFileRequest,
  type ReadTextFileResponse,
  type RequestPermissionRequest,
  type RequestPermissionResponse,
  type SessionNotification,
  type SetSessionConfigOptionResponse,
  type WriteTextFileRequest,
} from "./protocol/acp";
import {
  agentCapabilities,
  CHECKPOINTS_METHOD,
  checkpointsOf,
  DIAGNOSTICS_METHOD,
  EDITOR_CONTEXT_METHOD,
  META_KEY,
  UNDO_METHOD,
  undoResponseOf,
  type CheckpointInfo,
  type CheckpointsRequest,
  type DiagnosticsRequest,
  type DiagnosticsResponse,
  type EditorContextParams,
  type LarikAgentCapabilities,
  type LarikClientCapabilities,
  type UndoRequest,
  type UndoResponse,
} from "./protocol/larik";
import { subagentUpdateOf, type SubagentCapabilities } from "./protocol/subagents";
import { placeLoaded, reconcile, turnOfCheckpoint, undoSummary, type EndedTurn } from "./state/checkpoints";
import { decisionOf, PermissionQueue } from "./state/permissions";
import { Subagents } from "./state/subagents";
import { configOptionOf, Transcript } from "./state/transcript";
import type { AgentStatus, ContextChip } from "./webview/messages";

/** A past session, as the "Load Past Session…" picker lists it. */
export interface SessionListEntry {
  sessionId: string;
  title: string;
  updatedAt?: string;
}

export interface EditorHost {
  /** The text of a file, unsaved editor content first; `line` is 1-based. */
  readTextFile(params: ReadTextFileRequest): Promise<string>;
  /** Writes a file through the editor so the change can be undone. */
  writeTextFile(params: WriteTextFileRequest): Promise<void>;
  /** What the user is looking at, for `_larik/editor_context`. */
  editorContext(): Omit<EditorContextParams, "sessionId"> | undefined;
  /** A file's problems from the editor's own language servers, for `_larik/diagnostics`; without it the answer is `null`. */
  diagnostics?(params: DiagnosticsRequest, signal: AbortSignal): Promise<DiagnosticsResponse>;
}

export interface SessionOptions {
  cwd: string;
  clientVersion: string;
  sendEditorContext: () => boolean;
  log: (level: "info" | "warn" | "error", message: string) => void;
}

/** Something attached to the next prompt, such as a selection. */
export interface Attachment extends ContextChip {
  block: ContentBlock;
}

// `subagents` is ACP 1.20's, not yet in the SDK's types: with it the agent shows each subagent
// as a child session instead of labelling its calls inside this one.
export const CLIENT_CAPABILITIES: ClientCapabilities & { subagents: SubagentCapabilities } = {
  fs: { readTextFile: true, writeTextFile: true },
  terminal: false,
  subagents: {},
  _meta: { [META_KEY]: { hunkReview: true, diagnostics: true } satisfies LarikClientCapabilities },
};

function describeError(error: unknown): string {
  if (error instanceof ResponseError) return `${error.message} (${error.code})`;
  return error instanceof Error ? error.message : String(error);
}

export class SessionController {
  readonly transcript = new Transcript();
  readonly permissions = new PermissionQueue();
  readonly subagents = new Subagents();
  sessionId: string | undefined;
  initializeResponse: InitializeResponse | undefined;
  #connection: Connection | undefined;
  #attachments: Attachment[] = [];
  #attachmentListeners: Array<() => void> = [];
  #turn: { sessionId: string; requestId: number | string } | undefined;
  #loading = false;
  #undoing = false;
  /** The agent answered `_larik/checkpoints` with "method not found": it keeps none. */
  #noCheckpoints = false;
  /** Updates received while `session/new` is being answered, with no session id yet to route by. */
  #early: SessionNotification[] | undefined;
  #host: EditorHost;
  #options: SessionOptions;

  constructor(host: EditorHost, options: SessionOptions) {
    this.#host = host;
    this.#options = options;
    this.permissions.onChange(() => {
      this.subagents.setWaiting(new Set(this.permissions.all().map((p) => p.request.sessionId)));
      this.#refreshStatus();
    });
    this.transcript.updateSession({ cwd: options.cwd });
  }

  get larik(): LarikAgentCapabilities {
    return agentCapabilities(this.initializeResponse);
  }

  /** The session's directory: the checkpoints' paths are relative to it. */
  get cwd(): string {
    return this.#options.cwd;
  }

  get turnRunning(): boolean {
    return this.#turn !== undefined;
  }

  get connected(): boolean {
    return this.#connection !== undefined && !this.#connection.isClosed;
  }

  get attachments(): readonly Attachment[] {
    return this.#attachments;
  }

  onAttachmentsChange(listener: () => void): void {
    this.#attachmentListeners.push(listener);
  }

  #attachmentsChanged(): void {
    for (const listener of this.#attachmentListeners) listener();
  }

  attach(attachment: Attachment): void {
    this.#attachments = [...this.#attachments.filter((a) => a.id !== attachment.id), attachment];
    this.#attachmentsChanged();
  }

  detachAttachment(id: string): void {
    this.#attachments = this.#attachments.filter((a) => a.id !== id);
    this.#attachmentsChanged();
  }

  #setStatus(status: AgentStatus, detail?: string): void {
    this.transcript.updateSession({ status, statusDetail: detail });
  }

  #refreshStatus(): void {
    const { status } = this.transcript.session;
    if (status === "disabled" || status === "stopped" || status === "starting") return;
    this.#setStatus(this.permissions.size > 0 ? "waiting" : this.#turn ? "working" : "idle");
  }

  /** Shown instead of the prompt box when no agent may run (untrusted workspace). */
  disable(reason: string): void {
    this.#setStatus("disabled", reason);
  }

  starting(): void {
    this.#setStatus("starting");
  }

  /** Connects to a freshly started agent: initialize, then a new session. */
  async connect(connection: Connection): Promise<void> {
    this.#connection = connection;
    // Another agent (a restart with other settings) may keep checkpoints.
    this.#noCheckpoints = false;
    this.#registerHandlers(connection);
    connection.onClose((reason) => {
      if (this.#connection !== connection) return;
      this.#connection = undefined;
      this.#turn = undefined;
      this.permissions.cancelAll();
      this.transcript.settleUnfinishedTools("failed");
      this.subagents.settle();
      this.#setStatus("stopped", reason);
    });
    this.#setStatus("starting");
    this.initializeResponse = await connection.call<InitializeResponse>(Methods.initialize, {
      protocolVersion: PROTOCOL_VERSION,
      clientCapabilities: CLIENT_CAPABILITIES,
      clientInfo: { name: "larik-vscode", title: "Larik for VS Code", version: this.#options.clientVersion },
    });
    if (this.initializeResponse.protocolVersion !== PROTOCOL_VERSION) {
      throw new Error(`the agent speaks ACP version ${this.initializeResponse.protocolVersion}, this extension speaks ${PROTOCOL_VERSION}`);
    }
    this.transcript.updateSession({ canLoadSessions: this.canLoadSessions });
    await this.newSession();
  }

  get canLoadSessions(): boolean {
    const caps = this.initializeResponse?.agentCapabilities;
    return Boolean(caps?.loadSession && caps.sessionCapabilities?.list);
  }

  #requireConnection(): Connection {
    if (!this.#connection || this.#connection.isClosed) throw new Error("the agent is not running");
    return this.#connection;
  }

  #registerHandlers(connection: Connection): void {
    connection.onNotification(Methods.sessionUpdate, (params: SessionNotification) => this.#onUpdate(params));
    connection.onRequest(Methods.requestPermission, (params: RequestPermissionRequest, { signal }) => this.#onPermission(params, signal));
    connection.onRequest(Methods.readTextFile, async (params: ReadTextFileRequest): Promise<ReadTextFileResponse> => {
      try {
        return { content: await this.#host.readTextFile(params) };
      } catch (error) {
        throw new ResponseError(-32002, `cannot read ${params.path}: ${describeError(error)}`);
      }
    });
    connection.onRequest(Methods.writeTextFile, async (params: WriteTextFileRequest) => {
      try {
        await this.#host.writeTextFile(params);
        return {};
      } catch (error) {
        throw new ResponseError(-32603, `cannot write ${params.path}: ${describeError(error)}`);
      }
    });
    // A host without the editor's servers says so (`null`), and the agent asks its own.
    connection.onRequest(DIAGNOSTICS_METHOD, async (params: DiagnosticsRequest, { signal }): Promise<DiagnosticsResponse> => {
      if (!this.#host.diagnostics || typeof params?.path !== "string") return { diagnostics: null };
      try {
        return await this.#host.diagnostics({ ...params, waitMs: Number.isFinite(params.waitMs) ? params.waitMs : 0 }, signal);
      } catch (error) {
        throw new ResponseError(-32603, `no diagnostics for ${params.path}: ${describeError(error)}`);
      }
    });
  }

  #onUpdate(params: SessionNotification): void {
    if (params.sessionId === undefined) return;
    if (this.sessionId === undefined && this.#early) {
      this.#early.push(params);
      return;
    }
    if (params.sessionId !== this.sessionId) {
      this.subagents.applyChild(params.sessionId, params.update);
      return;
    }
    const subagent = subagentUpdateOf(params.update);
    if (subagent) this.subagents.update(subagent);
    else this.transcript.apply(params.update);
  }

  async #onPermission(params: RequestPermissionRequest, signal: AbortSignal): Promise<RequestPermissionResponse> {
    // The request's tool call also updates the card shown in the chat (or in its subagent).
    const update = { sessionUpdate: "tool_call_update", ...params.toolCall } as const;
    if (params.sessionId === this.sessionId) this.transcript.apply(update);
    else this.subagents.applyChild(params.sessionId, update);
    // Always the user's to answer: the agent asks only about what its own rules leave open.
    const response = await this.permissions.enqueue(params, signal);
    // The card records what was decided, as the other editors' chats do.
    const decision = decisionOf(params, response);
    if (decision && params.sessionId === this.sessionId) this.transcript.setDecision(params.toolCall.toolCallId, decision);
    return response;
  }

  async newSession(): Promise<void> {
    const connection = this.#requireConnection();
    if (this.#turn) this.cancel();
    const previous = this.sessionId;
    this.sessionId = undefined;
    if (previous) this.permissions.cancelAll(previous);
    this.#forgetSubagents();
    this.transcript.reset();
    const early: SessionNotification[] = [];
    this.#early = early;
    let response: NewSessionResponse;
    try {
      response = await connection.call<NewSessionResponse>(Methods.sessionNew, { cwd: this.#options.cwd, mcpServers: [] });
    } finally {
      if (this.#early === early) this.#early = undefined;
    }
    this.sessionId = response.sessionId;
    this.transcript.updateSession({ sessionId: response.sessionId });
    this.transcript.setModesAndOptions(response.modes ?? null, response.configOptions ?? null);
    for (const params of early) this.#onUpdate(params);
    this.#setStatus("idle");
  }

  async listSessions(): Promise<SessionListEntry[]> {
    const connection = this.#requireConnection();
    const entries: SessionListEntry[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < 20; page++) {
      const response: ListSessionsResponse = await connection.call(Methods.sessionList, { cwd: this.#options.cwd, ...(cursor ? { cursor } : {}) });
      for (const s of response.sessions) {
        entries.push({ sessionId: s.sessionId, title: s.title?.trim() || s.sessionId, ...(s.updatedAt ? { updatedAt: s.updatedAt } : {}) });
      }
      if (!response.nextCursor) break;
      cursor = response.nextCursor;
    }
    return entries;
  }

  /** Replaces the conversation with a past session; the agent replays its history first. */
  async loadSession(sessionId: string): Promise<void> {
    const connection = this.#requireConnection();
    if (this.#turn) this.cancel();
    if (this.sessionId) this.permissions.cancelAll(this.sessionId);
    this.#forgetSubagents();
    this.transcript.reset();
    this.sessionId = sessionId;
    this.#loading = true;
    this.#setStatus("working");
    try {
      const response = await connection.call<LoadSessionResponse>(Methods.sessionLoad, { sessionId, cwd: this.#options.cwd, mcpServers: [] });
      this.transcript.updateSession({ sessionId });
      this.transcript.setModesAndOptions(response?.modes ?? null, response?.configOptions ?? null);
    } finally {
      this.#loading = false;
      this.#setStatus("idle");
    }
    // The replayed turns that changed files can be undone as well.
    const list = await this.#checkpointsQuietly(sessionId);
    if (list && this.sessionId === sessionId) {
      for (const { id, checkpoint } of placeLoaded(this.transcript.turns(), list)) this.transcript.setCheckpoint(id, checkpoint);
    }
  }

  /** Sends a prompt and resolves when the turn ends. */
  async prompt(text: string): Promise<string | undefined> {
    const connection = this.#requireConnection();
    const sessionId = this.sessionId;
    if (!sessionId || this.#loading) throw new Error("no session yet");
    if (this.#turn) throw new Error("a turn is already running");
    if (this.#undoing) throw new Error("an undo is running");
    const attachments = this.#attachments;
    this.#attachments = [];
    this.#attachmentsChanged();
    const ended: EndedTurn = { id: this.transcript.addUserMessage(text, attachments.map((a) => a.label)), text, startedAt: Date.now() };
    this.pushEditorContext();
    const prompt: ContentBlock[] = [{ type: "text", text }, ...attachments.map((a) => a.block)];
    const { id, response } = connection.request<PromptResponse>(Methods.sessionPrompt, { sessionId, prompt });
    this.#turn = { sessionId, requestId: id };
    this.#refreshStatus();
    try {
      const result = await response;
      if (result.stopReason === "cancelled") {
        this.transcript.settleUnfinishedTools("cancelled");
        this.transcript.addNotice("info", "Cancelled.");
      } else if (result.stopReason !== "end_turn") {
        this.transcript.addNotice("warning", `The turn ended: ${result.stopReason.replace(/_/g, " ")}.`);
      }
      return result.stopReason;
    } catch (error) {
      if (this.sessionId === sessionId) this.transcript.addNotice("error", `The agent failed: ${describeError(error)}`);
      throw error;
    } finally {
      if (this.#turn?.requestId === id) this.#turn = undefined;
      if (this.sessionId === sessionId) this.transcript.settlePlan();
      this.permissions.cancelAll(sessionId);
      this.#refreshStatus();
      await this.#syncCheckpoints(sessionId, ended);
    }
  }

  /** The session's checkpoints, oldest first; undefined when the agent keeps none (a plain ACP agent). */
  async listCheckpoints(): Promise<CheckpointInfo[] | undefined> {
    const connection = this.#requireConnection();
    const sessionId = this.sessionId;
    if (!sessionId) throw new Error("no session yet");
    if (this.#noCheckpoints) return undefined;
    try {
      return checkpointsOf(await connection.call(CHECKPOINTS_METHOD, { sessionId } satisfies CheckpointsRequest));
    } catch (error) {
      if (!(error instanceof ResponseError && error.code === ErrorCodes.MethodNotFound)) throw error;
      this.#noCheckpoints = true;
      return undefined;
    }
  }

  async #checkpointsQuietly(sessionId: string): Promise<CheckpointInfo[] | undefined> {
    if (this.#noCheckpoints || this.sessionId !== sessionId || !this.connected) return undefined;
    try {
      return await this.listCheckpoints();
    } catch (error) {
      this.#options.log("warn", `the checkpoints could not be listed: ${describeError(error)}`);
      return undefined;
    }
  }

  /** Places the checkpoint the turn that ended took, and marks what the agent undid meanwhile. */
  async #syncCheckpoints(sessionId: string, ended?: EndedTurn): Promise<void> {
    const list = await this.#checkpointsQuietly(sessionId);
    if (!list || this.sessionId !== sessionId) return;
    const found = reconcile(this.transcript.turns(), list, ended);
    if (found.undoneFrom) this.transcript.markUndone(found.undoneFrom, ended?.id);
    if (found.assign) this.transcript.setCheckpoint(found.assign.id, found.assign.checkpoint);
  }

  /**
   * Undoes back to before the turn that took `checkpointId` (the latest when absent): the agent
   * puts the files back and forgets that turn and the later ones, which the chat marks undone.
   * Rejects with the agent's error (-32602) when there is nothing to undo or no such checkpoint.
   */
  async undo(checkpointId?: string): Promise<UndoResponse> {
    const connection = this.#requireConnection();
    const sessionId = this.sessionId;
    if (!sessionId || this.#loading) throw new Error("no session yet");
    if (this.#turn) throw new Error("a turn is running: undo once it has ended");
    if (this.#undoing) throw new Error("an undo is already running");
    this.#undoing = true;
    try {
      const params: UndoRequest = { sessionId, ...(checkpointId !== undefined ? { checkpointId } : {}) };
      const undone = undoResponseOf(await connection.call(UNDO_METHOD, params));
      if (!undone) throw new Error("the agent's answer to _larik/undo names no checkpoint");
      if (this.sessionId === sessionId) {
        const turn = turnOfCheckpoint(this.transcript.turns(), undone.checkpoint);
        if (turn) this.transcript.markUndone(turn.id);
        this.transcript.addNotice("info", undoSummary(undone));
      }
      return undone;
    } catch (error) {
      // A checkpoint the chat offered may have gone meanwhile: the chat learns what is left.
      if (error instanceof ResponseError) await this.#syncCheckpoints(sessionId);
      throw error;
    } finally {
      this.#undoing = false;
    }
  }

  /** Cancels the running turn, answering its pending permission requests with `cancelled`. */
  cancel(): void {
    const turn = this.#turn;
    if (!turn || !this.#connection) return;
    this.permissions.cancelAll(turn.sessionId);
    // The turn's own subagents (their task call still runs) stop with it, and the agent does not
    // withdraw their requests: answer them too. A background task's call has returned; it goes on.
    for (const child of this.subagents.running()) {
      const call = this.subagents.get(child)?.toolCallId;
      if (call !== undefined && this.#toolRuns(call)) this.permissions.cancelAll(child);
    }
    this.#connection.notify(Methods.sessionCancel, { sessionId: turn.sessionId });
  }

  #toolRuns(toolCallId: string): boolean {
    const item = this.transcript.items.find((i) => i.id === `tool:${toolCallId}`);
    return item?.type === "tool" && (item.status === "pending" || item.status === "in_progress");
  }

  /**
   * Stops one subagent: `session/cancel` with the child's id, its open permission requests
   * answered `cancelled`, as for any session. The parent's turn goes on. False when the child
   * is unknown, has ended or cannot be stopped alone.
   */
  stopSubagent(sessionId: string): boolean {
    const connection = this.#connection;
    if (!connection || connection.isClosed || !this.subagents.markStopping(sessionId)) return false;
    this.permissions.cancelAll(sessionId);
    connection.notify(Methods.sessionCancel, { sessionId });
    return true;
  }

  /** The title of the subagent a permission request comes from; undefined for the session's own. */
  subagentAsking(request: RequestPermissionRequest): string | undefined {
    return request.sessionId !== this.sessionId ? this.subagents.get(request.sessionId)?.title : undefined;
  }

  /** Before a new or loaded session: the old one's children and their requests go. */
  #forgetSubagents(): void {
    for (const child of this.subagents.views()) this.permissions.cancelAll(child.sessionId);
    this.subagents.clear();
  }

  /** Sends `_larik/editor_context` when the agent reads it and the user allows it. */
  pushEditorContext(): void {
    if (!this.sessionId || !this.#connection || !this.larik.editorContext || !this.#options.sendEditorContext()) return;
    const context = this.#host.editorContext();
    if (!context) return;
    this.#connection.notify(EDITOR_CONTEXT_METHOD, { sessionId: this.sessionId, ...context } satisfies EditorContextParams);
  }

  async setMode(modeId: string): Promise<void> {
    const connection = this.#requireConnection();
    const sessionId = this.sessionId;
    if (!sessionId) return;
    const option = configOptionOf(this.transcript.configOptions, "mode");
    if (option) {
      await this.setConfigOption(option.id, modeId);
      return;
    }
    await connection.call(Methods.sessionSetMode, { sessionId, modeId });
    const modes = this.transcript.modes;
    if (modes) this.transcript.setModesAndOptions({ ...modes, currentModeId: modeId }, undefined);
  }

  async setModel(value: string): Promise<void> {
    const option = configOptionOf(this.transcript.configOptions, "model");
    await this.setConfigOption(option?.id ?? "model", value);
  }

  async setConfigOption(configId: string, value: string): Promise<void> {
    const connection = this.#requireConnection();
    const sessionId = this.sessionId;
    if (!sessionId) return;
    const response = await connection.call<SetSessionConfigOptionResponse>(Methods.sessionSetConfigOption, { sessionId, configId, value });
    if (response?.configOptions) this.transcript.setModesAndOptions(undefined, response.configOptions);
  }

  /** The agent stopped or will be stopped: nothing more can be answered. */
  disconnect(reason: string): void {
    const connection = this.#connection;
    this.#connection = undefined;
    this.#turn = undefined;
    this.permissions.cancelAll();
    connection?.close(reason);
    this.#setStatus("stopped", reason);
  }
}
