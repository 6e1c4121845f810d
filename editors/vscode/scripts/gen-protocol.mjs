// Generates the TypeScript types of Larik's ACP extensions from the protocol's JSON schema,
// protocol-spec/schema/larik-extensions.json, the single source of their shape. The output,
// src/protocol/generated/larikExtensions.ts, is committed (it is source); the lenient readers of
// src/protocol/larik.ts are written against it. The ACP types themselves come generated with the
// official SDK (src/protocol/acp.ts).
//
//   node scripts/gen-protocol.mjs          (npm run gen:protocol) writes the file
//
// `generate()` is also what the unit test calls to tell a stale file from a fresh one.

import { compile } from "json-schema-to-typescript";
import { readFileSync, writeFileSync, mkdirSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
export const SCHEMA = join(root, "..", "..", "protocol-spec", "schema", "larik-extensions.json");
export const OUTPUT = join(root, "src", "protocol", "generated", "larikExtensions.ts");

// The schema has definitions only; the root type the generator needs is named here and dropped
// from the output again.
const ROOT = "LarikExtensionsSchema";

/** The generated file's text, from the schema as it is on disk. */
export async function generate() {
  const schema = JSON.parse(readFileSync(SCHEMA, "utf8"));
  const source = relative(root, SCHEMA).split("\\").join("/");
  const banner = [
    `// Generated from ${source.replace(/^(\.\.\/)+/, "")} by scripts/gen-protocol.mjs:`,
    "// do not edit; change the schema and run `npm run gen:protocol`.",
    "",
  ].join("\n");
  const text = await compile({ ...schema, title: ROOT, type: "object", additionalProperties: false }, ROOT, {
    bannerComment: banner,
    unreachableDefinitions: true, // every definition, referenced or not
    additionalProperties: false, // closed objects, as the agent sends them
    strictIndexSignatures: true,
    style: { printWidth: 120 },
  });
  const rootType = new RegExp(`export interface ${ROOT} \\{\\}\\n`);
  if (!rootType.test(text)) throw new Error(`gen-protocol: the generator's root type ${ROOT} is not where it was expected`);
  // The generator notes under every type which definition it came from: the names say as much.
  const note = " \\* This interface was referenced by `[^`]+`'s JSON-Schema\\n \\* via the `definition` \"[^\"]+\"\\.";
  return text
    .replace(rootType, "")
    .replace(new RegExp(`/\\*\\*\\n${note}\\n \\*/\\n`, "g"), "")
    .replace(new RegExp(`\\n \\*\\n${note}`, "g"), "");
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  mkdirSync(dirname(OUTPUT), { recursive: true });
  writeFileSync(OUTPUT, await generate());
  console.log(`gen-protocol: wrote ${relative(root, OUTPUT)}`);
}
