"""A language server that offers pull diagnostics (`diagnosticProvider`) but answers every pull
with ServerCancelled, as a busy server does, and publishes its diagnostics instead: one error on
every line that says `TODO`, whenever a document opens or changes. Larik must fall back to the
published ones. Each pull's document is appended to the file named by the first argument, so a
test sees that the pull was asked. Standard library only; LSP over stdio."""

import sys

from lsp_stdio import publish, send, serve, todo_diagnostics


def handle(method, params, message):
    if method == "textDocument/diagnostic":
        with open(sys.argv[1], "a", encoding="utf-8") as pulls:
            pulls.write(params["textDocument"]["uri"] + "\n")
        send({"id": message["id"], "error": {"code": -32802, "message": "busy", "data": {"retriggerRequest": True}}})
        return True
    if method == "textDocument/didOpen":
        document = params["textDocument"]
        publish(document["uri"], document["version"], todo_diagnostics(document["text"], "busylint"))
    elif method == "textDocument/didChange":
        document = params["textDocument"]
        publish(document["uri"], document["version"], todo_diagnostics(params["contentChanges"][-1]["text"], "busylint"))
    return False


serve({"textDocumentSync": 1, "diagnosticProvider": {"interFileDependencies": False, "workspaceDiagnostics": False}}, handle)
