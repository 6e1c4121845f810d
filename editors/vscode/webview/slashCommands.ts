// Slash commands in the prompt box, as text: whether the caret is in a command's name at the start
// of the prompt (and what is typed of it), which of the agent's commands match, what accepting
// one makes of the prompt, and the input hint still due after a command's name. The popup
// (commandPopup.ts) draws this; keeping it free of the DOM lets it be tested under plain Node.
//
// A command only counts at the very start of the prompt: the agent reads `/name args` there and
// nowhere else, so `see /tmp` is text.

import type { CommandView } from "../src/webview/messages";

/** The command name being typed: `query` is the part before the caret, `end` where the name ends. */
export interface CommandQuery {
  query: string;
  end: number;
}

/** The name the caret is in, when the prompt starts with `/`; undefined otherwise. */
export function commandQuery(text: string, caret: number): CommandQuery | undefined {
  if (!text.startsWith("/") || caret < 1) return undefined;
  const space = text.search(/\s/);
  const end = space === -1 ? text.length : space;
  if (caret > end) return undefined;
  return { query: text.slice(1, caret), end };
}

/** The commands whose name starts with `query` (any case), in the agent's order; then those with
 * a later part that does (`rec` finds `git:recent`, `fetch` finds `mcp__web__fetch`). */
export function matchCommands(commands: readonly CommandView[], query: string): CommandView[] {
  const wanted = query.toLowerCase();
  const whole = commands.filter((c) => c.name.toLowerCase().startsWith(wanted));
  if (wanted === "") return whole;
  const parts = commands.filter((c) => !whole.includes(c) && c.name.toLowerCase().split(/:|__/).slice(1).some((part) => part.startsWith(wanted)));
  return [...whole, ...parts];
}

/** The prompt with its command name replaced by `/name ` and the caret after that space, where the
 * arguments go; what followed the name is kept. */
export function acceptCommand(text: string, name: string): { text: string; caret: number } {
  const space = text.search(/\s/);
  const rest = space === -1 ? "" : text.slice(space).replace(/^ /, "");
  const head = `/${name} `;
  return { text: head + rest, caret: head.length };
}

/** The hint of the command the prompt names, while nothing follows its name but spaces. */
export function pendingHint(text: string, commands: readonly CommandView[]): string | undefined {
  const name = /^\/(\S+) +$/.exec(text)?.[1];
  if (name === undefined) return undefined;
  return commands.find((c) => c.name === name)?.hint;
}
