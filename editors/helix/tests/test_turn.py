"""One whole turn in a chat file, as a new user meets it: the agent reads a file, proposes a
two-hunk edit the user applies in Helix, then asks to run the tests outside the sandbox. The
applied edit must be on disk before the tests run (Helix marks the buffer modified and cannot be
told to save); the chat file tells the story in order, says when and where Larik waits, and keeps
the user's own headings. Three screens are saved as the README's screenshots: the proposed edit's
code actions in calc.py, the permission prompt in the chat with its choices, and the end of the
turn (`scripts/screenshots.sh` runs this test for them)."""

import json
import os
import sys
import re
from pathlib import Path

import pytest

from harness import INTEGRATION_DIR, tool_results, wait_for

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "testing"))
from sample_project import CALC, FIXED, TESTS  # noqa: E402

QUESTION = "# Question\n\nThe tests in test_calc.py fail. Please fix calc.py and run the tests.\n"
COMMAND = "python3 -m unittest -v 2>&1 | tail -n 20"
SCREENSHOTS = INTEGRATION_DIR / "screenshots"


def save_screen(helix, name: str):
    """Saves the terminal's screen as screenshots/<name>.png (unless LARIK_SCREENSHOTS=0)."""
    if os.environ.get("LARIK_SCREENSHOTS", "1") != "1":
        return
    from terminal_png import save

    path = SCREENSHOTS / f"{name}.png"
    save(helix.tmux("capture-pane", "-e", "-p", "-t", "hx"), path, 120, 32)
    assert path.stat().st_size < 200_000


def save_screen_with_menu(helix, name: str, offered: str):
    """Opens the code actions (space a), saves the screen once `offered` is among them, closes them."""
    helix.code_action(offered, run=False)  # waits until the server offers it
    helix.keys("Space")
    helix.keys("a")
    wait_for(lambda: any(item.startswith(offered) for item, _ in helix.menu()), f"{offered!r} in the menu", 10)
    save_screen(helix, name)
    helix.escape()
    wait_for(lambda: not helix.menu(), "the code-action menu to close", 10)


def turn_steps(calc: str) -> list[dict]:
    return [
        {"text": "I'll start by reading calc.py.", "tool_calls": [{"id": "toolu_1", "name": "read", "input": {"path": calc}}]},
        {
            "text": "Found two bugs: mean divides by len - 1, clamp returns lo above the range.",
            "tool_calls": [{"id": "toolu_2", "name": "edit", "input": {"path": calc, "old_string": CALC, "new_string": FIXED}}],
        },
        {
            "text": "Now let me run the tests.",
            "tool_calls": [
                {"id": "toolu_3", "name": "bash", "input": {"command": COMMAND, "description": "Run the unit tests", "sandbox": False}}
            ],
        },
        {"text": "All tests pass now."},
    ]


@pytest.mark.needs_lsp
def test_a_whole_turn_reads_clearly_and_tests_the_saved_file(start, tmp_path):
    helix = start(
        turn_steps(str(tmp_path / "project" / "calc.py")),
        files={
            "calc.py": CALC,
            "test_calc.py": TESTS,
            "notes.larik.md": QUESTION,
        },
        user_settings={"sandbox": {"enabled": False}},
    )
    helix.open("notes.larik.md")
    helix.wait_server_ready()
    helix.code_action("Larik: send")

    # The edit waits for review; the chat says so and where, and offers no second "send".
    helix.wait_text("Waiting for you in calc.py:")
    helix.wait_text("I'll start by reading calc.py.")
    helix.code_action_absent("Larik: send")

    # The user reviews in calc.py: each hunk's action says what it changes.
    helix.command("open calc.py")
    helix.wait_screen(lambda screen: " calc.py " in screen.splitlines()[-2], "calc.py to open")
    helix.type("%")
    save_screen_with_menu(helix, "review", "Larik: apply edit (+1 -1) at line 5")
    helix.type("%")
    offered = helix.code_action("Larik: apply edit (+1 -1) at line 5: + return total")
    assert "Larik: apply edit (+1 -1) at line 12: + return hi" in offered, offered
    helix.type("%")
    helix.code_action("Larik: apply edit (+1 -1): + return hi")

    # Every hunk applied: the edit is in the buffer, not on disk, and nothing runs until the
    # user saves it (Helix cannot be told to save, and refuses :w on a file changed behind it).
    helix.wait_text("calc.py [+]")
    helix.wait_text("waits for you to save calc.py (:w)")
    helix.command("open notes.larik.md")
    helix.wait_text("(2 of 2 hunks applied; ⚑ waiting for you to save calc.py with :w)")
    assert helix.read_file("calc.py") == CALC
    assert len(helix.mock.requests()) == 2, "the agent went on before the edit was saved"
    helix.command("open calc.py")
    helix.command("w")
    helix.wait_screen(lambda screen: "calc.py [+]" not in screen and " calc.py " in screen, "calc.py to be saved")
    assert helix.read_file("calc.py") == FIXED

    # The test run asks first, with the exact command and the sandbox warning, in the chat.
    helix.command("open notes.larik.md")
    helix.wait_text("Waiting for you: Run the unit tests")
    screen = helix.wait_text(COMMAND)
    assert "Runs outside the sandbox: full write and network access." in screen, screen
    # The "always" choice names its rule and where it is kept, as plain text (Helix shows the
    # chat file as written: no backticks, no bold, no fences).
    assert re.search(r"Always allow bash\(python3[^)]*\*\) in\s+(↪ )?this project", screen), screen
    helix.code_action_absent("Larik: send")
    save_screen_with_menu(helix, "permission", "Larik: Allow once")
    helix.code_action("Larik: Allow once")

    # The tests ran against the fixed file: the model and the chat both see them pass.
    wait_for(lambda: len(helix.mock.requests()) >= 4, "the model to get the test run")
    output = tool_results(helix.mock.requests()[3])[-1]["text"]
    assert "Ran 2 tests" in output and "OK" in output and "FAILED" not in output, output
    helix.wait_text("All tests pass now.")
    helix.wait_text("# Question", timeout=10)

    helix.command("w")
    wait_for(lambda: "All tests pass now." in (helix.read_file("notes.larik.md") or ""), "the chat on disk after :w")
    chat = helix.read_file("notes.larik.md")
    expected = [
        QUESTION,
        "# Larik\n\nI'll start by reading calc.py.\n\n- ✓ Read calc.py (13 lines)\n\n",
        "Found two bugs: mean divides by len - 1, clamp returns lo above the range.\n\n"
        "- ✓ Edit calc.py (2 of 2 hunks applied, saved)\n\n",
        "Now let me run the tests.\n\n- ✓ Run the unit tests (allowed once)\n    $ " + COMMAND + "\n",
        "    OK\n\nAll tests pass now.\n\n# Question\n\n",
    ]
    position = 0
    for piece in expected:
        found = chat.find(piece, position)
        assert found >= 0, f"missing, in order:\n{piece}\n--- chat:\n{chat}"
        position = found + len(piece)
    assert chat.endswith("# Question\n\n"), chat
    assert "Waiting for you" not in chat, "an answered question stays in the chat"
    assert "**" not in chat and "`" not in chat, "markup Helix would show raw"

    helix.command("open notes.larik.md")
    helix.type("gg")
    screen = helix.wait_text("# Larik")
    save_screen(helix, "turn")
