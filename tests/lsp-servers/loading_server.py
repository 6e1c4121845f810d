"""A language server that publishes one error on every line that says `TODO`: at once when a
document opens, but for a change only after loading for 4 seconds, which it reports as
work-done progress (`$/progress` begin, then end) as a server indexing a project does. Longer
than the 3 seconds Larik waits for an idle server, well within the 15 it waits for a loading
one. Standard library only; LSP over stdio."""

import time

from lsp_stdio import publish, send, serve, todo_diagnostics

LOADING_SECONDS = 4


def handle(method, params, message):
    if method == "textDocument/didOpen":
        document = params["textDocument"]
        publish(document["uri"], document["version"], todo_diagnostics(document["text"], "slowlint"))
    elif method == "textDocument/didChange":
        document = params["textDocument"]
        send({"id": "loading", "method": "window/workDoneProgress/create", "params": {"token": "loading"}})
        send({"method": "$/progress", "params": {"token": "loading", "value": {"kind": "begin", "title": "Loading"}}})
        time.sleep(LOADING_SECONDS)
        publish(document["uri"], document["version"], todo_diagnostics(params["contentChanges"][-1]["text"], "slowlint"))
        send({"method": "$/progress", "params": {"token": "loading", "value": {"kind": "end"}}})
    return False


serve({"textDocumentSync": 1}, handle)
