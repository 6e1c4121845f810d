"""LSP's framing over stdio (Content-Length headers, JSON bodies), for the small language servers
the tests run. Standard library only."""

import json
import sys


def read_message():
    """The next message, or None once the input ends."""
    headers = {}
    while True:
        line = sys.stdin.buffer.readline()
        if not line:
            return None
        line = line.decode("ascii").strip()
        if not line:
            break
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    return json.loads(sys.stdin.buffer.read(int(headers["content-length"])))


def send(message):
    body = json.dumps({"jsonrpc": "2.0", **message}).encode()
    sys.stdout.buffer.write(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
    sys.stdout.buffer.flush()


def todo_diagnostics(text, source):
    """One error on every line of `text` that says `TODO`, as `source` reports it."""
    return [
        {
            "range": {"start": {"line": number, "character": 0}, "end": {"line": number, "character": len(line)}},
            "severity": 1,
            "source": source,
            "message": "a TODO is left here",
        }
        for number, line in enumerate(text.split("\n"))
        if "TODO" in line
    ]


def publish(uri, version, diagnostics):
    send({"method": "textDocument/publishDiagnostics", "params": {"uri": uri, "version": version, "diagnostics": diagnostics}})


def serve(capabilities, handle):
    """Runs a server until `exit`: answers `initialize` with `capabilities` and `shutdown`;
    hands every other message to `handle(method, params, message)`, which returns whether it
    answered; a request it did not answer gets a null result."""
    while (message := read_message()) is not None:
        method, params = message.get("method"), message.get("params") or {}
        if method == "initialize":
            send({"id": message["id"], "result": {"capabilities": capabilities}})
        elif method == "shutdown":
            send({"id": message["id"], "result": None})
        elif method == "exit":
            return
        elif not handle(method, params, message) and method is not None and "id" in message:
            send({"id": message["id"], "result": None})
