"""Drives the plugin for real: a child `nvim --embed --headless` (through pynvim) with the plugin on
its runtimepath, the real `larik acp` binary it starts, and the mock model server the agent talks
to. Each test gets a private project, home and config directory, and a cleared environment.

Nothing here sleeps to wait for an event: `wait_for` polls a condition until a deadline and fails
with what it saw last.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import time
import urllib.request
from pathlib import Path

import pynvim

PLUGIN_DIR = Path(__file__).resolve().parents[2]
REPO_ROOT = PLUGIN_DIR.parents[1]
WAIT = 20.0


def find_binary(name: str, env_var: str) -> Path:
    """A project binary: $<env_var>, else $CARGO_TARGET_DIR/debug, else the repository's target/debug."""
    if os.environ.get(env_var):
        return Path(os.environ[env_var])
    if os.environ.get("CARGO_TARGET_DIR"):
        return Path(os.environ["CARGO_TARGET_DIR"]) / "debug" / name
    return REPO_ROOT / "target" / "debug" / name


def find_nvim() -> str:
    local = PLUGIN_DIR / ".cache" / "venv" / "bin" / "nvim"
    if local.exists():
        return str(local)
    found = shutil.which("nvim")
    if not found:
        raise RuntimeError("nvim not found: run editors/neovim/scripts/setup.sh")
    return found


LARIK_BIN = find_binary("larik", "LARIK_BIN")
MOCK_BIN = find_binary("larik-mock-llm", "LARIK_MOCK_LLM_BIN")


def wait_for(condition, what: str, timeout: float = WAIT, interval: float = 0.02):
    """Polls `condition()` until it returns a truthy value, which is returned; fails after `timeout`."""
    deadline = time.monotonic() + timeout
    last = None
    while True:
        last = condition()
        if last:
            return last
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what}; last saw: {last!r}")
        time.sleep(interval)


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie is gone for our purposes.
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


class MockLlm:
    """The mock model server, serving one scenario step per request."""

    def __init__(self, directory: Path, steps: list[dict]):
        self.scenario = directory / "scenario.json"
        self.scenario.write_text(json.dumps({"responses": steps}))
        self.process = subprocess.Popen(
            [str(MOCK_BIN), "--scenario", str(self.scenario), "--port", "0"],
            stdout=subprocess.PIPE,
            text=True,
        )
        line = self.process.stdout.readline()
        if not line:
            raise RuntimeError("the mock model server printed nothing")
        self.url = json.loads(line)["url"]

    def requests(self) -> list[dict]:
        with urllib.request.urlopen(self.url + "/requests", timeout=5) as response:
            return json.loads(response.read())

    def stop(self):
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait(timeout=5)


def tool_results(request: dict) -> list[str]:
    """The text of every tool_result block in an Anthropic request body."""
    texts = []
    for message in request.get("messages", []):
        content = message.get("content")
        if not isinstance(content, list):
            continue
        for block in content:
            if block.get("type") != "tool_result":
                continue
            inner = block.get("content")
            if isinstance(inner, str):
                texts.append(inner)
            elif isinstance(inner, list):
                texts.extend(part.get("text", "") for part in inner if isinstance(part, dict))
    return texts


def user_texts(request: dict) -> str:
    """Every text the user side of a request carries, joined."""
    parts = []
    for message in request.get("messages", []):
        if message.get("role") != "user":
            continue
        content = message.get("content")
        if isinstance(content, str):
            parts.append(content)
        elif isinstance(content, list):
            for block in content:
                if block.get("type") == "text":
                    parts.append(block.get("text", ""))
    return "\n".join(parts)


class Editor:
    """A child Neovim running the plugin against the real agent and the mock model: embedded
    (`nvim --embed`), or with `terminal=True` drawing its real screen in a tmux session of
    `WIDTH` x `HEIGHT` (reached over `--listen`), which `screen()` reads back."""

    WIDTH, HEIGHT = 150, 40

    def __init__(self, root: Path, mock: MockLlm, options: dict | None = None, terminal: bool = False):
        self.root = root
        self.project = root / "project"
        self.home = root / "home"
        self.project.mkdir(parents=True, exist_ok=True)
        (self.home / ".config").mkdir(parents=True, exist_ok=True)
        self.mock = mock
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(self.home),
            "XDG_CONFIG_HOME": str(self.home / ".config"),
            "XDG_DATA_HOME": str(self.home / ".local" / "share"),
            "XDG_STATE_HOME": str(self.home / ".local" / "state"),
            "XDG_CACHE_HOME": str(self.home / ".cache"),
            "LANG": "C.UTF-8",
            "LARIK_BIN": str(LARIK_BIN),
            "LARIK_LOG": os.environ.get("LARIK_LOG", "warn"),
            "ANTHROPIC_BASE_URL": mock.url,
            "ANTHROPIC_API_KEY": "test-key",
            "LARIK_MODEL": "claude-mock",
        }
        argv = ["env", "-i"] + [f"{key}={value}" for key, value in env.items()]
        self.socket = None
        if terminal:
            self.socket = root / "tmux.sock"
            listen = root / "nvim.sock"
            env_argv = ["env", "-i"] + [f"{key}={value}" for key, value in (env | {"TERM": "screen-256color"}).items()]
            nvim_argv = env_argv + [find_nvim(), "--clean", "-n", "--listen", str(listen), "--cmd", f"cd {self.project}"]
            conf = root / "tmux.conf"
            conf.write_text('set -g default-terminal "screen-256color"\nset -g status off\nset -ga terminal-overrides ",*:Tc"\n')
            self.tmux("-f", str(conf), "new-session", "-d", "-s", "nvim", "-x", str(self.WIDTH), "-y", str(self.HEIGHT), *nvim_argv)
            wait_for(listen.exists, "Neovim to listen on its socket")
            self.nvim = pynvim.attach("socket", path=str(listen))
        else:
            argv += [find_nvim(), "--embed", "--headless", "--clean", "-n", "--cmd", f"cd {self.project}"]
            self.nvim = pynvim.attach("child", argv=argv)
        self.agent_pid = None
        self.lua(
            """
            local plugin, options, sized = ...
            vim.opt.rtp:prepend(plugin)
            vim.cmd("runtime plugin/larik.lua")
            if not sized then
              vim.o.columns, vim.o.lines = 200, 50
            end
            vim.o.termguicolors = true
            require("larik").setup(options)
            """,
            str(PLUGIN_DIR),
            options or {},
            terminal,
        )

    def tmux(self, *args: str) -> str:
        done = subprocess.run(["tmux", "-S", str(self.socket), *args], capture_output=True, text=True, timeout=10)
        if done.returncode != 0:
            raise RuntimeError(f"tmux {' '.join(args)} failed: {done.stderr.strip()}")
        return done.stdout

    def screen(self, styled: bool = False) -> str:
        """What the terminal shows (with its escape codes if `styled`), after a redraw."""
        self.nvim.command("redraw")
        return self.tmux("capture-pane", "-p", *(["-e"] if styled else []), "-t", "nvim")

    # -- driving ---------------------------------------------------------------------------------

    def lua(self, code: str, *args):
        return self.nvim.exec_lua(code, *args)

    def command(self, command: str):
        self.nvim.command(command)

    def type(self, keys: str):
        """Types keys as a user would (asynchronously, like a real keyboard)."""
        self.nvim.input(keys)

    def write_file(self, name: str, text: str) -> Path:
        path = self.project / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        return path

    def ask(self, text: str):
        self.lua("require('larik').ask(...)", text)

    # -- reading ---------------------------------------------------------------------------------

    def chat_text(self) -> str:
        return self.lua("return table.concat(vim.api.nvim_buf_get_lines(require('larik.ui.chat').buf(), 0, -1, false), '\\n')")

    def wait_chat(self, needle: str, timeout: float = WAIT) -> str:
        return wait_for(lambda: needle in self.chat_text() and self.chat_text(), f"{needle!r} in the chat", timeout)

    def log_text(self) -> str:
        return self.lua("return table.concat(require('larik.log').lines(), '\\n')")

    def sent_messages(self) -> list[dict]:
        """Every JSON-RPC message the plugin sent to the agent, from the protocol log."""
        messages = []
        for line in self.lua("return require('larik.log').lines()"):
            parts = line.split(" ", 2)
            if len(parts) == 3 and parts[1] == "→":
                messages.append(json.loads(parts[2]))
        return messages

    def received_messages(self) -> list[dict]:
        messages = []
        for line in self.lua("return require('larik.log').lines()"):
            parts = line.split(" ", 2)
            if len(parts) == 3 and parts[1] == "←":
                messages.append(json.loads(parts[2]))
        return messages

    def winbar(self) -> str:
        return self.lua(
            "local win = require('larik.ui.chat').chat_win(); return win and vim.wo[win].winbar or ''"
        )

    def turn_done(self) -> bool:
        return self.lua("return require('larik.client').state.prompt_id == nil and require('larik.client').state.phase == 'ready'")

    def wait_turn_done(self, timeout: float = WAIT):
        wait_for(self.turn_done, "the turn to end", timeout)

    def wait_permission(self, timeout: float = WAIT) -> dict:
        return wait_for(lambda: self.lua("return require('larik.ui.permission').current()"), "a permission request", timeout)

    def wait_review(self, timeout: float = WAIT) -> dict:
        return wait_for(
            lambda: self.lua(
                """
                local review = require('larik.ui.review').current()
                if not review then return nil end
                return {
                  lines = vim.api.nvim_buf_get_lines(review.proposed_buf, 0, -1, false),
                  hunks = #review.hunks,
                  winbar = vim.wo[review.proposed_win].winbar,
                  in_review = vim.api.nvim_get_current_win() == review.proposed_win,
                  style = review.style,
                  per_hunk = review.per_hunk,
                }
                """
            ),
            "the review to open",
            timeout,
        )

    def pid(self):
        return self.lua("return require('larik.client').pid()")

    # -- teardown --------------------------------------------------------------------------------

    def quit(self):
        """Quits Neovim (which must stop the agent) and makes sure nothing is left running."""
        self.agent_pid = self.agent_pid or self._safe_pid()
        try:
            self.nvim.command("qa!")
        except Exception:
            pass  # Neovim exits before it can answer.
        try:
            self.nvim.close()
        except Exception:
            pass
        if self.socket and self.socket.exists():
            subprocess.run(["tmux", "-S", str(self.socket), "kill-server"], capture_output=True, timeout=10)

    def _safe_pid(self):
        try:
            return self.pid()
        except Exception:
            return None

    def kill_leftovers(self):
        if self.agent_pid and pid_alive(self.agent_pid):
            os.kill(self.agent_pid, signal.SIGKILL)
