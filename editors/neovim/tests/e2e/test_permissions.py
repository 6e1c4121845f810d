"""Permission prompts: the agent's options verbatim, answered with keys in the chat, with
vim.ui.select, dismissed (cancelled), or rejected with a reason the model is told."""

from harness import tool_results, wait_for


def bash_steps(command="touch permitted.txt && echo permitted"):
    # Outside the agent's sandbox and changing files, so the agent always asks (harmless or
    # sandboxed commands may run without asking).
    return [
        {"tool_calls": [{"id": "toolu_1", "name": "bash", "input": {"command": command, "sandbox": False}}]},
        {"text": "Turn over."},
    ]


def permission_block(editor) -> list[str]:
    return editor.lua(
        """
        local t = require('larik.ui.chat').transcript()
        for key in pairs(t.blocks) do
          if key:match('^permission:') then
            local first, last = t:block_range(key)
            return vim.api.nvim_buf_get_lines(t.buf, first, last + 1, false)
          end
        end
        """
    )


def test_options_are_shown_verbatim_and_answered_with_number_keys(start):
    editor = start(bash_steps())
    editor.command("Larik")
    editor.ask("run it")
    request = editor.wait_permission()
    names = [option["name"] for option in request["options"]]
    assert names[0] == "Allow once" and names[-1] == "Reject"
    block = wait_for(lambda: permission_block(editor), "the permission block")
    command = request["toolCall"]["rawInput"]["command"]
    # What will happen: the command whole, in a block of its own, and the sandbox warning.
    assert block[:5] == [
        "? Larik wants to: Run a command",
        "  ```sh",
        "  " + command,
        "  ```",
        "  ⚠ Runs outside the sandbox: full write and network access",
    ], block
    assert block[5 : 5 + len(names)] == [f"  {index}. {name}" for index, name in enumerate(names, 1)]
    assert names[1].startswith("Always allow `bash(") and names[1].endswith("` in this project"), names
    # The prompt takes the cursor to the chat, on the first option, with every line of the prompt
    # in the window.
    assert editor.lua("return vim.api.nvim_get_current_buf() == require('larik.ui.chat').buf()")
    assert editor.lua("return vim.api.nvim_get_current_line()") == "  1. Allow once"
    shown = editor.lua(
        """
        local t = require('larik.ui.chat').transcript()
        for key in pairs(t.blocks) do
          if key:match('^permission:') then
            local first, last = t:block_range(key)
            return { first + 1, last + 1, vim.fn.line('w0'), vim.fn.line('w$') }
          end
        end
        """
    )
    first, last, top, bottom = shown
    assert top <= first and last <= bottom, shown
    # The command is not repeated by the call's own block while the prompt shows it.
    assert editor.chat_text().count(command) == 1, editor.chat_text()

    editor.type("1")
    editor.wait_chat("Turn over.")
    editor.wait_turn_done()
    answer = [m for m in editor.sent_messages() if "result" in m and "outcome" in (m["result"] or {})]
    assert answer[0]["result"] == {"outcome": {"outcome": "selected", "optionId": request["options"][0]["optionId"]}}
    assert any("permitted" in text for text in tool_results(editor.mock.requests()[-1]))
    # The answer stands in place, in the call's block, above the output it allowed.
    text = editor.chat_text()
    assert "? Larik wants to" not in text, text
    answer_at, output_at = text.find(f"  ✓ {names[0]}"), text.find("permitted\n")
    assert 0 <= answer_at < output_at, text
    # The number keys are gone once answered.
    assert editor.lua("return vim.fn.maparg('1', 'n', false, true).buffer") in (None, 0)


def test_dismissing_answers_cancelled(start):
    editor = start(bash_steps("touch never-run.txt"))
    editor.command("Larik")
    editor.ask("run it")
    editor.wait_permission()
    wait_for(lambda: permission_block(editor), "the permission block")
    editor.type("x")
    wait_for(lambda: "  ⊘ cancelled" in editor.chat_text(), "the cancelled answer in the chat")
    editor.wait_turn_done()
    answers = [m["result"] for m in editor.sent_messages() if "result" in m and "outcome" in (m["result"] or {})]
    assert answers == [{"outcome": {"outcome": "cancelled"}}]
    assert not (editor.project / "never-run.txt").exists()


def test_reject_with_feedback_tells_the_model(start):
    editor = start(bash_steps("rm -rf build"))
    editor.lua("vim.ui.input = function(opts, on_confirm) on_confirm('use make clean instead') end")
    editor.command("Larik")
    editor.ask("clean up")
    editor.wait_permission()
    wait_for(lambda: permission_block(editor), "the permission block")
    editor.type("f")
    editor.wait_chat("Turn over.")
    editor.wait_turn_done()
    answers = [m["result"] for m in editor.sent_messages() if "result" in m and "outcome" in (m["result"] or {})]
    assert answers[0]["outcome"]["optionId"] == "reject_once"
    assert answers[0]["_meta"] == {"larik": {"feedback": "use make clean instead"}}
    told = "\n".join(tool_results(editor.mock.requests()[-1]))
    assert "use make clean instead" in told


def test_vim_ui_select_shows_the_same_options(start):
    editor = start(bash_steps("touch via-select.txt"), permission={"ui": "select"})
    editor.lua(
        """
        _G.offered = nil
        vim.ui.select = function(items, opts, on_choice)
          _G.offered = { prompt = opts.prompt, names = vim.tbl_map(opts.format_item, items) }
          for _, item in ipairs(items) do
            if item.name == 'Reject' then
              vim.schedule(function() on_choice(item) end)
            end
          end
        end
        """
    )
    editor.command("Larik")
    editor.ask("run it")
    editor.wait_chat("Turn over.")
    editor.wait_turn_done()
    offered = editor.lua("return _G.offered")
    assert offered["names"][0] == "Allow once" and offered["names"][-1] == "Reject"
    assert "touch via-select.txt" in offered["prompt"]
    answers = [m["result"] for m in editor.sent_messages() if "result" in m and "outcome" in (m["result"] or {})]
    assert answers == [{"outcome": {"outcome": "selected", "optionId": "reject_once"}}]
