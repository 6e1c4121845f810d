#!/usr/bin/env bash
# `larik mcp login` from a terminal, with the conformance suite's mock MCP server and
# authorization server on the other side: run by the suite as the client under test
# (`conformance client --command "bash cli-login.sh" --scenario auth/metadata-default`), with the
# server's URL as the last argument. The server is in the user's settings, as a Claude Code user
# has it in `mcpServers`; `$BROWSER` is "the browser", a visit that follows the redirects.
#
#   1. `larik mcp get` connects in the background, never logs in: the server needs a login;
#   2. `larik mcp login` opens the authorization page, keeps the token (0600) and connects;
#   3. a new `larik mcp get` uses the saved login: connected, with the server's tool.
# Exits non-zero on any failure here; the suite checks the OAuth steps from its side.
set -euo pipefail
url="${!#}"
here="$(cd "$(dirname "$0")" && pwd)"
target="${CARGO_TARGET_DIR:-$here/../../target}"
larik="${LARIK_BIN:-$target/debug/larik}"
root="$(mktemp -d)"
trap 'rm -rf "$root"' EXIT
mkdir -p "$root/project" "$root/home" "$root/config/larik" "$root/data"
export HOME="$root/home" XDG_CONFIG_HOME="$root/config" XDG_DATA_HOME="$root/data"
printf '{"mcpServers": {"conformance": {"type": "http", "url": "%s"}}}\n' "$url" >"$root/config/larik/settings.json"
cat >"$root/browser" <<'SCRIPT'
#!/bin/sh
exec node -e 'fetch(process.argv[1]).catch((error) => { console.error(error); process.exit(1); })' "$1"
SCRIPT
chmod +x "$root/browser"
cd "$root/project"

fail() { echo "cli-login: $*" >&2; exit 1; }

before=$("$larik" mcp get conformance) || true
[[ "$before" == *"needs login: type \`/mcp login conformance\`"* ]] || fail "before the login: $before"

login=$(BROWSER="$root/browser" "$larik" mcp login conformance) || fail "the login failed: $login"
[[ "$login" == *"To log in to the MCP server \`conformance\`, open:"* ]] || fail "no page named: $login"
[[ "$login" == *"Logged in to the MCP server \`conformance\`"* ]] || fail "not logged in: $login"
[[ "$login" == *"connected, 1 tools"* ]] || fail "not connected after the login: $login"

tokens=("$root"/data/larik/mcp-auth/conformance-*.json)
[[ -f "${tokens[0]}" ]] || fail "no token file in $root/data/larik/mcp-auth"
[[ "$(stat -c %a "${tokens[0]}")" == 600 ]] || fail "the token file is readable by others: $(stat -c %a "${tokens[0]}")"
[[ "$(stat -c %a "$root/data/larik/mcp-auth")" == 700 ]] || fail "the token directory is open to others"

after=$("$larik" mcp get conformance) || fail "after the login: $after"
[[ "$after" == *"connected, 1 tools"* ]] || fail "the saved login was not used: $after"
echo "cli-login: ok"
