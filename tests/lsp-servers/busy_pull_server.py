"""A language server that offers pull diagnostics (`diagnosticProvider`) but answers every pull
with ServerCancelled, as a busy server does, and publishes its diagnostics instead: one error on
every line that says `TODO`, whenever a document opens or changes. Larik must fall back to the
published ones. Each pull's document is appended to the file named by the first argument, so a
test sees that the pull was asked. Standard library only; LSP over stdio."""

import sys

from lsp_stdio import read_message, send


def publish(uri, version, text):
    diagnostics = [
        {
            "range": {"start": {"line": number, "character": 0}, "end": {"line": number, "character": len(line)}},
            "severity": 1,
            "source": "busylint",
            "message": "a TODO is left here",
        }
        for number, line in enumerate(text.split("\n"))
        if "TODO" in line
    ]
    send({"method": "textDocument/publishDiagnostics", "params": {"uri": uri, "version": version, "diagnostics": diagnostics}})


def main():
    while (message := read_message()) is not None:
        method, params = message.get("method"), message.get("params") or {}
        if method == "initialize":
            capabilities = {"textDocumentSync": 1, "diagnosticProvider": {"interFileDependencies": False, "workspaceDiagnostics": False}}
            send({"id": message["id"], "result": {"capabilities": capabilities}})
        elif method == "textDocument/diagnostic":
            with open(sys.argv[1], "a", encoding="utf-8") as pulls:
                pulls.write(params["textDocument"]["uri"] + "\n")
            send({"id": message["id"], "error": {"code": -32802, "message": "busy", "data": {"retriggerRequest": True}}})
        elif method == "textDocument/didOpen":
            document = params["textDocument"]
            publish(document["uri"], document["version"], document["text"])
        elif method == "textDocument/didChange":
            document = params["textDocument"]
            publish(document["uri"], document["version"], params["contentChanges"][-1]["text"])
        elif method == "shutdown":
            send({"id": message["id"], "result": None})
        elif method == "exit":
            return
        elif "id" in message:
            send({"id": message["id"], "result": None})


main()
