"""Tests of check.py: the shipped Larik entry passes, broken entries fail with a message that
names the field and the rule."""

from __future__ import annotations

import copy
import json
import shutil
import sys
import tomllib
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import check  # noqa: E402

SCHEMA = HERE / "agent.schema.json"
MANIFEST = HERE / "larik" / "agent.json"
ICON = HERE / "larik" / "icon.svg"


def shipped() -> dict:
    return json.loads(MANIFEST.read_text(encoding="utf-8"))


def write_entry(root: Path, manifest: dict | str, directory: str = "larik", icon: str | None = None) -> Path:
    """Write `<root>/<directory>/agent.json` (and icon.svg, the shipped one unless given)."""
    entry = root / directory
    entry.mkdir(parents=True, exist_ok=True)
    path = entry / "agent.json"
    path.write_text(manifest if isinstance(manifest, str) else json.dumps(manifest, indent=2), encoding="utf-8")
    if icon is None:
        shutil.copy(ICON, entry / "icon.svg")
    else:
        (entry / "icon.svg").write_text(icon, encoding="utf-8")
    return path


def run(capsys, *args: str) -> tuple[int, str]:
    status = check.main(list(args))
    captured = capsys.readouterr()
    return status, captured.out + captured.err


# --- The shipped entry --------------------------------------------------------------------------


def test_shipped_manifest_passes(capsys):
    status, output = run(capsys, str(MANIFEST))
    assert status == 0, output
    assert "ok:" in output


def test_shipped_manifest_lists_the_built_archive_and_both_packages():
    distribution = shipped()["distribution"]
    # Only the target whose archive the tests build and run; the packages cover the rest.
    assert set(distribution["binary"]) == {"linux-x86_64"}
    entry = distribution["binary"]["linux-x86_64"]
    assert entry["cmd"] == "./larik"
    assert entry["args"] == ["acp"]
    assert entry["archive"].endswith("/releases/download/v0.1.0/larik-0.1.0-x86_64-unknown-linux-gnu.tar.gz")
    assert distribution["npx"] == {"package": "larik@0.1.0", "args": ["acp"]}
    assert distribution["uvx"] == {"package": "larik@0.1.0", "args": ["acp"]}


def test_shipped_packages_are_the_ones_the_repository_builds():
    # The npm launcher (dist/npm) and the wheel (rpc-server/pyproject.toml), at the workspace's
    # version, which scripts/npm.sh and maturin both stamp on them.
    root = HERE.parent.parent
    workspace = tomllib.loads((root / "Cargo.toml").read_text(encoding="utf-8"))
    version = workspace["workspace"]["package"]["version"]
    npm_name = json.loads((root / "dist" / "npm" / "larik" / "package.json").read_text(encoding="utf-8"))["name"]
    pypi_name = tomllib.loads((root / "rpc-server" / "pyproject.toml").read_text(encoding="utf-8"))["project"]["name"]
    manifest = shipped()
    assert manifest["version"] == version
    assert manifest["distribution"]["npx"]["package"] == f"{npm_name}@{version}"
    assert manifest["distribution"]["uvx"]["package"] == f"{pypi_name}@{version}"


def test_shipped_manifest_only_warns_about_the_missing_archives(capsys):
    status, output = run(capsys, str(MANIFEST))
    assert status == 0
    assert "no build for darwin, windows" in output


def test_release_mode_refuses_the_placeholder_owner(capsys):
    status, output = run(capsys, str(MANIFEST), "--release")
    assert status == 1
    assert "placeholder owner 'OWNER'" in output
    assert "distribution.binary.linux-x86_64.archive" in output


def test_release_mode_passes_once_the_owner_is_filled_in(tmp_path, capsys):
    text = MANIFEST.read_text(encoding="utf-8").replace("/OWNER/", "/example-org/")
    path = write_entry(tmp_path, text)
    status, output = run(capsys, str(path), "--release")
    assert status == 0, output


# --- Broken entries -----------------------------------------------------------------------------


def test_broken_manifest_fails_with_clear_messages(tmp_path, capsys):
    broken = shipped()
    del broken["version"]
    broken["id"] = "Larik"
    broken["distribution"]["binary"]["linux-riscv64"] = {"archive": "https://example.com/x.tar.gz", "cmd": "./larik"}
    del broken["distribution"]["binary"]["linux-x86_64"]["cmd"]
    path = write_entry(tmp_path, broken)

    status, output = run(capsys, str(path))

    assert status == 1
    assert "(top level): required property 'version' is missing" in output
    assert "id: 'Larik' does not match the pattern ^[a-z][a-z0-9-]*$" in output
    assert "distribution.binary: the key 'linux-riscv64' is not allowed; allowed: darwin-aarch64" in output
    assert "distribution.binary.linux-x86_64: required property 'cmd' is missing" in output
    assert "FAILED:" in output


def _mutate(manifest: dict, change) -> dict:
    changed = copy.deepcopy(manifest)
    change(changed)
    return changed


def _linux(manifest: dict) -> dict:
    return manifest["distribution"]["binary"]["linux-x86_64"]


BROKEN = {
    "missing name": (lambda m: m.pop("name"), "required property 'name' is missing"),
    "empty description": (lambda m: m.update(description=""), "description: must be at least 1 character(s) long"),
    "version not semver": (lambda m: m.update(version="v1"), "version: 'v1' does not match the pattern"),
    "authors not a list": (lambda m: m.update(authors="me"), "authors: expected array, found string"),
    "repository not a URI": (lambda m: m.update(repository="not a url"), "repository: 'not a url' is not a valid URI"),
    "unknown distribution": (lambda m: m["distribution"].update(docker={"image": "x"}), "property 'docker' is not allowed"),
    "empty distribution": (lambda m: m.update(distribution={}), "distribution: must have at least 1 property"),
    "extra target key": (lambda m: _linux(m).update(checksum="abc"), "property 'checksum' is not allowed"),
    "bad sha256": (lambda m: _linux(m).update(sha256="abc"), "sha256: 'abc' does not match the pattern"),
    "args not strings": (lambda m: _linux(m).update(args=["acp", 1]), "args.[1]: expected string, found integer"),
    "env value not string": (lambda m: _linux(m).update(env={"X": 1}), "env.X: expected string, found integer"),
    "archive not a URI": (lambda m: _linux(m).update(archive="larik.tar.gz"), "is not a valid URI"),
    "version differs from URL": (lambda m: m.update(version="0.2.0"), "the URL has version 0.1.0, expected 0.2.0"),
    "latest URL": (
        lambda m: _linux(m).update(archive="https://github.com/o/larik/releases/latest/download/larik.tar.gz"),
        "uses '/latest/'",
    ),
    "npx version differs": (
        lambda m: m["distribution"]["npx"].update(package="larik@0.2.0"),
        "distribution.npx.package: 'larik@0.2.0' names version 0.2.0, expected 0.1.0",
    ),
    "scoped npx version differs": (
        lambda m: m["distribution"]["npx"].update(package="@larik/larik@0.0.9"),
        "'@larik/larik@0.0.9' names version 0.0.9, expected 0.1.0",
    ),
    "npx latest": (lambda m: m["distribution"]["npx"].update(package="larik@latest"), "distribution.npx.package: 'larik@latest' uses '@latest'"),
    "uvx version differs": (
        lambda m: m["distribution"]["uvx"].update(package="larik==0.2.0"),
        "distribution.uvx.package: 'larik==0.2.0' names version 0.2.0, expected 0.1.0",
    ),
    "uvx latest": (lambda m: m["distribution"]["uvx"].update(package="larik@latest"), "distribution.uvx.package: 'larik@latest' uses '@latest'"),
    "empty package": (lambda m: m["distribution"]["uvx"].update(package=""), "distribution.uvx.package: must be at least 1 character(s) long"),
    "installer format": (
        lambda m: _linux(m).update(archive="https://github.com/o/larik/releases/download/v0.1.0/larik.deb"),
        "installer formats are not supported",
    ),
}


@pytest.mark.parametrize("case", sorted(BROKEN))
def test_each_broken_field_is_named(case, tmp_path, capsys):
    change, expected = BROKEN[case]
    path = write_entry(tmp_path, _mutate(shipped(), change))
    status, output = run(capsys, str(path))
    assert status == 1, output
    assert expected in output


@pytest.mark.parametrize("spec", ["larik", "@larik/larik", "larik@0.1.0", "@larik/larik@0.1.0", "larik==0.1.0"])
def test_package_specs_with_the_entry_version_or_none_pass(spec, tmp_path, capsys):
    # The registry's build checks a version only when the spec names one.
    def change(manifest: dict) -> None:
        manifest["distribution"]["npx"]["package"] = spec
        manifest["distribution"]["uvx"]["package"] = spec.replace("@larik/", "")

    path = write_entry(tmp_path, _mutate(shipped(), change))
    status, output = run(capsys, str(path))
    assert status == 0, output


def test_id_must_match_the_directory(tmp_path, capsys):
    path = write_entry(tmp_path, shipped(), directory="other")
    status, output = run(capsys, str(path))
    assert status == 1
    assert "id: 'larik' must match its directory name ('other')" in output


def test_invalid_json_is_reported_with_its_position(tmp_path, capsys):
    path = write_entry(tmp_path, '{"id": "larik",\n  "name": }')
    status, output = run(capsys, str(path))
    assert status == 2
    assert "is not valid JSON" in output and "line 2" in output


def test_icon_field_is_only_a_warning(tmp_path, capsys):
    path = write_entry(tmp_path, _mutate(shipped(), lambda m: m.update(icon="icon.svg")))
    status, output = run(capsys, str(path))
    assert status == 0
    assert "sets this field from icon.svg" in output


# --- The icon -----------------------------------------------------------------------------------

GOOD_ICON = '<svg xmlns="http://www.w3.org/2000/svg" width="16" height="16"><path fill="currentColor" d="M0 0h1v1z"/></svg>'


@pytest.mark.parametrize(
    ("icon", "expected"),
    [
        (GOOD_ICON.replace("currentColor", "#ff0000"), "hardcoded fill '#ff0000'"),
        (GOOD_ICON.replace('width="16" height="16"', 'width="32" height="32"'), "must be 16x16 (is 32x32)"),
        (GOOD_ICON.replace('width="16" height="16"', 'viewBox="0 0 16 12"'), "must be square"),
        (GOOD_ICON.replace("<path", "<!-- logo --><path"), "contains an XML comment"),
        (GOOD_ICON.replace('fill="currentColor"', 'style="stroke: red"'), "hardcoded stroke 'red'"),
        ("<svg", "not valid SVG/XML"),
    ],
)
def test_icon_rules(icon, expected, tmp_path, capsys):
    path = write_entry(tmp_path, shipped(), icon=icon)
    status, output = run(capsys, str(path))
    assert status == 1, output
    assert expected in output


def test_missing_icon_fails(tmp_path, capsys):
    path = write_entry(tmp_path, shipped())
    (path.parent / "icon.svg").unlink()
    status, output = run(capsys, str(path))
    assert status == 1
    assert "larik/icon.svg: missing" in output


def test_shipped_icon_passes():
    assert check.icon_problems(ICON) == []


# --- The schema subset --------------------------------------------------------------------------


def test_unsupported_schema_keyword_is_refused(tmp_path, capsys):
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    schema["properties"]["name"]["oneOf"] = [{"type": "string"}]
    schema_path = tmp_path / "schema.json"
    schema_path.write_text(json.dumps(schema), encoding="utf-8")
    status, output = run(capsys, str(MANIFEST), "--schema", str(schema_path))
    assert status == 2
    assert "#/properties/name: the schema uses the keyword 'oneOf'" in output


def test_conditional_requirement_is_applied(tmp_path, capsys):
    # The shape of a conditional rule the registry may add: license_url required unless exempt.
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    schema["if"] = {"properties": {"id": {"const": "exempt-agent"}}, "required": ["id"]}
    schema["else"] = {"required": ["license_url"]}
    schema_path = tmp_path / "schema.json"
    schema_path.write_text(json.dumps(schema), encoding="utf-8")

    status, output = run(capsys, str(MANIFEST), "--schema", str(schema_path))
    assert status == 0, output

    path = write_entry(tmp_path, _mutate(shipped(), lambda m: m.pop("license_url")))
    status, output = run(capsys, str(path), "--schema", str(schema_path))
    assert status == 1
    assert "required property 'license_url' is missing" in output


def test_validator_agrees_with_documented_examples():
    # The entry shape from the registry's CONTRIBUTING.md passes; dropping a required field fails.
    validator = check.Validator(json.loads(SCHEMA.read_text(encoding="utf-8")))
    example = {
        "id": "your-agent-id",
        "name": "Your Agent Name",
        "version": "1.0.0",
        "description": "Brief description of your agent",
        "repository": "https://github.com/your-org/your-repo",
        "authors": ["Your Name <email@example.com>"],
        "license": "MIT",
        "distribution": {"npx": {"package": "@your-scope/your-package@1.0.0", "args": ["--acp"]}},
    }
    assert validator.errors(example) == []
    del example["distribution"]
    assert validator.errors(example) == ["(top level): required property 'distribution' is missing"]
