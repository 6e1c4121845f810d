"""scripts/languages.py against the real Helix: the servers it writes are Helix's own defaults by
name (checked by giving the result to `hx --health`, which must list the same servers with larik
last), the committed example is what it writes today, and merging into a user's languages.toml
keeps everything else there."""

from __future__ import annotations

import os
import re
import subprocess
import tomllib
from pathlib import Path

from harness import HX, INTEGRATION_DIR, LARIK_BIN, generated_languages, run_languages_script

DEFAULTS = ["python", "rust", "typescript", "tsx", "javascript", "go", "c", "cpp"]


def health(language: str, config_home: Path | None, cwd: Path, path: str = "/usr/bin:/bin") -> list[str]:
    """The server lines of `hx --health LANGUAGE` (without colours) with `config_home` as
    XDG_CONFIG_HOME (None: an empty one)."""
    config_home = config_home or cwd / "empty-config"
    config_home.mkdir(parents=True, exist_ok=True)
    env = {"PATH": path, "HOME": str(cwd), "XDG_CONFIG_HOME": str(config_home), "LANG": "C.UTF-8"}
    done = subprocess.run([str(HX), "--health", language], capture_output=True, text=True, timeout=60, cwd=cwd, env=env)
    lines = re.sub(r"\x1b\[[0-9;]*m", "", done.stdout).splitlines()
    start = lines.index("Configured language servers:")
    servers = []
    for line in lines[start + 1:]:
        if not line.startswith("  "):
            break
        servers.append(line.strip())
    return servers


def commands(lines: list[str]) -> list[str]:
    return [line.split(" ", 1)[1].split(":", 1)[0] for line in lines]


def config_with(tmp_path: Path, text: str) -> Path:
    home = tmp_path / "config"
    (home / "helix").mkdir(parents=True, exist_ok=True)
    (home / "helix" / "languages.toml").write_text(text)
    return home


def larik_on_path(tmp_path: Path) -> str:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    if not (bin_dir / "larik").exists():
        (bin_dir / "larik").symlink_to(LARIK_BIN)
    return f"{bin_dir}:/usr/bin:/bin"


def test_helix_takes_the_generated_file_and_keeps_its_own_servers(tmp_path):
    text = generated_languages()
    parsed = tomllib.loads(text)
    assert parsed["language-server"]["larik"] == {"command": "larik", "args": ["lsp"]}
    names = [language["name"] for language in parsed["language"]]
    assert names == [*DEFAULTS, "larik-chat"], names
    config = config_with(tmp_path, text)
    path = larik_on_path(tmp_path)
    for language in DEFAULTS:
        before = commands(health(language, None, tmp_path))
        after = health(language, config, tmp_path, path)
        # Helix found every name: the same servers as its defaults, in order, then larik.
        assert commands(after) == [*before, "larik"], (language, before, after)
        assert after[-1] == f"✓ larik: {tmp_path}/bin/larik", after
    assert health("larik-chat", config, tmp_path, path) == [f"✓ larik: {tmp_path}/bin/larik"]


def test_a_server_named_unlike_its_command_gets_its_name(tmp_path):
    # Helix's go servers are gopls and golangci-lint-lsp, which runs golangci-lint-langserver;
    # python's jedi runs jedi-language-server. `hx --health` shows the commands.
    out = run_languages_script("go", "python").stdout
    parsed = tomllib.loads(out)
    servers = {language["name"]: language["language-servers"] for language in parsed["language"]}
    assert servers["go"] == ["gopls", "golangci-lint-lsp", "larik"], servers
    assert servers["python"][-1] == "larik" and "jedi" in servers["python"], servers
    assert "golangci-lint-langserver" in commands(health("go", None, tmp_path))


def test_the_committed_example_is_what_the_script_writes():
    assert (INTEGRATION_DIR / "languages.toml").read_text() == generated_languages(), (
        "languages.toml is stale: scripts/languages.py --hx .cache/bin/hx > languages.toml"
    )


def test_an_unknown_language_fails_clearly():
    done = run_languages_script("pythn", check=False)
    assert done.returncode == 1 and done.stdout == "", done
    assert "Helix has no language 'pythn'" in done.stderr and "python" in done.stderr, done.stderr


USER_FILE = """# my own settings
[language-server.mypy]
command = "mypy-ls"

[[language]]
name = "python"
language-servers = [
  "pylsp",
  { name = "ruff", only-features = ["format"] },
]
auto-format = true

[[language]]
name = "rust"
indent = { tab-width = 4, unit = "    " }

[[language]]
name = "toml"
formatter = { command = "taplo", args = ["fmt", "-"] }
"""


def test_write_merges_into_the_users_file_and_keeps_the_rest(tmp_path):
    config = config_with(tmp_path, USER_FILE)
    target = config / "helix" / "languages.toml"
    env = dict(os.environ, XDG_CONFIG_HOME=str(config))
    done = run_languages_script("--write", "python", "rust", "go", env=env)
    merged = tomllib.loads(target.read_text())
    before = tomllib.loads(USER_FILE)
    assert (config / "helix" / "languages.toml.bak").read_text() == USER_FILE
    # The user's entries and keys stay; their own Python list gets larik at the end.
    assert merged["language-server"]["mypy"] == before["language-server"]["mypy"]
    tables = {language["name"]: language for language in merged["language"]}
    assert tables["python"]["language-servers"] == ["pylsp", {"name": "ruff", "only-features": ["format"]}, "larik"]
    assert tables["python"]["auto-format"] is True
    # Rust had no list: Helix's servers, then larik, beside the user's indent.
    assert tables["rust"]["language-servers"] == ["rust-analyzer", "larik"]
    assert tables["rust"]["indent"] == before["language"][1]["indent"]
    assert tables["toml"] == before["language"][2]
    assert tables["go"]["language-servers"] == ["gopls", "golangci-lint-lsp", "larik"]
    assert tables["larik-chat"]["language-servers"] == ["larik"]
    assert "# my own settings" in target.read_text()
    assert "python: larik appended to your servers (pylsp, ruff, larik)" in done.stderr, done.stderr

    # Helix takes the result; a second run changes nothing.
    path = larik_on_path(tmp_path)
    assert commands(health("python", config, tmp_path, path)) == ["pylsp", "ruff", "larik"]
    assert commands(health("rust", config, tmp_path, path))[-1] == "larik"
    first = target.read_text()
    again = run_languages_script("--write", "python", "rust", "go", env=env)
    assert target.read_text() == first
    assert "python: already has larik, kept" in again.stderr, again.stderr


def test_write_leaves_a_broken_file_alone(tmp_path):
    config = config_with(tmp_path, "[[language]\nname = \n")
    env = dict(os.environ, XDG_CONFIG_HOME=str(config))
    done = run_languages_script("--write", env=env, check=False)
    assert done.returncode == 1 and "not valid TOML" in done.stderr, done
    assert (config / "helix" / "languages.toml").read_text() == "[[language]\nname = \n"
