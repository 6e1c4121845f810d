"""Fixtures of the end-to-end tests: the mock model playing a scenario, and Helix in tmux with Larik
configured as its language server. Everything started is stopped at the end, by pid."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from harness import HX, LARIK_BIN, MOCK_BIN, Helix, MockLlm, larik_has_lsp  # noqa: E402


def pytest_configure(config):
    config.addinivalue_line("markers", "needs_lsp: the test drives `larik lsp`")


@pytest.fixture(scope="session")
def tools():
    if not HX.exists():
        pytest.exit(f"{HX} is missing: run editors/helix/scripts/setup.sh", returncode=2)
    for binary in (LARIK_BIN, MOCK_BIN):
        if not binary.exists():
            pytest.exit(f"{binary} is missing: build the workspace binaries first", returncode=2)
    return {"lsp": larik_has_lsp()}


@pytest.fixture(autouse=True)
def _skip_without_lsp(request, tools):
    if request.node.get_closest_marker("needs_lsp") and not tools["lsp"]:
        message = f"{LARIK_BIN} has no `lsp` subcommand"
        if os.environ.get("LARIK_HELIX_STRICT") == "1":
            pytest.fail(message)
        pytest.skip(message)


@pytest.fixture
def start(tmp_path):
    """`start(steps, files={}, lint=False, user_settings=None)` -> a Helix (not yet opened) on a
    project holding `files`, with `user_settings` (a dict) as the user's own Larik settings,
    its agent's model playing `steps` (None: no model server), with tests/lint_server.py beside
    Larik for Python if `lint`. Helix, its language server, tmux and the mock are
    stopped at the end, and the language server must have exited with Helix."""
    created = []

    def _start(steps=None, files=None, lint=False, user_settings=None):
        mock = MockLlm(tmp_path, steps) if steps is not None else None
        helix = Helix(tmp_path, mock, lint)
        created.append(helix)
        for name, text in (files or {}).items():
            helix.write_file(name, text)
        if user_settings is not None:
            # Only the user's own file may turn the sandbox off; a project's may not.
            larik_config = helix.home / ".config" / "larik"
            larik_config.mkdir(parents=True, exist_ok=True)
            (larik_config / "settings.json").write_text(json.dumps(user_settings))
        return helix

    yield _start
    lingering = []
    for helix in created:
        try:
            lingering += helix.quit()
        finally:
            if helix.mock:
                helix.mock.stop()
    assert not lingering, f"larik outlived Helix: pids {lingering}"
