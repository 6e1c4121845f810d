"""The chat: a prompt typed in the input, streamed text, thoughts, tool call blocks, cancel."""

import time

import pytest

from harness import user_texts, wait_for

STREAMED = "Hello from the mock model, streamed in small pieces."


def test_prompt_typed_in_the_input_streams_the_answer_into_the_chat(start):
    editor = start([{"text": STREAMED, "chunk_chars": 4, "chunk_delay_ms": 40}])
    editor.command("Larik")
    assert editor.lua("return vim.api.nvim_buf_get_name(0)").endswith("Larik prompt")
    assert editor.lua("return vim.api.nvim_get_mode().mode") == "i", ":Larik leaves the prompt in Normal mode"
    editor.type("hello agent<Esc><CR>")

    # Watch the chat while the answer streams: a partial answer must show before the whole.
    seen_partial = False
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        text = editor.chat_text()
        if STREAMED in text:
            break
        if "Hello" in text:
            seen_partial = True
        time.sleep(0.01)
    text = editor.wait_chat(STREAMED)
    assert seen_partial, "the answer appeared at once instead of streaming"
    assert text.startswith("## You\nhello agent\n\n## Larik\n")
    editor.wait_turn_done()
    assert "hello agent" in user_texts(editor.mock.requests()[0])
    assert editor.lua("return vim.api.nvim_buf_get_lines(require('larik.ui.chat').input_buf(), 0, -1, false)") == [""]
    # `i` in the chat goes back to the prompt, typing.
    editor.lua("require('larik.ui.chat').focus_chat()")
    editor.type("i")
    wait_for(
        lambda: editor.lua("return vim.api.nvim_get_mode().mode") == "i" and editor.lua("return vim.api.nvim_buf_get_name(0)").endswith("Larik prompt"),
        "i in the chat to start a prompt in Insert mode",
    )


def test_thoughts_are_dimmed_and_folded(start):
    editor = start([{"thinking": "Considering the question carefully.", "text": "The answer."}])
    editor.command("Larik")
    # Typed and sent as a user does (<C-s> leaves Insert mode, where Neovim defers folding).
    editor.type("think first<C-s>")
    editor.wait_chat("The answer.")
    text = editor.chat_text()
    assert "∴ Thinking\nConsidering the question carefully.\n\nThe answer." in text
    folded = editor.lua(
        """
        local chat = require('larik.ui.chat')
        local lines = vim.api.nvim_buf_get_lines(chat.buf(), 0, -1, false)
        local win = chat.chat_win()
        local out = {}
        for index, line in ipairs(lines) do
          if line:find('Considering', 1, true) or line:find('The answer', 1, true) then
            out[#out + 1] = vim.api.nvim_win_call(win, function() return vim.fn.foldclosed(index) end)
          end
        end
        local marks = vim.api.nvim_buf_get_extmarks(chat.buf(), require('larik.ui.transcript').thought_ns, 0, -1, { details = true })
        out[#out + 1] = marks[1][4].hl_group
        return out
        """
    )
    assert folded[0] != -1, "the thought is not folded"
    assert folded[1] == -1, "the answer is folded"
    assert folded[2] == "LarikThought"
    # A folded thought reads as its header and how to open it, not as Vim's "+--  2 lines: ...".
    shown = editor.lua(
        """
        local chat = require('larik.ui.chat')
        local lines = vim.api.nvim_buf_get_lines(chat.buf(), 0, -1, false)
        for index, line in ipairs(lines) do
          if line:find('Thinking', 1, true) then
            return vim.api.nvim_win_call(chat.chat_win(), function() return vim.fn.foldtextresult(index) end)
          end
        end
        """
    )
    assert shown == "∴ Thinking  (1 more line · za)", shown


def test_tool_call_block_is_updated_in_place_from_pending_to_completed(start):
    steps = [
        {"text": "Running it.", "tool_calls": [{"id": "toolu_1", "name": "bash", "input": {"command": "touch marker.txt && echo hi-from-bash", "sandbox": False}}]},
        {"text": "It printed hi."},
    ]
    editor = start(steps)
    editor.command("Larik")
    editor.ask("run echo")
    editor.wait_permission()
    text = editor.wait_chat("○ ")
    block_start = editor.lua("return select(1, require('larik.ui.chat').transcript():block_range('tool:toolu_1'))")
    pending_line = text.split("\n")[block_start]
    # A command is named by its description (here none), its command shown once on its own.
    assert pending_line == "○ Run a command", pending_line

    editor.type("1")
    editor.wait_chat("It printed hi.")
    editor.wait_turn_done()
    lines = editor.chat_text().split("\n")
    start_row, end_row = editor.lua("return { require('larik.ui.chat').transcript():block_range('tool:toolu_1') }")
    assert start_row == block_start, "the block moved instead of being updated in place"
    block = "\n".join(lines[start_row : end_row + 1])
    assert block.startswith("✓ ")
    assert "hi-from-bash" in block
    # Exactly one block for the call.
    assert sum(1 for line in lines if "Run a command" in line and line[:2] in ("○ ", "◐ ", "✓ ")) == 1


def test_cancel_stops_the_turn(start):
    editor = start([{"text": "Thinking about a long answer", "hang": True}])
    editor.command("Larik")
    editor.ask("take your time")
    editor.wait_chat("Thinking about a long answer")
    assert "working" in editor.winbar()
    editor.command("LarikCancel")
    editor.wait_chat("Cancelled.")
    editor.wait_turn_done()
    assert any(message.get("method") == "session/cancel" for message in editor.sent_messages())
    prompt_response = [m for m in editor.received_messages() if m.get("result", {}).get("stopReason")]
    assert prompt_response[-1]["result"]["stopReason"] == "cancelled"
    assert "working" not in editor.winbar()


@pytest.mark.needs_agent("usage_update")
def test_usage_shows_in_the_winbar(start):
    editor = start([{"text": "Short answer."}])
    editor.command("Larik")
    editor.ask("hi")
    editor.wait_turn_done()
    wait_for(lambda: "ctx " in editor.winbar(), "usage in the winbar")
