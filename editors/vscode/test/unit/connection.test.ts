import assert from "node:assert/strict";
import { PassThrough } from "node:stream";
import test from "node:test";
import { Connection, ConnectionClosedError, ErrorCodes, ResponseError } from "../../src/connection";

/** A connection whose peer is driven by hand: `toUs` feeds lines in, `fromUs` collects what we wrote. */
function pair() {
  const toUs = new PassThrough();
  const fromUs = new PassThrough();
  const written: any[] = [];
  let buffer = "";
  fromUs.setEncoding("utf8");
  fromUs.on("data", (s: string) => {
    buffer += s;
    let nl: number;
    while ((nl = buffer.indexOf("\n")) !== -1) {
      written.push(JSON.parse(buffer.slice(0, nl)));
      buffer = buffer.slice(nl + 1);
    }
  });
  const traced: string[] = [];
  const errors: string[] = [];
  const connection = new Connection(
    { readable: toUs, writable: fromUs },
    { tracer: (direction, line) => traced.push(`${direction} ${line}`), onProtocolError: (m) => errors.push(m) },
  );
  const send = (message: object) => toUs.write(`${JSON.stringify(message)}\n`);
  const next = async (predicate: (m: any) => boolean) => {
    for (let i = 0; i < 200; i++) {
      const found = written.find(predicate);
      if (found) return found;
      await new Promise((r) => setTimeout(r, 5));
    }
    throw new Error("message not written");
  };
  return { connection, toUs, written, traced, errors, send, next };
}

test("a request gets its result; lines may arrive split and joined", async () => {
  const { connection, toUs, written } = pair();
  const { id, response } = connection.request<{ ok: boolean }>("session/new", { cwd: "/p" });
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(written[0], { jsonrpc: "2.0", id, method: "session/new", params: { cwd: "/p" } });
  const line = JSON.stringify({ jsonrpc: "2.0", id, result: { ok: true } });
  toUs.write(line.slice(0, 10));
  toUs.write(`${line.slice(10)}\n\n`);
  assert.deepEqual(await response, { ok: true });
});

test("an error answer rejects with a ResponseError carrying the code", async () => {
  const { connection, send } = pair();
  const { id, response } = connection.request("session/list", {});
  send({ jsonrpc: "2.0", id, error: { code: -32601, message: "Method not found: session/list" } });
  await assert.rejects(response, (e: unknown) => e instanceof ResponseError && e.code === -32601);
});

test("incoming requests are answered by their handler, unknown ones with -32601", async () => {
  const { connection, send, next } = pair();
  connection.onRequest("fs/read_text_file", async (params: { path: string }) => ({ content: `text of ${params.path}` }));
  connection.onRequest("fails", () => {
    throw new ResponseError(-32002, "not found");
  });
  send({ jsonrpc: "2.0", id: 7, method: "fs/read_text_file", params: { path: "/a" } });
  send({ jsonrpc: "2.0", id: "x", method: "terminal/create", params: {} });
  send({ jsonrpc: "2.0", id: 9, method: "fails" });
  assert.deepEqual(await next((m) => m.id === 7), { jsonrpc: "2.0", id: 7, result: { content: "text of /a" } });
  assert.equal((await next((m) => m.id === "x")).error.code, ErrorCodes.MethodNotFound);
  assert.deepEqual((await next((m) => m.id === 9)).error, { code: -32002, message: "not found" });
});

test("a slow handler does not block the reader", async () => {
  const { connection, send, next } = pair();
  let release: () => void = () => {};
  connection.onRequest("slow", () => new Promise((r) => (release = () => r({ slow: true }))));
  const seen: unknown[] = [];
  connection.onNotification("session/update", (p) => seen.push(p));
  send({ jsonrpc: "2.0", id: 1, method: "slow" });
  send({ jsonrpc: "2.0", method: "session/update", params: { n: 1 } });
  await new Promise((r) => setTimeout(r, 20));
  assert.deepEqual(seen, [{ n: 1 }]);
  release();
  assert.deepEqual((await next((m) => m.id === 1)).result, { slow: true });
});

test("$/cancel_request aborts the handler's signal; the handler still answers", async () => {
  const { connection, send, next } = pair();
  connection.onRequest("session/request_permission", (_p, { signal }) =>
    new Promise((resolve) => signal.addEventListener("abort", () => resolve({ outcome: { outcome: "cancelled" } }))),
  );
  send({ jsonrpc: "2.0", id: 3, method: "session/request_permission", params: {} });
  send({ jsonrpc: "2.0", method: "$/cancel_request", params: { requestId: 3 } });
  assert.deepEqual((await next((m) => m.id === 3)).result, { outcome: { outcome: "cancelled" } });
});

test("cancelRequest sends $/cancel_request for a pending request", async () => {
  const { connection, next } = pair();
  const { id } = connection.request("session/prompt", {});
  connection.cancelRequest(id);
  assert.deepEqual(await next((m) => m.method === "$/cancel_request"), { jsonrpc: "2.0", method: "$/cancel_request", params: { requestId: id } });
});

test("end of input rejects pending requests and tells the close listeners", async () => {
  const { connection, toUs } = pair();
  const closed = new Promise<string>((r) => connection.onClose(r));
  const { response } = connection.request("session/prompt", {});
  toUs.end();
  await assert.rejects(response, ConnectionClosedError);
  assert.match(await closed, /closed its output/);
  assert.equal(connection.isClosed, true);
  await assert.rejects(connection.call("x"), ConnectionClosedError);
});

test("garbage lines are reported, not fatal; everything is traced", async () => {
  const { connection, toUs, errors, traced, send } = pair();
  const seen: unknown[] = [];
  connection.onNotification("n", (p) => seen.push(p));
  toUs.write("not json\n[1,2]\n");
  send({ jsonrpc: "2.0", id: 99, result: {} });
  send({ jsonrpc: "2.0", method: "n", params: 1 });
  await new Promise((r) => setTimeout(r, 20));
  assert.deepEqual(seen, [1]);
  assert.equal(errors.length, 3, errors.join("\n"));
  assert.ok(traced.some((t) => t.startsWith("receive not json")));
});
