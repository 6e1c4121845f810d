#!/usr/bin/env python3
"""Starts an installed `larik` as an editor would (COMMAND... acp, with this environment) and
checks its first answers: `initialize` answers protocol version 1, and with --session
`session/new` answers a sessionId. Exits non-zero, with the agent's stderr, when either fails or
takes longer than --timeout seconds.

    python3 tests/dist/acp_handshake.py [--session] [--since EPOCH] [--timeout S] -- COMMAND...

--since EPOCH (seconds, as `date +%s.%N` prints) also prints how long after EPOCH `initialize`
was answered: the benchmark passes the moment its install began.
"""

from __future__ import annotations

import argparse
import json
import os
import selectors
import subprocess
import sys
import tempfile
import time


def read_answer(agent: subprocess.Popen, want_id: int, deadline: float) -> dict:
    """The response to request `want_id`, skipping notifications and other lines."""
    selector = selectors.DefaultSelector()
    selector.register(agent.stdout, selectors.EVENT_READ)
    buffered = b""
    while True:
        if b"\n" in buffered:
            line, buffered = buffered.split(b"\n", 1)
            message = json.loads(line)
            if message.get("id") == want_id and ("result" in message or "error" in message):
                return message
            continue
        left = deadline - time.monotonic()
        if left <= 0 or not selector.select(timeout=left):
            raise TimeoutError(f"no answer to request {want_id} in time")
        chunk = os.read(agent.stdout.fileno(), 65536)
        if not chunk:
            raise EOFError(f"the agent closed stdout before answering request {want_id}")
        buffered += chunk


def send(agent: subprocess.Popen, request_id: int, method: str, params: dict) -> None:
    line = json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
    agent.stdin.write(line.encode() + b"\n")
    agent.stdin.flush()


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--session", action="store_true", help="also open a session")
    parser.add_argument("--since", type=float, help="print seconds from this epoch to the initialize answer")
    parser.add_argument("--timeout", type=float, default=20.0)
    parser.add_argument("command", nargs="+")
    args = parser.parse_args()

    deadline = time.monotonic() + args.timeout
    # The agent's stderr goes to a file, read only on failure: a pipe nobody drains could fill.
    stderr = tempfile.TemporaryFile()
    agent = subprocess.Popen(args.command + ["acp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr)

    def agent_stderr() -> str:
        stderr.seek(0)
        return stderr.read().decode(errors="replace")[-4000:]

    try:
        send(agent, 1, "initialize", {"protocolVersion": 1, "clientCapabilities": {}})
        answer = read_answer(agent, 1, deadline)
        answered_at = time.time()
        if answer.get("result", {}).get("protocolVersion") != 1:
            raise ValueError(f"initialize answered {json.dumps(answer)}")
        print(f"initialize: protocolVersion 1, agent {answer['result'].get('agentInfo', {}).get('version', '?')}")
        if args.since is not None:
            print(f"initialize answered {answered_at - args.since:.2f} s after the start")
        if args.session:
            send(agent, 2, "session/new", {"cwd": os.getcwd(), "mcpServers": []})
            answer = read_answer(agent, 2, deadline)
            session = answer.get("result", {}).get("sessionId")
            if not session:
                raise ValueError(f"session/new answered {json.dumps(answer)}")
            print(f"session/new: sessionId {session}")
    except (TimeoutError, EOFError, ValueError, json.JSONDecodeError) as problem:
        agent.kill()
        agent.wait()
        print(f"acp_handshake: {' '.join(args.command)}: {problem}", file=sys.stderr)
        print(agent_stderr(), file=sys.stderr)
        return 1
    # Closing stdin is how an editor ends the agent; it must then exit by itself.
    agent.stdin.close()
    try:
        status = agent.wait(timeout=max(deadline - time.monotonic(), 5))
    except subprocess.TimeoutExpired:
        agent.kill()
        print("acp_handshake: the agent did not exit when its stdin closed", file=sys.stderr)
        return 1
    if status != 0:
        print(f"acp_handshake: the agent exited {status} when its stdin closed", file=sys.stderr)
        print(agent_stderr(), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
