"""Fixtures of the end-to-end tests: the mock model with a scenario, a child Neovim running the plugin
against the real agent, and the agent's optional features (probed once per run)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from agent_features import probe  # noqa: E402
from harness import LARIK_BIN, MOCK_BIN, Editor, MockLlm, pid_alive, wait_for  # noqa: E402


def pytest_configure(config):
    config.addinivalue_line("markers", "needs_agent(feature): the test waits on an agent feature")


@pytest.fixture(scope="session")
def agent_features():
    for binary in (LARIK_BIN, MOCK_BIN):
        if not binary.exists():
            pytest.exit(f"{binary} is missing: build the workspace binaries first", returncode=2)
    return probe()


@pytest.fixture(autouse=True)
def _skip_without_agent_feature(request, agent_features):
    marker = request.node.get_closest_marker("needs_agent")
    if not marker:
        return
    missing = [feature for feature in marker.args if not agent_features.get(feature)]
    if missing:
        message = "waits on agent feature: " + ", ".join(missing)
        if os.environ.get("LARIK_NVIM_STRICT") == "1":
            pytest.fail(message)
        pytest.skip(message)


@pytest.fixture
def start(tmp_path):
    """`start(steps, files={}, terminal=False, **options)` -> an Editor on a project holding
    `files`, its agent's model playing `steps` (in tmux with its real screen if `terminal`). Everything is stopped at the end, and the agent must be gone."""
    created = []

    def _start(steps, files=None, terminal=False, **options):
        mock = MockLlm(tmp_path, steps)
        editor = Editor(tmp_path, mock, options, terminal)
        created.append(editor)
        for name, text in (files or {}).items():
            editor.write_file(name, text)
        return editor

    yield _start
    for editor in created:
        editor.quit()
        pid = editor.agent_pid
        try:
            if pid:
                wait_for(lambda: not pid_alive(pid), "the agent to exit with Neovim", timeout=10)
        finally:
            editor.kill_leftovers()
            editor.mock.stop()
