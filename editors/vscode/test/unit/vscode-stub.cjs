// A stand-in for the `vscode` module, with just what the extension touches. It records what the
// extension registers and runs, so unit tests can assert on it. Tests reach the recorder and the
// knobs (settings, trust, workspace folder) through `stub`.

"use strict";

const path = require("node:path");
const fs = require("node:fs");

const stub = {
  commands: new Map(),
  executed: [],
  contexts: new Map(),
  webviewProviders: new Map(),
  contentProviders: new Map(),
  codeLensProviders: [],
  statusBarItems: [],
  messages: [],
  terminals: [],
  logLines: [],
  settings: {},
  trusted: true,
  folder: undefined,
  listeners: { trust: [], config: [] },
  /** Answers `show*Message` calls: a function (message, items) -> item. */
  answerMessage: () => undefined,
  reset() {
    this.commands.clear();
    this.executed = [];
    this.contexts.clear();
    this.webviewProviders.clear();
    this.contentProviders.clear();
    this.codeLensProviders = [];
    this.statusBarItems = [];
    this.messages = [];
    this.terminals = [];
    this.logLines = [];
    this.settings = {};
    this.trusted = true;
    this.folder = undefined;
    this.listeners = { trust: [], config: [] };
    this.answerMessage = () => undefined;
  },
};

class Disposable {
  constructor(fn) {
    this._fn = fn;
  }
  dispose() {
    if (this._fn) this._fn();
    this._fn = undefined;
  }
  static from(...items) {
    return new Disposable(() => items.forEach((d) => d.dispose()));
  }
}

class EventEmitter {
  constructor() {
    this._listeners = [];
    this.event = (listener) => {
      this._listeners.push(listener);
      return new Disposable(() => (this._listeners = this._listeners.filter((l) => l !== listener)));
    };
  }
  fire(value) {
    for (const l of [...this._listeners]) l(value);
  }
  dispose() {
    this._listeners = [];
  }
}

const noEvent = () => new Disposable();

class Uri {
  constructor(scheme, authority, p, query, fragment) {
    this.scheme = scheme;
    this.authority = authority || "";
    this.path = p || "";
    this.query = query || "";
    this.fragment = fragment || "";
  }
  get fsPath() {
    return this.path;
  }
  static file(p) {
    return new Uri("file", "", path.resolve(p));
  }
  static from(c) {
    return new Uri(c.scheme, c.authority, c.path, c.query, c.fragment);
  }
  static parse(s) {
    const m = /^([a-z][\w+.-]*):(?:\/\/([^/?#]*))?([^?#]*)(?:\?([^#]*))?(?:#(.*))?$/i.exec(s);
    return m ? new Uri(m[1], m[2], m[3], m[4], m[5]) : new Uri("file", "", s);
  }
  static joinPath(base, ...parts) {
    return new Uri(base.scheme, base.authority, path.posix.join(base.path, ...parts), base.query, base.fragment);
  }
  with(change) {
    return new Uri(change.scheme ?? this.scheme, change.authority ?? this.authority, change.path ?? this.path, change.query ?? this.query, change.fragment ?? this.fragment);
  }
  toString() {
    const authority = this.scheme === "file" || this.authority ? `//${this.authority}` : "";
    return `${this.scheme}:${authority}${this.path}${this.query ? `?${this.query}` : ""}${this.fragment ? `#${this.fragment}` : ""}`;
  }
}

class Position {
  constructor(line, character) {
    this.line = line;
    this.character = character;
  }
}

class Range {
  constructor(a, b, c, d) {
    if (typeof a === "number") {
      this.start = new Position(a, b);
      this.end = new Position(c, d);
    } else {
      this.start = a;
      this.end = b;
    }
  }
  get isEmpty() {
    return this.start.line === this.end.line && this.start.character === this.end.character;
  }
}

class Selection extends Range {}

class CodeLens {
  constructor(range, command) {
    this.range = range;
    this.command = command;
  }
}

class ThemeColor {
  constructor(id) {
    this.id = id;
  }
}

class WorkspaceEdit {
  constructor() {
    this.operations = [];
  }
  replace(uri, range, text) {
    this.operations.push({ kind: "replace", uri, range, text });
  }
  insert(uri, position, text) {
    this.operations.push({ kind: "insert", uri, position, text });
  }
  createFile(uri, options) {
    this.operations.push({ kind: "create", uri, options });
  }
}

class TabInputText {
  constructor(uri) {
    this.uri = uri;
  }
}

class TabInputTextDiff {
  constructor(original, modified) {
    this.original = original;
    this.modified = modified;
  }
}

function logChannel(name) {
  const line = (level) => (message) => stub.logLines.push({ channel: name, level, message: String(message) });
  return {
    name,
    info: line("info"),
    warn: line("warn"),
    error: line("error"),
    debug: line("debug"),
    trace: line("trace"),
    append() {},
    appendLine: line("info"),
    show() {},
    dispose() {},
  };
}

function showMessage(level) {
  return (message, ...items) => {
    stub.messages.push({ level, message, items });
    return Promise.resolve(stub.answerMessage(message, items));
  };
}

function setting(key, fallback) {
  return Object.prototype.hasOwnProperty.call(stub.settings, key) ? stub.settings[key] : fallback;
}

const tabGroups = {
  all: [],
  get activeTabGroup() {
    return { activeTab: undefined, tabs: [] };
  },
  onDidChangeTabs: noEvent,
  close: async () => true,
};

module.exports = {
  __stub: stub,
  Disposable,
  EventEmitter,
  Uri,
  Position,
  Range,
  Selection,
  CodeLens,
  ThemeColor,
  WorkspaceEdit,
  TabInputText,
  TabInputTextDiff,
  StatusBarAlignment: { Left: 1, Right: 2 },
  TextEditorLineNumbersStyle: { Off: 0, On: 1, Relative: 2 },
  OverviewRulerLane: { Left: 1, Center: 2, Right: 4, Full: 7 },
  DiagnosticSeverity: { Error: 0, Warning: 1, Information: 2, Hint: 3 },
  window: {
    createOutputChannel: (name) => logChannel(name),
    createStatusBarItem(id, alignment, priority) {
      const item = { id, alignment, priority, text: "", tooltip: "", show() {}, hide() {}, dispose() {} };
      stub.statusBarItems.push(item);
      return item;
    },
    createTextEditorDecorationType: (options) => ({ options, dispose() {} }),
    registerWebviewViewProvider(id, provider) {
      stub.webviewProviders.set(id, provider);
      return new Disposable(() => stub.webviewProviders.delete(id));
    },
    showInformationMessage: showMessage("info"),
    showWarningMessage: showMessage("warning"),
    showErrorMessage: showMessage("error"),
    showQuickPick: async () => undefined,
    createTerminal(options) {
      const terminal = { options, shown: false, sent: [], show() { this.shown = true; }, sendText(text) { this.sent.push(text); }, dispose() {} };
      stub.terminals.push(terminal);
      return terminal;
    },
    showInputBox: async () => undefined,
    showTextDocument: async (document) => ({ document, setDecorations() {} }),
    onDidChangeVisibleTextEditors: noEvent,
    onDidChangeActiveTextEditor: noEvent,
    onDidChangeTextEditorSelection: noEvent,
    activeTextEditor: undefined,
    visibleTextEditors: [],
    tabGroups,
  },
  workspace: {
    getConfiguration(section) {
      return { get: (key, fallback) => setting(`${section}.${key}`, fallback) };
    },
    get isTrusted() {
      return stub.trusted;
    },
    get workspaceFolders() {
      return stub.folder ? [{ uri: Uri.file(stub.folder), name: path.basename(stub.folder), index: 0 }] : undefined;
    },
    textDocuments: [],
    registerTextDocumentContentProvider(scheme, provider) {
      stub.contentProviders.set(scheme, provider);
      return new Disposable(() => stub.contentProviders.delete(scheme));
    },
    onDidChangeConfiguration(listener) {
      stub.listeners.config.push(listener);
      return new Disposable();
    },
    onDidGrantWorkspaceTrust(listener) {
      stub.listeners.trust.push(listener);
      return new Disposable();
    },
    fs: {
      readFile: async (uri) => fs.promises.readFile(uri.fsPath),
      stat: async (uri) => fs.promises.stat(uri.fsPath),
    },
    onDidChangeTextDocument: noEvent,
    onDidOpenTextDocument: noEvent,
    applyEdit: async () => true,
    openTextDocument: async (uri) => ({ uri, languageId: "plaintext", getText: () => "", lineCount: 0, save: async () => true }),
  },
  languages: {
    registerCodeLensProvider(selector, provider) {
      stub.codeLensProviders.push({ selector, provider });
      return new Disposable();
    },
    getDiagnostics: () => [],
    onDidChangeDiagnostics: noEvent,
    setTextDocumentLanguage: async (document, languageId) => ({ ...document, languageId }),
  },
  commands: {
    registerCommand(id, run) {
      if (stub.commands.has(id)) throw new Error(`command ${id} registered twice`);
      stub.commands.set(id, run);
      return new Disposable(() => stub.commands.delete(id));
    },
    async executeCommand(id, ...args) {
      stub.executed.push({ id, args });
      if (id === "setContext") stub.contexts.set(args[0], args[1]);
      const run = stub.commands.get(id);
      return run ? run(...args) : undefined;
    },
  },
};
