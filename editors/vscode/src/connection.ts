// A bidirectional JSON-RPC 2.0 peer over newline-delimited JSON, the framing ACP uses on stdio.
//
// Both sides send requests: the extension calls `session/prompt` while the agent calls
// `session/request_permission` or `fs/read_text_file`, so incoming requests are handled
// concurrently and never block the reader. Invariants:
// - one message per line, written compactly (JSON escapes every newline inside strings);
// - every incoming request gets exactly one answer, `-32601` when nobody handles its method;
// - `$/cancel_request` from the peer aborts the signal given to the handler of that request,
//   which still answers (a cancelled permission prompt answers `cancelled`);
// - when the stream ends, every request still waiting for an answer is rejected.
//
// This module does not import `vscode`, so it is tested under plain Node.

export type RequestId = number | string;

export const ErrorCodes = {
  ParseError: -32700,
  InvalidRequest: -32600,
  MethodNotFound: -32601,
  InvalidParams: -32602,
  InternalError: -32603,
  RequestCancelled: -32800,
} as const;

/** An error answer from the peer, or one a handler throws to choose the answer's code. */
export class ResponseError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
    this.name = "ResponseError";
  }
}

/** The connection closed before the peer answered. */
export class ConnectionClosedError extends Error {
  constructor(reason: string) {
    super(reason);
    this.name = "ConnectionClosedError";
  }
}

export interface RequestContext {
  id: RequestId;
  /** Aborted when the peer sends `$/cancel_request` for this request or the connection closes. */
  signal: AbortSignal;
}

export type RequestHandler = (params: any, context: RequestContext) => unknown;
export type NotificationHandler = (params: any) => void;

/** Where the raw lines go when protocol tracing is on. */
export type Tracer = (direction: "send" | "receive", line: string) => void;

/** The two ends of the byte stream: the agent's stdout and stdin. */
export interface ByteStreams {
  readable: NodeJS.ReadableStream;
  writable: NodeJS.WritableStream;
}

interface Pending {
  method: string;
  resolve: (value: unknown) => void;
  reject: (error: Error) => void;
}

export interface ConnectionOptions {
  tracer?: Tracer;
  /** Told about anything the peer got wrong: unparsable lines, answers to unknown ids. */
  onProtocolError?: (message: string) => void;
}

export class Connection {
  #writable: NodeJS.WritableStream;
  #nextId = 0;
  #pending = new Map<RequestId, Pending>();
  #incoming = new Map<RequestId, AbortController>();
  #requestHandlers = new Map<string, RequestHandler>();
  #notificationHandlers = new Map<string, NotificationHandler>();
  #closeListeners: Array<(reason: string) => void> = [];
  #closed: string | undefined;
  #buffer = "";
  #options: ConnectionOptions;

  constructor(streams: ByteStreams, options: ConnectionOptions = {}) {
    this.#writable = streams.writable;
    this.#options = options;
    streams.readable.setEncoding?.("utf8");
    streams.readable.on("data", (chunk: string | Buffer) => this.#receive(chunk.toString()));
    streams.readable.on("end", () => this.close("the agent closed its output"));
    streams.readable.on("error", (error: Error) => this.close(`reading from the agent failed: ${error.message}`));
    streams.writable.on("error", (error: Error) => this.close(`writing to the agent failed: ${error.message}`));
  }

  get isClosed(): boolean {
    return this.#closed !== undefined;
  }

  set tracer(tracer: Tracer | undefined) {
    this.#options.tracer = tracer;
  }

  onRequest(method: string, handler: RequestHandler): void {
    this.#requestHandlers.set(method, handler);
  }

  onNotification(method: string, handler: NotificationHandler): void {
    this.#notificationHandlers.set(method, handler);
  }

  onClose(listener: (reason: string) => void): void {
    if (this.#closed !== undefined) listener(this.#closed);
    else this.#closeListeners.push(listener);
  }

  /** Sends a request; resolves with its result, rejects with a `ResponseError` or on close. */
  request<R = unknown>(method: string, params?: unknown): { id: RequestId; response: Promise<R> } {
    const id = this.#nextId++;
    const response = new Promise<R>((resolve, reject) => {
      if (this.#closed !== undefined) {
        reject(new ConnectionClosedError(this.#closed));
        return;
      }
      this.#pending.set(id, { method, resolve: resolve as (v: unknown) => void, reject });
      this.#send({ jsonrpc: "2.0", id, method, ...(params === undefined ? {} : { params }) });
    });
    return { id, response };
  }

  /** Shorthand for `request(...).response`. */
  call<R = unknown>(method: string, params?: unknown): Promise<R> {
    return this.request<R>(method, params).response;
  }

  notify(method: string, params?: unknown): void {
    if (this.#closed !== undefined) return;
    this.#send({ jsonrpc: "2.0", method, ...(params === undefined ? {} : { params }) });
  }

  /** Asks the peer to abandon one of our requests; its answer still settles the promise. */
  cancelRequest(id: RequestId): void {
    if (this.#pending.has(id)) this.notify("$/cancel_request", { requestId: id });
  }

  close(reason = "connection closed"): void {
    if (this.#closed !== undefined) return;
    this.#closed = reason;
    for (const [, pending] of this.#pending) pending.reject(new ConnectionClosedError(reason));
    this.#pending.clear();
    for (const [, controller] of this.#incoming) controller.abort();
    this.#incoming.clear();
    for (const listener of this.#closeListeners.splice(0)) listener(reason);
  }

  #send(message: object): void {
    const line = JSON.stringify(message);
    this.#options.tracer?.("send", line);
    this.#writable.write(`${line}\n`);
  }

  #receive(chunk: string): void {
    this.#buffer += chunk;
    let newline: number;
    while ((newline = this.#buffer.indexOf("\n")) !== -1) {
      const line = this.#buffer.slice(0, newline).trim();
      this.#buffer = this.#buffer.slice(newline + 1);
      if (line !== "") this.#dispatchLine(line);
    }
  }

  #dispatchLine(line: string): void {
    this.#options.tracer?.("receive", line);
    let message: any;
    try {
      message = JSON.parse(line);
    } catch {
      this.#options.onProtocolError?.(`unparsable line from the agent: ${line.slice(0, 200)}`);
      return;
    }
    if (message === null || typeof message !== "object" || Array.isArray(message)) {
      this.#options.onProtocolError?.(`not a JSON-RPC message: ${line.slice(0, 200)}`);
      return;
    }
    if (typeof message.method === "string") {
      if ("id" in message && message.id !== null && message.id !== undefined) this.#handleRequest(message);
      else this.#handleNotification(message);
    } else if ("id" in message) {
      this.#handleResponse(message);
    } else {
      this.#options.onProtocolError?.(`not a JSON-RPC message: ${line.slice(0, 200)}`);
    }
  }

  #handleResponse(message: { id: RequestId; result?: unknown; error?: { code: number; message: string; data?: unknown } }): void {
    const pending = this.#pending.get(message.id);
    if (!pending) {
      this.#options.onProtocolError?.(`answer to unknown request id ${JSON.stringify(message.id)}`);
      return;
    }
    this.#pending.delete(message.id);
    if (message.error) pending.reject(new ResponseError(message.error.code, message.error.message, message.error.data));
    else pending.resolve(message.result ?? null);
  }

  #handleNotification(message: { method: string; params?: unknown }): void {
    if (message.method === "$/cancel_request") {
      const requestId = (message.params as { requestId?: RequestId } | undefined)?.requestId;
      if (requestId !== undefined) this.#incoming.get(requestId)?.abort();
      return;
    }
    const handler = this.#notificationHandlers.get(message.method);
    if (!handler) return; // Unknown notifications are ignored, as JSON-RPC and ACP ask.
    try {
      handler(message.params);
    } catch (error) {
      this.#options.onProtocolError?.(`handler of ${message.method} failed: ${String(error)}`);
    }
  }

  #handleRequest(message: { id: RequestId; method: string; params?: unknown }): void {
    const { id, method } = message;
    const handler = this.#requestHandlers.get(method);
    if (!handler) {
      this.#answerError(id, new ResponseError(ErrorCodes.MethodNotFound, `Method not found: ${method}`));
      return;
    }
    const controller = new AbortController();
    this.#incoming.set(id, controller);
    // The handler runs at once, so it sees a `$/cancel_request` that arrives right behind.
    let outcome: unknown;
    try {
      outcome = handler(message.params, { id, signal: controller.signal });
    } catch (error) {
      outcome = Promise.reject(error);
    }
    Promise.resolve(outcome).then(
        (result) => {
          if (this.#incoming.get(id) !== controller) return;
          this.#incoming.delete(id);
          this.#send({ jsonrpc: "2.0", id, result: result ?? {} });
        },
        (error: unknown) => {
          if (this.#incoming.get(id) !== controller) return;
          this.#incoming.delete(id);
          this.#answerError(id, error);
        },
      );
  }

  #answerError(id: RequestId, error: unknown): void {
    if (this.#closed !== undefined) return;
    const code = error instanceof ResponseError ? error.code : ErrorCodes.InternalError;
    const text = error instanceof Error ? error.message : String(error);
    const data = error instanceof ResponseError && error.data !== undefined ? { data: error.data } : {};
    this.#send({ jsonrpc: "2.0", id, error: { code, message: text, ...data } });
  }
}
