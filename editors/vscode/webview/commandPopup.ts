// The slash-command completion of the prompt box: typing `/` at the start of the prompt lists the
// agent's commands (name, input hint, description) above the box, narrowed as the name is typed.
// Up/Down move through them, Enter or Tab (or a click) puts `/name ` in the prompt with the caret
// where its arguments go, Escape closes the list until the text changes. Once a command is
// chosen, its hint shows in the box after the name, as a placeholder would, until something is
// typed there.
//
// The prompt keeps the focus throughout: the list is an ARIA listbox the textarea points into
// with `aria-activedescendant`, and a polite status says how many commands match. The text logic
// is in slashCommands.ts.

import type { CommandView } from "../src/webview/messages";
import { el } from "./dom";
import { acceptCommand, commandQuery, matchCommands, pendingHint } from "./slashCommands";

const LIST_ID = "command-list";

export class CommandPopup {
  /** The prompt with its list and hint around it: goes where the prompt would. */
  readonly box: HTMLElement;
  readonly #prompt: HTMLTextAreaElement;
  readonly #list = el("div", { id: LIST_ID, class: "command-list", role: "listbox", "aria-label": "Commands", hidden: "" });
  readonly #ghostTyped = el("span", { class: "ghost-typed" });
  readonly #ghostHint = el("span", { class: "ghost-hint" });
  readonly #ghost = el("div", { class: "prompt-ghost", "aria-hidden": "true", hidden: "" }, this.#ghostTyped, this.#ghostHint);
  readonly #status = el("div", { class: "sr-only", role: "status", id: "command-status" });
  readonly #onChange: () => void;
  #commands: CommandView[] = [];
  #shown: CommandView[] = [];
  #active = 0;
  /** The prompt's text when Escape closed the list: it stays closed until the text changes. */
  #dismissed: string | undefined;
  #focused = false;
  /** What the list's items were drawn from, so an unchanged list is not drawn again (the session
   * view, commands included, comes again with every status or usage change). */
  #drawn = "";

  /** `onChange` is told when accepting a command changed the prompt's text. */
  constructor(prompt: HTMLTextAreaElement, onChange: () => void) {
    this.#prompt = prompt;
    this.#onChange = onChange;
    prompt.setAttribute("aria-autocomplete", "list");
    prompt.setAttribute("aria-controls", LIST_ID);
    this.box = el("div", { class: "prompt-box" }, this.#list, this.#ghost, prompt, this.#status);
    prompt.addEventListener("input", () => {
      this.#focused = true;
      this.refresh();
    });
    // The caret moved without the text changing: the name it is in may be another.
    prompt.addEventListener("click", () => this.refresh());
    prompt.addEventListener("keyup", (event) => {
      if (["ArrowLeft", "ArrowRight", "ArrowUp", "ArrowDown", "Home", "End", "PageUp", "PageDown"].includes(event.key)) this.refresh();
    });
    prompt.addEventListener("focus", () => {
      this.#focused = true;
      this.refresh();
    });
    prompt.addEventListener("blur", () => {
      this.#focused = false;
      this.refresh();
    });
    // A press on an item must not take the focus from the prompt; the click chooses it.
    this.#list.addEventListener("mousedown", (event) => event.preventDefault());
    this.#list.addEventListener("click", (event) => {
      const option = (event.target as HTMLElement).closest<HTMLElement>("[role=option]");
      const command = option ? this.#shown[Number(option.dataset.index)] : undefined;
      if (command) this.#accept(command);
    });
  }

  get open(): boolean {
    return this.#shown.length > 0;
  }

  /** The agent's commands, as its latest `available_commands_update` lists them. */
  setCommands(commands: CommandView[]): void {
    this.#commands = commands;
    this.refresh();
  }

  /** Shows what the prompt's text and caret call for: the matching commands, or a hint. */
  refresh(): void {
    const prompt = this.#prompt;
    const text = prompt.value;
    if (this.#dismissed !== undefined && this.#dismissed !== text) this.#dismissed = undefined;
    const caret = prompt.selectionStart === prompt.selectionEnd ? prompt.selectionStart : -1;
    const query = this.#focused && !prompt.disabled && this.#dismissed === undefined ? commandQuery(text, caret) : undefined;
    const previous = this.#shown[this.#active]?.name;
    this.#shown = query ? matchCommands(this.#commands, query.query) : [];
    // The highlighted command stays highlighted while it still matches.
    const kept = this.#shown.findIndex((c) => c.name === previous);
    this.#active = kept === -1 ? 0 : kept;
    this.#render(query?.query ?? "");
    const hint = this.open ? undefined : pendingHint(text, this.#commands);
    this.#ghost.hidden = hint === undefined;
    this.#ghostTyped.textContent = hint === undefined ? "" : text;
    this.#ghostHint.textContent = hint ?? "";
    const status = this.open ? `${this.#shown.length} ${this.#shown.length === 1 ? "command" : "commands"}` : hint !== undefined ? `Arguments: ${hint}` : "";
    if (this.#status.textContent !== status) this.#status.textContent = status;
  }

  /** Handles a key in the prompt while the list is open; true when it was the list's. */
  handleKey(event: KeyboardEvent): boolean {
    if (!this.open || event.isComposing) return false;
    const plain = !event.shiftKey && !event.altKey && !event.ctrlKey && !event.metaKey;
    switch (event.key) {
      case "ArrowDown":
        this.#move(1);
        break;
      case "ArrowUp":
        this.#move(-1);
        break;
      case "Enter":
      case "Tab":
        if (!plain) return false;
        this.#accept(this.#shown[this.#active]!);
        break;
      case "Escape":
        this.#dismissed = this.#prompt.value;
        this.refresh();
        break;
      default:
        return false;
    }
    event.preventDefault();
    // Not the workbench's either: Escape there would cancel a running turn.
    event.stopPropagation();
    return true;
  }

  #move(by: number): void {
    const count = this.#shown.length;
    this.#active = (this.#active + by + count) % count;
    this.#render(undefined);
  }

  #accept(command: CommandView): void {
    const { text, caret } = acceptCommand(this.#prompt.value, command.name);
    this.#prompt.value = text;
    this.#prompt.focus();
    this.#prompt.setSelectionRange(caret, caret);
    this.#onChange();
    this.refresh();
  }

  /** Draws the list; `query` (the typed part, marked in each name) undefined keeps the items and
   * only moves the highlight. */
  #render(query: string | undefined): void {
    const prompt = this.#prompt;
    this.#list.hidden = !this.open;
    if (!this.open) {
      this.#list.replaceChildren();
      this.#drawn = "";
      prompt.removeAttribute("aria-activedescendant");
      return;
    }
    const drawn = query === undefined ? this.#drawn : JSON.stringify([query, this.#shown]);
    if (drawn !== this.#drawn) {
      this.#list.replaceChildren(...this.#shown.map((command, index) => option(command, index, query ?? "")));
      this.#drawn = drawn;
    }
    for (const node of this.#list.children) node.setAttribute("aria-selected", String(Number((node as HTMLElement).dataset.index) === this.#active));
    const active = this.#list.children[this.#active] as HTMLElement | undefined;
    if (active) {
      prompt.setAttribute("aria-activedescendant", active.id);
      active.scrollIntoView({ block: "nearest" });
    }
  }
}

function option(command: CommandView, index: number, query: string): HTMLElement {
  // The typed part of the name is marked when the name starts with it.
  const marked = query !== "" && command.name.toLowerCase().startsWith(query.toLowerCase());
  const name = el(
    "span",
    { class: "command-name" },
    "/",
    ...(marked ? [el("span", { class: "command-match" }, command.name.slice(0, query.length)), command.name.slice(query.length)] : [command.name]),
  );
  const line = el("div", { class: "command-line" }, name);
  if (command.hint) line.append(" ", el("span", { class: "command-hint" }, command.hint));
  const node = el("div", { id: `command-option-${index}`, class: "command-option", role: "option", "aria-selected": "false", "data-index": String(index), "data-name": command.name }, line);
  if (command.description) node.append(el("div", { class: "command-description", title: command.description }, command.description));
  return node;
}
