// Builds the extension with esbuild: the extension host bundle (dist/extension.js), the chat
// webview bundle (dist/webview.js), and the test files (out/test/**, not packaged).
// Type checking is `npm run typecheck` (tsc --noEmit).
//
//   node scripts/build.mjs [--production]

import { build } from "esbuild";
import { readdirSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const production = process.argv.includes("--production");
const started = Date.now();

// Only this script's outputs: a packaged .vsix in dist/ stays.
for (const name of ["extension.js", "extension.js.map", "webview.js", "webview.js.map"]) rmSync(join(root, "dist", name), { force: true });
rmSync(join(root, "out"), { recursive: true, force: true });

const common = { absWorkingDir: root, bundle: true, logLevel: "warning", legalComments: "none" };

const testEntries = ["unit", "webview", "e2e"].flatMap((dir) =>
  readdirSync(join(root, "test", dir))
    .filter((name) => name.endsWith(".ts"))
    .map((name) => `test/${dir}/${name}`),
);

await Promise.all([
  build({
    ...common,
    entryPoints: ["src/extension.ts"],
    outfile: "dist/extension.js",
    platform: "node",
    format: "cjs",
    target: "node20",
    external: ["vscode"],
    sourcemap: production ? false : "linked",
    minify: production,
  }),
  build({
    ...common,
    entryPoints: ["webview/main.ts"],
    outfile: "dist/webview.js",
    platform: "browser",
    format: "iife",
    target: "es2020",
    sourcemap: production ? false : "linked",
    minify: production,
  }),
  build({
    ...common,
    entryPoints: testEntries,
    outdir: "out",
    outbase: ".",
    platform: "node",
    format: "cjs",
    target: "node20",
    external: ["vscode", "playwright-core"],
    sourcemap: "inline",
  }),
]);

console.log(`build: done in ${Date.now() - started} ms${production ? " (production)" : ""}`);
