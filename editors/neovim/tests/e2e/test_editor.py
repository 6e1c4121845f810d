"""Editor integration: the agent reads unsaved buffers and writes through them (undoable), the
selection of :LarikAsk goes along with the prompt, editor context is sent, and the editor can
follow the agent to the file it works on."""

import pytest

from harness import tool_results, user_texts, wait_for

ORIGINAL = "alpha\nbeta\ngamma\n"


@pytest.mark.needs_agent("fs/read_text_file")
def test_the_agent_reads_unsaved_buffer_text(start):
    steps = [
        {"tool_calls": [{"id": "toolu_1", "name": "read", "input": {"path": "notes.txt"}}]},
        {"text": "Read it."},
    ]
    editor = start(steps, files={"notes.txt": ORIGINAL})
    editor.command("edit notes.txt")
    editor.lua("vim.api.nvim_buf_set_lines(0, 1, 2, false, { 'UNSAVED CHANGE' })")
    editor.ask("read notes.txt")
    editor.wait_chat("Read it.")
    editor.wait_turn_done()
    assert any(m.get("method") == "fs/read_text_file" for m in editor.received_messages())
    told = "\n".join(tool_results(editor.mock.requests()[-1]))
    assert "UNSAVED CHANGE" in told
    assert (editor.project / "notes.txt").read_text() == ORIGINAL


@pytest.mark.needs_agent("fs/write_text_file")
def test_the_agent_writes_through_the_buffer_and_it_can_be_undone(start):
    steps = [
        {"tool_calls": [{"id": "toolu_1", "name": "read", "input": {"path": "notes.txt"}}]},
        {"tool_calls": [{"id": "toolu_2", "name": "edit", "input": {"path": "notes.txt", "old_string": "beta\n", "new_string": "BETA\n"}}]},
        {"text": "Changed it."},
    ]
    editor = start(steps, files={"notes.txt": ORIGINAL})
    editor.command("edit notes.txt")
    file_buf = editor.lua("return vim.api.nvim_get_current_buf()")
    editor.ask("shout beta")
    editor.wait_review()
    editor.type("gA")
    editor.wait_chat("Changed it.")
    editor.wait_turn_done()
    assert any(m.get("method") == "fs/write_text_file" for m in editor.received_messages())
    lines = editor.lua("return vim.api.nvim_buf_get_lines(..., 0, -1, false)", file_buf)
    assert lines == ["alpha", "BETA", "gamma"]
    assert (editor.project / "notes.txt").read_text() == "alpha\nBETA\ngamma\n"
    editor.lua("vim.api.nvim_buf_call(..., function() vim.cmd('silent undo') end)", file_buf)
    assert editor.lua("return vim.api.nvim_buf_get_lines(..., 0, -1, false)", file_buf) == ["alpha", "beta", "gamma"]


def test_ask_with_a_range_sends_the_selection(start):
    editor = start([{"text": "That is a loop."}], files={"main.py": "import sys\nfor i in range(3):\n    print(i)\nsys.exit(0)\n"})
    editor.command("edit main.py")
    editor.command("2,3LarikAsk what does this do?")
    editor.wait_chat("That is a loop.")
    editor.wait_turn_done()
    assert "> selection: main.py:2-3" in editor.chat_text()
    sent = user_texts(editor.mock.requests()[0])
    assert "what does this do?" in sent
    assert "for i in range(3):\n    print(i)\n" in sent
    assert f"file://{editor.project}/main.py#L2-L3" in sent
    assert "import sys" not in sent


@pytest.mark.needs_agent("editorContext")
def test_editor_context_goes_with_the_prompt(start):
    editor = start([{"text": "Noted."}], files={"app.py": "x = 1\ny = undefined_name\n"})
    editor.command("edit app.py")
    editor.lua(
        """
        local ns = vim.api.nvim_create_namespace('test_diagnostics')
        vim.diagnostic.set(ns, 0, { { lnum = 1, col = 4, severity = vim.diagnostic.severity.ERROR, message = "undefined name 'undefined_name'" } })
        """
    )
    editor.ask("why is this red?")
    editor.wait_chat("Noted.")
    editor.wait_turn_done()
    sent = [m for m in editor.sent_messages() if m.get("method") == "_larik/editor_context"]
    assert len(sent) == 1
    params = sent[0]["params"]
    app = str(editor.project / "app.py")
    assert params["activeFile"] == app
    assert app in params["openFiles"]
    assert params["diagnostics"] == [{"path": app, "line": 2, "severity": "error", "message": "undefined name 'undefined_name'"}]
    # The context precedes the prompt, and the model sees it.
    methods = [m.get("method") for m in editor.sent_messages()]
    assert methods.index("_larik/editor_context") < methods.index("session/prompt")
    assert "undefined name 'undefined_name'" in user_texts(editor.mock.requests()[0])


def test_follow_the_agent_shows_the_file_it_reads(start):
    steps = [
        {"tool_calls": [{"id": "toolu_1", "name": "read", "input": {"path": "src/deep.txt"}}]},
        {"text": "Looked."},
    ]
    editor = start(steps, files={"src/deep.txt": "one\ntwo\n", "start.txt": "start\n"}, follow=True)
    editor.command("edit start.txt")
    editor.command("Larik")
    editor.ask("look at src/deep.txt")
    editor.wait_chat("Looked.")
    wait_for(
        lambda: editor.lua(
            "local win = require('larik.context').file_window(); return win and vim.api.nvim_buf_get_name(vim.api.nvim_win_get_buf(win))"
        ).endswith("src/deep.txt"),
        "the file window to show src/deep.txt",
    )
    # The cursor stayed in the chat's input.
    assert editor.lua("return vim.api.nvim_buf_get_name(0)").endswith("Larik prompt")
