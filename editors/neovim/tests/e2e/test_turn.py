"""One whole turn in Neovim running in a terminal, its screen read back: the agent plans, reads a
file, proposes a two-hunk edit reviewed in its own tab, then asks to run the tests outside the
sandbox. Checks what the user sees: tab labels, the status first in the winbar, the prompt whole
on screen with the command and the warning, one plan, a read as one line, the answer in place.
Three screens are saved as the README's screenshots: the review of the edit, the permission
prompt, and the end of the turn (`scripts/screenshots.sh` runs this test for them)."""

import os
import sys
from pathlib import Path

from harness import PLUGIN_DIR, tool_results, wait_for

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "testing"))
from sample_project import CALC, FIXED, TESTS  # noqa: E402

COMMAND = "python3 -m unittest -v 2>&1 | tail -n 20"
SCREENSHOTS = PLUGIN_DIR / "screenshots"


def save_screen(editor, name: str):
    """Saves the terminal's screen as screenshots/<name>.png (unless LARIK_SCREENSHOTS=0)."""
    if os.environ.get("LARIK_SCREENSHOTS", "1") != "1":
        return
    from terminal_png import save

    path = SCREENSHOTS / f"{name}.png"
    save(editor.screen(styled=True), path, editor.WIDTH, editor.HEIGHT)
    assert path.stat().st_size < 200_000


def plan(*statuses):
    names = ["Read calc.py", "Fix mean and clamp", "Run the tests"]
    return {"todos": [{"content": name, "status": status} for name, status in zip(names, statuses)]}


def steps(calc: str) -> list[dict]:
    return [
        {
            "text": "I'll start by reading calc.py.",
            "tool_calls": [
                {"id": "toolu_1", "name": "todo", "input": plan("in_progress", "pending", "pending")},
                {"id": "toolu_2", "name": "read", "input": {"path": calc}},
            ],
        },
        {
            "text": "Found two bugs: mean divides by len - 1, clamp returns lo above the range.",
            "tool_calls": [{"id": "toolu_3", "name": "edit", "input": {"path": calc, "old_string": CALC, "new_string": FIXED}}],
        },
        {
            "text": "Now let me run the tests.",
            "tool_calls": [
                # The plan's update comes in the same response as the call that asks.
                {"id": "toolu_4", "name": "todo", "input": plan("completed", "completed", "in_progress")},
                {"id": "toolu_5", "name": "bash", "input": {"command": COMMAND, "description": "Run the unit tests", "sandbox": False}},
            ],
        },
        {"text": "Both tests pass now."},
    ]


def test_a_whole_turn_on_screen(start, tmp_path):
    editor = start(steps(str(tmp_path / "project" / "calc.py")), files={"calc.py": CALC, "test_calc.py": TESTS}, terminal=True)
    editor.command("edit calc.py")
    editor.command("Larik")
    editor.ask("The tests in test_calc.py fail. Please fix calc.py and run the tests.")

    # The review has its own tab, labelled as a proposal; the chat's tab is "Larik chat".
    editor.wait_review()
    screen = wait_for(lambda: "Larik review: calc.py" in editor.screen() and editor.screen(), "the review's tab label")
    tabline = screen.splitlines()[0]
    assert "Larik review: calc.py" in tabline and "//" not in tabline, tabline
    # The two hunks under review, before any is decided.
    wait_for(lambda: "return total / len(values)" in editor.screen() and "return hi" in editor.screen(), "both hunks on screen")
    save_screen(editor, "review")
    editor.type("gA")  # accept every hunk
    wait_for(lambda: editor.lua("return require('larik.ui.review').current() == nil"), "the review to close")

    # The test run asks: the whole prompt is on screen, with the command and the warning.
    editor.wait_permission()
    screen = wait_for(
        lambda: (lambda text: "1. Allow once" in text and "3. Reject" in text and text)(editor.screen()),
        "the prompt's options on screen",
    )
    # The rule's backticks are markdown, concealed on screen like the command's fences.
    always = "2. Always allow bash(python3 -m unittest*)"  # the line wraps after it
    for expected in ("Larik wants to: Run the unit tests", COMMAND, "⚠ Runs outside the sandbox: full write and network access", always):
        assert expected in screen, f"{expected!r} not on screen:\n{screen}"
    assert "```" not in screen, screen
    assert "2. Always allow `bash(python3 -m unittest*)` in this project" in editor.chat_text()
    # The plan was updated by the todo call before this later call's prompt, and shows once.
    waiting = editor.chat_text()
    assert "✓ Fix mean and clamp" in waiting and waiting.count("Fix mean and clamp") == 1, waiting
    # The status comes first in the winbar, where a narrow window does not cut it off.
    winbar = next((line for line in screen.splitlines() if "Larik · " in line), None)
    assert winbar, screen
    assert winbar.split("Larik · ", 1)[1].startswith("● waiting for you"), winbar
    save_screen(editor, "permission")

    editor.type("1")
    editor.wait_chat("Both tests pass now.")
    editor.wait_turn_done()
    # The tests ran against the reviewed file.
    output = tool_results(editor.mock.requests()[-1])[-1]
    assert "Ran 2 tests" in output and "OK" in output, output

    chat = editor.chat_text()
    # One plan, from the plan updates: the todo calls reach the editor as plan updates only.
    assert sum(1 for line in chat.splitlines() if line == "Plan") == 1, chat
    assert "Plan updated" not in chat and "  ✓ Read calc.py" in chat, chat
    calls = {m["params"]["update"].get("toolCallId") for m in editor.received_messages() if m.get("method") == "session/update" and m["params"]["update"]["sessionUpdate"].startswith("tool_call")}
    assert calls == {"toolu_2", "toolu_3", "toolu_5"}, calls
    # A read is one line; the file's text is not repeated in the chat.
    assert "✓ Read calc.py (13 lines)" in chat and "total += v" not in chat, chat
    # The answer stands in the call's block, above the output it allowed.
    lines = chat.splitlines()
    header = lines.index("✓ Run the unit tests")
    assert lines[header + 1] == "  ✓ Allow once", lines[header : header + 4]
    assert "Larik wants to" not in chat

    screen = editor.screen()
    assert "Both tests pass now." in screen, screen
    # The command shows once, as the first line of its output, with no fence around it.
    assert screen.count(COMMAND) == 1 and "```" not in screen, screen
    save_screen(editor, "turn")

    # <CR> on the read's line shows what the agent read; za hides it again.
    read_row = chat.splitlines().index("✓ Read calc.py (13 lines)") + 1
    editor.lua("local win = require('larik.ui.chat').chat_win(); vim.api.nvim_set_current_win(win); vim.api.nvim_win_set_cursor(win, {...})", read_row, 0)
    editor.type("<CR>")
    expanded = wait_for(lambda: (lambda text: "total += v" in text and text)(editor.screen()), "the read's text on screen")
    assert "✓ Read calc.py (13 lines)" in expanded and "```" not in expanded, expanded
    assert CALC.splitlines()[4].strip() in editor.chat_text()
    editor.type("za")
    wait_for(lambda: "total += v" not in editor.chat_text(), "the read to fold back to one line")
    assert "✓ Read calc.py (13 lines)" in editor.chat_text()
