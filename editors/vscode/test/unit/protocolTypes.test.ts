// The committed protocol types are what the schema generates today: a schema change without
// `npm run gen:protocol` fails here.

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import test from "node:test";
import { pathToFileURL } from "node:url";
import { EXTENSION_ROOT } from "../support/agent";

test("src/protocol/generated/ is up to date with the protocol's schema", async () => {
  // A computed specifier: the bundler leaves the import to Node, which loads the ES module as is.
  const script = pathToFileURL(join(EXTENSION_ROOT, "scripts", "gen-protocol.mjs")).href;
  const { generate, OUTPUT } = (await import(script)) as { generate: () => Promise<string>; OUTPUT: string };
  const fresh = await generate();
  const committed = readFileSync(OUTPUT, "utf8");
  assert.ok(committed === fresh, `${OUTPUT} is stale: run npm run gen:protocol`);
});
