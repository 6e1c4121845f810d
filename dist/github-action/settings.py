"""The run's private user settings, as JSON on stdout: the permission rules and the budget from
the action's inputs (INPUT_ALLOW and INPUT_DENY hold one rule a line; INPUT_MAX_COST_USD and
INPUT_MAX_TOKENS may be empty). A separate file so that rules with quotes or brackets reach the
settings exactly as written, with no shell quoting in between."""

import json
import os


def rules(name):
    return [line.strip() for line in os.environ.get(name, "").splitlines() if line.strip()]


settings = {
    # `default` is the mode that asks; headless turns every ask into a denial, so what is neither
    # allowed by a rule nor safe by itself (read-only, sandboxed) is denied.
    "permissions": {"defaultMode": "default", "allow": rules("INPUT_ALLOW"), "deny": rules("INPUT_DENY")},
}
budget = {}
if os.environ.get("INPUT_MAX_COST_USD"):
    budget["maxCostUsd"] = float(os.environ["INPUT_MAX_COST_USD"])
if os.environ.get("INPUT_MAX_TOKENS"):
    budget["maxTokens"] = int(os.environ["INPUT_MAX_TOKENS"])
if budget:
    settings["budget"] = budget
print(json.dumps(settings, indent=2))
