"""A language server with code actions of every shape Larik must handle, offered on any line of
any document:
- "Add a header": an edit that inserts `header` as the first line;
- "Add a marker later": no edit, only `data`; `codeAction/resolve` gives its edit (`resolved`
  as the first line), as servers that defer the work do;
- "Add a checked line": an edit (`checked` as the first line) and a command, `act.check`,
  which records the document's text on disk as it runs;
- "Add a header here and in locked/": one edit to this document and to `notes.act` in the
  project's `locked/` directory (the document's directory's sibling);
- "Create a file", "Rename the file", "Delete the file": edits that are file operations.
It publishes no problems. What it was asked to resolve and what the command saw are appended
to the file named by the first argument. Standard library only; LSP over stdio."""

import json
import sys
from urllib.parse import unquote, urlparse

from lsp_stdio import publish, send, serve


def record(line):
    with open(sys.argv[1], "a", encoding="utf-8") as log:
        log.write(line + "\n")


def inserted_first(text):
    start = {"line": 0, "character": 0}
    return [{"range": {"start": start, "end": start}, "newText": text + "\n"}]


def first_line(uri, text):
    return {"changes": {uri: inserted_first(text)}}


def sibling(uri, name):
    return uri.rsplit("/", 1)[0] + "/" + name


def actions(uri):
    made = sibling(uri, "made.act")
    locked = sibling(uri.rsplit("/", 1)[0], "locked/notes.act")
    return [
        {"title": "Add a header", "kind": "quickfix", "edit": first_line(uri, "header")},
        {
            "title": "Add a header here and in locked/",
            "kind": "quickfix",
            "edit": {"changes": {uri: inserted_first("header"), locked: inserted_first("header")}},
        },
        {"title": "Add a marker later", "kind": "quickfix", "data": {"uri": uri}},
        {
            "title": "Add a checked line",
            "kind": "quickfix",
            "edit": first_line(uri, "checked"),
            "command": {"title": "Check", "command": "act.check", "arguments": [uri]},
        },
        {
            "title": "Create a file",
            "kind": "refactor",
            "edit": {
                "documentChanges": [
                    {"kind": "create", "uri": made},
                    {"textDocument": {"uri": made, "version": None}, "edits": inserted_first("made")},
                ]
            },
        },
        {"title": "Rename the file", "kind": "refactor", "edit": {"documentChanges": [{"kind": "rename", "oldUri": uri, "newUri": sibling(uri, "renamed.act")}]}},
        {"title": "Delete the file", "kind": "refactor", "edit": {"documentChanges": [{"kind": "delete", "uri": uri}]}},
    ]


def handle(method, params, message):
    if method in ("textDocument/didOpen", "textDocument/didChange"):
        document = params["textDocument"]
        publish(document["uri"], document["version"], [])
    elif method == "textDocument/codeAction":
        send({"id": message["id"], "result": actions(params["textDocument"]["uri"])})
        return True
    elif method == "codeAction/resolve":
        record("resolve " + params["title"])
        send({"id": message["id"], "result": {**params, "edit": first_line(params["data"]["uri"], "resolved")}})
        return True
    elif method == "workspace/executeCommand" and params["command"] == "act.check":
        with open(unquote(urlparse(params["arguments"][0]).path), encoding="utf-8") as document:
            record("act.check saw " + json.dumps(document.read()))
        send({"id": message["id"], "result": None})
        return True
    return False


serve({"textDocumentSync": 1, "codeActionProvider": {"resolveProvider": True}, "executeCommandProvider": {"commands": ["act.check"]}}, handle)
