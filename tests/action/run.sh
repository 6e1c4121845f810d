#!/usr/bin/env bash
# The GitHub Action's script (dist/github-action/run.sh), run as action.yml runs it: inputs as the
# INPUT_* variables the composite action sets, RUNNER_TEMP, GITHUB_OUTPUT and GITHUB_JOB as the
# runner sets them, the checkout as the working directory, `larik` on PATH, against the mock model.
# Each case has a private HOME and a fresh git repository. Cases: a turn that answers (its
# multi-line result in GITHUB_OUTPUT, the transcript's stream-json); calls outside the policy
# denied without asking while the ones an `allow` rule names run; a budget that stops the turn
# (non-zero, saying why, no request beyond it); inputs that are wrong.
set -euo pipefail
cd "$(dirname "$0")/../.."
root="$(pwd)"

target_dir="${CARGO_TARGET_DIR:-target}"
larik_bin="${LARIK_BIN:-$target_dir/debug/larik}"
mock_bin="${LARIK_MOCK_LLM_BIN:-$target_dir/debug/larik-mock-llm}"
work="$(mktemp -d)"
mock_pids=()
cleanup() {
    for pid in "${mock_pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "action: FAILED: $*" >&2; exit 1; }
for binary in "$larik_bin" "$mock_bin"; do
    [ -x "$binary" ] || fail "$binary is missing: build the workspace first (scripts/test.sh does)"
done
# `larik-version: path`: the action uses the `larik` it finds on PATH.
mkdir -p "$work/bin"
ln -s "$(cd "$(dirname "$larik_bin")" && pwd)/$(basename "$larik_bin")" "$work/bin/larik"

# The script reads its inputs under the names action.yml gives them: each INPUT_X it reads is set
# there from the input `x` (lower case, dashes), so the cases below drive it as the action does.
for variable in $(grep -oh 'INPUT_[A-Z_]*[A-Z]' dist/github-action/run.sh dist/github-action/settings.py | sort -u); do
    input="$(echo "${variable#INPUT_}" | tr 'A-Z_' 'a-z-')"
    grep -q "^  $input:\$" dist/github-action/action.yml || fail "action.yml has no input $input"
    grep -qF "$variable: \${{ inputs.$input }}" dist/github-action/action.yml || fail "action.yml does not pass $input as $variable"
done
grep -q 'run: bash "\$GITHUB_ACTION_PATH/run.sh"' dist/github-action/action.yml || fail "action.yml does not run run.sh"

# Serves a scenario (mock_llm.rs's format) and sets $mock_url.
start_mock() {
    "$mock_bin" --scenario "$1" >"$work/mock.out" &
    mock_pids+=($!)
    for _ in $(seq 100); do
        [ -s "$work/mock.out" ] && break
        sleep 0.05
    done
    mock_url="$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["url"])' "$work/mock.out")"
}

# How many model requests the mock received.
mock_requests() {
    python3 -c 'import json,sys,urllib.request; print(len(json.load(urllib.request.urlopen(sys.argv[1] + "/requests"))))' "$mock_url"
}

# A new case: $case holds a private home, the runner's temp directory and a checkout.
new_case() {
    case="$work/$1"
    mkdir -p "$case/home" "$case/runner-temp" "$case/checkout"
    git -C "$case/checkout" init -q
    echo "one" >"$case/checkout/a.txt"
    git -C "$case/checkout" add a.txt
    git -C "$case/checkout" -c user.name=ci -c user.email=ci@localhost commit -qm "the checkout"
    : >"$case/github-output"
}

# Runs the action's script in the case's checkout with the given INPUT_*=... assignments; sets
# $status and leaves stdout and stderr in $case/stdout and $case/stderr.
run_action() {
    status=0
    (cd "$case/checkout" && env -i PATH="$work/bin:$PATH" HOME="$case/home" \
        RUNNER_TEMP="$case/runner-temp" GITHUB_OUTPUT="$case/github-output" GITHUB_JOB=check \
        GITHUB_WORKSPACE="$case/checkout" ANTHROPIC_BASE_URL="${mock_url:-http://127.0.0.1:9}" \
        LARIK_LOG=warn "$@" bash "$root/dist/github-action/run.sh") \
        >"$case/stdout" 2>"$case/stderr" || status=$?
}

# One output of the step, read as the runner reads GITHUB_OUTPUT (`name=value` or
# `name<<DELIMITER` ... `DELIMITER`).
output() {
    python3 - "$case/github-output" "$1" <<'EOF'
import sys
lines = open(sys.argv[1], encoding="utf-8").read().split("\n")
outputs, i = {}, 0
while i < len(lines):
    line = lines[i]
    if "<<" in line and ("=" not in line or line.index("<<") < line.index("=")):
        name, delimiter = line.split("<<", 1)
        end = lines.index(delimiter, i + 1)
        outputs[name] = "\n".join(lines[i + 1:end])
        i = end + 1
        continue
    if "=" in line:
        name, value = line.split("=", 1)
        outputs[name] = value
    i += 1
sys.stdout.write(outputs.get(sys.argv[2], "<unset>"))
EOF
}

# The user's own settings of the private home were neither read into nor written.
home_untouched() {
    [ ! -e "$case/home/.config/larik" ] || fail "$1: the run wrote into the home's own configuration"
}

# --- (a) a turn that answers -------------------------------------------------------------------
new_case answers
cat >"$work/answers.json" <<'EOF'
{"responses": [{"text": "All good.\nEOF\nresult<<EOF, a line that ends a careless delimiter."}]}
EOF
start_mock "$work/answers.json"
run_action INPUT_PROMPT="Say how it went" INPUT_ANTHROPIC_API_KEY=test-key INPUT_MODEL=claude-mock \
    INPUT_WORKING_DIRECTORY=.
[ "$status" -eq 0 ] || fail "answers: exit $status: $(cat "$case/stderr")"
[ "$(output result)" = $'All good.\nEOF\nresult<<EOF, a line that ends a careless delimiter.' ] || fail "answers: result is '$(output result)'"
[ "$(output exit-code)" = 0 ] || fail "answers: exit-code is $(output exit-code)"
transcript="$(output transcript)"
[[ "$transcript" == "$case/runner-temp/"*.jsonl ]] || fail "answers: transcript '$transcript' is not under RUNNER_TEMP"
[ "$(output artifact-name)" = "$(basename "$transcript" .jsonl)" ] || fail "answers: artifact-name is '$(output artifact-name)'"
python3 - "$transcript" <<'EOF' || fail "answers: the transcript is not the run's stream-json"
import json, sys
events = [json.loads(line) for line in open(sys.argv[1])]
assert events and any(event["type"] == "text" for event in events), events
assert events[-1]["type"] == "result" and events[-1]["stop_reason"] == "end_turn", events[-1]
EOF
home_untouched answers
echo "action: a turn that answers: result, exit-code 0 and the transcript in GITHUB_OUTPUT"

# --- (b) the permission policy -----------------------------------------------------------------
new_case policy
cat >"$work/policy.json" <<'EOF'
{"responses": [
  {"tool_calls": [{"id": "t1", "name": "write", "input": {"path": "denied.txt", "content": "x"}}]},
  {"tool_calls": [{"id": "t2", "name": "bash", "input": {"command": "touch outside.txt", "sandbox": false}}]},
  {"tool_calls": [{"id": "t3", "name": "write", "input": {"path": "allowed.txt", "content": "yes\n"}}]},
  {"tool_calls": [{"id": "t4", "name": "bash", "input": {"command": "touch ruled.txt", "sandbox": false}}]},
  {"text": "Two of four."}
]}
EOF
start_mock "$work/policy.json"
run_action INPUT_PROMPT="Write some files" INPUT_ANTHROPIC_API_KEY=test-key INPUT_MODEL=claude-mock \
    INPUT_ALLOW=$'write(allowed.txt)\n  bash(touch ruled.txt)\n'
[ "$status" -eq 0 ] || fail "policy: exit $status: $(cat "$case/stderr")"
[ "$(output result)" = "Two of four." ] || fail "policy: result is '$(output result)'"
[ ! -e "$case/checkout/denied.txt" ] || fail "policy: a write no rule allows was made"
[ ! -e "$case/checkout/outside.txt" ] || fail "policy: a command outside the sandbox no rule allows ran"
[ "$(cat "$case/checkout/allowed.txt" 2>/dev/null)" = yes ] || fail "policy: the write an allow rule names was not made"
[ -e "$case/checkout/ruled.txt" ] || fail "policy: the command an allow rule names did not run"
grep -q "denied Write denied.txt" "$case/stderr" || fail "policy: the denial is not in the log: $(cat "$case/stderr")"
[ "$(grep -c '"type":"permission_denied"' "$(output transcript)")" = 2 ] || fail "policy: not two denials in the transcript"
home_untouched policy
echo "action: calls outside the policy denied without asking, the allowed ones made"

# --- (c) a budget that stops the turn ----------------------------------------------------------
new_case budget
cat >"$work/budget.json" <<'EOF'
{"responses": [
  {"tool_calls": [{"id": "t1", "name": "read", "input": {"path": "a.txt"}}],
   "usage": {"input_tokens": 1000, "output_tokens": 100}},
  {"text": "never asked"}
]}
EOF
start_mock "$work/budget.json"
run_action INPUT_PROMPT="Read a.txt" INPUT_ANTHROPIC_API_KEY=test-key INPUT_MODEL=claude-mock INPUT_MAX_TOKENS=500
[ "$status" -eq 2 ] || fail "budget: exit $status, not 2: $(cat "$case/stderr")"
[ "$(output exit-code)" = 2 ] || fail "budget: exit-code is $(output exit-code)"
grep -q "budget .* is spent" "$case/stderr" || fail "budget: the log does not say why: $(cat "$case/stderr")"
[ "$(mock_requests)" = 1 ] || fail "budget: $(mock_requests) model requests, not 1"
echo "action: a spent budget stops the turn and fails the step"

# --- Inputs that are wrong ----------------------------------------------------------------------
new_case inputs
mock_url=""
run_action INPUT_PROMPT="  " INPUT_ANTHROPIC_API_KEY=test-key
[ "$status" -eq 64 ] && grep -q "prompt input is empty" "$case/stderr" || fail "inputs: an empty prompt gave $status"
run_action INPUT_PROMPT=hi
[ "$status" -eq 64 ] && grep -q "no model key" "$case/stderr" || fail "inputs: no key gave $status"
run_action INPUT_PROMPT=hi INPUT_ANTHROPIC_API_KEY=a INPUT_OPENAI_API_KEY=b
[ "$status" -eq 64 ] && grep -q "say which with model" "$case/stderr" || fail "inputs: two keys gave $status"
run_action INPUT_PROMPT=hi INPUT_ANTHROPIC_API_KEY=a INPUT_MAX_COST_USD=lots
[ "$status" -eq 64 ] && grep -q "max-cost-usd must be" "$case/stderr" || fail "inputs: a cost of 'lots' gave $status"
run_action INPUT_PROMPT=hi INPUT_ANTHROPIC_API_KEY=a INPUT_WORKING_DIRECTORY=missing
[ "$status" -eq 64 ] && grep -q "is not a directory" "$case/stderr" || fail "inputs: a missing directory gave $status"
[ "$(output exit-code)" = 64 ] || fail "inputs: exit-code is $(output exit-code)"
# Run by hand, with no GITHUB_OUTPUT, the outputs are printed.
run_action INPUT_PROMPT="" GITHUB_OUTPUT=
[ "$status" -eq 64 ] && grep -qx "exit-code=64" "$case/stdout" || fail "inputs: without GITHUB_OUTPUT nothing was printed"
echo "action: wrong inputs are refused before larik runs"
