#!/usr/bin/env python3
"""Writes the languages.toml entries that attach Larik to Helix, from the installed Helix itself.

Helix replaces a language's whole `language-servers` list when a languages.toml sets it, so the
entry for Python must name Helix's own Python servers too, or they are dropped. Copied by hand,
those lists go stale with each Helix release; this reads them from the `hx` you run
(`hx --health LANGUAGE`, with an empty configuration so only Helix's defaults count; it names
each server by the command it runs, so each name is confirmed with Helix too), appends "larik", and adds `[language-server.larik]` and the `larik-chat` language for `*.larik.md` files.

    scripts/languages.py                       # the default languages, to stdout
    scripts/languages.py python go             # those languages
    scripts/languages.py --write               # merged into ~/.config/helix/languages.toml
    scripts/languages.py --write --file .helix/languages.toml --hx /path/to/hx

With --write, the file's other entries stay as they are: a language it already configures gets
"larik" appended to its own list (the one you chose, not Helix's; comments inside that list are
not kept), one that has it is left alone,
and the old file is kept as languages.toml.bak. `hx --health` lists server names only, so a
default entry's feature filters (`only-features`, `except-features`) are not carried over.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

# The languages attached when none are named: the ones Larik's own tools know best.
DEFAULT_LANGUAGES = ["python", "rust", "typescript", "tsx", "javascript", "go", "c", "cpp"]

ANSI = re.compile(r"\x1b\[[0-9;]*m")
# A server line of `hx --health LANGUAGE`: "  ✓ rust-analyzer: /path" or "  ✘ ruff: 'ruff' not found".
SERVER_LINE = re.compile(r"^\s+\S+\s+([^\s:]+):")

SERVER_ENTRY = """[language-server.larik]
command = {command}
args = ["lsp"]
# The agent reads its model and keys from the environment and ~/.config/larik, as in a terminal.
# Put environment variables for it here if Helix is started without them, for example:
# environment = {{ LARIK_MODEL = "claude-sonnet-4-5" }}
"""

CHAT_ENTRY = """# Chat files: write a prompt under the last heading of any `*.larik.md` file and run the code
# action "Larik: send" (space a); the answer streams into the end of the file.
[[language]]
name = "larik-chat"
scope = "text.larik-chat"
file-types = [{ glob = "*.larik.md" }]
roots = []
grammar = "markdown"
language-servers = ["larik"]
soft-wrap = { enable = true }
indent = { tab-width = 2, unit = "  " }
"""


class Failure(Exception):
    pass


def helix_version(hx: str) -> str:
    done = subprocess.run([hx, "--version"], capture_output=True, text=True, timeout=30)
    return done.stdout.strip() or "helix (unknown version)"


def health_commands(hx: str, language: str, servers: list[str] | None = None) -> list[str]:
    """The commands `hx --health LANGUAGE` lists as the language's servers, in order. Run with an
    empty config directory and from an empty folder, so neither the user's nor a project's
    languages.toml counts; with `servers`, that list is configured for the language instead."""
    with tempfile.TemporaryDirectory() as empty:
        if servers is not None:
            config = Path(empty, "helix")
            config.mkdir()
            (config / "languages.toml").write_text(language_entry(language, servers))
        env = dict(os.environ, XDG_CONFIG_HOME=empty, HOME=empty)
        done = subprocess.run([hx, "--health", language], capture_output=True, text=True, timeout=60, cwd=empty, env=env)
    text = ANSI.sub("", done.stdout + done.stderr)
    if f"Language '{language}' not found" in text:
        hint = next((line for line in text.splitlines() if line.startswith("Did you mean")), "")
        raise Failure(f"Helix has no language {language!r}. {hint}".strip())
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith("Configured language servers")), None)
    if start is None:
        raise Failure(f"`{hx} --health {language}` printed no 'Configured language servers' line:\n{text}")
    commands = []
    for line in lines[start + 1:]:
        match = SERVER_LINE.match(line)
        if not match:
            break
        commands.append(match.group(1))
    return commands


def name_candidates(command: str) -> list[str]:
    """Names Helix may give the server that runs `command`: usually the command itself, else
    the command without or with another of the usual suffixes (jedi runs jedi-language-server,
    pyright pyright-langserver, golangci-lint-lsp golangci-lint-langserver)."""
    suffixes = ["-language-server", "-langserver", "-lsp", "-ls", "-server"]
    base = next((command[: -len(suffix)] for suffix in suffixes if command.endswith(suffix)), command)
    candidates = [command, base, *(base + suffix for suffix in suffixes)]
    return list(dict.fromkeys(candidates))


def default_servers(hx: str, language: str) -> list[str]:
    """Helix's own servers for `language`, by name, in its order. `hx --health` names each by
    the command it runs, so each name is found by configuring a candidate alone and checking
    that Helix then lists that command."""
    names = []
    for command in health_commands(hx, language):
        name = next((candidate for candidate in name_candidates(command) if health_commands(hx, language, [candidate]) == [command]), None)
        if name is None:
            raise Failure(f"Helix's {language} server running {command!r} has a name this script cannot find; "
                          "look it up in Helix's languages.toml and add it before \"larik\" by hand")
        names.append(name)
    return names


def toml_string(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def toml_value(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return str(value)
    if isinstance(value, str):
        return toml_string(value)
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(item) for item in value) + "]"
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{key} = {toml_value(item)}" for key, item in value.items()) + " }"
    raise Failure(f"cannot write {value!r} as TOML")


def language_entry(name: str, servers: list) -> str:
    return f"[[language]]\nname = {toml_string(name)}\nlanguage-servers = {toml_value(servers)}\n"


def generate(hx: str, languages: list[str], command: str) -> str:
    version = helix_version(hx)
    parts = [
        "# Larik for Helix: add this to ~/.config/helix/languages.toml (or a project's .helix/languages.toml).\n"
        f"# Made by editors/helix/scripts/languages.py from {version}'s own servers: Helix replaces a\n"
        "# language's whole list when one is set, so each keeps Helix's servers, in Helix's order, with\n"
        "# larik last (earlier servers win for features only one may provide, such as formatting).\n"
        "# Run the script again after upgrading Helix, or for other languages.\n",
        SERVER_ENTRY.format(command=toml_string(command)),
    ]
    for language in languages:
        parts.append(language_entry(language, [*default_servers(hx, language), "larik"]))
    parts.append(CHAT_ENTRY)
    return "\n".join(parts)


# -- merging into an existing languages.toml -----------------------------------------------------


def server_names(servers) -> list[str]:
    return [item.get("name") if isinstance(item, dict) else item for item in servers or []]


def language_blocks(lines: list[str]) -> list[tuple[int, int]]:
    """The line ranges [start, end) of each `[[language]]` table, in file order."""
    headers = [i for i, line in enumerate(lines) if re.match(r"^\s*\[", line)]
    blocks = []
    for n, start in enumerate(headers):
        if re.match(r"^\s*\[\[\s*language\s*\]\]", lines[start]):
            end = headers[n + 1] if n + 1 < len(headers) else len(lines)
            blocks.append((start, end))
    return blocks


def array_end(lines: list[str], start: int) -> int:
    """The line where the array that opens on line `start` closes (brackets in strings and
    comments aside)."""
    depth = 0
    for i in range(start, len(lines)):
        code = re.sub(r'"(\\.|[^"\\])*"|\'[^\']*\'', '""', lines[i]).split("#", 1)[0]
        depth += code.count("[") - code.count("]")
        if depth <= 0:
            return i
    raise Failure("an unclosed language-servers array")


def add_larik(text: str, index: int, language: dict) -> str:
    """`text` with "larik" appended to the `index`-th [[language]] table's servers (the key is
    added after its name when it has none). The result is parsed again to check it."""
    lines = text.splitlines(keepends=True)
    start, end = language_blocks(lines)[index]
    servers = [*language.get("language-servers", []), "larik"] if "language-servers" in language else None
    if servers is None:
        # No list of its own: Helix's defaults applied, so they go in with larik.
        servers = language["_defaults"] + ["larik"]
    new_line = f"language-servers = {toml_value(servers)}\n"
    key = next((i for i in range(start, end) if re.match(r"^\s*(\"language-servers\"|language-servers)\s*=", lines[i])), None)
    if key is None:
        name = next((i for i in range(start, end) if re.match(r"^\s*name\s*=", lines[i])), start)
        lines.insert(name + 1, new_line)
    else:
        lines[key:array_end(lines, key) + 1] = [new_line]
    return "".join(lines)


def merge(existing: str, hx: str, languages: list[str], command: str) -> tuple[str, list[str]]:
    """`existing` with what Larik needs added; and one line per language saying what was done."""
    try:
        parsed = tomllib.loads(existing)
    except tomllib.TOMLDecodeError as error:
        raise Failure(f"the existing file is not valid TOML ({error}); nothing was changed") from None
    text = existing.rstrip("\n") + "\n" if existing.strip() else ""
    notes = []
    additions = []
    if "larik" in parsed.get("language-server", {}):
        notes.append("[language-server.larik]: already there, kept")
    else:
        additions.append(SERVER_ENTRY.format(command=toml_string(command)))
        notes.append("[language-server.larik]: added")
    tables = parsed.get("language", [])
    for language in [*languages, "larik-chat"]:
        index = next((i for i, table in enumerate(tables) if table.get("name") == language), None)
        if index is None:
            if language == "larik-chat":
                additions.append(CHAT_ENTRY)
            else:
                additions.append(language_entry(language, [*default_servers(hx, language), "larik"]))
            notes.append(f"{language}: added")
            continue
        table = tables[index]
        if "larik" in server_names(table.get("language-servers")):
            notes.append(f"{language}: already has larik, kept")
            continue
        own = "language-servers" in table
        if not own:
            table = dict(table, _defaults=default_servers(hx, language))
        changed = add_larik(text, index, table)
        check = tomllib.loads(changed)["language"][index]
        if server_names(check.get("language-servers"))[-1:] != ["larik"]:
            raise Failure(f"could not add larik to the {language} entry; add \"larik\" to its language-servers yourself")
        text = changed
        whose = "your servers" if own else "Helix's servers, set in your entry"
        notes.append(f"{language}: larik appended to {whose} ({', '.join(server_names(check['language-servers']))})")
    if additions:
        text = (text + "\n" if text else "") + "\n".join(additions)
    tomllib.loads(text)  # what is written must still parse
    return text, notes


def config_file() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "helix" / "languages.toml"


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description="Write languages.toml entries attaching Larik to Helix, from the installed Helix's own servers.")
    parser.add_argument("languages", nargs="*", help=f"Helix language names (default: {' '.join(DEFAULT_LANGUAGES)})")
    parser.add_argument("--hx", default=os.environ.get("HX", "hx"), help="the Helix binary to read (default: $HX, else hx on PATH)")
    parser.add_argument("--command", default="larik", help="how Helix starts the agent (default: larik, found on PATH)")
    parser.add_argument("--write", action="store_true", help=f"merge into --file instead of printing")
    parser.add_argument("--file", default=str(config_file()), help=f"the languages.toml --write merges into (default: {config_file()})")
    args = parser.parse_args(argv)
    # The chat language is always written, with larik alone.
    languages = [name for name in args.languages or DEFAULT_LANGUAGES if name != "larik-chat"]
    # Absolute: Helix is run from an empty folder.
    hx = os.path.abspath(shutil.which(args.hx) or args.hx)
    try:
        if not args.write:
            sys.stdout.write(generate(hx, languages, args.command))
            return 0
        target = Path(args.file).expanduser()
        existing = target.read_text() if target.exists() else ""
        text, notes = merge(existing, hx, languages, args.command)
        target.parent.mkdir(parents=True, exist_ok=True)
        if existing:
            shutil.copyfile(target, target.with_name(target.name + ".bak"))
        partial = target.with_name(target.name + ".new")
        partial.write_text(text)
        partial.replace(target)
        for note in notes:
            print(f"{target}: {note}", file=sys.stderr)
        return 0
    except (Failure, OSError, subprocess.SubprocessError) as error:
        print(f"languages.py: {error}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
