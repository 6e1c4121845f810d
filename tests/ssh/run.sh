#!/usr/bin/env bash
# `ssh host larik acp` as an editor's agent command: a real OpenSSH server (Debian's, installed by
# tests/ssh/setup.sh when missing) on 127.0.0.1 inside a network namespace made for this run, a key
# pair and a host key made for it, the mock model listening in the same namespace, and the
# official ACP TypeScript SDK client (tests/ssh/client.mjs) talking to `larik acp` through `ssh`.
# It checks a turn, a client killed mid-turn (nothing may survive on the remote side: not larik,
# not the running command, not the session's MCP server), and a new connection that loads the
# session. Runs as root (sshd and the namespace need it). Exits non-zero on any failure.
set -euo pipefail
cd "$(dirname "$0")/../.."
root="$(pwd)"

target_dir="${CARGO_TARGET_DIR:-target}"
larik_bin="$(realpath -m "${LARIK_BIN:-$target_dir/debug/larik}")"
mock_bin="$(realpath -m "${LARIK_MOCK_LLM_BIN:-$target_dir/debug/larik-mock-llm}")"
mcp_server="$root/tests/mcp/node_modules/@modelcontextprotocol/server-everything/dist/index.js"
fail() { echo "ssh: FAILED: $*" >&2; exit 1; }
for binary in "$larik_bin" "$mock_bin"; do
    [ -x "$binary" ] || fail "$binary is missing: build the workspace first (scripts/test.sh does)"
done
[ -f "$mcp_server" ] || fail "$mcp_server is missing: run scripts/setup.sh"
[ -d tests/acp-sdk/node_modules/@agentclientprotocol/sdk ] || fail "the ACP SDK is missing: run scripts/setup.sh"
[ "$(id -u)" = 0 ] || fail "run as root: sshd logs a key in as root, and the network namespace needs it too"
[ -x /usr/sbin/sshd ] || bash tests/ssh/setup.sh

work="$(mktemp -d /tmp/larik-ssh.XXXXXX)"
chmod 755 "$work"
namespace="larik-ssh-$$"
in_namespace=()
pids=()
cleanup() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    if [ ${#in_namespace[@]} -gt 0 ]; then
        # Whatever still runs in the namespace was started by this run.
        for pid in $(ip netns pids "$namespace" 2>/dev/null); do kill -9 "$pid" 2>/dev/null || true; done
        ip netns del "$namespace" 2>/dev/null || true
    fi
    rm -rf "$work"
}
trap cleanup EXIT

if ip netns add "$namespace" 2>"$work/netns.err" && ip netns exec "$namespace" ip link set lo up; then
    in_namespace=(ip netns exec "$namespace")
    echo "ssh: sshd and the mock model listen on 127.0.0.1 in the network namespace $namespace"
else
    ip netns del "$namespace" 2>/dev/null || true
    echo "ssh: no network namespace here ($(tr '\n' ' ' <"$work/netns.err")); sshd and the mock model listen on the host's 127.0.0.1"
fi
run() { "${in_namespace[@]}" "$@"; }

# A port free where sshd listens.
port="$(run python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"

# The host key, the client's key pair, and a config that lets in only that key, as root.
ssh-keygen -q -t ed25519 -N "" -C larik-ssh-host -f "$work/host_key"
ssh-keygen -q -t ed25519 -N "" -C larik-ssh-client -f "$work/client_key"
cp "$work/client_key.pub" "$work/authorized_keys"
cat >"$work/sshd_config" <<EOF
ListenAddress 127.0.0.1
HostKey $work/host_key
PidFile $work/sshd.pid
AuthorizedKeysFile $work/authorized_keys
PermitRootLogin prohibit-password
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
EOF
# sshd's privilege separation directory, which the package's service would make.
mkdir -p /run/sshd
run /usr/sbin/sshd -t -f "$work/sshd_config" -p "$port"
# Started directly, not through `run`: a backgrounded function is a subshell, and $! its pid.
"${in_namespace[@]}" /usr/sbin/sshd -D -e -f "$work/sshd_config" -p "$port" 2>"$work/sshd.log" &
pids+=($!)

# The mock model: the first connection's turn, the bash call the second one is killed in, and the
# answer after the session is loaded. Each step answers only its own prompt.
cat >"$work/scenario.json" <<'EOF'
{"responses": [
  {"when": "THIRD", "text": "Back, after the interruption."},
  {"when": "SECOND", "tool_calls": [{"id": "toolu_sleep", "name": "bash", "input": {"command": "exec sleep 30.4711"}}]},
  {"when": "FIRST", "text": "Hello over ssh."}
]}
EOF
"${in_namespace[@]}" "$mock_bin" --scenario "$work/scenario.json" >"$work/mock.out" &
pids+=($!)
for _ in $(seq 200); do
    [ -s "$work/mock.out" ] && break
    sleep 0.05
done
mock_url="$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["url"])' "$work/mock.out")"

# sshd is up once a connection gets its banner.
for _ in $(seq 200); do
    run bash -c "exec 3<>/dev/tcp/127.0.0.1/$port && head -c 4 <&3" 2>/dev/null | grep -q SSH- && break
    sleep 0.05
done

# The remote side: its own HOME (the marker that finds its processes), `larik` on its PATH.
remote="$work/remote"
mkdir -p "$remote/home" "$remote/bin" "$remote/project"
ln -s "$larik_bin" "$remote/bin/larik"
echo "hello" >"$remote/project/notes.txt"

config="$(python3 -c 'import json, sys; print(json.dumps(dict(zip(sys.argv[1::2], sys.argv[2::2]))))' \
    remoteHome "$remote/home" remoteBin "$remote/bin" project "$remote/project" mockUrl "$mock_url" \
    node "$(command -v node)" mcpServer "$mcp_server" mcpMarker "--larik-ssh-test-$$" sleepArgument 30.4711)"
ssh_options="$(python3 -c 'import json, sys; print(json.dumps(sys.argv[1:]))' \
    -T -i "$work/client_key" -p "$port" -o BatchMode=yes -o IdentitiesOnly=yes \
    -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR root@127.0.0.1)"
config="$(python3 -c 'import json, sys; c = json.loads(sys.argv[1]); c["sshOptions"] = json.loads(sys.argv[2]); print(json.dumps(c))' "$config" "$ssh_options")"

status=0
LARIK_SSH_TEST="$config" run node tests/ssh/client.mjs || status=$?
if [ $status -ne 0 ]; then
    echo "--- sshd log ---" >&2
    tail -n 40 "$work/sshd.log" >&2
fi
exit $status
