"""Editor integration: the agent reads unsaved buffers and writes through them (undoable), the
selection of :LarikAsk goes along with the prompt, editor context is sent, the editor can
follow the agent to the file it works on, and the agent hears of an edit's new problems from the
diagnostics the editor shows."""

import shutil

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


APP = 'def greet(name: str) -> str:\n    return "hi " + name\n\n\nprint(greet("x"))\nprint(missing_name)\n'


@pytest.mark.needs_agent("_larik/diagnostics")
def test_the_agent_hears_of_new_problems_from_the_editors_diagnostics(start):
    # No server of the agent's own could answer instead of the editor.
    assert shutil.which("pyright-langserver") is None and shutil.which("pyright") is None
    steps = [
        {"tool_calls": [{"id": "toolu_1", "name": "read", "input": {"path": "app.py"}}]},
        {"tool_calls": [{"id": "toolu_2", "name": "edit", "input": {"path": "app.py", "old_string": 'print(greet("x"))', "new_string": 'print(gret("x"))'}}]},
        {"text": "Renamed."},
    ]
    editor = start(steps, files={"app.py": APP})
    editor.command("edit app.py")
    # What the editor's servers would show: the problem the file has, then, once its text calls
    # `gret`, the new one too (from on_lines, as a server's answer arrives after the change).
    editor.lua(
        """
        local ns = vim.api.nvim_create_namespace('test_server')
        local buf = vim.api.nvim_get_current_buf()
        local already = { lnum = 5, col = 6, severity = vim.diagnostic.severity.ERROR, message = '"missing_name" is not defined', source = 'pyright' }
        vim.diagnostic.set(ns, buf, { already })
        vim.api.nvim_buf_attach(buf, false, {
          on_lines = function()
            vim.schedule(function()
              local text = table.concat(vim.api.nvim_buf_get_lines(buf, 0, -1, false), '\\n')
              if text:find('gret', 1, true) then
                local new = { lnum = 4, col = 6, severity = vim.diagnostic.severity.ERROR, message = '"gret" is not defined', source = 'pyright' }
                vim.diagnostic.set(ns, buf, { already, new })
              end
            end)
          end,
        })
        """
    )
    editor.ask("rename the call")
    editor.wait_review()
    editor.type("gA")
    editor.wait_chat("Renamed.")
    editor.wait_turn_done()
    asked = [m["params"] for m in editor.received_messages() if m.get("method") == "_larik/diagnostics"]
    app = str(editor.project / "app.py")
    assert [params["path"] for params in asked] == [app, app], "after the read and after the edit"
    answers = [m for m in editor.sent_messages() if "result" in m and isinstance(m["result"], dict) and "diagnostics" in m["result"]]
    assert answers[-1]["result"]["diagnostics"][-1] == {"line": 5, "character": 7, "severity": "error", "message": '"gret" is not defined', "source": "pyright"}
    result = tool_results(editor.mock.requests()[2])[-1]
    assert 'the editor reports new problems in this file after the change:\nERROR 5:7 "gret" is not defined' in result, result
    assert "missing_name" not in result, "what the file had is not new"
