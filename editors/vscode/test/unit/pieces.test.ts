// Small pure pieces: the agent command line, line slicing for fs reads, Larik's extension readers.

import assert from "node:assert/strict";
import test from "node:test";
import { resolveServerCommand } from "../../src/agentProcess";
import { agentCapabilities, hunksOf, permissionResponseMeta } from "../../src/protocol/larik";
import { sliceLines } from "../../src/state/lines";

test("the agent's command: PATH default, ~ expanded, env precedence editor < key store < settings", () => {
  const base = { PATH: "/bin", HOME: "/home/u", ANTHROPIC_API_KEY: "from-editor-env", KEEP: "1" };
  const command = resolveServerCommand(
    { path: "~/bin/larik", args: [], env: { LARIK_MODEL: "m", OPENAI_API_KEY: "from-settings" } },
    { ANTHROPIC_API_KEY: "from-key-store", OPENAI_API_KEY: "from-key-store" },
    base,
    "/p",
  );
  assert.equal(command.command, "/home/u/bin/larik");
  assert.deepEqual(command.args, ["acp"]);
  assert.equal(command.cwd, "/p");
  assert.equal(command.env.ANTHROPIC_API_KEY, "from-key-store");
  assert.equal(command.env.OPENAI_API_KEY, "from-settings");
  assert.equal(command.env.LARIK_MODEL, "m");
  assert.equal(command.env.KEEP, "1");
  assert.equal(resolveServerCommand({ path: " ", args: ["acp", "--verbose"], env: {} }, {}, {}, "/p").command, "larik");
});

test("sliceLines: 1-based line and a line limit, as fs/read_text_file asks", () => {
  const text = "a\nb\nc\nd";
  assert.equal(sliceLines(text), text);
  assert.equal(sliceLines(text, 2), "b\nc\nd");
  assert.equal(sliceLines(text, 2, 2), "b\nc\n");
  assert.equal(sliceLines(text, null, 1), "a\n");
  assert.equal(sliceLines(text, 9, 1), "");
});

test("Larik's capabilities and hunks are read leniently", () => {
  const init = (meta: unknown) => ({ protocolVersion: 1, agentCapabilities: { _meta: meta as Record<string, unknown> } });
  assert.deepEqual(agentCapabilities(init({ larik: { version: 1, hunkReview: true, editorContext: "yes" } })), {
    version: 1,
    permissionFeedback: false,
    hunkReview: true,
    editorContext: false,
  });
  assert.deepEqual(agentCapabilities(init(undefined)), {});
  assert.deepEqual(agentCapabilities(init({ larik: [] })), {});
  const hunk = { index: 1, oldStart: 2, oldLines: 1, newStart: 2, newLines: 1, oldText: "a\n", newText: "b\n" };
  assert.deepEqual(hunksOf({ _meta: { larik: { hunks: [hunk, { ...hunk, index: 0 }] } } })?.map((h) => h.index), [0, 1]);
  assert.equal(hunksOf({ _meta: { larik: { hunks: [{ ...hunk, oldText: 3 }] } } }), undefined);
  assert.equal(hunksOf({ _meta: { larik: { hunks: [] } } }), undefined);
  assert.equal(hunksOf({}), undefined);
});

test("permission response meta: only what there is to say", () => {
  assert.equal(permissionResponseMeta({}), undefined);
  assert.equal(permissionResponseMeta({ feedback: "   " }), undefined);
  assert.deepEqual(permissionResponseMeta({ feedback: " why ", acceptedHunks: [2, 0] }), { larik: { feedback: "why", acceptedHunks: [0, 2] } });
  assert.deepEqual(permissionResponseMeta({ acceptedHunks: [] }), { larik: { acceptedHunks: [] } });
});
