import assert from "node:assert/strict";
import test from "node:test";
import type { CommandView } from "../../src/webview/messages";
import { acceptCommand, commandQuery, matchCommands, pendingHint } from "../../webview/slashCommands";

// As Larik announces them: the built-ins first, then MCP prompts, then skills and commands.
const COMMANDS: CommandView[] = [
  { name: "compact", description: "Summarize the conversation so far to free context" },
  { name: "clear", description: "Start over with an empty conversation" },
  { name: "mode", description: "Switch mode", hint: "default, accept-edits, plan or yolo" },
  { name: "mcp__docs__convert", description: "Convert a page" },
  { name: "code-review", description: "Review a change for correctness, tests and style", hint: "[path or branch]" },
  { name: "commit", description: "Create a git commit from the staged changes" },
  { name: "git:recent", description: "Summarize what changed in the last commits" },
];
const names = (list: CommandView[]) => list.map((c) => c.name);

test("a command name is only at the very start of the prompt, up to the caret", () => {
  assert.deepEqual(commandQuery("/", 1), { query: "", end: 1 });
  assert.deepEqual(commandQuery("/co", 3), { query: "co", end: 3 });
  // The caret inside the name: what is before it is the query, the name ends at the space.
  assert.deepEqual(commandQuery("/commit fix", 3), { query: "co", end: 7 });
  assert.deepEqual(commandQuery("/commit fix", 7), { query: "commit", end: 7 });
  // In the arguments, or before the slash, no name is being typed.
  assert.equal(commandQuery("/commit fix", 8), undefined);
  assert.equal(commandQuery("/co", 0), undefined);
  // Not at the start: text, not a command.
  assert.equal(commandQuery("see /co", 7), undefined);
  assert.equal(commandQuery(" /co", 4), undefined);
  assert.equal(commandQuery("hello", 5), undefined);
  assert.equal(commandQuery("", 0), undefined);
  assert.equal(commandQuery("/co\nmore", 8), undefined);
});

test("matching: by prefix in the agent's order, any case, then by a later part of the name", () => {
  assert.deepEqual(names(matchCommands(COMMANDS, "")), names(COMMANDS));
  assert.deepEqual(names(matchCommands(COMMANDS, "co")), ["compact", "code-review", "commit", "mcp__docs__convert"]);
  assert.deepEqual(names(matchCommands(COMMANDS, "COM")), ["compact", "commit"]);
  assert.deepEqual(names(matchCommands(COMMANDS, "commi")), ["commit"]);
  assert.deepEqual(names(matchCommands(COMMANDS, "rec")), ["git:recent"]);
  assert.deepEqual(names(matchCommands(COMMANDS, "git:")), ["git:recent"]);
  // Not in the middle of a part.
  assert.deepEqual(names(matchCommands(COMMANDS, "view")), []);
  assert.deepEqual(names(matchCommands(COMMANDS, "xyz")), []);
  assert.deepEqual(matchCommands([], ""), []);
});

test("accepting puts /name and a space, keeps what followed the name, and leaves the caret for the arguments", () => {
  assert.deepEqual(acceptCommand("/co", "commit"), { text: "/commit ", caret: 8 });
  assert.deepEqual(acceptCommand("/", "compact"), { text: "/compact ", caret: 9 });
  assert.deepEqual(acceptCommand("/co fix the bug", "commit"), { text: "/commit fix the bug", caret: 8 });
  assert.deepEqual(acceptCommand("/co\nsecond line", "commit"), { text: "/commit \nsecond line", caret: 8 });
  assert.deepEqual(acceptCommand("/git:r", "git:recent"), { text: "/git:recent ", caret: 12 });
});

test("the hint shows after a chosen command's name until its arguments are typed", () => {
  assert.equal(pendingHint("/code-review ", COMMANDS), "[path or branch]");
  assert.equal(pendingHint("/mode  ", COMMANDS), "default, accept-edits, plan or yolo");
  assert.equal(pendingHint("/code-review", COMMANDS), undefined, "no space yet: the name may go on");
  assert.equal(pendingHint("/code-review src", COMMANDS), undefined);
  assert.equal(pendingHint("/commit ", COMMANDS), undefined, "a command without a hint");
  assert.equal(pendingHint("/unknown ", COMMANDS), undefined);
  assert.equal(pendingHint("x /mode ", COMMANDS), undefined);
});
