// The example transcripts in protocol-spec/examples/ are checked message by message against the
// official ACP v1 schema shipped with the SDK, with the same checker that watches live sessions.

import { test } from "node:test";
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

import { ProtocolChecker } from "./harness.mjs";

const examples = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "protocol-spec", "examples");
const files = readdirSync(examples).filter((name) => name.endsWith(".jsonl"));

test("there are example transcripts", () => {
  assert.ok(files.length >= 3, `found ${files.length}`);
});

for (const file of files) {
  test(`example ${file} is valid ACP v1`, () => {
    const checker = new ProtocolChecker();
    const lines = readFileSync(join(examples, file), "utf8").split("\n").filter((line) => line.trim() !== "");
    for (const line of lines) {
      const { from, message } = JSON.parse(line);
      if (from === "agent") checker.agentLine(JSON.stringify(message));
      else checker.clientMessage(message);
    }
    assert.deepEqual(checker.violations, [], JSON.stringify(checker.violations, null, 2));
    assert.ok(checker.log.length === lines.length);
  });
}
