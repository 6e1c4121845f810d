"""Drives Helix for real: Helix 25.01 (unpacked by scripts/setup.sh) in a detached tmux session on
a private socket, configured with the `languages.toml` scripts/languages.py writes and this
folder's `config.toml`, starting the real `larik lsp` as its language server, which talks to the
mock model server. Keys go in with
`tmux send-keys`; what the user would see comes back with `tmux capture-pane`. Each test gets its
own project, home and config folders and a cleared environment.

Nothing here sleeps to wait for an event: `wait_for` polls a condition until a deadline and fails
with what it saw last. Every process started here is stopped by its own id.
"""

from __future__ import annotations

import functools
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

# The screen parser shared by the editors' tests.
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "testing"))
import terminal_png  # noqa: E402

INTEGRATION_DIR = Path(__file__).resolve().parents[1]
REPO_ROOT = INTEGRATION_DIR.parents[1]
HX = INTEGRATION_DIR / ".cache" / "bin" / "hx"
LANGUAGES_SCRIPT = INTEGRATION_DIR / "scripts" / "languages.py"
WAIT = 30.0
WIDTH, HEIGHT = 120, 32


def find_binary(name: str, env_var: str) -> Path:
    """A project binary: $<env_var>, else $CARGO_TARGET_DIR/debug, else the repository's target/debug."""
    if os.environ.get(env_var):
        return Path(os.environ[env_var])
    if os.environ.get("CARGO_TARGET_DIR"):
        return Path(os.environ["CARGO_TARGET_DIR"]) / "debug" / name
    return REPO_ROOT / "target" / "debug" / name


LARIK_BIN = find_binary("larik", "LARIK_BIN")
MOCK_BIN = find_binary("larik-mock-llm", "LARIK_MOCK_LLM_BIN")


def larik_has_lsp() -> bool:
    """Whether the built agent offers `larik lsp` (its help lists the subcommand)."""
    try:
        help_text = subprocess.run([str(LARIK_BIN), "--help"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.TimeoutExpired):
        return False
    return re.search(r"^\s+lsp\s", help_text, re.MULTILINE) is not None


def run_languages_script(*args: str, env: dict | None = None, check: bool = True) -> subprocess.CompletedProcess:
    """scripts/languages.py reading this Helix."""
    return subprocess.run([sys.executable, str(LANGUAGES_SCRIPT), "--hx", str(HX), *args], capture_output=True, text=True,
                          timeout=120, check=check, env=env)


@functools.cache
def generated_languages() -> str:
    """languages.toml as scripts/languages.py writes it from this Helix, as the README has users do."""
    return run_languages_script().stdout


def wait_for(condition, what: str, timeout: float = WAIT, interval: float = 0.05):
    """Polls `condition()` until it returns a truthy value, which is returned; fails after `timeout`."""
    deadline = time.monotonic() + timeout
    last = None
    while True:
        last = condition()
        if last:
            return last
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what}; last saw:\n{last}")
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


def child_pids(pid: int) -> list[int]:
    """The direct children of a process."""
    children = []
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/children") as listing:
                children.extend(int(child) for child in listing.read().split())
    except OSError:
        pass
    return children


def stop_pid(pid: int):
    """Stops one process we started: TERM, then KILL if it lingers."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            return
        deadline = time.monotonic() + 3
        while time.monotonic() < deadline:
            if not pid_alive(pid):
                return
            time.sleep(0.05)


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


def tool_results(request: dict) -> list[dict]:
    """Every tool_result block of an Anthropic request body, as {"text", "is_error"}."""
    results = []
    for message in request.get("messages", []):
        content = message.get("content")
        if not isinstance(content, list):
            continue
        for block in content:
            if block.get("type") != "tool_result":
                continue
            inner = block.get("content")
            if isinstance(inner, list):
                inner = "\n".join(part.get("text", "") for part in inner if isinstance(part, dict))
            results.append({"text": inner or "", "is_error": bool(block.get("is_error"))})
    return results


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
            parts.extend(block.get("text", "") for block in content if block.get("type") == "text")
    return "\n".join(parts)


class Helix:
    """Helix in a detached tmux session on its own socket, with Larik configured as a language server
    exactly as scripts/languages.py writes it (`command = "larik"`, found on PATH)."""

    def __init__(self, root: Path, mock: MockLlm | None = None, lint: bool = False):
        self.root = root
        self.project = root / "project"
        self.home = root / "home"
        self.log = root / "helix.log"
        self.socket = root / "tmux.sock"
        self.mock = mock
        self.hx_pid: int | None = None
        self.larik_pids: set[int] = set()
        self.project.mkdir(parents=True, exist_ok=True)
        config = self.home / ".config" / "helix"
        config.mkdir(parents=True, exist_ok=True)
        languages = generated_languages()
        if lint:
            languages = _with_lint_server(languages)
        (config / "languages.toml").write_text(languages)
        (config / "config.toml").write_text((INTEGRATION_DIR / "config.toml").read_text())
        shutil.copytree(INTEGRATION_DIR / "runtime", config / "runtime")
        bin_dir = root / "bin"
        bin_dir.mkdir(exist_ok=True)
        (bin_dir / "larik").symlink_to(LARIK_BIN)
        self.env = {
            "PATH": f"{bin_dir}:/usr/bin:/bin",
            "HOME": str(self.home),
            "XDG_CONFIG_HOME": str(self.home / ".config"),
            "XDG_DATA_HOME": str(self.home / ".local" / "share"),
            "XDG_STATE_HOME": str(self.home / ".local" / "state"),
            "XDG_CACHE_HOME": str(self.home / ".cache"),
            "TERM": "screen-256color",
            "LANG": "C.UTF-8",
            "LARIK_LOG": os.environ.get("LARIK_LOG", "info"),
        }
        if mock:
            self.env |= {"ANTHROPIC_BASE_URL": mock.url, "ANTHROPIC_API_KEY": "test-key", "LARIK_MODEL": "claude-mock"}

    # -- files -----------------------------------------------------------------------------------

    def write_file(self, name: str, text: str) -> Path:
        path = self.project / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        return path

    def read_file(self, name: str) -> str | None:
        """A project file's text; None while it is missing (Helix saves through a rename)."""
        try:
            return (self.project / name).read_text()
        except FileNotFoundError:
            return None

    # -- the editor ------------------------------------------------------------------------------

    def tmux(self, *args: str, check: bool = True) -> str:
        done = subprocess.run(["tmux", "-S", str(self.socket), *args], capture_output=True, text=True, timeout=10)
        if check and done.returncode != 0:
            raise RuntimeError(f"tmux {' '.join(args)} failed: {done.stderr.strip()}")
        return done.stdout

    def health(self, language: str) -> str:
        """`hx --health LANGUAGE` in this editor's environment, without colours."""
        argv = ["env", "-i", *(f"{key}={value}" for key, value in self.env.items()), str(HX), "--health", language]
        output = subprocess.run(argv, capture_output=True, text=True, timeout=30, cwd=self.project).stdout
        return re.sub(r"\x1b\[[0-9;]*m", "", output)

    def open(self, name: str):
        """Starts Helix on a project file, with its LSP traffic logged (`-v`)."""
        conf = self.root / "tmux.conf"
        # The pane stays after Helix exits so a crash can still be read.
        conf.write_text('set -g remain-on-exit on\nset -g default-terminal "screen-256color"\nset -g status off\n')
        argv = ["env", "-i", *(f"{key}={value}" for key, value in self.env.items())]
        argv += [str(HX), "-v", "--log", str(self.log), name]
        self.tmux("-f", str(conf), "new-session", "-d", "-s", "hx", "-x", str(WIDTH), "-y", str(HEIGHT),
                  "-c", str(self.project), *argv)
        self.hx_pid = int(self.tmux("display-message", "-p", "-t", "hx", "#{pane_pid}").strip())
        self.wait_screen(lambda screen: "NOR" in screen, "Helix to draw its statusline")

    def screen(self) -> str:
        return self.tmux("capture-pane", "-p", "-t", "hx", check=False)

    def wait_screen(self, condition, what: str, timeout: float = WAIT) -> str:
        """Waits until `condition(screen)` holds for the visible screen, which is returned."""
        def check():
            screen = self.screen()
            if "Pane is dead" in screen:
                raise AssertionError(f"Helix exited:\n{screen}\n{self.log_tail()}")
            return screen if condition(screen) else None

        try:
            return wait_for(check, what, timeout)
        except AssertionError as error:
            raise AssertionError(f"{error}\nscreen:\n{self.screen()}\nlog:\n{self.log_tail()}") from None

    def wait_text(self, text: str, timeout: float = WAIT) -> str:
        return self.wait_screen(lambda screen: text in screen, repr(text), timeout)

    def keys(self, *keys: str):
        """Presses tmux-named keys (`Space`, `Enter`, `Escape`, `C-c`, or single characters)."""
        self.tmux("send-keys", "-t", "hx", *keys)

    def type(self, text: str):
        """Types text literally."""
        self.tmux("send-keys", "-t", "hx", "-l", text)

    def escape(self):
        """Presses Escape alone. The terminal sends Escape as the byte that also starts Alt-key
        sequences, so the next key must not arrive in the same read: a short gap keeps them apart."""
        self.keys("Escape")
        time.sleep(0.2)

    def command(self, command: str):
        """Runs a typed command (`:w`), from normal mode."""
        self.type(":" + command)
        self.keys("Enter")

    def status_of(self, command: str, expected: str, timeout: float = WAIT) -> str:
        """Runs a typed command and waits for `expected` on screen (its answer in the statusline)."""
        self.command(command)
        return self.wait_text(expected, timeout)

    # -- language server -------------------------------------------------------------------------

    def log_text(self) -> str:
        try:
            return self.log.read_text(errors="replace")
        except OSError:
            return ""

    def log_tail(self, lines: int = 40, width: int = 600) -> str:
        """The end of Helix's log, long LSP messages cut short, for failure messages."""
        return "\n".join(line[:width] for line in self.log_text().splitlines()[-lines:])

    def lsp_messages(self, direction: str = "<-") -> list[dict]:
        """The JSON messages Helix logged for the larik server: `<-` received, `->` sent."""
        messages = []
        marker = f"larik {direction} "
        for line in self.log_text().splitlines():
            index = line.find(marker)
            if index < 0:
                continue
            try:
                message = json.loads(line[index + len(marker):])
            except json.JSONDecodeError:
                continue
            # Helix also logs each response's bare result; only whole messages count.
            if isinstance(message, dict) and message.get("jsonrpc") == "2.0":
                messages.append(message)
        return messages

    def wait_server_ready(self, timeout: float = WAIT):
        """Waits for larik's answer to `initialize`, and remembers larik's pid for cleanup."""
        wait_for(
            lambda: any("capabilities" in (message.get("result") or {}) for message in self.lsp_messages()),
            "larik to answer initialize",
            timeout,
        )
        self.note_servers()

    def note_servers(self):
        """Remembers the language servers Helix has started (its children), to stop them at the end."""
        if self.hx_pid:
            self.larik_pids.update(child_pids(self.hx_pid))

    # -- code actions ----------------------------------------------------------------------------

    def styled_screen(self) -> list[list[tuple[str, bool, bool]]]:
        """The screen as rows of cells: (character, has a background colour, reversed)."""
        return _cells(self.tmux("capture-pane", "-e", "-p", "-t", "hx", check=False))

    def menu(self) -> list[tuple[str, bool]]:
        """The open code-action menu: (title, selected) per item, top to bottom; empty if closed."""
        return _menu(self.styled_screen())

    def code_action(self, title: str, timeout: float = WAIT, run: bool = True) -> list[str]:
        """Opens the code-action menu (space a) and picks the item whose title starts with `title`
        (or, with `run=False`, closes the menu once it is offered), and returns every title the menu
        offered. The menu is opened again until the item is offered: the server may still be
        working."""
        deadline = time.monotonic() + timeout
        while True:
            self.keys("Space")
            self.keys("a")
            try:
                wait_for(lambda: self.menu() or "No code actions" in self.screen(), "the code-action menu", 10)
            except AssertionError:
                pass
            items = self.menu()
            index = next((i for i, (item, _) in enumerate(items) if item.startswith(title)), None)
            if index is not None and not run:
                self.escape()
                wait_for(lambda: not self.menu(), "the code-action menu to close", 10)
                return [item for item, _ in items]
            if index is not None:
                # The first item is selected when the menu opens; move down to ours and check
                # it is the selected one before choosing it.
                for _ in range(index):
                    self.keys("Down")
                wait_for(lambda: any(item.startswith(title) and chosen for item, chosen in self.menu()),
                         f"{title!r} to be selected in the menu", 10)
                self.keys("Enter")
                wait_for(lambda: not self.menu(), "the code-action menu to close", 10)
                return [item for item, _ in items]
            if items:
                self.escape()
                wait_for(lambda: not self.menu(), "the code-action menu to close", 10)
            if time.monotonic() > deadline:
                raise AssertionError(
                    f"no code action {title!r}; the menu offered {[item for item, _ in items]}\n"
                    f"screen:\n{self.screen()}\nlog:\n{self.log_tail()}"
                )
            time.sleep(0.3)

    def code_action_absent(self, title: str):
        """Checks that the code-action menu, once open, offers nothing starting with `title`."""
        self.keys("Space")
        self.keys("a")
        wait_for(lambda: self.menu() or "No code actions" in self.screen(), "the code-action menu", 10)
        items = [item for item, _ in self.menu()]
        if self.menu():
            self.escape()
            wait_for(lambda: not self.menu(), "the code-action menu to close", 10)
        assert not any(item.startswith(title) for item in items), items

    # -- shutdown --------------------------------------------------------------------------------

    def quit(self) -> list[int]:
        """Quits Helix without saving and stops the tmux server. Returns the language servers that
        outlived Helix; those, and anything else left, are stopped by pid."""
        self.note_servers()
        if self.hx_pid and pid_alive(self.hx_pid):
            self.escape()
            self.command("qa!")
            try:
                wait_for(lambda: not pid_alive(self.hx_pid), "Helix to exit", 10)
            except AssertionError:
                pass
        try:
            wait_for(lambda: not any(pid_alive(pid) for pid in self.larik_pids), "larik to exit", 5)
        except AssertionError:
            pass
        lingering = [pid for pid in self.larik_pids if pid_alive(pid)]
        for pid in [*lingering, *([self.hx_pid] if self.hx_pid else [])]:
            stop_pid(pid)
        if self.socket.exists():
            server = self.tmux("display-message", "-p", "#{pid}", check=False).strip()
            self.tmux("kill-server", check=False)
            if server.isdigit():
                stop_pid(int(server))
        return lingering


def _with_lint_server(languages: str) -> str:
    """The generated languages.toml with tests/lint_server.py standing in for the user's own Python
    server, listed before larik as the README says."""
    python = '["ruff", "jedi", "pylsp", "larik"]'
    if python not in languages:
        raise AssertionError(f"the generated languages.toml no longer lists {python} for Python")
    server = Path(__file__).with_name("lint_server.py")
    languages = languages.replace(python, '["ruff", "jedi", "pylsp", "lint", "larik"]')
    return languages + f'\n[language-server.lint]\ncommand = {json.dumps(sys.executable)}\nargs = [{json.dumps(str(server))}]\n'


def _cells(text: str) -> list[list[tuple[str, bool, bool]]]:
    """Splits `capture-pane -e` output into cells, keeping only what tells a popup from text:
    whether a background colour is set and whether the cell is reversed (the selected item)."""
    return [[(char, bg is not None, reverse) for char, _fg, bg, _bold, reverse in row] for row in terminal_png.cells(text)]


def _menu(rows: list[list[tuple[str, bool, bool]]]) -> list[tuple[str, bool]]:
    """The code-action menu's items: Larik's titles drawn on a background (diagnostics and text
    are not), in one column of consecutive rows; the reversed one is selected."""
    def item_at(row, column):
        cells = row[column:]
        text = "".join(char for char, _, _ in cells)
        if not text.startswith("Larik: ") or not (cells[0][1] or cells[0][2]):
            return None
        end = next((i for i, (_, background, reverse) in enumerate(cells) if not (background or reverse)), len(cells))
        return text[:end].rstrip(), cells[0][2]

    for top, row in enumerate(rows):
        text = "".join(char for char, _, _ in row)
        for match in re.finditer("Larik: ", text):
            column = match.start()
            if item_at(row, column) is None:
                continue
            items = []
            for below in rows[top:]:
                item = item_at(below, column)
                if item is None:
                    break
                items.append(item)
            return items
    return []
