// End to end in a real VS Code (code-server with the packaged .vsix), the real `larik acp` and the
// mock model: `_larik/diagnostics` answered by a real language extension, VS Code's built-in
// TypeScript support (vscode.typescript-language-features with the TypeScript it bundles). The
// project has a tsconfig.json and src/a.ts with one error already; the user has a.ts open, so
// TypeScript has reported on it. The model reads a.ts, then edits it to assign a string to a
// number: the edit's result in the model's next request names TypeScript's new error and not
// the old one. The agent's own language servers are off in its user settings, so only the
// editor's diagnostics can name it.

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { stringsIn } from "../support/agent";
import { sendPrompt, Workbench } from "../support/workbench";

const TSCONFIG = JSON.stringify({ compilerOptions: { strict: true, target: "ES2022", lib: ["ES2022"], noEmit: true }, include: ["src"] }, null, 2);
const A_TS = "export function double(x: number): number {\n  return x * 2;\n}\n\nexport const total = double(21);\nexport const stale = missingName;\n";
const ADDED = 'export const n: number = "x";\n';

const SCENARIO = {
  responses: [
    { tool_calls: [{ id: "r1", name: "read", input: { path: "src/a.ts" } }] },
    { tool_calls: [{ id: "e1", name: "edit", input: { path: "src/a.ts", old_string: "export const total = double(21);\n", new_string: `export const total = double(21);\n${ADDED}` } }] },
    { text: "Added n." },
  ],
};

let rig: Workbench;

before(async () => {
  rig = await Workbench.start({
    prefix: "larik-vscode-e2e-diagnostics-",
    files: { "tsconfig.json": TSCONFIG, "src/a.ts": A_TS },
    // The agent's own rules let the edit through: the user's settings, as a user would write them.
    agentSettings: { lsp: { enabled: false }, permissions: { defaultMode: "acceptEdits" } },
    settings: {
      "typescript.disableAutomaticTypeAcquisition": true,
      "typescript.check.npmIsInstalled": false,
    },
    scenario: SCENARIO,
  });
});

after(async () => {
  await rig?.stop();
});

test("TypeScript's own diagnostics: the edit's result names the error it brought, not the file's old one", { timeout: 180_000 }, async () => {
  const { page } = rig;
  await rig.step("open the workbench", () => rig.open());
  await rig.step("open src/a.ts: TypeScript marks its error", async () => {
    await page.keyboard.press("Control+P");
    const input = page.locator(".quick-input-widget input");
    await input.waitFor({ state: "visible" });
    await input.fill("a.ts");
    await page.locator(".quick-input-list .monaco-list-row", { hasText: "a.ts" }).first().waitFor();
    await input.press("Enter");
    await page.locator(".tabs-container .tab.active", { hasText: "a.ts" }).waitFor();
    // The TypeScript server starts on the first TypeScript file and loads the project: slower than a step.
    await page.locator(".editor-instance .monaco-editor .squiggly-error").first().waitFor({ timeout: 90_000 });
  });
  const chat = await rig.step("open the chat view", async () => {
    await rig.runCommand("Larik: Open Chat");
    return rig.chatFrame();
  });
  await rig.step("the model reads a.ts and edits it; the turn ends", async () => {
    await sendPrompt(chat, "Add a number n to src/a.ts");
    await chat.locator('[data-tool-call-id="e1"][data-status="completed"]').waitFor();
    await chat.locator(".item.agent", { hasText: "Added n." }).waitFor();
    await chat.locator('#status[data-status="idle"]').waitFor();
  });
  assert.equal(readFileSync(join(rig.sandbox.project, "src", "a.ts"), "utf8"), A_TS.replace("double(21);\n", `double(21);\n${ADDED}`));
  const requests = await rig.model.requests();
  assert.equal(requests.length, 3);
  const log = rig.extensionLog();
  // The diagnostics asked and answered, with the times the log gives them: what a failure needs to explain itself.
  const exchange = log.split("\n").filter((line) => /_larik\/diagnostics|"result":\{"diagnostics"/.test(line)).join("\n");
  const result = [...stringsIn(requests[2])].find((s) => s.includes("the editor reports"));
  assert.ok(result?.includes("the editor reports new problems in this file after the change:\nERROR 6:14 Type 'string' is not assignable to type 'number'."), `${result}\n--- diagnostics in the trace ---\n${exchange}`);
  assert.ok(!result!.includes("missingName"), `what the file had is not new: ${result}`);
  // The answer came from the editor, as TypeScript's extension reported it (its source is "ts").
  assert.match(log, /← \{"jsonrpc":"2.0","id":\d+,"method":"_larik\/diagnostics","params":\{[^\n]*"path":"[^"]*\/src\/a\.ts"/, "the agent did not ask the editor");
  assert.match(
    log,
    /→ \{"jsonrpc":"2.0","id":\d+,"result":\{"diagnostics":\[[^\n]*"message":"Type 'string' is not assignable to type 'number'\.","source":"ts"\}/,
    "no answer with TypeScript's error in the protocol trace",
  );
});
