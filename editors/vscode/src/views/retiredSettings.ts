// Settings the extension no longer reads, told once to a user who still has one set.
//
// `larik.autoApprove` answered some permission requests in the editor, a second policy beside the
// agent's own: a call it allowed was one the agent's rules could not explain. Those rules (Claude
// Code's `permissions.allow` / `deny` / `ask`, and the mode) are now the only policy, so the
// setting is ignored, and the user learns where the rules go instead of finding the editor asking
// again without a word.

import * as os from "node:os";
import * as path from "node:path";
import * as vscode from "vscode";

/** Where the notice remembers it was shown: once per user, not once per window. */
export const AUTO_APPROVE_NOTICE_SHOWN = "larik.autoApproveNoticeShown";
const OPEN_RULES = "Open ~/.config/larik/settings.json";

export const AUTO_APPROVE_NOTICE =
  "Larik no longer reads the setting larik.autoApprove: the agent's own permission rules decide what runs without asking. " +
  "Write them as permissions.allow, deny and ask (Claude Code's format) in the project's .claude/settings.json or in " +
  "~/.config/larik/settings.json, or pick a mode such as Accept edits in the chat.";

/** The agent's user settings file, where rules for every project go. */
export function userSettingsPath(env: NodeJS.ProcessEnv = process.env): string {
  const config = env.XDG_CONFIG_HOME || path.join(env.HOME || os.homedir(), ".config");
  return path.join(config, "larik", "settings.json");
}

/** Shows the notice when `value` (what the user has for the setting) is set and it was not shown before. */
export async function noticeRetiredAutoApprove(value: unknown, state: vscode.Memento): Promise<boolean> {
  if (value === undefined || state.get<boolean>(AUTO_APPROVE_NOTICE_SHOWN)) return false;
  await state.update(AUTO_APPROVE_NOTICE_SHOWN, true);
  void vscode.window.showInformationMessage(AUTO_APPROVE_NOTICE, OPEN_RULES).then(async (choice) => {
    if (choice !== OPEN_RULES) return;
    // A file that is not there yet opens as a new one at that path: saving creates it.
    const file = vscode.Uri.file(userSettingsPath());
    const exists = await vscode.workspace.fs.stat(file).then(() => true, () => false);
    await vscode.window.showTextDocument(exists ? file : file.with({ scheme: "untitled" }));
  });
  return true;
}
