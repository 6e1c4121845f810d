"""Diff review of an edit with two hunks: per-hunk accept/reject, accept-all, reject-all, inline
and side by side; the file on disk ends as the user chose and the model is told."""

import pytest

from harness import tool_results, wait_for

ORIGINAL = "".join(f"line{n}\n" for n in range(1, 11))
PROPOSED = ORIGINAL.replace("line1\n", "LINE1\n").replace("line10\n", "LINE10\n")


def edit_steps():
    return [
        {"tool_calls": [{"id": "toolu_1", "name": "read", "input": {"path": "a.txt"}}]},
        {"text": "Editing.", "tool_calls": [{"id": "toolu_2", "name": "edit", "input": {"path": "a.txt", "old_string": ORIGINAL, "new_string": PROPOSED}}]},
        {"text": "Edit finished."},
    ]


def answers(editor):
    return [m["result"] for m in editor.sent_messages() if "result" in m and "outcome" in (m["result"] or {})]


def inline_decorations(editor):
    return editor.lua(
        """
        local review = require('larik.ui.review').current()
        local marks = vim.api.nvim_buf_get_extmarks(review.proposed_buf, require('larik.ui.review').ns, 0, -1, { details = true })
        local deleted, added = {}, {}
        for _, mark in ipairs(marks) do
          for _, virt in ipairs(mark[4].virt_lines or {}) do
            deleted[#deleted + 1] = vim.trim(virt[1][1])
          end
          if mark[4].line_hl_group then
            added[#added + 1] = mark[2]
          end
        end
        return { deleted = deleted, added = added }
        """
    )


@pytest.mark.needs_agent("hunkReview")
def test_accept_one_hunk_and_reject_the_other(start):
    editor = start(edit_steps(), files={"a.txt": ORIGINAL})
    editor.command("Larik")
    editor.ask("capitalise the first and last lines")
    review = editor.wait_review()
    assert review["hunks"] == 2 and review["style"] == "inline" and review["per_hunk"]
    assert review["lines"] == PROPOSED.splitlines()
    assert review["in_review"], "the review did not take the cursor"
    assert "hunk 1/2" in review["winbar"]
    decorations = inline_decorations(editor)
    assert decorations == {"deleted": ["line1", "line10"], "added": [0, 9]}

    editor.type("ga")  # accept hunk 1; the review moves on to hunk 2
    wait_for(lambda: "hunk 2/2" in (editor.wait_review()["winbar"]), "the review to move to hunk 2")
    editor.type("gr")  # reject hunk 2: the request is answered
    editor.wait_chat("Edit finished.")
    editor.wait_turn_done()

    assert answers(editor) == [{"outcome": {"outcome": "selected", "optionId": "allow_once"}, "_meta": {"larik": {"acceptedHunks": [0]}}}]
    assert (editor.project / "a.txt").read_text() == ORIGINAL.replace("line1\n", "LINE1\n")
    told = "\n".join(tool_results(editor.mock.requests()[-1]))
    assert "hunk" in told.lower() and "reject" in told.lower(), told
    assert "kept hunk 1 of 2" in editor.chat_text()


def test_accept_all_in_the_side_by_side_review(start):
    editor = start(edit_steps(), files={"a.txt": ORIGINAL}, review={"style": "split"})
    editor.command("Larik")
    editor.ask("capitalise")
    review = editor.wait_review()
    assert review["style"] == "split"
    diff_windows = editor.lua(
        """
        local review = require('larik.ui.review').current()
        return {
          vim.wo[review.original_win].diff, vim.wo[review.proposed_win].diff,
          vim.api.nvim_buf_get_lines(review.original_buf, 0, -1, false),
        }
        """
    )
    assert diff_windows[0] and diff_windows[1]
    assert diff_windows[2] == ORIGINAL.splitlines()
    editor.type("gA")
    editor.wait_chat("Edit finished.")
    editor.wait_turn_done()
    assert answers(editor)[0]["outcome"] == {"outcome": "selected", "optionId": "allow_once"}
    assert (editor.project / "a.txt").read_text() == PROPOSED
    assert editor.lua("return require('larik.ui.review').current() == nil")
    assert editor.lua("return #vim.api.nvim_list_tabpages()") == 1


def test_reject_all_leaves_the_file_and_tells_the_model(start):
    editor = start(edit_steps(), files={"a.txt": ORIGINAL})
    editor.command("Larik")
    editor.ask("capitalise")
    editor.wait_review()
    editor.type("gR")
    editor.wait_chat("Edit finished.")
    editor.wait_turn_done()
    assert answers(editor)[0]["outcome"] == {"outcome": "selected", "optionId": "reject_once"}
    assert (editor.project / "a.txt").read_text() == ORIGINAL
    told = "\n".join(tool_results(editor.mock.requests()[-1])).lower()
    assert "reject" in told or "denied" in told, told


def test_closing_the_review_leaves_the_request_in_the_chat(start):
    editor = start(edit_steps(), files={"a.txt": ORIGINAL})
    editor.command("Larik")
    editor.ask("capitalise")
    editor.wait_review()
    editor.type("q")
    wait_for(lambda: editor.lua("return require('larik.ui.review').current() == nil"), "the review to close")
    assert editor.lua("return require('larik.ui.permission').current() ~= nil")
    # Reopen it from the chat with `d`, then accept everything.
    editor.lua("require('larik.ui.chat').focus_chat()")
    editor.type("d")
    editor.wait_review()
    editor.type("gA")
    editor.wait_chat("Edit finished.")
    assert (editor.project / "a.txt").read_text() == PROPOSED


@pytest.mark.needs_agent("hunkReview")
def test_the_chat_cannot_override_hunks_rejected_in_the_review(start):
    editor = start(edit_steps(), files={"a.txt": ORIGINAL})
    editor.command("Larik")
    editor.ask("capitalise the first and last lines")
    editor.wait_review()
    editor.type("gr")  # hunk 1 rejected
    wait_for(lambda: "hunk 2/2" in editor.wait_review()["winbar"], "the review to move to hunk 2")
    # To the chat, where the same request is shown: its option keys do not decide the edit.
    editor.command("tabfirst")
    editor.lua("require('larik.ui.chat').focus_chat()")
    assert "Decide in the review tab" in editor.chat_text()
    editor.type("1")
    said = lambda: editor.lua("return vim.fn.execute('messages')")
    wait_for(lambda: "decide in the review tab" in said(), "the chat to say where the edit is decided")
    assert editor.lua("return require('larik.ui.permission').current() ~= nil"), "the chat answered the request"
    assert answers(editor) == []
    assert (editor.project / "a.txt").read_text() == ORIGINAL
    # Back in the review, the last hunk decides: exactly the accepted hunk is written.
    editor.command("tablast")
    editor.type("ga")
    editor.wait_chat("Edit finished.")
    editor.wait_turn_done()
    assert answers(editor) == [{"outcome": {"outcome": "selected", "optionId": "allow_once"}, "_meta": {"larik": {"acceptedHunks": [1]}}}]
    assert (editor.project / "a.txt").read_text() == ORIGINAL.replace("line10\n", "LINE10\n")
    told = "\n".join(tool_results(editor.mock.requests()[-1]))
    assert "Hunk 1 at line 1: REJECTED" in told and "Hunk 2 at line 10: applied" in told, told
