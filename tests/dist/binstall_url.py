#!/usr/bin/env python3
"""Renders the `[package.metadata.binstall]` templates of rpc-server/Cargo.toml for one target the
way `cargo binstall` fills them (`{ name }`, `{ version }`, `{ target }`, ...), and prints the
archive URL and the binary's path inside the archive, one a line. tests/dist/run.sh compares them
with the archive scripts/dist.sh packed.

    python3 tests/dist/binstall_url.py TARGET
"""

from __future__ import annotations

import re
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def render(template: str, values: dict[str, str]) -> str:
    def one(match: re.Match) -> str:
        key = match.group(1)
        if key not in values:
            raise KeyError(f"the template {template!r} uses {{ {key} }}, which this check does not fill")
        return values[key]

    return re.sub(r"\{\s*([a-z-]+)\s*\}", one, template)


def main() -> int:
    target = sys.argv[1]
    crate = tomllib.loads((ROOT / "rpc-server" / "Cargo.toml").read_text(encoding="utf-8"))
    workspace = tomllib.loads((ROOT / "Cargo.toml").read_text(encoding="utf-8"))
    package = crate["package"]
    version = package["version"]
    if isinstance(version, dict):
        version = workspace["workspace"]["package"]["version"]
    binstall = package["metadata"]["binstall"]
    if binstall.get("pkg-fmt") != "tgz":
        raise SystemExit(f"binstall_url.py: pkg-fmt is {binstall.get('pkg-fmt')!r}; dist.sh packs a .tar.gz (tgz)")
    windows = "windows" in target
    values = {
        "name": package["name"],
        "version": version,
        "target": target,
        "bin": "larik",
        "binary-ext": ".exe" if windows else "",
        "archive-format": "tgz",
    }
    print(render(binstall["pkg-url"], values))
    print(render(binstall["bin-dir"], values))
    return 0


if __name__ == "__main__":
    sys.exit(main())
