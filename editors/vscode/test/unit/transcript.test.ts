import assert from "node:assert/strict";
import test from "node:test";
import type { SessionUpdate } from "../../src/protocol/acp";
import { diffPreview, Transcript, type TranscriptChange } from "../../src/state/transcript";

function recorded() {
  const transcript = new Transcript();
  const changes: TranscriptChange[] = [];
  transcript.onChange((c) => changes.push(structuredClone(c)));
  return { transcript, changes };
}

const chunk = (kind: "agent_message_chunk" | "agent_thought_chunk" | "user_message_chunk", text: string, messageId?: string): SessionUpdate =>
  ({ sessionUpdate: kind, content: { type: "text", text }, ...(messageId ? { messageId } : {}) }) as SessionUpdate;

test("chunks of one message append in place and are forwarded as appends", () => {
  const { transcript, changes } = recorded();
  transcript.apply(chunk("agent_message_chunk", "Hel"));
  transcript.apply(chunk("agent_message_chunk", "lo"));
  transcript.apply(chunk("agent_thought_chunk", "hmm"));
  transcript.apply(chunk("agent_message_chunk", "again"));
  assert.deepEqual(
    transcript.items.map((i) => [i.type, "text" in i ? i.text : ""]),
    [["agent", "Hello"], ["thought", "hmm"], ["agent", "again"]],
  );
  assert.deepEqual(changes.map((c) => c.kind), ["item", "append", "item", "item"]);
  assert.deepEqual(changes[1], { kind: "append", id: transcript.items[0]!.id, text: "lo" });
});

test("a new message id starts a new item", () => {
  const { transcript } = recorded();
  transcript.apply(chunk("agent_message_chunk", "a", "m1"));
  transcript.apply(chunk("agent_message_chunk", "b", "m1"));
  transcript.apply(chunk("agent_message_chunk", "c", "m2"));
  assert.deepEqual(transcript.items.map((i) => ("text" in i ? i.text : "")), ["ab", "c"]);
});

test("tool calls merge field by field, keyed by toolCallId", () => {
  const { transcript } = recorded();
  transcript.apply({ sessionUpdate: "tool_call", toolCallId: "t1", title: "Read a.txt", kind: "read", locations: [{ path: "/p/a.txt" }] });
  transcript.apply({ sessionUpdate: "tool_call_update", toolCallId: "t1", status: "in_progress" });
  transcript.apply({ sessionUpdate: "tool_call_update", toolCallId: "t1", status: "completed", content: [{ type: "content", content: { type: "text", text: "1\tone" } }] });
  assert.equal(transcript.items.length, 1);
  assert.deepEqual(transcript.items[0], {
    type: "tool",
    id: "tool:t1",
    title: "Read a.txt",
    kind: "read",
    status: "completed",
    content: [{ type: "text", text: "1\tone" }],
    locations: [{ path: "/p/a.txt" }],
  });
});

test("a command is titled by its description", () => {
  const { transcript } = recorded();
  const command = "python3 -m unittest -v 2>&1 | tail -n 20";
  transcript.apply({ sessionUpdate: "tool_call", toolCallId: "b1", title: `Run the tests (\`${command}\`)`, kind: "execute", rawInput: { command, description: "Run the tests" } });
  transcript.apply({ sessionUpdate: "tool_call_update", toolCallId: "b1", title: `Run the tests (\`${command}\`)`, status: "completed" });
  transcript.apply({ sessionUpdate: "tool_call", toolCallId: "b2", title: "`ls`", kind: "execute", rawInput: { command: "ls" } });
  assert.deepEqual(transcript.items.map((i) => (i.type === "tool" ? i.title : "")), ["Run the tests", "Run a command"]);
});

test("a diff becomes a preview with counts", () => {
  const { transcript } = recorded();
  transcript.apply({
    sessionUpdate: "tool_call_update",
    toolCallId: "t2",
    title: "Edit a.txt",
    kind: "edit",
    content: [{ type: "diff", path: "/p/a.txt", oldText: "one\ntwo\nthree\n", newText: "one\nTWO\nthree\n" }],
  });
  const item = transcript.items[0]!;
  assert.equal(item.type, "tool");
  if (item.type !== "tool") return;
  assert.deepEqual(item.content[0], {
    type: "diff",
    path: "/p/a.txt",
    added: 1,
    removed: 1,
    isNew: false,
    truncated: false,
    diff: 0,
    preview: [
      { kind: "context", text: "one" },
      { kind: "removed", text: "two" },
      { kind: "added", text: "TWO" },
      { kind: "context", text: "three" },
    ],
  });
});

test("diffPreview marks gaps and truncates long diffs", () => {
  const old = Array.from({ length: 100 }, (_, i) => `line ${i}\n`).join("");
  const next = old.replace("line 10\n", "LINE 10\n").replace("line 80\n", "LINE 80\n");
  const preview = diffPreview(old, next);
  assert.equal(preview.lines.filter((l) => l.kind === "gap").length, 2);
  const long = diffPreview("", Array.from({ length: 100 }, (_, i) => `${i}\n`).join(""), 10);
  assert.equal(long.lines.length, 10);
  assert.equal(long.truncated, true);
  assert.equal(long.added, 100);
});

test("plan, usage, title, commands, modes and config options land in the session view", () => {
  const { transcript } = recorded();
  transcript.setModesAndOptions(
    { currentModeId: "default", availableModes: [{ id: "default", name: "Default" }, { id: "plan", name: "Plan" }] },
    [{ id: "model", name: "Model", category: "model", type: "select", currentValue: "a", options: [{ value: "a", name: "A" }, { value: "b", name: "B" }] }],
  );
  transcript.apply({ sessionUpdate: "plan", entries: [{ content: "Fix it", priority: "high", status: "in_progress" }] });
  transcript.apply({ sessionUpdate: "usage_update", used: 1000, size: 200000, cost: { amount: 0.01, currency: "USD" } });
  transcript.apply({ sessionUpdate: "session_info_update", title: "Fixing" });
  transcript.apply({ sessionUpdate: "current_mode_update", currentModeId: "plan" });
  transcript.apply({ sessionUpdate: "available_commands_update", availableCommands: [{ name: "review", description: "Review" }] });
  const s = transcript.session;
  assert.deepEqual(s.plan, [{ content: "Fix it", priority: "high", status: "in_progress" }]);
  assert.deepEqual(s.usage, { used: 1000, size: 200000, cost: { amount: 0.01, currency: "USD" } });
  assert.equal(s.title, "Fixing");
  assert.equal(s.mode?.current, "plan");
  assert.deepEqual(s.mode?.options.map((o) => o.id), ["default", "plan"]);
  assert.equal(s.model?.current, "a");
  assert.deepEqual(s.commands, [{ name: "review", description: "Review" }]);
  transcript.apply({
    sessionUpdate: "config_option_update",
    configOptions: [{ id: "model", name: "Model", category: "model", type: "select", currentValue: "b", options: [{ value: "a", name: "A" }, { value: "b", name: "B" }] }],
  });
  assert.equal(transcript.session.model?.current, "b");
});

test("commands keep their input hints; each update replaces the list whole; a new session starts empty", () => {
  const { transcript, changes } = recorded();
  transcript.apply({
    sessionUpdate: "available_commands_update",
    availableCommands: [
      { name: "compact", description: "Summarize the conversation so far to free context" },
      { name: "mode", description: "Switch mode", input: { hint: "default, accept-edits, plan or yolo" } },
      { name: "code-review", description: "Review a change for correctness, tests and style", input: { hint: "[path or branch]" } },
      { name: "git:recent", description: "Summarize what changed in the last commits", input: null },
      // A blank hint is no hint.
      { name: "commit", description: "Create a git commit from the staged changes", input: { hint: "  " } },
    ],
  });
  assert.deepEqual(transcript.session.commands, [
    { name: "compact", description: "Summarize the conversation so far to free context" },
    { name: "mode", description: "Switch mode", hint: "default, accept-edits, plan or yolo" },
    { name: "code-review", description: "Review a change for correctness, tests and style", hint: "[path or branch]" },
    { name: "git:recent", description: "Summarize what changed in the last commits" },
    { name: "commit", description: "Create a git commit from the staged changes" },
  ]);
  assert.equal(changes.at(-1)?.kind, "session", "the webview is not told");
  // After /clear the agent sends the list again, skills read anew: it replaces the old one.
  transcript.apply({ sessionUpdate: "available_commands_update", availableCommands: [{ name: "code-review", description: "Audit a change", input: { hint: "[path]" } }] });
  assert.deepEqual(transcript.session.commands, [{ name: "code-review", description: "Audit a change", hint: "[path]" }]);
  transcript.reset();
  assert.deepEqual(transcript.session.commands, []);
});

test("a mode config option wins over legacy modes", () => {
  const { transcript } = recorded();
  transcript.setModesAndOptions({ currentModeId: "x", availableModes: [{ id: "x", name: "X" }] }, [
    { id: "mode", name: "Mode", category: "mode", type: "select", currentValue: "yolo", options: [{ value: "yolo", name: "Yolo" }] },
  ]);
  assert.equal(transcript.session.mode?.current, "yolo");
});

test("unknown update kinds are ignored; reset keeps status", () => {
  const { transcript } = recorded();
  transcript.updateSession({ status: "idle" });
  transcript.apply({ sessionUpdate: "something_new" } as unknown as SessionUpdate);
  transcript.apply(chunk("agent_message_chunk", "x"));
  transcript.reset();
  assert.equal(transcript.items.length, 0);
  assert.equal(transcript.session.status, "idle");
});

test("settleUnfinishedTools marks running tools", () => {
  const { transcript } = recorded();
  transcript.apply({ sessionUpdate: "tool_call", toolCallId: "a", title: "A", status: "in_progress" });
  transcript.apply({ sessionUpdate: "tool_call", toolCallId: "b", title: "B", status: "completed" });
  transcript.settleUnfinishedTools();
  assert.deepEqual(transcript.items.map((i) => (i.type === "tool" ? i.status : "")), ["cancelled", "completed"]);
});

test("a turn's plan stays with its turn: unpinned when the turn ends, undone with it, never over a later turn", () => {
  const { transcript } = recorded();
  const first = transcript.addUserMessage("Fix calc.py");
  transcript.apply({ sessionUpdate: "plan", entries: [{ content: "Fix `mean`", priority: "high", status: "completed" }] });
  assert.equal(transcript.session.plan.length, 1, "pinned while its turn runs");
  transcript.settlePlan();
  assert.deepEqual(transcript.session.plan, []);
  const plan = transcript.items.at(-1)!;
  assert.deepEqual(plan.type === "plan" && plan.entries.map((e) => e.content), ["Fix `mean`"]);
  // A replayed turn (a loaded session) settles the plan before its prompt as well.
  transcript.apply({ sessionUpdate: "plan", entries: [{ content: "Explain", priority: "low", status: "pending" }] });
  transcript.apply({ sessionUpdate: "user_message_chunk", content: { type: "text", text: "next" } });
  assert.deepEqual(transcript.session.plan, []);
  assert.deepEqual(transcript.items.map((i) => i.type), ["user", "plan", "plan", "user"]);
  transcript.markUndone(first);
  assert.ok(transcript.items.every((i) => i.undone), "the plans went with their turn");
});
