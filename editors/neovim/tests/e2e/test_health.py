"""`:checkhealth larik`, where the plugin finds `larik`, and what it says when the agent does not
start. A stand-in `larik` on PATH (a shell script) prints the report `larik doctor --json` gives,
with every status, or answers as a binary without the subcommand does, or never answers; then the
real binary. The same stand-in, off PATH in the private home where pipx, npm or cargo would have
installed it, is found, started and named in the report with how it was found; a stand-in `npm`
names its prefix, or never answers and is given up on. When the agent cannot start (missing, or
exiting at once), the error names both places to look."""

from __future__ import annotations

import json
from pathlib import Path

import pynvim
import pytest

from harness import LARIK_BIN, PLUGIN_DIR, find_nvim, wait_for

# Stands in for `larik`: its answers come from files next to it, so each test says what it
# prints. `acp` fails at once, the way a binary without a model or with a broken config does.
FAKE_LARIK = """#!/bin/sh
here=$(dirname "$0")
case "$1" in
  --version) echo "larik 9.9.9-fake" ;;
  doctor)
    if [ -f "$here/doctor.sleep" ]; then exec sleep 30; fi
    if [ ! -f "$here/doctor.json" ]; then
      echo "error: unrecognized subcommand 'doctor'" >&2
      exit 2
    fi
    cat "$here/doctor.json"
    exit "$(cat "$here/doctor.code")" ;;
  sandbox) printf 'Project:     %s\\nSandbox:     off: the fake has none\\n' "$PWD" ;;
  mcp) echo "No MCP servers are configured." ;;
  acp) echo "error: no model configured (fake)" >&2; exit 3 ;;
esac
"""


def check(id_, status, detail, title=None):
    return {"id": id_, "title": title or id_.replace("_", " ").capitalize(), "status": status, "detail": detail}


class Neovim:
    """A child Neovim with the plugin and `bin` (holding whatever `larik` the test puts there)
    first on PATH, in a private home, with `environ` added to its environment."""

    def __init__(self, root: Path, options: dict | None = None, environ: dict | None = None):
        self.bin = root / "bin"
        self.bin.mkdir(parents=True, exist_ok=True)
        project = root / "project"
        project.mkdir(exist_ok=True)
        self.home = home = root / "home"
        (home / ".config").mkdir(parents=True, exist_ok=True)
        env = {
            "PATH": f"{self.bin}:/usr/bin:/bin",
            "HOME": str(home),
            "XDG_CONFIG_HOME": str(home / ".config"),
            "XDG_DATA_HOME": str(home / ".local" / "share"),
            "XDG_STATE_HOME": str(home / ".local" / "state"),
            "LANG": "C.UTF-8",
            **(environ or {}),
        }
        argv = ["env", "-i", *(f"{key}={value}" for key, value in env.items())]
        argv += [find_nvim(), "--embed", "--headless", "--clean", "-n", "--cmd", f"cd {project}"]
        self.nvim = pynvim.attach("child", argv=argv)
        self.nvim.exec_lua(
            """
            local plugin, options = ...
            vim.opt.rtp:prepend(plugin)
            vim.cmd("runtime plugin/larik.lua")
            require("larik").setup(options)
            -- Notifications are kept for the test to read.
            _G.notes = {}
            vim.notify = function(message, level) table.insert(_G.notes, { message = message, level = level }) end
            """,
            str(PLUGIN_DIR),
            options or {},
        )

    def fake(self, report: dict | None = None, code: int = 0, sleep: bool = False, where: Path | None = None) -> Path:
        """Puts the stand-in `larik` in `where` (default: `bin`, on PATH); returns its path."""
        where = where or self.bin
        where.mkdir(parents=True, exist_ok=True)
        script = where / "larik"
        script.write_text(FAKE_LARIK)
        script.chmod(0o755)
        if report is not None:
            (where / "doctor.json").write_text(json.dumps(report))
            (where / "doctor.code").write_text(str(code))
        if sleep:
            (where / "doctor.sleep").write_text("")
        return script

    def health(self) -> str:
        self.nvim.command("checkhealth larik")
        return "\n".join(self.nvim.current.buffer[:])

    def notes(self) -> list[dict]:
        return self.nvim.exec_lua("return _G.notes")

    def close(self):
        try:
            self.nvim.command("qa!")
        except Exception:
            pass  # Neovim exits before it answers.
        self.nvim.close()


@pytest.fixture
def neovim(tmp_path):
    started = []

    def _start(environ=None, **options):
        editor = Neovim(tmp_path, options, environ)
        started.append(editor)
        return editor

    yield _start
    for editor in started:
        editor.close()


def line_with(text: str, needle: str) -> str:
    found = [line for line in text.splitlines() if needle in line]
    assert found, f"{needle!r} not in:\n{text}"
    return found[0]


def test_every_doctor_check_is_reported_with_its_status(neovim):
    editor = neovim()
    editor.fake(
        {
            "ok": False,
            "checks": [
                check("version", "ok", "larik 9.9.9-fake"),
                check("model", "ok", "claude-sonnet-4-5 (from LARIK_MODEL)"),
                check("provider", "error", "ANTHROPIC_API_KEY is not set\nSet it, or OPENAI_BASE_URL for a local server"),
                check("sandbox", "warning", "off: no user namespaces"),
                check("language_servers", "ok", "rust-analyzer"),
                check("mcp", "ok", "no servers configured", title="MCP servers"),
                check("chromium", "warning", "not found on PATH"),
                check("settings", "ok", "~/.config/larik/settings.json"),
            ],
        },
        code=1,
    )
    text = editor.health()
    # The binary: where it was found, and what --version said.
    assert f"larik found: {editor.bin}/larik (PATH)" in text, text
    assert "version: larik 9.9.9-fake" in text, text
    assert "larik doctor" in text and "unavailable" not in text, text
    assert "OK" in line_with(text, "Model: claude-sonnet-4-5 (from LARIK_MODEL)")
    provider = line_with(text, "Provider: ANTHROPIC_API_KEY is not set")
    assert "ERROR" in provider, provider
    # A detail's further lines are the advice under the check.
    assert "Set it, or OPENAI_BASE_URL for a local server" in text, text
    assert "WARNING" in line_with(text, "Sandbox: off: no user namespaces")
    assert "OK" in line_with(text, "MCP servers: no servers configured")
    assert "WARNING" in line_with(text, "Chromium: not found on PATH")
    assert "OK" in line_with(text, "Language servers: rust-analyzer")
    assert "OK" in line_with(text, "Settings: ~/.config/larik/settings.json")
    assert "Failed to run healthcheck" not in text, text


def test_an_all_ok_report_has_no_warning(neovim):
    editor = neovim()
    editor.fake({"ok": True, "checks": [check("version", "ok", "larik 9.9.9-fake"), check("model", "ok", "claude-mock")]})
    text = editor.health()
    doctor = text.split("larik doctor", 1)[1].split("larik: running agent", 1)[0]
    assert "OK" in line_with(doctor, "Model: claude-mock"), text
    assert "WARNING" not in doctor and "ERROR" not in doctor, text


def test_without_larik_doctor_the_plugin_checks_what_it_can(neovim):
    editor = neovim()
    editor.fake(None)  # answers `doctor` as an older binary does
    for name in ("rust-analyzer", "chromium"):
        tool = editor.bin / name
        tool.write_text("#!/bin/sh\n")
        tool.chmod(0o755)
    text = editor.health()
    unavailable = line_with(text, "`larik doctor` is unavailable")
    assert "WARNING" in unavailable and "unrecognized subcommand 'doctor'" in unavailable, unavailable
    assert "version: larik 9.9.9-fake" in text, text
    assert f"rust-analyzer ({editor.bin}/rust-analyzer)" in line_with(text, "language servers on PATH")
    assert "gopls" in line_with(text, "not on PATH"), text
    assert f"Chromium for the browser tools: {editor.bin}/chromium" in text, text
    assert "sandbox: off: the fake has none" in text, text
    assert "No MCP servers are configured." in text, text
    assert "no model configured" in text, text  # the private home has none
    assert "Failed to run healthcheck" not in text, text


def test_a_doctor_that_never_answers_is_given_up_on(neovim):
    editor = neovim()
    editor.fake({"ok": True, "checks": []}, sleep=True)
    editor.nvim.exec_lua("require('larik.doctor').timeout_ms = 500")
    text = editor.health()
    assert "did not answer within" in line_with(text, "`larik doctor` is unavailable"), text
    assert "Chromium" in text, text


def test_the_real_binary(neovim):
    editor = neovim()
    (editor.bin / "larik").symlink_to(LARIK_BIN)
    text = editor.health()
    assert f"larik found: {editor.bin}/larik (PATH)" in text, text
    assert "version: larik " in text, text
    assert "Failed to run healthcheck" not in text, text
    if "`larik doctor` is unavailable" in text:
        # This build has no doctor yet: the plugin's own checks stand in.
        assert "language servers" in text or "language server" in text, text
        assert "Chromium" in text and "sandbox: " in text, text
    else:
        # The agent's own checks, each with its status; the private home has no model.
        doctor = text.split("larik: larik doctor", 1)[1].split("larik: running agent", 1)[0]
        assert "ERROR Model: no model is configured" in doctor, text
        for title in ("Sandbox", "Language servers", "MCP servers"):
            assert f" {title}: " in doctor, text


def wait_error(editor) -> str:
    notes = wait_for(lambda: [note for note in editor.notes() if note["level"] == 4], "an error notification")
    return "\n".join(note["message"] for note in notes)


def test_an_agent_that_exits_at_once_points_to_checkhealth_and_doctor(neovim):
    editor = neovim()
    editor.fake(None)
    editor.nvim.command("Larik")
    message = wait_error(editor)
    assert "exited as it started (code 3" in message, message
    # What the agent printed before it stopped is in the message, and where to look next.
    assert "no model configured (fake)" in message, message
    assert ":checkhealth larik" in message and "larik doctor" in message, message
    assert len(editor.notes()) == 1, editor.notes()
    assert editor.nvim.exec_lua("return require('larik.client').state.phase") == "failed"


def test_a_missing_binary_points_to_checkhealth_and_doctor(neovim, tmp_path):
    editor = neovim(cmd=[str(tmp_path / "nowhere" / "larik"), "acp"])
    editor.nvim.command("Larik")
    message = wait_error(editor)
    assert "not executable" in message, message
    assert ":checkhealth larik" in message and "larik doctor" in message, message


def test_no_binary_anywhere_points_to_checkhealth_and_doctor(neovim):
    if (PLUGIN_DIR.parents[1] / "target" / "debug" / "larik").exists():
        pytest.skip("a repository build would be found")
    editor = neovim()  # nothing on PATH
    editor.nvim.command("Larik")
    message = wait_error(editor)
    assert "larik not found" in message, message
    assert ":checkhealth larik" in message and "larik doctor" in message, message


# An install off PATH: its folder under the private home, the environment and files that make an
# installer put it there, and how :checkhealth says it was found.
INSTALLS = [
    pytest.param(".local/bin", {}, {}, "~/.local/bin, where pipx, pip install --user and uv tool install put it", id="pipx"),
    pytest.param("pipx-bin", {"PIPX_BIN_DIR": "{home}/pipx-bin"}, {}, "$PIPX_BIN_DIR, where pipx installs", id="pipx-bin-dir"),
    pytest.param("npm-prefix/bin", {"NPM_CONFIG_PREFIX": "{home}/npm-prefix"}, {}, "$NPM_CONFIG_PREFIX/bin, where npm install -g puts it", id="npm-config-prefix"),
    pytest.param(
        ".npm-packages/bin",
        {},
        {".npmrc": "; written by npm config set prefix\nprefix = ${HOME}/.npm-packages\n"},
        "the npm prefix set in ~/.npmrc, where npm install -g puts it",
        id="npmrc",
    ),
    pytest.param(".npm-global/bin", {}, {}, "~/.npm-global/bin, where npm install -g puts it with that prefix", id="npm-global"),
    pytest.param(".cargo/bin", {}, {}, "~/.cargo/bin, where cargo install puts it", id="cargo"),
    pytest.param("cargo-home/bin", {"CARGO_HOME": "{home}/cargo-home"}, {}, "$CARGO_HOME/bin, where cargo install puts it", id="cargo-home"),
]


def find(editor) -> list:
    """`require("larik.binary").find()`: the path, how it was found, and whether off PATH."""
    return editor.nvim.exec_lua("return { require('larik.binary').find() }")


def repository_build() -> bool:
    return (PLUGIN_DIR.parents[1] / "target" / "debug" / "larik").exists() or (PLUGIN_DIR.parents[1] / "target" / "release" / "larik").exists()


@pytest.mark.parametrize(("folder", "environ", "files", "source"), INSTALLS)
def test_an_install_off_path_is_found_started_and_reported(neovim, tmp_path, folder, environ, files, source):
    home = tmp_path / "home"
    editor = neovim(environ={name: value.format(home=home) for name, value in environ.items()})
    for name, text in files.items():
        (editor.home / name).write_text(text)
    installed = editor.fake({"ok": True, "checks": [check("version", "ok", "larik 9.9.9-fake")]}, where=editor.home / folder)
    assert find(editor) == [str(installed), source, True]
    text = editor.health()
    assert f"larik found: {installed} ({source})" in text, text
    assert "version: larik 9.9.9-fake" in text, text
    assert line_with(text, "is not on Neovim's PATH").lstrip("- ").startswith(f"{installed.parent} is not"), text
    # The plugin starts that binary: it is the stand-in that says it has no model.
    editor.nvim.command("Larik")
    assert "no model configured (fake)" in wait_error(editor)


def test_path_comes_first_then_the_installers_in_order(neovim):
    editor = neovim()
    cargo = editor.fake(where=editor.home / ".cargo" / "bin")
    npm_global = editor.fake(where=editor.home / ".npm-global" / "bin")
    pipx = editor.fake(where=editor.home / ".local" / "bin")
    on_path = editor.fake()
    assert find(editor) == [str(on_path), "PATH"]
    text = editor.health()
    assert f"larik found: {on_path} (PATH)" in text, text
    assert "is not on Neovim's PATH" not in text, text
    for gone, following in ((on_path, pipx), (pipx, npm_global), (npm_global, cargo)):
        gone.unlink()
        assert find(editor)[0] == str(following)


FAKE_NPM = """#!/bin/sh
echo "$*" >> "$(dirname "$0")/npm.asked"
{body}
"""


def fake_npm(editor, body: str) -> Path:
    """A stand-in `npm` on PATH running `body`; returns the file where each call is written."""
    script = editor.bin / "npm"
    script.write_text(FAKE_NPM.format(body=body))
    script.chmod(0o755)
    return editor.bin / "npm.asked"


def test_npm_is_asked_for_its_prefix_last_and_once(neovim, tmp_path):
    editor = neovim()
    prefix = tmp_path / "npm-root"
    asked = fake_npm(editor, f'[ "$*" = "config get prefix" ] && echo "{prefix}"')
    installed = editor.fake(where=prefix / "bin")
    source = "`npm config get prefix`/bin, where npm install -g puts it"
    assert find(editor) == [str(installed), source, True]
    assert f"larik found: {installed} ({source})" in editor.health()
    assert asked.read_text() == "config get prefix\n", "npm was asked more than once"


def test_an_npm_that_does_not_answer_is_given_up_on(neovim):
    if repository_build():
        pytest.skip("a repository build would be found before npm is asked")
    editor = neovim()
    asked = fake_npm(editor, "exec sleep 30")
    found = editor.nvim.exec_lua(
        """
        local binary = require("larik.binary")
        binary.npm_timeout_ms = 300
        local start = vim.uv.hrtime()
        local path, why = binary.find()
        local first_ms = (vim.uv.hrtime() - start) / 1e6
        binary.find()
        return { found = path ~= nil, why = why, first_ms = first_ms }
        """
    )
    assert not found["found"] and "larik not found" in found["why"], found
    # Given up on at the timeout, and not asked again.
    assert found["first_ms"] < 3000, found
    assert asked.read_text() == "config get prefix\n"
