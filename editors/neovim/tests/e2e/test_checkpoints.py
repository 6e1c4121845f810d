"""Undo per turn against the real agent, in a git project with a private data directory (where the
agent keeps its checkpoints): a turn writes a file and runs a command that changes, deletes and
creates files; the command's call shows those files, each change opens side by side, and the
undo key on the turn puts every file back, reloads the open buffer, says what it did and greys
the turn, and the model's next request starts from before it. Then: two turns, a file changed by
hand kept, :LarikUndo completing ids and :LarikCheckpoints picking the older one; the `/undo`
typed as a prompt, which the chat follows too; and a loaded session's turn undone with its key."""

import subprocess

import pytest

from harness import wait_for

TIDY = "sed -i 's/one/uno/' a.txt && rm b.txt && touch c.txt"
FILES = {"a.txt": "one\n", "b.txt": "two\n"}


def git_project(editor):
    """Makes the test's project a git repository with its files committed."""
    for args in (["init", "-q"], ["add", "."], ["-c", "user.name=t", "-c", "user.email=t@e", "commit", "-qm", "start"]):
        subprocess.run(["git", *args], cwd=editor.project, check=True, capture_output=True)


def capture_notifications(editor):
    editor.lua("_G.notes = {}; vim.notify = function(message) table.insert(_G.notes, message) end")


def notes(editor) -> str:
    return "\n".join(editor.lua("return _G.notes"))


def buffer_lines(editor, buf) -> list[str]:
    return editor.lua("return vim.api.nvim_buf_get_lines(..., 0, -1, false)", buf)


def put_cursor_on(editor, text: str):
    """Puts the cursor in the chat window on the first line that is `text`."""
    row = editor.chat_text().splitlines().index(text) + 1
    editor.lua("local win = require('larik.ui.chat').chat_win(); vim.api.nvim_set_current_win(win); vim.api.nvim_win_set_cursor(win, {...})", row, 0)


def turn_undone(editor, number: int) -> bool:
    return editor.lua("local turn = require('larik.ui.chat').transcript().turns[...]; return turn ~= nil and turn.undone", number)


def test_a_command_shows_its_files_and_the_undo_key_puts_the_turn_back(start):
    steps = [
        {"tool_calls": [{"id": "toolu_w", "name": "write", "input": {"path": "notes.md", "content": "# Notes\n"}}]},
        {"tool_calls": [{"id": "toolu_b", "name": "bash", "input": {"command": TIDY, "description": "tidy"}}]},
        {"text": "Tidied."},
        {"text": "Starting again."},
    ]
    editor = start(steps, files=FILES, mode="yolo")
    git_project(editor)
    capture_notifications(editor)
    editor.command("edit a.txt")
    a_buf = editor.lua("return vim.api.nvim_get_current_buf()")
    editor.command("Larik")
    editor.ask("Tidy the project")
    editor.wait_chat("Tidied.")
    editor.wait_turn_done()

    # The command's call lists the files it changed, marked, under its output.
    chat = editor.wait_chat("↶ undo this turn (cp-1) · u")
    lines = chat.splitlines()
    heading = lines.index("  Files the command changed (3):")
    assert lines[heading + 1 : heading + 4] == ["    ~ changed `a.txt` (+1 −1)", "    − deleted `b.txt` (−1)", "    + added `c.txt`"], chat
    assert "Files the command changed: changed" not in chat, "the summary's text shows once, as the list"
    assert lines[heading - 1] == "```" and "$ " + TIDY in lines, chat
    assert lines[-1] == "↶ undo this turn (cp-1) · u", chat
    # The open buffer followed the command.
    wait_for(lambda: buffer_lines(editor, a_buf) == ["uno"], "a.txt's buffer to show the command's change")

    # <CR> on a file's line shows its change side by side.
    put_cursor_on(editor, "    ~ changed `a.txt` (+1 −1)")
    editor.type("<CR>")
    view = wait_for(
        lambda: editor.lua(
            """
            local view = require('larik.ui.diffview').current()
            if not view then return nil end
            return { before = vim.api.nvim_buf_get_lines(view.before_buf, 0, -1, false), after = vim.api.nvim_buf_get_lines(view.after_buf, 0, -1, false),
                     diff = vim.wo[view.after_win].diff, winbar = vim.wo[view.before_win].winbar }
            """
        ),
        "the diff view",
    )
    assert (view["before"], view["after"], view["diff"]) == (["one"], ["uno"], True), view
    assert "a.txt before · changed by tidy" in view["winbar"], view
    editor.type("q")
    wait_for(lambda: editor.lua("return require('larik.ui.diffview').current() == nil"), "the diff view to close")

    # The undo key on the turn's prompt asks, then undoes it.
    editor.lua("vim.ui.select = function(items, opts, on_choice) _G.asked = opts.prompt; on_choice('Undo') end")
    put_cursor_on(editor, "Tidy the project")
    editor.type("u")
    wait_for(lambda: not (editor.project / "notes.md").exists(), "the written file to be removed")
    asked = editor.lua("return _G.asked")
    assert asked.startswith("Undo cp-1 · ") and asked.endswith(" · “Tidy the project” · 4 files?"), asked
    assert (editor.project / "a.txt").read_text() == "one\n"
    assert (editor.project / "b.txt").read_text() == "two\n", "the file rm deleted is back"
    assert not (editor.project / "c.txt").exists(), "the file touch created is gone"
    wait_for(lambda: buffer_lines(editor, a_buf) == ["one"], "a.txt's buffer to show the restored text")
    assert not editor.lua("return vim.bo[...].modified", a_buf)

    said = wait_for(lambda: "Undid" in notes(editor) and notes(editor), "the notification")
    assert "Larik: Undid “Tidy the project” (cp-1): restored a.txt, b.txt; removed " in said, said
    assert "c.txt" in said and "notes.md" in said, said
    chat = editor.wait_chat("The conversation is back to before that turn.")
    assert "↶ undone (cp-1)" in chat and "↶ undo this turn" not in chat, chat
    assert chat.splitlines()[-1].startswith("↶ Undid “Tidy the project” (cp-1): restored a.txt, b.txt"), chat
    assert turn_undone(editor, 1)
    greyed = editor.lua(
        "local t = require('larik.ui.transcript'); return #vim.api.nvim_buf_get_extmarks(require('larik.ui.chat').buf(), t.undone_ns, 0, -1, {})"
    )
    assert greyed == 2, "the turn's lines and its header's mark"
    assert [m["params"] for m in editor.sent_messages() if m.get("method") == "_larik/undo"] == [{"sessionId": editor.lua("return require('larik.client').state.session.id"), "checkpointId": "cp-1"}]

    # The conversation went back too: the next request starts from before the turn.
    editor.ask("Start again")
    editor.wait_chat("Starting again.")
    editor.wait_turn_done()
    assert len(editor.mock.requests()[-1]["messages"]) == 1, editor.mock.requests()[-1]["messages"]
    assert not turn_undone(editor, 2)


def test_undo_to_an_older_turn_keeps_what_you_changed_since(start):
    steps = [
        {"tool_calls": [{"id": "toolu_w", "name": "write", "input": {"path": "notes.md", "content": "# Notes\n"}}]},
        {"text": "Wrote the notes."},
        {"tool_calls": [{"id": "toolu_b", "name": "bash", "input": {"command": "sed -i 's/one/uno/' a.txt && echo new > d.txt", "description": "rename"}}]},
        {"text": "Renamed."},
    ]
    editor = start(steps, files=FILES, mode="yolo")
    git_project(editor)
    capture_notifications(editor)
    editor.command("Larik")
    editor.ask("Write notes")
    editor.wait_chat("↶ undo this turn (cp-1) · u")
    editor.ask("Rename it")
    editor.wait_chat("↶ undo this turn (cp-2) · u")
    editor.wait_turn_done()
    assert editor.lua("return vim.fn.getcompletion('LarikUndo ', 'cmdline')") == ["cp-2", "cp-1"]
    assert editor.lua("return vim.fn.getcompletion('LarikUndo cp-1', 'cmdline')") == ["cp-1"]

    # You change a file the later turn made; undoing both turns leaves it as you wrote it.
    (editor.project / "d.txt").write_text("mine\n")
    editor.lua(
        """
        vim.ui.select = function(items, opts, on_choice)
          _G.picked = { prompt = opts.prompt, items = vim.tbl_map(opts.format_item, items) }
          on_choice(items[#items])
        end
        """
    )
    editor.command("LarikCheckpoints")
    said = wait_for(lambda: "Undid" in notes(editor) and notes(editor), "the notification")
    picked = editor.lua("return _G.picked")
    assert picked["prompt"] == "Larik: undo which turn? (the turns after it go too)"
    assert [item.split(" · ")[0] for item in picked["items"]] == ["cp-2", "cp-1"], picked
    assert picked["items"][1].endswith("“Write notes” · 1 file"), picked
    assert "Larik: Undid “Write notes” (cp-1): restored a.txt; removed notes.md (the turn created them). d.txt: changed by you since, kept." in said, said
    assert (editor.project / "a.txt").read_text() == "one\n"
    assert not (editor.project / "notes.md").exists()
    assert (editor.project / "d.txt").read_text() == "mine\n"
    chat = editor.wait_chat("↶ undone (cp-2)")
    assert "↶ undone (cp-1)" in chat and turn_undone(editor, 1) and turn_undone(editor, 2), chat

    # Nothing is left to undo: the agent says so, and so does the plugin.
    editor.command("LarikUndo")
    wait_for(lambda: "nothing to undo" in notes(editor), "the agent's refusal")
    assert editor.lua("return vim.fn.getcompletion('LarikUndo ', 'cmdline')") == []


def test_undo_typed_as_a_prompt_is_followed_by_the_chat(start):
    steps = [
        {"tool_calls": [{"id": "toolu_b", "name": "bash", "input": {"command": "sed -i 's/one/uno/' a.txt", "description": "rename"}}]},
        {"text": "Renamed."},
    ]
    editor = start(steps, files=FILES, mode="yolo")
    git_project(editor)
    editor.command("edit a.txt")
    a_buf = editor.lua("return vim.api.nvim_get_current_buf()")
    editor.command("Larik")
    editor.ask("Rename it")
    editor.wait_chat("↶ undo this turn (cp-1) · u")
    wait_for(lambda: buffer_lines(editor, a_buf) == ["uno"], "a.txt's buffer to show the command's change")

    editor.ask("/undo")
    editor.wait_chat('Undid the turn "Rename it"')
    wait_for(lambda: turn_undone(editor, 1), "the undone turn greyed")
    assert not turn_undone(editor, 2), "the /undo turn itself stands"
    assert "↶ undone (cp-1)" in editor.chat_text()
    wait_for(lambda: buffer_lines(editor, a_buf) == ["one"], "a.txt's buffer to show the restored text")
    assert len(editor.mock.requests()) == 2, "/undo needs no model"


@pytest.mark.needs_agent("session/list", "loadSession")
def test_a_loaded_sessions_turns_get_their_checkpoints(start):
    steps = [
        {"tool_calls": [{"id": "toolu_b", "name": "bash", "input": {"command": "sed -i 's/one/uno/' a.txt", "description": "rename"}}]},
        {"text": "Renamed."},
    ]
    editor = start(steps, files=FILES, mode="yolo")
    git_project(editor)
    capture_notifications(editor)
    editor.command("Larik")
    editor.ask("Rename it")
    editor.wait_chat("↶ undo this turn (cp-1) · u")
    # A new agent process, the session loaded from the list: its replayed turn is undoable.
    editor.lua("require('larik').stop()")
    wait_for(lambda: editor.lua("return require('larik.client').state.phase") == "stopped", "the agent to stop")
    editor.lua("require('larik.ui.chat').transcript():clear()")
    editor.lua("vim.ui.select = function(items, opts, on_choice) if opts.kind == 'larik_session' then on_choice(items[1]) else on_choice('Undo') end end")
    editor.command("LarikSessions")
    chat = editor.wait_chat("↶ undo this turn (cp-1) · u")
    assert "## You\nRename it" in chat, chat
    put_cursor_on(editor, "Rename it")
    editor.type("u")
    wait_for(lambda: (editor.project / "a.txt").read_text() == "one\n", "a.txt restored")
    wait_for(lambda: turn_undone(editor, 1), "the replayed turn greyed")
    assert "Undid “Rename it” (cp-1): restored a.txt." in notes(editor)
