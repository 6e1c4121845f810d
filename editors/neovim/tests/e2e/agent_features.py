"""Finds out, once per test run, which optional behaviours the agent binary has, by talking ACP to
it directly (no Neovim): what it advertises in `initialize` and `session/new`, and what it does in
a short scripted turn when the client offers fs access and hunk review. Tests of a behaviour the
agent lacks are skipped with the feature's name (or fail, with LARIK_NVIM_STRICT=1).
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import tempfile
import threading
from pathlib import Path

from harness import LARIK_BIN, MockLlm

CLIENT_CAPABILITIES = {
    "fs": {"readTextFile": True, "writeTextFile": True},
    "terminal": False,
    "_meta": {"larik": {"hunkReview": True, "diagnostics": True}},
}


class _Agent:
    def __init__(self, cwd: Path, env: dict):
        self.process = subprocess.Popen(
            [str(LARIK_BIN), "acp"], cwd=cwd, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True
        )
        self.incoming: queue.Queue = queue.Queue()
        self.next_id = 1
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.process.stdout:
            if line.strip():
                self.incoming.put(json.loads(line))
        self.incoming.put(None)

    def send(self, message: dict):
        self.process.stdin.write(json.dumps(message) + "\n")
        self.process.stdin.flush()

    def request(self, method: str, params: dict) -> int:
        request_id = self.next_id
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
        return request_id

    def next(self, timeout: float = 15):
        return self.incoming.get(timeout=timeout)

    def response(self, request_id: int, on_message=None) -> dict:
        while True:
            message = self.next()
            if message is None:
                raise RuntimeError("the agent closed its output")
            if message.get("id") == request_id and "method" not in message:
                return message
            if on_message:
                on_message(message)

    def close(self):
        try:
            self.process.stdin.close()
            self.process.wait(timeout=5)
        except Exception:
            self.process.kill()


def probe() -> dict:
    """The agent's optional behaviours, as a dict of feature name -> bool."""
    features: dict[str, bool] = {}
    with tempfile.TemporaryDirectory() as temp:
        root = Path(temp)
        project = root / "project"
        home = root / "home"
        project.mkdir()
        home.mkdir()
        (project / "a.txt").write_text("one\ntwo\nthree\nfour\nfive\nsix\n")
        steps = [
            {"tool_calls": [{"id": "toolu_1", "name": "read", "input": {"path": "a.txt"}}]},
            {"tool_calls": [{"id": "toolu_2", "name": "edit", "input": {"path": "a.txt", "old_string": "one\ntwo\nthree\nfour\nfive\nsix\n", "new_string": "ONE\ntwo\nthree\nfour\nfive\nSIX\n"}}]},
            {"text": "done"},
        ]
        mock = MockLlm(root, steps)
        env = {
            "PATH": os.environ.get("PATH", ""),
            "HOME": str(home),
            "XDG_CONFIG_HOME": str(home / ".config"),
            "XDG_DATA_HOME": str(home / ".local" / "share"),
            "ANTHROPIC_BASE_URL": mock.url,
            "ANTHROPIC_API_KEY": "test-key",
            "LARIK_MODEL": "claude-mock",
        }
        agent = _Agent(project, env)
        try:
            init = agent.response(agent.request("initialize", {"protocolVersion": 1, "clientCapabilities": CLIENT_CAPABILITIES}))["result"]
            caps = init.get("agentCapabilities", {})
            larik = caps.get("_meta", {}).get("larik", {})
            features["hunkReview"] = bool(larik.get("hunkReview"))
            features["editorContext"] = bool(larik.get("editorContext"))
            features["loadSession"] = bool(caps.get("loadSession"))
            features["session/list"] = caps.get("sessionCapabilities", {}).get("list") is not None
            session = agent.response(agent.request("session/new", {"cwd": str(project), "mcpServers": []}))["result"]
            features["session/set_mode"] = bool(session.get("modes"))
            features["session/set_config_option"] = any(option.get("id") == "model" or option.get("category") == "model" for option in session.get("configOptions") or [])
            seen = {"fs/read_text_file": False, "fs/write_text_file": False, "hunks": False, "usage_update": False, "_larik/diagnostics": False}

            def answer(message):
                method = message.get("method")
                if method == "session/update" and message["params"]["update"].get("sessionUpdate") == "usage_update":
                    seen["usage_update"] = True
                if "id" not in message or not method:
                    return
                if method == "fs/read_text_file":
                    seen[method] = True
                    text = (project / "a.txt").read_text()
                    agent.send({"jsonrpc": "2.0", "id": message["id"], "result": {"content": text}})
                elif method == "fs/write_text_file":
                    seen[method] = True
                    Path(message["params"]["path"]).write_text(message["params"]["content"])
                    agent.send({"jsonrpc": "2.0", "id": message["id"], "result": {}})
                elif method == "_larik/diagnostics":
                    seen[method] = True
                    agent.send({"jsonrpc": "2.0", "id": message["id"], "result": {"diagnostics": None}})
                elif method == "session/request_permission":
                    hunks = message["params"]["toolCall"].get("_meta", {}).get("larik", {}).get("hunks")
                    seen["hunks"] = seen["hunks"] or bool(hunks)
                    agent.send({"jsonrpc": "2.0", "id": message["id"], "result": {"outcome": {"outcome": "selected", "optionId": "allow_once"}}})
                else:
                    agent.send({"jsonrpc": "2.0", "id": message["id"], "error": {"code": -32601, "message": "Method not found"}})

            agent.response(agent.request("session/prompt", {"sessionId": session["sessionId"], "prompt": [{"type": "text", "text": "probe"}]}), answer)
            features["fs/read_text_file"] = seen["fs/read_text_file"]
            features["fs/write_text_file"] = seen["fs/write_text_file"]
            features["hunkReview"] = features["hunkReview"] and seen["hunks"]
            features["usage_update"] = seen["usage_update"]
            features["_larik/diagnostics"] = seen["_larik/diagnostics"]
        finally:
            agent.close()
            mock.stop()
    return features


if __name__ == "__main__":
    print(json.dumps(probe(), indent=2))
