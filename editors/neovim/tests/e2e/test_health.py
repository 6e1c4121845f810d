"""`:checkhealth larik` and what the plugin says when the agent does not start. A stand-in
`larik` on PATH (a shell script) prints the report `larik doctor --json` gives, with every status,
or answers as a binary without the subcommand does, or never answers; then the real binary. When
the agent cannot start (missing, or exiting at once), the error names both places to look."""

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
    first on PATH, in a private home."""

    def __init__(self, root: Path, options: dict | None = None):
        self.bin = root / "bin"
        self.bin.mkdir(parents=True, exist_ok=True)
        project = root / "project"
        project.mkdir(exist_ok=True)
        home = root / "home"
        (home / ".config").mkdir(parents=True, exist_ok=True)
        env = {
            "PATH": f"{self.bin}:/usr/bin:/bin",
            "HOME": str(home),
            "XDG_CONFIG_HOME": str(home / ".config"),
            "XDG_DATA_HOME": str(home / ".local" / "share"),
            "XDG_STATE_HOME": str(home / ".local" / "state"),
            "LANG": "C.UTF-8",
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

    def fake(self, report: dict | None = None, code: int = 0, sleep: bool = False):
        script = self.bin / "larik"
        script.write_text(FAKE_LARIK)
        script.chmod(0o755)
        if report is not None:
            (self.bin / "doctor.json").write_text(json.dumps(report))
            (self.bin / "doctor.code").write_text(str(code))
        if sleep:
            (self.bin / "doctor.sleep").write_text("")

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

    def _start(**options):
        editor = Neovim(tmp_path, options)
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
