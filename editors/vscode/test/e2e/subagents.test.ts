// End to end in a real VS Code (code-server with the packaged .vsix), the real `larik acp` and the
// mock model: subagents as child sessions. The model answers with two `task` calls; one child
// reads a file and finishes, the other hangs on the model until the user presses its Stop. Each
// child is shown inside the card of its task call, with its own calls; Stop sends
// `session/cancel` for that child alone, it shows as stopped, and the turn goes on to its end.

import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { stringsIn } from "../support/agent";
import { sendPrompt, Workbench } from "../support/workbench";

const task = (id: string, type: string, description: string, prompt: string) => ({ id, name: "task", input: { subagent_type: type, description, prompt } });

const SCENARIO = {
  responses: [
    { text: "Let me split this up.", tool_calls: [task("t1", "explore", "find alpha", "ALPHA-S: read alpha.txt"), task("t2", "explore", "wait forever", "STUCK-S: wait")] },
    // A child's requests carry its prompt: each gets its own answers.
    { when: "ALPHA-S", tool_calls: [{ id: "c1", name: "read", input: { path: "alpha.txt" } }] },
    { when: "ALPHA-S", text: "alpha done" },
    { when: "alpha done", text: "One found, one stopped." },
    // Last: the parent's last request names both tasks and must not take this answer.
    { when: "STUCK-S", text: "", hang: true },
  ],
};

let rig: Workbench;

before(async () => {
  rig = await Workbench.start({ prefix: "larik-vscode-e2e-subagents-", files: { "alpha.txt": "alpha\n" }, scenario: SCENARIO });
});

after(async () => {
  await rig?.stop();
});

test("two subagents nested under their task calls; Stop ends the hanging one and the turn goes on", { timeout: 180_000 }, async () => {
  const { page } = rig;
  await rig.step("open the workbench", () => rig.open());
  const chat = await rig.step("open the chat view", async () => {
    await rig.runCommand("Larik: Open Chat");
    return rig.chatFrame();
  });
  // Only a child drawn inside its own task call's card counts.
  const childOf = (call: string) => chat.locator(`[data-tool-call-id="${call}"] > .subagents > .subagent`);
  await rig.step("send the prompt; both children show under their task calls", async () => {
    await sendPrompt(chat, "Find alpha, and wait for the other");
    await chat.locator(".item.agent", { hasText: "Let me split this up." }).waitFor();
    await childOf("t1").locator(".subagent-title", { hasText: "explore: find alpha" }).waitFor();
    await childOf("t2").locator(".subagent-title", { hasText: "explore: wait forever" }).waitFor();
    assert.equal(await chat.locator('[data-tool-call-id="t1"] .tool-title').textContent(), "explore: find alpha");
  });
  await rig.step("the finished child shows its read call and its report", async () => {
    const alpha = childOf("t1");
    await alpha.and(chat.locator('[data-phase="done"]')).waitFor();
    await alpha.locator('.subagent-tool[data-status="completed"]', { hasText: "Read alpha.txt" }).waitFor();
    assert.equal(await alpha.locator(".subagent-phase").textContent(), "done");
    assert.equal(((await alpha.locator(".subagent-text").textContent()) ?? "").trim(), "alpha done");
    assert.equal(await alpha.locator(".subagent-stop").count(), 0, "a finished child offers Stop");
    // The child's call is its own, not a card of the session's.
    assert.equal(await chat.locator(".item.tool").count(), 2);
  });
  const stuckId = await rig.step("the hanging child runs, with a Stop button", async () => {
    const stuck = childOf("t2");
    assert.equal(await stuck.getAttribute("data-phase"), "running");
    assert.equal(await stuck.locator(".subagent-phase").textContent(), "running");
    await stuck.locator("button.subagent-stop").waitFor({ state: "visible" });
    await rig.screenshot("e2e-subagents-running");
    return (await stuck.getAttribute("data-session-id"))!;
  });
  await rig.step("Stop: that child alone is cancelled, it shows stopped, the turn ends", async () => {
    await childOf("t2").locator("button.subagent-stop").click();
    await childOf("t2").and(chat.locator('[data-phase="stopped"]')).waitFor();
    assert.equal(await childOf("t2").locator(".subagent-phase").textContent(), "stopped");
    assert.equal(await childOf("t2").locator(".subagent-stop").count(), 0);
    await chat.locator(".item.agent", { hasText: "One found, one stopped." }).waitFor();
    await chat.locator('#status[data-status="idle"]').waitFor();
    await page.locator(".statusbar-item", { hasText: "Larik: idle" }).waitFor();
    // The finished child is as it was; its report shows once, in it. The stopped one's task call
    // says what the model was told.
    assert.equal(await childOf("t1").getAttribute("data-phase"), "done");
    // Under the task call, what its child spent is all there is besides the child.
    const outputs = chat.locator('[data-tool-call-id="t1"] > .tool-output');
    assert.equal(await outputs.count(), 1, "the report is shown twice, or the spending is not shown");
    assert.match((await outputs.textContent()) ?? "", /^The subagent spent \d+ tokens \(\d+ input, /);
    await chat.locator('[data-tool-call-id="t2"] > .tool-output', { hasText: "was stopped before it finished" }).waitFor();
    await rig.screenshot("e2e-subagents-stopped");
  });
  const log = rig.extensionLog();
  assert.match(log, /→ \{"jsonrpc":"2.0","id":\d+,"method":"initialize","params":\{[^\n]*"subagents":\{\}/, "initialize did not advertise subagents");
  const cancels = [...log.matchAll(/→ \{"jsonrpc":"2.0","method":"session\/cancel","params":(\{[^\n]*\})\}/g)].map((m) => JSON.parse(m[1]!).sessionId);
  assert.deepEqual(cancels, [stuckId], "session/cancel went to another session than the stopped child's");
  const requests = await rig.model.requests();
  const last = [...stringsIn(requests.at(-1))];
  assert.ok(last.some((s) => s.includes("alpha done")), "the parent did not get the finished child's report");
  assert.ok(last.some((s) => /cancelled/.test(s)), "the parent was not told the other child was cancelled");
});
