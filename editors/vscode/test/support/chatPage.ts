// The chat webview bundle served as a static page under the same CSP as in VS Code, with a fake
// `acquireVsCodeApi` that records what the webview posts, opened in headless Chromium. Host
// messages are delivered with window.postMessage, as VS Code does. Shared by the webview suites.

import { readFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import type { HostToWebview, SessionView, SubagentView, TranscriptItem } from "../../src/webview/messages";
import { EXTENSION_ROOT } from "./agent";
import { launchChromium } from "./browser";

const NONCE = "dGVzdG5vbmNl";
// The theme variables VS Code injects; a few so the page looks as it would.
const THEME = ":root{--vscode-font-family:sans-serif;--vscode-font-size:13px;--vscode-foreground:#ccc;--vscode-sideBar-background:#252526;--vscode-button-background:#0e639c;--vscode-button-foreground:#fff;--vscode-input-background:#3c3c3c;--vscode-editor-font-family:monospace;--vscode-textLink-foreground:#3794ff}";
const PAGE = `<!DOCTYPE html><html><head><meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'self'; script-src 'nonce-${NONCE}'; img-src 'self' data:">
<link rel="stylesheet" href="/theme.css"><link rel="stylesheet" href="/chat.css"></head>
<body><div id="app"></div>
<script nonce="${NONCE}">
  window.__posted = [];
  window.__state = undefined;
  window.acquireVsCodeApi = () => ({
    postMessage: (m) => window.__posted.push(m),
    getState: () => window.__state,
    setState: (s) => { window.__state = s; },
  });
</script>
<script nonce="${NONCE}" src="/webview.js"></script></body></html>`;

let server: Server | undefined;
let base: string;
let browser: Browser | undefined;

/** Serves the bundle and starts the browser; call from the suite's `before`. */
export async function startChatPages(): Promise<void> {
  const files: Record<string, [string, string]> = {
    "/": ["text/html", PAGE],
    "/webview.js": ["text/javascript", readFileSync(join(EXTENSION_ROOT, "dist", "webview.js"), "utf8")],
    "/chat.css": ["text/css", readFileSync(join(EXTENSION_ROOT, "media", "chat.css"), "utf8")],
    "/theme.css": ["text/css", THEME],
  };
  const listening = createServer((req, res) => {
    const file = files[req.url ?? "/"];
    if (req.url === "/favicon.ico") {
      res.writeHead(204).end();
      return;
    }
    if (!file) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { "content-type": file[0] }).end(file[1]);
  });
  await new Promise<void>((resolve) => listening.listen(0, "127.0.0.1", resolve));
  server = listening;
  base = `http://127.0.0.1:${(listening.address() as AddressInfo).port}`;
  browser = await launchChromium();
}

/** Stops the browser and the server; call from the suite's `after`. */
export async function stopChatPages(): Promise<void> {
  await browser?.close();
  await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
}

export interface Loaded {
  page: Page;
  problems: string[];
  send: (message: HostToWebview) => Promise<void>;
  posted: () => Promise<any[]>;
  waitPosted: (type: string) => Promise<any>;
}

/** A fresh page with the chat loaded. */
export async function open(): Promise<Loaded> {
  if (!browser) throw new Error("startChatPages() first");
  const page = await browser.newPage();
  const problems: string[] = [];
  page.on("console", (m) => {
    if (m.type() === "error") problems.push(m.text());
  });
  page.on("pageerror", (e) => problems.push(String(e)));
  await page.goto(base);
  const posted = () => page.evaluate(() => (window as any).__posted as any[]);
  const waitPosted = async (type: string) => {
    await page.waitForFunction((t) => (window as any).__posted.some((m: any) => m.type === t), type, { timeout: 5000 });
    return (await posted()).filter((m) => m.type === type).at(-1);
  };
  const send = (message: HostToWebview) => page.evaluate((m) => window.postMessage(m, "*"), message);
  return { page, problems, send, posted, waitPosted };
}

export const SESSION: SessionView = {
  status: "idle",
  sessionId: "sess_1",
  plan: [],
  canLoadSessions: true,
  commands: [],
  mode: { current: "default", options: [{ id: "default", name: "Default" }, { id: "plan", name: "Plan" }] },
  model: { current: "m1", options: [{ id: "m1", name: "Model One" }, { id: "m2", name: "Model Two" }] },
};

export const snapshot = (items: TranscriptItem[] = [], session: SessionView = SESSION, subagents: SubagentView[] = []): HostToWebview => ({
  type: "snapshot",
  items,
  subagents,
  session,
  permissions: { queued: 0 },
  context: [],
});
