// Slicing a text by lines, as `fs/read_text_file` asks: `line` is 1-based, `limit` counts lines.
// This module does not import `vscode`.

import { splitLines } from "./hunks";

export function sliceLines(text: string, line?: number | null, limit?: number | null): string {
  if ((line == null || line <= 1) && limit == null) return text;
  const lines = splitLines(text);
  const start = Math.max(0, (line ?? 1) - 1);
  const end = limit == null ? lines.length : start + Math.max(0, limit);
  return lines.slice(start, end).join("");
}
