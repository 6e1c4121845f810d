"""A stand-in for the user's own language server (a linter), to run beside Larik in the tests: it
publishes one error on every line that mentions `nme` whenever a document opens or changes, and
answers every request with null. Standard library only; LSP over stdio."""

import sys
from pathlib import Path

# The framing is shared with the project's other test language servers.
sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "tests" / "lsp-servers"))
from lsp_stdio import read_message, send  # noqa: E402


def publish(uri, text):
    diagnostics = [
        {
            "range": {"start": {"line": number, "character": line.index("nme")},
                      "end": {"line": number, "character": line.index("nme") + 3}},
            "severity": 1,
            "source": "lint",
            "message": "undefined name 'nme'",
        }
        for number, line in enumerate(text.splitlines())
        if "nme" in line
    ]
    send({"method": "textDocument/publishDiagnostics", "params": {"uri": uri, "diagnostics": diagnostics}})


def main():
    while (message := read_message()) is not None:
        method = message.get("method")
        if method == "initialize":
            send({"id": message["id"], "result": {"capabilities": {"textDocumentSync": 1}}})
        elif method == "exit":
            return
        elif method == "textDocument/didOpen":
            document = message["params"]["textDocument"]
            publish(document["uri"], document["text"])
        elif method == "textDocument/didChange":
            params = message["params"]
            publish(params["textDocument"]["uri"], params["contentChanges"][-1]["text"])
        elif "id" in message and method:
            send({"id": message["id"], "result": None})


if __name__ == "__main__":
    main()
