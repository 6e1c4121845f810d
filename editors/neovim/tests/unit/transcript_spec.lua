local transcript = require("larik.ui.transcript")
local config = require("larik.config")

local api = vim.api

local function new_buffer()
  local buf = api.nvim_create_buf(false, true)
  vim.bo[buf].modifiable = false
  return buf, transcript.new(buf)
end

local function text(buf)
  return table.concat(api.nvim_buf_get_lines(buf, 0, -1, false), "\n")
end

describe("transcript", function()
  before_each(function()
    config.setup({})
  end)

  it("appends streamed chunks at the tail under a header", function()
    local buf, t = new_buffer()
    t:user_prompt("hi there")
    t:append("message", "Hel")
    t:append("message", "lo,\nwor")
    t:append("message", "ld")
    assert.equal("## You\nhi there\n\n## Larik\nHello,\nworld", text(buf))
    assert.is_false(vim.bo[buf].modifiable)
  end)

  it("touches only the last lines for each chunk (O(chunk), no re-render)", function()
    local buf, t = new_buffer()
    t:append("message", "start\n")
    for i = 1, 50 do
      t:append("message", "line " .. i .. "\n")
    end
    local changes = {}
    api.nvim_buf_attach(buf, false, {
      on_lines = function(_, _, _, first, last_old, last_new)
        changes[#changes + 1] = { first, last_old, last_new }
      end,
    })
    local before = api.nvim_buf_line_count(buf)
    t:append("message", "more")
    t:append("message", " text\nand a new line")
    assert.equal(2, #changes)
    -- Each change starts at the last line of the buffer as it was: nothing above is rewritten.
    assert.equal(before - 1, changes[1][1])
    assert.equal(before, changes[1][2])
    assert.equal(before - 1, changes[2][1])
    assert.equal(before + 1, changes[2][3])
  end)

  it("dims thoughts, folds them, and starts a new segment after them", function()
    local buf, t = new_buffer()
    t:append("thought", "pondering ")
    t:append("thought", "deeply\nstill")
    t:append("message", "answer")
    assert.equal("## Larik\n∴ Thinking\npondering deeply\nstill\n\nanswer", text(buf))
    local marks = api.nvim_buf_get_extmarks(buf, transcript.thought_ns, 0, -1, { details = true })
    assert.equal(1, #marks)
    assert.equal(1, marks[1][2])
    assert.equal(3, marks[1][4].end_row)
    assert.equal("LarikThought", marks[1][4].hl_group)
    -- foldexpr: the header opens a fold, the thought's lines are in it, the answer is not.
    api.nvim_set_current_buf(buf)
    assert.equal(">1", transcript.foldexpr(2))
    assert.equal("1", transcript.foldexpr(3))
    assert.equal("1", transcript.foldexpr(4))
    assert.equal("0", transcript.foldexpr(6))
    vim.wo.foldmethod = "expr"
    vim.wo.foldexpr = "v:lua.require'larik.ui.transcript'.foldexpr(v:lnum)"
    vim.wo.foldlevel = 0
    vim.wo.foldenable = true
    assert.equal(2, vim.fn.foldclosed(3))
    assert.equal(-1, vim.fn.foldclosed(6))
  end)

  it("updates a tool call block in place, keyed by its id", function()
    local buf, t = new_buffer()
    t:append("message", "before")
    t:tool({ toolCallId = "t1", title = "Run ls", status = "pending" })
    t:append("message", "between")
    t:tool({ toolCallId = "t2", title = "Read a.txt", status = "pending" })
    t:tool({
      toolCallId = "t1",
      title = "Run ls",
      status = "completed",
      content = { { type = "content", content = { type = "text", text = "a\nb\nc" } } },
    })
    assert.equal("## Larik\nbefore\n\n✓ Run ls\n```\na\nb\nc\n```\n\nbetween\n\n○ Read a.txt", text(buf))
    t:tool({ toolCallId = "t2", title = "Read a.txt", status = "failed" })
    t:append("message", "after")
    assert.equal("## Larik\nbefore\n\n✓ Run ls\n```\na\nb\nc\n```\n\nbetween\n\n✗ Read a.txt\n\nafter", text(buf))
    assert.same({ 3, 8 }, { t:block_range("tool:t1") })
    assert.same({ 12, 12 }, { t:block_range("tool:t2") })
  end)

  it("keeps block ranges right when an earlier block grows or shrinks", function()
    local buf, t = new_buffer()
    t:tool({ toolCallId = "a", title = "A", status = "pending" })
    t:tool({ toolCallId = "b", title = "B", status = "pending" })
    t:tool({ toolCallId = "a", title = "A", status = "in_progress", locations = { { path = "/x/one" }, { path = "/x/two", line = 3 } } })
    assert.same({ 1, 3 }, { t:block_range("tool:a") })
    assert.same({ 5, 5 }, { t:block_range("tool:b") })
    t:tool({ toolCallId = "a", title = "A", status = "completed" })
    t:tool({ toolCallId = "b", title = "B", status = "completed" })
    assert.equal("## Larik\n✓ A\n\n✓ B", text(buf))
  end)

  it("toggles a read's text under its line; other rows are left alone", function()
    local buf, t = new_buffer()
    t:append("message", "Reading.")
    local read = {
      toolCallId = "r",
      title = "Read a.py",
      kind = "read",
      status = "completed",
      content = { { type = "content", content = { type = "text", text = "x = 1\ny = 2\n" } } },
    }
    t:tool(read)
    t:tool({ toolCallId = "s", title = "Run", status = "completed" })
    local folded = "## Larik\nReading.\n\n✓ Read a.py (2 lines)\n\n✓ Run"
    assert.equal(folded, text(buf))
    assert.is_false(t:toggle(1)) -- the message
    assert.is_false(t:toggle(5)) -- a call that is not a read
    assert.is_true(t:toggle(3))
    assert.equal("## Larik\nReading.\n\n✓ Read a.py (2 lines)\n```\nx = 1\ny = 2\n```\n\n✓ Run", text(buf))
    assert.is_true(t:toggle(5)) -- inside the expanded text
    assert.equal(folded, text(buf))
  end)

  it("replaces the plan of a turn whole", function()
    local buf, t = new_buffer()
    t:user_prompt("go")
    t:plan({ { content = "read", status = "in_progress" }, { content = "fix", status = "pending" } })
    t:append("message", "working")
    t:plan({ { content = "read", status = "completed" }, { content = "fix", status = "in_progress" } })
    assert.equal("## You\ngo\n\n## Larik\nPlan\n  ✓ read\n  ◐ fix\n\nworking", text(buf))
  end)

  it("starts a new segment when the message id changes", function()
    local buf, t = new_buffer()
    t:append("message", "one", "m1")
    t:append("message", " more", "m1")
    t:append("message", "two", "m2")
    assert.equal("## Larik\none more\n\ntwo", text(buf))
  end)

  it("knows each turn's rows, from its header to the next one's", function()
    local buf, t = new_buffer()
    t:user_prompt("first")
    t:append("message", "done one")
    t:user_prompt("second")
    t:user_prompt("third, right after")
    t:append("message", "done three")
    assert.equal("## You\nfirst\n\n## Larik\ndone one\n\n## You\nsecond\n\n## You\nthird, right after\n\n## Larik\ndone three", text(buf))
    assert.equal(3, t.turn)
    assert.same({ 0, 4 }, { t:turn_range(1) })
    assert.same({ 6, 7 }, { t:turn_range(2) })
    assert.same({ 9, 13 }, { t:turn_range(3) })
    assert.same({ 1, 1, 2, 3, 3 }, { t:turn_at(0), t:turn_at(5), t:turn_at(7), t:turn_at(9), t:turn_at(13) })
    assert.same({ "first", "second", "third, right after" }, vim.tbl_map(function(turn)
      return turn.prompt
    end, t.turns))
    -- A replayed session's user messages start turns too.
    t:clear()
    t:append("user", "replayed ")
    t:append("user", "prompt")
    t:append("message", "ok")
    assert.equal(1, t.turn)
    assert.equal("replayed prompt", t.turns[1].prompt)
  end)

  it("ends a turn with its undo line, and greys it once undone", function()
    local buf, t = new_buffer()
    t:user_prompt("tidy")
    t:tool({ toolCallId = "b", title = "tidy", status = "completed" })
    t:set_checkpoint(1, "cp-1")
    assert.equal("## You\ntidy\n\n## Larik\n✓ tidy\n\n↶ undo this turn (cp-1) · u", text(buf))
    t:user_prompt("more")
    t:append("message", "said")
    t:user_prompt("last")
    -- An earlier turn's checkpoint known late gets no line in the middle of the chat.
    t:set_checkpoint(2, "cp-2")
    assert.is_false(t:has_block("undo:2"))
    t:mark_undone(1)
    t:mark_undone(2)
    local lines = api.nvim_buf_get_lines(buf, 0, -1, false)
    assert.equal("↶ undone (cp-1)", lines[7])
    local greyed, headers = {}, {}
    for _, mark in ipairs(api.nvim_buf_get_extmarks(buf, transcript.undone_ns, 0, -1, { details = true })) do
      if mark[4].hl_group then
        greyed[#greyed + 1] = { mark[2], mark[4].end_row, mark[4].hl_group }
      elseif mark[4].virt_text then
        headers[#headers + 1] = { mark[2], vim.trim(mark[4].virt_text[1][1]) }
      end
    end
    assert.same({ { 0, 6, "LarikUndone" }, { 8, 12, "LarikUndone" } }, greyed)
    assert.same({ { 0, "↶ undone" }, { 8, "↶ undone" } }, headers)
    assert.equal("## You", lines[9])
    assert.is_true(t.turns[1].undone and t.turns[2].undone)
    assert.is_false(t.turns[3].undone)
  end)

  it("knows the diff shown on a row", function()
    local _, t = new_buffer()
    local item = { type = "diff", path = "/x/a.txt", oldText = "a\n", newText = "b\n" }
    t:tool({ toolCallId = "e", title = "Edit a.txt", status = "completed", content = { item } })
    local diff, call = t:diff_at(2)
    assert.equal(item, diff)
    assert.equal("Edit a.txt", call.title)
    assert.is_nil(t:diff_at(1))
  end)

  it("clears everything", function()
    local buf, t = new_buffer()
    t:append("thought", "x")
    t:tool({ toolCallId = "t", title = "T" })
    t:clear()
    assert.equal("", text(buf))
    assert.is_false(t:has_block("tool:t"))
    assert.equal(0, #api.nvim_buf_get_extmarks(buf, transcript.thought_ns, 0, -1, {}))
  end)
end)
