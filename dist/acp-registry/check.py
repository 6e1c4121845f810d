#!/usr/bin/env python3
"""Check an ACP registry entry (`<id>/agent.json`) before it is submitted.

Two sets of rules are applied:

1. The registry's JSON Schema, `agent.schema.json` beside this file (see README.md for where it
   comes from). The subset of JSON Schema draft-07 that the schema uses is implemented here, with
   the standard library only. A schema that uses any other keyword is refused with a message
   naming it, so a newer schema never passes silently.
2. The rules the registry's CONTRIBUTING.md and build script enforce beyond the schema: the id
   matches the directory, the version is x.y.z, binary URLs and `npx`/`uvx` package specs name
   that version and never `latest`, no installer formats, a 16x16 monochrome `icon.svg` beside
   the manifest. A missing operating system family is a warning, as it is in the registry's
   build.

Usage:
    python3 check.py [MANIFEST] [--schema SCHEMA] [--release]

MANIFEST defaults to larik/agent.json beside this file. --release also fails while the
repository placeholder (OWNER) is still in a URL. Exit status: 0 valid, 1 problems found,
2 the schema or the manifest could not be used at all.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from urllib.parse import urlsplit

HERE = Path(__file__).resolve().parent
DEFAULT_SCHEMA = HERE / "agent.schema.json"
DEFAULT_MANIFEST = HERE / "larik" / "agent.json"

# The placeholder for the GitHub owner in repository and archive URLs (README.md explains it).
PLACEHOLDER_OWNER = "OWNER"

# Keywords that only describe; they never make an instance invalid.
ANNOTATION_KEYWORDS = {"$schema", "$id", "$comment", "title", "description", "definitions", "default", "examples"}
# Keywords whose validation this file implements.
VALIDATION_KEYWORDS = {
    "type",
    "required",
    "properties",
    "additionalProperties",
    "propertyNames",
    "minProperties",
    "items",
    "pattern",
    "minLength",
    "enum",
    "const",
    "format",
    "$ref",
    "if",
    "then",
    "else",
}
SUPPORTED_FORMATS = {"uri"}

# From the registry's build script and CONTRIBUTING.md.
REQUIRED_OS_FAMILIES = ("darwin", "linux", "windows")
REJECTED_ARCHIVE_EXTENSIONS = (".dmg", ".pkg", ".deb", ".rpm", ".msi", ".appimage")
ICON_SIZE = 16
ALLOWED_PAINT = {"currentcolor", "none", "inherit"}


class SchemaProblem(Exception):
    """The schema itself cannot be used by this checker."""


# --- JSON Schema subset -------------------------------------------------------------------------


def check_schema_keywords(schema: dict) -> None:
    """Refuse a schema that uses a keyword (or format) this checker does not implement."""

    def walk(node: object, where: str) -> None:
        if isinstance(node, bool):
            return
        if not isinstance(node, dict):
            raise SchemaProblem(f"{where}: a schema must be an object or a boolean, found {type(node).__name__}")
        for key, value in node.items():
            if key not in ANNOTATION_KEYWORDS and key not in VALIDATION_KEYWORDS:
                raise SchemaProblem(
                    f"{where}: the schema uses the keyword '{key}', which check.py does not implement; "
                    "extend check.py before trusting it with this schema"
                )
            if key == "format" and value not in SUPPORTED_FORMATS:
                raise SchemaProblem(f"{where}: the schema uses format '{value}', which check.py does not implement")
            if key == "$ref" and not (isinstance(value, str) and value.startswith("#")):
                raise SchemaProblem(f"{where}: only references inside the schema ('#/...') are supported, found {value!r}")
            if key == "items" and not isinstance(value, (dict, bool)):
                raise SchemaProblem(f"{where}: only a single schema for 'items' is supported")
        for key in ("properties", "definitions"):
            for name, sub in node.get(key, {}).items():
                walk(sub, f"{where}/{key}/{name}")
        for key in ("additionalProperties", "items", "propertyNames", "if", "then", "else"):
            if key in node:
                walk(node[key], f"{where}/{key}")

    walk(schema, "#")


def _type_name(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def _has_type(value: object, expected: str) -> bool:
    actual = _type_name(value)
    return actual == expected or (expected == "number" and actual == "integer")


def _is_uri(value: str) -> bool:
    if not value or any(ch.isspace() for ch in value):
        return False
    parts = urlsplit(value)
    return bool(re.fullmatch(r"[A-Za-z][A-Za-z0-9+.-]*", parts.scheme)) and bool(parts.netloc or parts.path)


def _show(path: list[str]) -> str:
    return ".".join(path) if path else "(top level)"


class Validator:
    def __init__(self, schema: dict):
        check_schema_keywords(schema)
        self.root = schema

    def resolve(self, ref: str) -> object:
        node: object = self.root
        for part in ref.lstrip("#").split("/"):
            if not part:
                continue
            part = part.replace("~1", "/").replace("~0", "~")
            if not isinstance(node, dict) or part not in node:
                raise SchemaProblem(f"the reference {ref!r} points at nothing in the schema")
            node = node[part]
        return node

    def errors(self, instance: object) -> list[str]:
        found: list[str] = []
        self._validate(instance, self.root, [], found)
        return found

    def _validate(self, value: object, schema: object, path: list[str], out: list[str]) -> None:
        if schema is True:
            return
        if schema is False:
            out.append(f"{_show(path)}: not allowed here")
            return
        assert isinstance(schema, dict)
        where = _show(path)

        if "$ref" in schema:
            self._validate(value, self.resolve(schema["$ref"]), path, out)

        if "type" in schema:
            expected = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
            if not any(_has_type(value, name) for name in expected):
                out.append(f"{where}: expected {' or '.join(expected)}, found {_type_name(value)}")
                return

        if "enum" in schema and value not in schema["enum"]:
            out.append(f"{where}: {value!r} is not one of {schema['enum']}")
        if "const" in schema and value != schema["const"]:
            out.append(f"{where}: must be {schema['const']!r}")

        if isinstance(value, str):
            if "minLength" in schema and len(value) < schema["minLength"]:
                out.append(f"{where}: must be at least {schema['minLength']} character(s) long")
            if "pattern" in schema and not re.search(schema["pattern"], value):
                out.append(f"{where}: {value!r} does not match the pattern {schema['pattern']}")
            if schema.get("format") == "uri" and not _is_uri(value):
                out.append(f"{where}: {value!r} is not a valid URI")

        if isinstance(value, list) and "items" in schema:
            for index, item in enumerate(value):
                self._validate(item, schema["items"], path + [f"[{index}]"], out)

        if isinstance(value, dict):
            for name in schema.get("required", []):
                if name not in value:
                    out.append(f"{where}: required property '{name}' is missing")
            if "minProperties" in schema and len(value) < schema["minProperties"]:
                out.append(f"{where}: must have at least {schema['minProperties']} propert{'y' if schema['minProperties'] == 1 else 'ies'}")
            properties = schema.get("properties", {})
            for name, item in value.items():
                if "propertyNames" in schema:
                    names = schema["propertyNames"]
                    name_errors: list[str] = []
                    self._validate(name, names, path + [name], name_errors)
                    if name_errors:
                        allowed = names.get("enum") if isinstance(names, dict) else None
                        hint = f"; allowed: {', '.join(allowed)}" if allowed else ""
                        out.append(f"{where}: the key '{name}' is not allowed{hint}")
                        continue
                if name in properties:
                    self._validate(item, properties[name], path + [name], out)
                elif "additionalProperties" in schema:
                    extra = schema["additionalProperties"]
                    if extra is False:
                        known = ", ".join(properties) if properties else "none"
                        out.append(f"{where}: property '{name}' is not allowed (allowed: {known})")
                    else:
                        self._validate(item, extra, path + [name], out)

        if "if" in schema:
            probe: list[str] = []
            self._validate(value, schema["if"], path, probe)
            branch = "then" if not probe else "else"
            if branch in schema:
                self._validate(value, schema[branch], path, out)


# --- The registry's rules beyond the schema -----------------------------------------------------


def _version_in_url(url: str) -> str | None:
    """The version a GitHub release URL names, as the registry's build script reads it."""
    match = re.search(r"/(?:download|releases)/v?([\d.]+)/", url)
    return match.group(1).rstrip(".") if match else None


def _npm_package_version(spec: str) -> str | None:
    """The version of an npm package spec (`name@1.2.3`, `@scope/name@1.2.3`), as the registry's
    build script reads it; None when the spec names no version."""
    name_end = spec.find("@", 1) if spec.startswith("@") else spec.find("@")
    return spec[name_end + 1 :] if name_end > 0 else None


def _pypi_package_version(spec: str) -> str | None:
    """The version of a PyPI package spec (`name==1.2.3`, `name@1.2.3`, `name>=1.2.3`), read as the
    registry's build script reads it; None when the spec names no version."""
    match = re.search(r"[=@]+([\d.]+)", spec)
    return match.group(1) if match else None


def package_rules(distribution: dict, version: object) -> list[str]:
    """The registry's rules for `npx` and `uvx`: an explicit version, the entry's own."""
    errors: list[str] = []
    readers = {"npx": _npm_package_version, "uvx": _pypi_package_version}
    for kind, read_version in readers.items():
        entry = distribution.get(kind)
        if not isinstance(entry, dict) or not isinstance(entry.get("package"), str):
            continue
        spec = entry["package"]
        where = f"distribution.{kind}.package"
        if "@latest" in spec.lower():
            errors.append(f"{where}: '{spec}' uses '@latest'; name the version instead")
            continue
        named = read_version(spec)
        if named is not None and isinstance(version, str) and named != version:
            errors.append(f"{where}: '{spec}' names version {named}, expected {version}")
    return errors


def registry_rules(manifest: dict, manifest_dir: Path, release: bool) -> tuple[list[str], list[str]]:
    errors: list[str] = []
    warnings: list[str] = []

    agent_id = manifest.get("id")
    if isinstance(agent_id, str) and agent_id != manifest_dir.name:
        errors.append(f"id: '{agent_id}' must match its directory name ('{manifest_dir.name}')")

    version = manifest.get("version")
    if isinstance(version, str):
        parts = version.split(".")
        if len(parts) < 3 or not all(part.isdigit() for part in parts[:3]):
            errors.append(f"version: '{version}' must be a semantic version x.y.z with numeric parts")

    if "icon" in manifest:
        warnings.append("icon: the registry's build sets this field from icon.svg; leave it out of agent.json")

    distribution = manifest.get("distribution")
    if isinstance(distribution, dict):
        errors.extend(package_rules(distribution, version))
    binary = distribution.get("binary") if isinstance(distribution, dict) else None
    if isinstance(binary, dict):
        for platform, target in binary.items():
            if not isinstance(target, dict) or not isinstance(target.get("archive"), str):
                continue
            url = target["archive"]
            where = f"distribution.binary.{platform}.archive"
            if "/latest/" in url:
                errors.append(f"{where}: uses '/latest/'; name the release version instead")
            else:
                named = _version_in_url(url)
                if named and isinstance(version, str) and named != version:
                    errors.append(f"{where}: the URL has version {named}, expected {version}")
            if url.lower().endswith(REJECTED_ARCHIVE_EXTENSIONS):
                errors.append(f"{where}: installer formats are not supported; use .tar.gz, .tgz, .tar.bz2, .tbz2, .zip or a raw binary")
            if release and f"/{PLACEHOLDER_OWNER}/" in url:
                errors.append(f"{where}: still names the placeholder owner '{PLACEHOLDER_OWNER}'")
        families = {str(platform).split("-")[0] for platform in binary}
        missing = [family for family in REQUIRED_OS_FAMILIES if family not in families]
        if missing:
            warnings.append(
                f"distribution.binary: no build for {', '.join(missing)}; the registry accepts this with a warning"
            )

    for field in ("repository", "website", "license_url"):
        value = manifest.get(field)
        if release and isinstance(value, str) and f"/{PLACEHOLDER_OWNER}/" in value + "/":
            errors.append(f"{field}: still names the placeholder owner '{PLACEHOLDER_OWNER}'")

    errors.extend(icon_problems(manifest_dir / "icon.svg"))
    return errors, warnings


def icon_problems(icon: Path) -> list[str]:
    """The registry's icon rules: 16x16, square, monochrome with currentColor, no comments."""
    name = f"{icon.parent.name}/icon.svg"
    if not icon.is_file():
        return [f"{name}: missing; every registry entry needs a 16x16 SVG icon beside agent.json"]
    text = icon.read_text(encoding="utf-8")
    problems: list[str] = []
    if "<!--" in text:
        problems.append(f"{name}: contains an XML comment; remove it")
    try:
        root = ET.fromstring(text)
    except ET.ParseError as error:
        return problems + [f"{name}: not valid SVG/XML ({error})"]
    if root.tag.split("}")[-1] != "svg":
        return problems + [f"{name}: the root element must be <svg>"]

    def number(raw: str | None) -> float | None:
        if raw is None:
            return None
        try:
            return float(re.sub(r"[a-z%]+$", "", raw.strip(), flags=re.IGNORECASE))
        except ValueError:
            return None

    width, height = number(root.get("width")), number(root.get("height"))
    if width is None or height is None:
        box = (root.get("viewBox") or "").split()
        if len(box) == 4:
            width, height = number(box[2]), number(box[3])
    if width is None or height is None:
        problems.append(f"{name}: has neither width/height nor a viewBox")
    else:
        if width != height:
            problems.append(f"{name}: must be square (is {width:g}x{height:g})")
        if width != ICON_SIZE or height != ICON_SIZE:
            problems.append(f"{name}: must be {ICON_SIZE}x{ICON_SIZE} (is {width:g}x{height:g})")

    uses_current_color = False
    for element in root.iter():
        paints = [(attr, element.get(attr)) for attr in ("fill", "stroke") if element.get(attr) is not None]
        for declaration in (element.get("style") or "").split(";"):
            if ":" in declaration:
                prop, value = declaration.split(":", 1)
                if prop.strip().lower() in ("fill", "stroke"):
                    paints.append((prop.strip().lower(), value))
        if element.tag.split("}")[-1] == "style" and element.text:
            for prop in ("fill", "stroke"):
                paints.extend((prop, value) for value in re.findall(rf"\b{prop}\s*:\s*([^;}}\s]+)", element.text, re.IGNORECASE))
        for attr, value in paints:
            value = (value or "").strip()
            if value.lower() == "currentcolor":
                uses_current_color = True
            elif value.lower() not in ALLOWED_PAINT:
                problems.append(f"{name}: hardcoded {attr} '{value}'; use currentColor or none")
    if not uses_current_color:
        problems.append(f"{name}: must paint with currentColor so it follows the editor's theme")
    return problems


# --- Command line --------------------------------------------------------------------------------


def load_json(path: Path, what: str) -> object:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise SchemaProblem(f"{what} {path} does not exist") from None
    except json.JSONDecodeError as error:
        raise SchemaProblem(f"{what} {path} is not valid JSON: {error.msg} at line {error.lineno}, column {error.colno}") from None


def check(manifest_path: Path, schema_path: Path = DEFAULT_SCHEMA, release: bool = False) -> tuple[list[str], list[str]]:
    """Errors and warnings for one manifest. Raises SchemaProblem when nothing can be checked."""
    schema = load_json(schema_path, "schema")
    if not isinstance(schema, dict):
        raise SchemaProblem(f"schema {schema_path} is not a JSON object")
    validator = Validator(schema)
    manifest = load_json(manifest_path, "manifest")
    errors = validator.errors(manifest)
    warnings: list[str] = []
    if isinstance(manifest, dict):
        more_errors, warnings = registry_rules(manifest, manifest_path.resolve().parent, release)
        errors += more_errors
    return errors, warnings


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Check an ACP registry agent.json against the registry's schema and rules.")
    parser.add_argument("manifest", nargs="?", type=Path, default=DEFAULT_MANIFEST, help="the agent.json to check (default: larik/agent.json)")
    parser.add_argument("--schema", type=Path, default=DEFAULT_SCHEMA, help="the registry schema (default: agent.schema.json beside check.py)")
    parser.add_argument("--release", action="store_true", help=f"also fail while a URL still names the placeholder owner {PLACEHOLDER_OWNER}")
    args = parser.parse_args(argv)

    try:
        errors, warnings = check(args.manifest, args.schema, args.release)
    except SchemaProblem as problem:
        print(f"check.py: cannot check: {problem}", file=sys.stderr)
        return 2

    label = args.manifest.as_posix()
    for warning in warnings:
        print(f"warning: {label}: {warning}", file=sys.stderr)
    for error in errors:
        print(f"error: {label}: {error}", file=sys.stderr)
    if errors:
        print(f"FAILED: {label}: {len(errors)} problem(s); the registry would reject this entry", file=sys.stderr)
        return 1
    print(f"ok: {label} matches {args.schema.name} and the registry's documented rules")
    return 0


if __name__ == "__main__":
    sys.exit(main())
