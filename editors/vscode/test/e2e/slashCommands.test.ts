// End to end in a real VS Code (code-server with the packaged .vsix), the real `larik acp` and the
// mock model: slash commands from a Claude Code user's files. The user's own skill
// (`~/.claude/skills/code-review/SKILL.md`, in the agent's private HOME) and the project's command
// (`.claude/commands/commit.md`) are offered by the agent in `available_commands_update` beside
// its built-ins; typing `/co` in the chat's prompt lists them with their descriptions, the
// keyboard chooses `/commit`, an argument is typed and sent, and the model receives the command's
// body with the argument put in, not the text typed.

import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { stringsIn } from "../support/agent";
import { Workbench } from "../support/workbench";

const CODE_REVIEW = `---
name: code-review
description: Review a change for correctness, tests and style
argument-hint: [path or branch]
---
Review $ARGUMENTS the way a careful senior engineer would: first whether it is correct, then
whether its tests cover what it changes, then its style. List findings by severity, each with
the file and line, and say plainly when there are none.
`;

const COMMIT = `---
description: Create a git commit from the staged changes
---
Create a git commit from the staged changes only; do not stage anything else.

Write the message in the imperative mood, its first line at most 72 characters.
The user's hint for the message: $ARGUMENTS
`;

const SCENARIO = {
  // Only the expanded command may get the answer: the typed text would not carry this.
  responses: [{ when: "The user's hint for the message: tidy the parser", text: "Committed: Tidy the parser." }],
};

/** The text of a model request's last user message. */
function lastUserText(request: unknown): string {
  const messages = (request as { messages?: Array<{ role: string; content: unknown }> }).messages ?? [];
  const last = messages.filter((m) => m.role === "user").at(-1);
  return last ? [...stringsIn(last.content)].join("\n") : "";
}

let rig: Workbench;

before(async () => {
  rig = await Workbench.start({
    prefix: "larik-vscode-e2e-commands-",
    files: { "parser.py": "def parse(text):\n    return text.split(',')\n", ".claude/commands/commit.md": COMMIT },
    homeFiles: { ".claude/skills/code-review/SKILL.md": CODE_REVIEW },
    scenario: SCENARIO,
  });
});

after(async () => {
  await rig?.stop();
});

test("slash commands: /co lists the user's skill, the project's command and the built-in; /commit runs with its argument", { timeout: 180_000 }, async () => {
  await rig.step("open the workbench", () => rig.open());
  const chat = await rig.step("open the chat view", async () => {
    await rig.runCommand("Larik: Open Chat");
    return rig.chatFrame();
  });
  const prompt = chat.locator("#prompt");
  const options = chat.locator("#command-list [role=option]");
  const shown = () =>
    options.evaluateAll((nodes) =>
      nodes.map((o) => ({
        name: o.getAttribute("data-name"),
        hint: o.querySelector(".command-hint")?.textContent ?? undefined,
        description: o.querySelector(".command-description")?.textContent,
        selected: o.getAttribute("aria-selected") === "true",
      })),
    );
  await rig.step("type /co: the matching commands, with their descriptions", async () => {
    await chat.locator('#status[data-status="idle"]').waitFor();
    await prompt.pressSequentially("/co");
    await chat.locator("#command-list").waitFor({ state: "visible" });
    // The agent's announcement may come after the first keys: wait for the three. Other
    // built-ins of the agent's that start with "co" (/config) may show beside them.
    const wanted = ["code-review", "commit", "compact"];
    await chat.waitForFunction(
      (names) => names.every((name) => document.querySelector(`#command-list [role=option][data-name="${name}"]`) !== null),
      wanted,
    );
    const list = await shown();
    assert.ok(list.every((o) => o.name?.startsWith("co")), `not narrowed to /co: ${list.map((o) => o.name).join(", ")}`);
    assert.deepEqual(
      list
        .filter((o) => wanted.includes(o.name!))
        .map(({ name, hint, description }) => ({ name, hint, description }))
        .sort((a, b) => a.name!.localeCompare(b.name!)),
      [
        { name: "code-review", hint: "[path or branch]", description: "Review a change for correctness, tests and style" },
        { name: "commit", hint: undefined, description: "Create a git commit from the staged changes" },
        { name: "compact", hint: "[what the summary should keep]", description: "Summarize the conversation so far to free context" },
      ],
    );
    assert.equal(list[0]!.selected, true, "the first is not highlighted");
    await rig.screenshot("e2e-slash-commands");
  });
  await rig.step("choose commit with the keyboard, type its argument, send", async () => {
    const names = (await shown()).map((o) => o.name);
    for (let i = 0; i < names.indexOf("commit"); i++) await prompt.press("ArrowDown");
    assert.equal((await shown()).find((o) => o.selected)?.name, "commit");
    const active = await prompt.getAttribute("aria-activedescendant");
    assert.equal(await chat.locator(`#${active}`).getAttribute("data-name"), "commit");
    await prompt.press("Enter");
    await chat.locator("#command-list").waitFor({ state: "hidden" });
    assert.equal(await prompt.inputValue(), "/commit ");
    await prompt.pressSequentially("tidy the parser");
    await prompt.press("Enter");
    await chat.locator(".item.user", { hasText: "/commit tidy the parser" }).waitFor();
    await chat.locator(".item.agent", { hasText: "Committed: Tidy the parser." }).waitFor();
    await chat.locator('#status[data-status="idle"]').waitFor();
  });
  const requests = await rig.model.requests();
  assert.equal(requests.length, 1);
  const sent = lastUserText(requests[0]);
  assert.match(sent, /Create a git commit from the staged changes only/, "the command's body did not reach the model");
  assert.match(sent, /The user's hint for the message: tidy the parser/, "the argument was not put in");
  assert.ok(!sent.includes("/commit") && !sent.includes("$ARGUMENTS"), `the model got the typed text or the body as written: ${sent}`);
  assert.match(rig.extensionLog(), /"sessionUpdate":"available_commands_update"[^\n]*"name":"code-review"/, "the agent's announcement is not in the protocol trace");
});
