// A scripted ACP agent on in-memory streams, for testing the client side without a process.
// Tests register handlers for the methods they expect and read what the client sent.

import { PassThrough } from "node:stream";
import { Connection } from "../../src/connection";
import { withTimeout } from "./agent";

export interface Sent {
  method?: string;
  id?: number | string;
  params?: any;
  result?: any;
  error?: any;
}

export class FakeAgent {
  /** The client's end, to hand to `SessionController.connect`. */
  readonly client: Connection;
  /** The agent's end. */
  readonly agent: Connection;
  /** Every message the client sent, in order. */
  readonly received: Sent[] = [];
  #toClient = new PassThrough();
  #toAgent = new PassThrough();

  constructor() {
    this.client = new Connection({ readable: this.#toClient, writable: this.#toAgent });
    this.agent = new Connection({ readable: this.#toAgent, writable: this.#toClient });
    let buffer = "";
    this.#toAgent.on("data", (chunk: Buffer) => {
      buffer += chunk.toString();
      let nl: number;
      while ((nl = buffer.indexOf("\n")) !== -1) {
        this.received.push(JSON.parse(buffer.slice(0, nl)) as Sent);
        buffer = buffer.slice(nl + 1);
      }
    });
  }

  /** Answers `initialize` and `session/new` the way Larik does, with optional extras. */
  standard(options: { larik?: Record<string, unknown>; agentCapabilities?: Record<string, unknown>; newSession?: Record<string, unknown> } = {}): this {
    this.agent.onRequest("initialize", () => ({
      protocolVersion: 1,
      agentCapabilities: { loadSession: false, ...options.agentCapabilities, _meta: { larik: { version: 1, permissionFeedback: true, ...options.larik } } },
      authMethods: [],
      agentInfo: { name: "fake", version: "0" },
    }));
    let n = 0;
    this.agent.onRequest("session/new", () => ({ sessionId: `sess_${++n}`, ...options.newSession }));
    return this;
  }

  /** Writes messages to the client in one chunk, so it reads them in one go. */
  raw(...messages: object[]): void {
    this.#toClient.write(messages.map((m) => `${JSON.stringify({ jsonrpc: "2.0", ...m })}\n`).join(""));
  }

  update(sessionId: string, update: object): void {
    this.agent.notify("session/update", { sessionId, update });
  }

  /** Waits until the client has sent a message matching `predicate`. */
  async sent(predicate: (m: Sent) => boolean, what: string, ms = 5000): Promise<Sent> {
    return withTimeout(
      (async () => {
        for (;;) {
          const found = this.received.find(predicate);
          if (found) return found;
          await new Promise((r) => setTimeout(r, 5));
        }
      })(),
      ms,
      what,
    );
  }

  methods(): string[] {
    return this.received.filter((m) => m.method).map((m) => m.method!);
  }

  close(): void {
    this.#toClient.end();
    this.#toAgent.end();
  }
}
