#!/usr/bin/env bash
# The GitHub Action's one step: runs `larik -p` headless in the checkout with a policy and a budget
# of the workflow's choosing, keeps the stream-json transcript, and hands the final message and the
# outcome to the workflow. action.yml passes its inputs as INPUT_* environment variables (never
# spliced into the script: a prompt may hold quotes and `$(...)`); run by hand, set them yourself.
#
# Exit codes (also the `exit-code` output): 0 the turn ended normally; 1 larik failed (the model
# or provider answered an error, ...); 2 the turn stopped unfinished (budget spent, request
# limit, refusal, output limit); 64 an input is wrong.
set -uo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
fail_input() { echo "::error::larik action: $*" >&2; write_outputs "" 64 ""; exit 64; }

# Outputs go to $GITHUB_OUTPUT (a file the runner reads after the step), or to stdout when run by
# hand. The result may span lines, so it uses the `name<<DELIMITER` form with a delimiter that
# cannot occur in it.
write_outputs() {
    local result="$1" code="$2" transcript="$3" delimiter
    delimiter="LARIK_RESULT_$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')"
    {
        printf 'result<<%s\n%s\n%s\n' "$delimiter" "$result" "$delimiter"
        printf 'exit-code=%s\n' "$code"
        printf 'transcript=%s\n' "$transcript"
        printf 'artifact-name=%s\n' "$(basename "$transcript" .jsonl)"
    } >>"${GITHUB_OUTPUT:-/dev/stdout}"
}

# --- Inputs ------------------------------------------------------------------------------------
prompt="${INPUT_PROMPT:-}"
model="${INPUT_MODEL:-}"
anthropic_key="${INPUT_ANTHROPIC_API_KEY:-}"
openai_key="${INPUT_OPENAI_API_KEY:-}"
working_directory="${INPUT_WORKING_DIRECTORY:-.}"
[ -n "${prompt//[[:space:]]/}" ] || fail_input "the prompt input is empty"
[ -d "$working_directory" ] || fail_input "working-directory '$working_directory' is not a directory"
command -v larik >/dev/null || fail_input "no larik on PATH (larik-version: path expects one installed before this step)"

number='^[0-9]+([.][0-9]+)?$'
[ -z "${INPUT_MAX_COST_USD:-}" ] || [[ "$INPUT_MAX_COST_USD" =~ $number ]] ||
    fail_input "max-cost-usd must be a number of dollars, got '$INPUT_MAX_COST_USD'"
[ -z "${INPUT_MAX_TOKENS:-}" ] || [[ "$INPUT_MAX_TOKENS" =~ ^[0-9]+$ ]] ||
    fail_input "max-tokens must be a whole number, got '$INPUT_MAX_TOKENS'"

# The key: one of the two inputs, or what the step's environment already holds (a gateway or a
# local OpenAI-compatible server named by a base URL may need none). Both inputs without a model
# would leave the provider to a default the workflow did not choose.
if [ -n "$anthropic_key" ] && [ -n "$openai_key" ] && [ -z "$model" ]; then
    fail_input "both anthropic-api-key and openai-api-key are set: say which with model (anthropic:... or openai:...)"
fi
[ -z "$anthropic_key" ] || export ANTHROPIC_API_KEY="$anthropic_key"
[ -z "$openai_key" ] || export OPENAI_API_KEY="$openai_key"
if [ -z "${ANTHROPIC_API_KEY:-}" ] && [ -z "${OPENAI_API_KEY:-}" ] && [ -z "${OPENAI_BASE_URL:-}" ]; then
    fail_input "no model key: pass anthropic-api-key or openai-api-key from a secret (secrets are empty in pull requests from forks), or set OPENAI_BASE_URL for a local server"
fi
[ -z "$model" ] || export LARIK_MODEL="$model"

# --- A private configuration -----------------------------------------------------------------------
# Larik reads the user's settings from $XDG_CONFIG_HOME/larik/settings.json; pointing it at a
# directory of this run's own means the policy below is the whole of the user's side, and nothing
# of the runner's (or a developer's) own files is read or changed. The project's settings still
# narrow it, as they do everywhere.
run_dir="$(mktemp -d "${RUNNER_TEMP:-${TMPDIR:-/tmp}}/larik-run.XXXXXX")"
export XDG_CONFIG_HOME="$run_dir/config"
mkdir -p "$XDG_CONFIG_HOME/larik"
# Nothing asks in a headless run: a call that would ask is denied at once. The allow rules are
# the only calls added to what runs anyway (read-only tools, sandboxed commands).
INPUT_ALLOW="${INPUT_ALLOW:-}" INPUT_DENY="${INPUT_DENY:-}" \
    INPUT_MAX_COST_USD="${INPUT_MAX_COST_USD:-}" INPUT_MAX_TOKENS="${INPUT_MAX_TOKENS:-}" \
    python3 "$here/settings.py" >"$XDG_CONFIG_HOME/larik/settings.json" ||
    fail_input "could not write the run's settings"

# --- The run -----------------------------------------------------------------------------------
# The transcript lives beside the runner's other temporary files. Its name, which is also the
# artifact's unless the workflow names one, carries random letters: a matrix's jobs share the job's
# name and each uploads its own artifact, whose names must differ within the workflow run.
transcript="${RUNNER_TEMP:-$run_dir}/larik-${GITHUB_JOB:-run}-$(od -An -N4 -tx1 /dev/urandom | tr -d ' \n').jsonl"
echo "larik action: running in $(cd "$working_directory" && pwd); transcript $transcript" >&2
(cd "$working_directory" && larik -p "$prompt" --output-format stream-json) >"$transcript"
larik_status=$?

# The final message and how the turn ended, from the stream's last `result` (or `error`) line.
read_end() {
    python3 - "$transcript" "$1" <<'EOF'
import json, sys
path, field = sys.argv[1], sys.argv[2]
end = {}
for line in open(path, encoding="utf-8", errors="replace"):
    try:
        event = json.loads(line)
    except ValueError:
        continue
    if isinstance(event, dict) and event.get("type") in ("result", "error"):
        end = event
value = end.get("result" if end.get("type") == "result" else "message", "") if field == "message" else end.get(field, "")
sys.stdout.write(str(value))
EOF
}
result="$(read_end message)"
stop_reason="$(read_end stop_reason)"

if [ "$larik_status" -ne 0 ]; then
    echo "::error::larik action: larik exited with $larik_status${result:+: $result}" >&2
    code=1
elif [ "$stop_reason" = "end_turn" ]; then
    code=0
elif [ "$stop_reason" = "budget_exhausted" ]; then
    echo "::error::larik action: the budget (max-cost-usd ${INPUT_MAX_COST_USD:-none}, max-tokens ${INPUT_MAX_TOKENS:-none}) is spent: the turn stopped before its next model request" >&2
    code=2
else
    echo "::error::larik action: the turn stopped unfinished (stop reason: ${stop_reason:-none})" >&2
    code=2
fi
write_outputs "$result" "$code" "$transcript"
exit "$code"
