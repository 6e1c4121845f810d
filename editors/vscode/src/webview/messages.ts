// The messages between the extension host and the chat webview, one discriminated union each way.
// Both sides import this file (the webview bundle and the extension bundle), so it holds types
// only and must not import `vscode` or anything of Node.

export type AgentStatus = "starting" | "idle" | "working" | "waiting" | "stopped" | "disabled";

export type ToolContentView =
  | { type: "text"; text: string }
  /** `diff`: its index among the call's diffs, to open it in the editor (`openDiff`). */
  | { type: "diff"; path: string; added: number; removed: number; isNew: boolean; preview: DiffPreviewLine[]; truncated: boolean; diff: number }
  | { type: "terminal"; terminalId: string }
  /** The files a command changed, from the summary after its output and the diffs after that. */
  | { type: "changes"; files: FileChangeView[]; ignored?: { text: string; count: number } };

export interface FileChangeView {
  /** Absolute. */
  path: string;
  change: "added" | "changed" | "deleted";
  added: number;
  removed: number;
  /** The index of its diff among the call's diffs; absent for a binary or very large file. */
  diff?: number;
}

export interface DiffPreviewLine {
  kind: "context" | "removed" | "added" | "gap";
  text: string;
}

/** The checkpoint the agent took before a turn's first change: undoing it puts the files back. */
export interface TurnCheckpointView {
  id: string;
  createdAt: string;
  /** What the turn changed, relative to the session's directory. */
  files: string[];
}

export type TranscriptItem = (
  | { type: "user"; id: string; text: string; context?: string[]; checkpoint?: TurnCheckpointView }
  | { type: "agent"; id: string; text: string }
  | { type: "thought"; id: string; text: string }
  | {
      type: "tool";
      id: string;
      title: string;
      kind: string;
      status: string;
      content: ToolContentView[];
      locations: Array<{ path: string; line?: number }>;
      /** What the user decided when asked: "Allowed once", "1 of 2 hunks accepted". */
      decision?: { text: string; allowed: boolean };
    }
  | { type: "notice"; id: string; severity: "info" | "warning" | "error"; text: string }
  /** A turn's plan as it stood when the turn ended: it stays with its turn, not pinned. */
  | { type: "plan"; id: string; entries: PlanEntryView[] }
) & {
  /** Part of a turn that was undone: its files went back and the agent forgot it. */
  undone?: boolean;
};

/** A subagent's phase as the chat shows it. `waiting`: one of its permission requests is open;
 * `ended`: it stopped for another reason than finishing or being stopped (see `stopReason`);
 * `unknown`: the agent no longer reports it. */
export type SubagentPhase = "running" | "waiting" | "done" | "stopped" | "ended" | "unknown";

export interface SubagentToolView {
  toolCallId: string;
  title: string;
  kind: string;
  status: string;
}

/** A subagent (a child session), shown inside the card of the `task` call that started it. */
export interface SubagentView {
  sessionId: string;
  /** The parent's `task` call; absent when the agent does not say (shown on its own then). */
  toolCallId?: string;
  title: string;
  phase: SubagentPhase;
  /** Why it ended, in words, for phase `ended`. */
  stopReason?: string;
  /** A Stop button is offered: it runs and the agent lets it be cancelled alone. */
  canStop: boolean;
  /** Stop was pressed; the child has not ended yet. */
  stopping: boolean;
  tools: SubagentToolView[];
  /** Its latest message, cut to a preview: the whole report is the task call's own output. */
  text: string;
  textTruncated: boolean;
}

export interface PickerOption {
  id: string;
  name: string;
  description?: string;
}

export interface Picker {
  current: string;
  options: PickerOption[];
}

export interface PlanEntryView {
  content: string;
  status: string;
  priority: string;
}

export interface UsageView {
  used: number;
  size: number;
  cost?: { amount: number; currency: string };
}

/** A slash command the agent offers (`available_commands_update`), run as the prompt `/name args`. */
export interface CommandView {
  name: string;
  description: string;
  /** What to type after the name, shown while nothing is typed there yet. */
  hint?: string;
}

export interface SessionView {
  status: AgentStatus;
  /** Why the agent is stopped or disabled, shown instead of the prompt box. */
  statusDetail?: string;
  sessionId?: string;
  /** The workspace folder the agent works in; paths inside it are shown relative. */
  cwd?: string;
  title?: string;
  mode?: Picker;
  model?: Picker;
  plan: PlanEntryView[];
  usage?: UsageView;
  canLoadSessions: boolean;
  commands: CommandView[];
}

export interface PermissionOptionView {
  optionId: string;
  name: string;
  kind: string;
}

export interface PermissionView {
  key: number;
  toolCallId: string;
  /** What the call does, in words: a command's description, else the agent's title. */
  title: string;
  toolKind: string;
  /** The shell command the call runs, verbatim, shown in a block of its own. */
  command?: string;
  /** The command runs outside the sandbox (`sandbox: false` in its input). */
  outsideSandbox?: boolean;
  options: PermissionOptionView[];
  /** The edit's file, when the tool call carries a diff that can be reviewed in an editor. */
  diffPath?: string;
  /** The edit's hunks are being decided in the editor's inline review: the card offers no
   * options of its own (`options` is empty), it points there. */
  reviewingHunks?: boolean;
  /** The agent reads a reason given with a rejection. */
  acceptsFeedback: boolean;
  /** The title of the subagent that asks, when a child session asks rather than the session. */
  subagent?: string;
}

export interface PermissionsView {
  current?: PermissionView;
  /** How many more wait behind the current one. */
  queued: number;
}

export interface ContextChip {
  id: string;
  label: string;
}

export type HostToWebview =
  | { type: "snapshot"; items: TranscriptItem[]; subagents: SubagentView[]; session: SessionView; permissions: PermissionsView; context: ContextChip[] }
  | { type: "item"; item: TranscriptItem }
  | { type: "subagent"; subagent: SubagentView }
  | { type: "append"; id: string; text: string }
  | { type: "session"; session: SessionView }
  | { type: "permissions"; permissions: PermissionsView }
  | { type: "context"; context: ContextChip[] }
  | { type: "focusPrompt" };

export type WebviewToHost =
  | { type: "ready" }
  | { type: "prompt"; text: string }
  | { type: "cancel" }
  | { type: "stopSubagent"; sessionId: string }
  | { type: "answerPermission"; key: number; optionId: string; feedback?: string }
  | { type: "viewDiff"; key: number }
  | { type: "setMode"; id: string }
  | { type: "setModel"; id: string }
  | { type: "loadSession"; sessionId: string }
  | { type: "removeContext"; id: string }
  | { type: "restart" }
  | { type: "openLocation"; path: string; line?: number }
  /** Opens one of a tool call's diffs (an edit's, or a file a command changed) in the editor. */
  | { type: "openDiff"; toolCallId: string; index: number }
  /** Undoes back to before the turn that took this checkpoint. */
  | { type: "undo"; checkpointId: string };
