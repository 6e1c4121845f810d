import * as acp from "@agentclientprotocol/sdk";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { Harness } from "./harness.mjs";
const dump = (h) => { for (const { from, line, msg } of h.checker.log) console.log(from, (line ?? JSON.stringify(msg)).slice(0, 300)); };
const h = await Harness.start({ settings: { models: ["claude-mock", "claude-mock-2"] }, scenario: { responses: [
  { text: "one" }, { text: "two" },
  { tool_calls: [{ id: "toolu_1", name: "bash", input: { command: "echo $$ > sleeper.pid && exec sleep 30" } }] },
] } });
try {
  await h.initialize();
  const s = await h.newSession();
  console.log(JSON.stringify(s.newSessionResponse.configOptions[1]));
  h.prompt(s, "first"); await h.finishTurn(s);
  h.prompt(s, "second"); await h.finishTurn(s);
  h.prompt(s, "sleep");
  await h.readUntil(s, m => m.kind === "session_update" && m.update.status === "in_progress", "inprog");
  const t0 = Date.now();
  while (!existsSync(join(h.projectDir, "sleeper.pid"))) await new Promise(r => setTimeout(r, 10));
  const pid = Number(readFileSync(join(h.projectDir, "sleeper.pid"), "utf8"));
  console.log("pid", pid, Date.now() - t0);
  await h.cancel(s.sessionId);
  console.log(await h.finishTurn(s));
  let alive = true; const t1 = Date.now();
  while (alive && Date.now() - t1 < 3000) { try { process.kill(pid, 0); await new Promise(r => setTimeout(r, 10)); } catch { alive = false; } }
  console.log("alive", alive, Date.now() - t1);
  const r = await h.wait(h.agent.request("_session/steering", { sessionId: s.sessionId, prompt: "hey" }), "steer");
  console.log("steer", r);
} finally { dump(h); await h.close(); }
const g = await Harness.start({ env: { ANTHROPIC_API_KEY: undefined }, scenario: { responses: [] } });
try {
  await g.initialize();
  console.log(await g.agent.request(acp.methods.agent.authenticate, { methodId: "api-key" }).catch(e => e));
  console.log(await g.agent.request(acp.methods.agent.authenticate, { methodId: "nope" }).catch(e => e));
  const s = await g.newSession();
  console.log(await g.prompt(s, "hi").catch(e => e));
} finally { dump(g); await g.close(); }
