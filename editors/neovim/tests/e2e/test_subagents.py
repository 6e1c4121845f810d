"""Subagents: the plugin advertises child sessions, so each child of a `task` call shows nested
under that call with its title, its state and its own calls; the user stops one child with a key
on its line (or `:LarikStopTask`) while the turn goes on; a child's permission prompt names it; a
background child outlives the turn. Without the capability the agent's labelled fallback shows.
The stop test runs on a real terminal screen and saves it, before the stop, as the README's
subagents screenshot."""

import os
import sys
from pathlib import Path

from harness import PLUGIN_DIR, wait_for

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "testing"))

SCREENSHOT = PLUGIN_DIR / "screenshots" / "subagents.png"


def task(call_id: str, description: str, prompt: str, kind: str = "explore", **extra) -> dict:
    return {"id": call_id, "name": "task", "input": {"subagent_type": kind, "description": description, "prompt": prompt, **extra}}


def two_tasks() -> list[dict]:
    # Each child's request carries its prompt's marker, so `when` gives it its own answers; the
    # parent's last request names both tasks and carries the finished child's report.
    return [
        {"tool_calls": [task("t1", "find alpha", "ALPHA-S: read alpha.txt"), task("t2", "wait forever", "STUCK-S: wait")]},
        {"when": "ALPHA-S", "tool_calls": [{"id": "c1", "name": "read", "input": {"path": "alpha.txt"}}]},
        {"when": "ALPHA-S", "text": "alpha done"},
        {"when": "alpha done", "text": "One found, one stopped."},
        # Last, so the parent's last request (which names both tasks) does not take it.
        {"when": "STUCK-S", "text": "", "hang": True},
    ]


def subagent_ids(editor) -> dict[str, str]:
    """Title -> session id of every child the agent announced."""
    ids = {}
    for message in editor.received_messages():
        update = message.get("params", {}).get("update", {})
        if message.get("method") == "session/update" and update.get("sessionUpdate") == "subagent_update" and update.get("title"):
            ids[update["title"]] = update["sessionId"]
    return ids


def lines_of(editor) -> list[str]:
    return editor.chat_text().split("\n")


def row_of(editor, line: str) -> int:
    """The 1-based row of the chat line that reads exactly `line`."""
    return lines_of(editor).index(line) + 1


def test_subagents_show_under_their_task_call_and_one_is_stopped_with_its_key(start):
    editor = start(two_tasks(), files={"alpha.txt": "alpha\n"}, terminal=True)
    editor.command("Larik")
    editor.ask("look around")

    # The finished child and its read under the first task call (whose block then holds its
    # report, so nothing above the stuck child moves any more); the stuck one under the second.
    # The report is prose under its call, and a child does not repeat its call's title.
    alpha = ["✓ explore: find alpha", "  ✓ subagent · done", "    ✓ Read alpha.txt (1 line)", "  alpha done"]
    stuck = ["◐ explore: wait forever", "  ◐ subagent · running · s stop"]

    def shown():
        text = editor.chat_text()
        return "\n".join(alpha) in text and "\n".join(stuck) in text and text

    wait_for(shown, "both subagents nested under their task calls")
    assert editor.lua("return require('larik.client').state.prompt_id ~= nil"), "the turn waits on the stuck child"
    assert "1 subagent running" in editor.winbar(), editor.winbar()
    sent = [m for m in editor.sent_messages() if m.get("method") == "initialize"]
    assert sent[0]["params"]["clientCapabilities"]["subagents"] == {}, sent

    # The stop key on the stuck child's line stops it alone.
    row = row_of(editor, stuck[1])
    editor.lua("local win = require('larik.ui.chat').chat_win(); vim.api.nvim_set_current_win(win); vim.api.nvim_win_set_cursor(win, { ... })", row, 0)
    screen = editor.screen()
    assert stuck[1].strip() in screen and "✓ Read alpha.txt (1 line)" in screen, screen
    if os.environ.get("LARIK_SCREENSHOTS", "1") == "1":
        from terminal_png import save

        # The screenshot: one subagent done under its call, the other running, cursor on it.
        save(editor.screen(styled=True), SCREENSHOT, editor.WIDTH, editor.HEIGHT)
        assert SCREENSHOT.stat().st_size < 200_000
    editor.type("s")
    editor.wait_chat("  ⊘ subagent · stopped")
    editor.wait_chat("One found, one stopped.")
    editor.wait_turn_done()

    ids = subagent_ids(editor)
    cancels = [m["params"] for m in editor.sent_messages() if m.get("method") == "session/cancel"]
    assert cancels == [{"sessionId": ids["explore: wait forever"]}], (cancels, ids)
    responses = [m["result"] for m in editor.received_messages() if isinstance(m.get("result"), dict) and "stopReason" in m["result"]]
    assert responses[-1]["stopReason"] == "end_turn", "the parent's turn went on"
    lines = lines_of(editor)
    stopped = lines.index("  ⊘ subagent · stopped")
    assert lines[stopped - 1] == "✗ explore: wait forever", lines
    assert "\n".join(alpha) in editor.chat_text()
    # What the finished child spent shows under its task call, after its report.
    spent = next(index for index, line in enumerate(lines) if line.startswith("  The subagent spent "))
    assert lines.index("  alpha done") < spent < stopped, lines
    assert "Cancelled." not in lines and "subagent running" not in editor.winbar()
    # The child's call is shown once, under it: not as a call of the parent's.
    assert sum(1 for line in lines if "Read alpha.txt" in line) == 1, lines
    screen = editor.screen()
    assert "⊘ subagent · stopped" in screen and "✓ Read alpha.txt (1 line)" in screen, screen


def test_a_subagents_permission_prompt_names_it_and_its_answer_reaches_it(start):
    command = "touch from-child.txt && echo child-ran"
    steps = [
        {"tool_calls": [task("t1", "write notes", "NOTES-TASK: make a file", kind="general-purpose")]},
        {"when": "NOTES-TASK", "tool_calls": [{"id": "c1", "name": "bash", "input": {"command": command, "description": "Make the file", "sandbox": False}}]},
        {"when": "NOTES-TASK", "text": "made it"},
        {"text": "The subagent made the file."},
    ]
    editor = start(steps)
    editor.command("Larik")
    editor.ask("make a file through a subagent")

    request = editor.wait_permission()
    ids = subagent_ids(editor)
    assert request["sessionId"] == ids["general-purpose: write notes"], (request, ids)
    editor.wait_chat("? Larik (general-purpose: write notes) wants to: Make the file")
    editor.type("1")
    editor.wait_chat("The subagent made the file.")
    editor.wait_turn_done()

    assert (editor.project / "from-child.txt").exists()
    answers = [m for m in editor.sent_messages() if isinstance(m.get("result"), dict) and "outcome" in m["result"]]
    assert answers[0]["result"]["outcome"] == {"outcome": "selected", "optionId": request["options"][0]["optionId"]}, answers
    lines = lines_of(editor)
    assert "✓ general-purpose: write notes · Make the file → Allow once" in lines, lines
    child = lines.index("  ✓ subagent · done")
    assert lines[child - 1] == "✓ general-purpose: write notes" and lines[child + 1] == "    ✓ Make the file", lines


def test_a_background_subagent_outlives_the_turn_and_stops_with_the_command(start):
    steps = [
        {"tool_calls": [task("t1", "stuck survey", "BG-STUCK: never finish", run_in_background=True)]},
        {"when": "Started the background task", "text": "Started it."},
        {"when": "BG-STUCK", "text": "", "hang": True},
    ]
    editor = start(steps)
    editor.command("Larik")
    editor.ask("survey in the background")
    editor.wait_chat("Started it.")
    editor.wait_turn_done()

    # The task call returned at once; its child still runs under it after the turn.
    running = "  ◐ subagent · running · s stop"
    editor.wait_chat(running)
    lines = lines_of(editor)
    assert lines[lines.index(running) - 1] == "✓ explore: stuck survey", lines
    wait_for(lambda: "1 subagent running" in editor.winbar(), "the winbar to count the running subagent")
    completions = editor.lua("return vim.fn.getcompletion('LarikStopTask ', 'cmdline')")
    assert completions == ["explore:\\ stuck\\ survey"], completions

    editor.command("LarikStopTask")
    editor.wait_chat("  ⊘ subagent · stopped")
    wait_for(lambda: "subagent running" not in editor.winbar(), "the winbar to drop the stopped subagent")
    ids = subagent_ids(editor)
    cancels = [m["params"] for m in editor.sent_messages() if m.get("method") == "session/cancel"]
    assert cancels == [{"sessionId": ids["explore: stuck survey"]}], (cancels, ids)


def test_without_nested_subagents_the_childrens_calls_come_labelled(start):
    steps = [
        {"tool_calls": [task("t1", "find alpha", "ALPHA-S: read alpha.txt")]},
        {"when": "ALPHA-S", "tool_calls": [{"id": "c1", "name": "read", "input": {"path": "alpha.txt"}}]},
        {"when": "ALPHA-S", "text": "alpha done"},
        {"text": "Found it."},
    ]
    editor = start(steps, files={"alpha.txt": "alpha\n"}, subagents={"nested": False})
    editor.command("Larik")
    editor.ask("look around")
    editor.wait_chat("Found it.")
    editor.wait_turn_done()

    sent = [m for m in editor.sent_messages() if m.get("method") == "initialize"]
    assert "subagents" not in sent[0]["params"]["clientCapabilities"], sent
    lines = lines_of(editor)
    assert "✓ explore: find alpha — Read alpha.txt (1 line)" in lines, lines
    assert not any(" · running" in line or " · done" in line for line in lines), lines
    assert subagent_ids(editor) == {}
