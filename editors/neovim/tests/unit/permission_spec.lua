local permission = require("larik.ui.permission")
local review = require("larik.ui.review")
local chat = require("larik.ui.chat")
local config = require("larik.config")

local api = vim.api

local options = {
  { optionId = "allow_once", name = "Allow once", kind = "allow_once" },
  { optionId = "allow_always", name = "Always allow `bash(make*)` in this project", kind = "allow_always" },
  { optionId = "reject_once", name = "Reject", kind = "reject_once" },
}

local function request(title, extra)
  return vim.tbl_extend("force", { sessionId = "s", toolCall = { toolCallId = title, title = title }, options = options }, extra or {})
end

local function chat_text()
  return table.concat(api.nvim_buf_get_lines(chat.buf(), 0, -1, false), "\n")
end

local function press(keys)
  api.nvim_feedkeys(api.nvim_replace_termcodes(keys, true, false, true), "x", false)
end

local function flush()
  vim.wait(50, function()
    return false
  end)
end

describe("permission", function()
  local answers

  before_each(function()
    config.setup({})
    permission.cancel_all()
    flush()
    chat.transcript():clear()
    answers = {}
  end)

  local function enqueue(id, params)
    permission.enqueue(id, params, function(result)
      answers[#answers + 1] = { id = id, result = result }
    end)
  end

  it("shows the agent's options verbatim and answers with number keys", function()
    enqueue(1, request("Run make"))
    assert.equal("## Larik\n? Larik wants to: Run make\n  1. Allow once\n  2. Always allow `bash(make*)` in this project\n  3. Reject\n  x dismiss · f reject with feedback", chat_text())
    assert.equal(chat.buf(), api.nvim_get_current_buf())
    press("2")
    assert.same({ { id = 1, result = { outcome = { outcome = "selected", optionId = "allow_always" } } } }, answers)
    assert.equal("## Larik\n✓ Run make → Always allow `bash(make*)` in this project", chat_text())
  end)

  it("shows one request at a time, in order", function()
    enqueue(1, request("first"))
    enqueue(2, request("second"))
    assert.equal(1, #vim.tbl_filter(function(line)
      return line:match("^  1%.") ~= nil
    end, api.nvim_buf_get_lines(chat.buf(), 0, -1, false)))
    assert.equal("first", permission.current().toolCall.title)
    press("3")
    flush()
    assert.equal("second", permission.current().toolCall.title)
    press("1")
    flush()
    assert.same({ 1, 2 }, vim.tbl_map(function(a)
      return a.id
    end, answers))
    assert.equal("reject_once", answers[1].result.outcome.optionId)
    assert.equal("allow_once", answers[2].result.outcome.optionId)
    assert.is_nil(permission.current())
  end)

  it("answers cancelled when dismissed, cancelled, or withdrawn by the agent", function()
    enqueue(1, request("a"))
    enqueue(2, request("b"))
    enqueue(3, request("c"))
    press("x")
    flush()
    permission.cancel(3)
    permission.cancel_all()
    assert.equal(3, #answers)
    for _, answer in ipairs(answers) do
      assert.same({ outcome = { outcome = "cancelled" } }, answer.result)
    end
    assert.equal(0, permission.pending_count())
  end)

  it("rejects with the reason typed", function()
    local input = vim.ui.input
    vim.ui.input = function(_, on_confirm)
      on_confirm("not that file")
    end
    enqueue(1, request("Write x"))
    press("f")
    vim.ui.input = input
    assert.same({ outcome = { outcome = "selected", optionId = "reject_once" }, _meta = { larik = { feedback = "not that file" } } }, answers[1].result)
  end)

  it("answers through vim.ui.select when configured, Esc meaning cancelled", function()
    config.setup({ permission = { ui = "select" } })
    local select = vim.ui.select
    local shown
    vim.ui.select = function(items, opts, on_choice)
      shown = vim.tbl_map(opts.format_item, items)
      on_choice(nil)
    end
    enqueue(1, request("Run make"))
    vim.ui.select = select
    assert.same({ "Allow once", "Always allow `bash(make*)` in this project", "Reject" }, shown)
    assert.same({ outcome = { outcome = "cancelled" } }, answers[1].result)
  end)

  describe("with a diff", function()
    local hunked = {
      toolCallId = "edit",
      title = "Edit a.txt",
      content = { { type = "diff", path = "/p/a.txt", oldText = "a\nb\nc\nd\n", newText = "A\nb\nc\nD\n" } },
      _meta = { larik = { hunks = {
        { index = 0, oldStart = 1, oldLines = 1, newStart = 1, newLines = 1, oldText = "a\n", newText = "A\n" },
        { index = 1, oldStart = 4, oldLines = 1, newStart = 4, newLines = 1, oldText = "d\n", newText = "D\n" },
      } } },
    }

    after_each(function()
      permission.per_hunk = function()
        return false
      end
      review.close()
    end)

    it("opens the review and answers with the accepted hunks", function()
      permission.per_hunk = function()
        return true
      end
      enqueue(7, request("Edit a.txt", { toolCall = hunked }))
      local open = review.current()
      assert.is_not_nil(open)
      assert.equal(open.proposed_win, api.nvim_get_current_win())
      -- The chat beside it, in its tab; line numbers, since the chat names lines.
      assert.equal(open.tab, api.nvim_win_get_tabpage(vim.fn.bufwinid(chat.buf())))
      assert.is_true(vim.wo[open.proposed_win].number)
      press("gr")
      press("ga")
      assert.same({ outcome = { outcome = "selected", optionId = "allow_once" }, _meta = { larik = { acceptedHunks = { 1 } } } }, answers[1].result)
      assert.is_nil(review.current())
      assert.matches("kept hunk 2 of 2", chat_text())
    end)

    it("leaves the decision to an open review: the chat's option keys say where to decide", function()
      permission.per_hunk = function()
        return true
      end
      enqueue(10, request("Edit a.txt", { toolCall = hunked }))
      assert.matches("Decide in the review tab", chat_text())
      assert.is_nil(chat_text():match("  1%. Allow once"))
      press("gr") -- hunk 1 rejected in the review
      vim.cmd("tabfirst") -- back to the chat, as `gt` would
      chat.focus_chat()
      local notified = {}
      local notify = vim.notify
      vim.notify = function(message)
        notified[#notified + 1] = message
      end
      press("1")
      permission.choose(1)
      vim.notify = notify
      assert.same({}, answers)
      assert.equal(2, #notified)
      assert.matches("review tab", notified[1])
      assert.is_not_nil(review.current(), "the review stays open with its decisions")
      -- Closing the review hands the request back to the chat, options and all.
      vim.api.nvim_set_current_win(review.current().proposed_win)
      press("q")
      assert.is_nil(review.current())
      assert.matches("  1%. Allow once", chat_text())
      vim.cmd("tabfirst")
      chat.focus_chat()
      press("3")
      assert.same({ outcome = { outcome = "selected", optionId = "reject_once" } }, answers[1].result)
    end)

    it("hands the request back to the chat when the review's tab is closed another way", function()
      enqueue(11, request("Edit a.txt", { toolCall = hunked }))
      vim.cmd("tabclose")
      flush()
      assert.is_nil(review.current())
      assert.matches("  1%. Allow once", chat_text())
      permission.choose(1)
      assert.same({ outcome = { outcome = "selected", optionId = "allow_once" } }, answers[1].result)
    end)

    it("answers reject when every hunk is rejected", function()
      permission.per_hunk = function()
        return true
      end
      enqueue(8, request("Edit a.txt", { toolCall = hunked }))
      press("gR")
      assert.same({ outcome = { outcome = "selected", optionId = "reject_once" }, _meta = { larik = { acceptedHunks = {} } } }, answers[1].result)
    end)

    it("answers allow without hunk indices to an agent that applies edits whole", function()
      enqueue(9, request("Edit a.txt", { toolCall = hunked }))
      press("gA")
      assert.same({ outcome = { outcome = "selected", optionId = "allow_once" } }, answers[1].result)
    end)
  end)
end)
