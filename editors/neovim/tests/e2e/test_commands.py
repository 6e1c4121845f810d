"""Slash commands in the prompt, on a real terminal screen: a Claude Code user's skill (in the
private HOME's ~/.claude/skills) and the project's custom command (.claude/commands) are offered
with the agent's built-ins when `/` starts the prompt, narrowed as the name is typed; the chosen
one runs as the agent's command, so the model receives its body, not the slash text."""

from harness import user_texts, wait_for

SKILL = """---
name: code-review
description: Review a change for correctness, tests and style
argument-hint: [path or branch]
---

Review $ARGUMENTS the way a careful senior engineer would.
"""

COMMAND = """---
description: Create a git commit from the staged changes
---

Write a commit message for the staged changes, then run `git commit`.
The user's hint for the message: $ARGUMENTS
"""


def commands(editor) -> list[str]:
    return editor.lua("return vim.tbl_map(function(c) return c.name end, (require('larik.client').state.session or {}).commands or {})")


def menu_row(screen: str, word: str) -> str | None:
    """The line of the screen that shows `word` in the completion menu."""
    return next((line for line in screen.splitlines() if f" {word} " in line), None)


def described(row: str, description: str) -> bool:
    """The row shows the description whole, or as much of it as fits (at least 20 characters) and
    an ellipsis: the menu is cut to the room left of the screen's edge."""
    return description in row or any(description[:n].rstrip() + "…" in row for n in range(20, len(description)))


def test_slash_completes_skills_and_commands_and_runs_the_chosen_one(start):
    editor = start([{"text": "Committed."}], terminal=True)
    skill = editor.home / ".claude" / "skills" / "code-review" / "SKILL.md"
    skill.parent.mkdir(parents=True)
    skill.write_text(SKILL)
    editor.write_file(".claude/commands/commit.md", COMMAND)

    editor.command("Larik")
    wait_for(lambda: {"compact", "code-review", "commit"} <= set(commands(editor)), "the agent's commands")
    assert editor.lua("return vim.api.nvim_buf_get_name(0)").endswith("Larik prompt")

    assert editor.lua("return vim.api.nvim_get_mode().mode") == "i", ":Larik leaves the prompt in Normal mode"
    editor.type("/co")
    expected = {
        "/compact": "Summarize the conversation so far to free context",
        "/code-review": "Review a change for correctness, tests and style",
        "/commit": "Create a git commit from the staged changes",
    }
    screen = wait_for(
        lambda: (lambda text: all(menu_row(text, word) for word in expected) and text)(editor.screen()),
        "the menu of /co on screen",
    )
    for word, description in expected.items():
        row = menu_row(screen, word)
        assert described(row, description), f"{description!r} not beside {word}:\n{screen}"
    assert "[path or branch]" in menu_row(screen, "/code-review"), screen
    # The first is selected (nothing inserted yet): the info beside the menu has it whole.
    assert editor.lua("return vim.api.nvim_get_current_line()") == "/co"
    assert expected["/compact"] in screen.replace(menu_row(screen, "/compact"), ""), screen
    assert menu_row(screen, "/clear") is None and menu_row(screen, "/mode") is None, screen

    # Typing on narrows the menu to the one command.
    editor.type("mm")
    screen = wait_for(
        lambda: (lambda text: menu_row(text, "/commit") and not menu_row(text, "/compact") and text)(editor.screen()),
        "the menu narrowed to /commit",
    )
    assert menu_row(screen, "/code-review") is None, screen
    assert described(menu_row(screen, "/commit"), expected["/commit"]), screen
    editor.type("<C-y>")
    wait_for(lambda: editor.lua("return vim.api.nvim_get_current_line()") == "/commit", "the command inserted")
    editor.type(" fix the parser<C-s>")
    editor.wait_chat("Committed.")
    editor.wait_turn_done()

    # The prompt went as typed; the agent ran the command: the model got its body.
    prompts = [m for m in editor.sent_messages() if m.get("method") == "session/prompt"]
    assert prompts[-1]["params"]["prompt"][0]["text"] == "/commit fix the parser"
    sent = user_texts(editor.mock.requests()[0])
    assert "Write a commit message for the staged changes, then run `git commit`." in sent, sent
    assert "The user's hint for the message: fix the parser" in sent, sent
    assert "/commit fix the parser" not in sent, sent


def test_a_skill_added_later_is_offered_after_clear(start):
    editor = start([{"text": "unused"}])
    editor.command("Larik")
    wait_for(lambda: "compact" in commands(editor), "the agent's commands")
    assert "release-notes" not in commands(editor)
    skill = editor.project / ".claude" / "skills" / "release-notes" / "SKILL.md"
    skill.parent.mkdir(parents=True)
    skill.write_text("---\ndescription: Draft release notes for a version\nargument-hint: <version>\n---\nDraft the notes for $0.\n")

    # /clear starts over, and the agent reads the skills again and sends the new list.
    editor.type("/clear<C-s>")
    wait_for(lambda: "release-notes" in commands(editor), "the new skill in the agent's list")
    editor.wait_turn_done()
    editor.type("i/re")
    menu = wait_for(
        lambda: editor.lua(
            "local info = vim.fn.complete_info({ 'pum_visible', 'items' }); return info.pum_visible == 1 and info.items or nil"
        ),
        "the menu of /re",
    )
    assert [(item["word"], item["kind"], item["menu"]) for item in menu] == [("/release-notes", "<version>", "Draft release notes for a version")]
    assert not editor.mock.requests(), "/clear and the menu need no model"
