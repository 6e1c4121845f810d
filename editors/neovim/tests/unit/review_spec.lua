local review = require("larik.ui.review")
local config = require("larik.config")

local api = vim.api

local OLD = "a\nb\nc\nd\ne\n"
local NEW = "A\nb\nc\nd\nx\ny\n"

local AGENT_HUNKS = { larik = { hunks = {
  { index = 0, oldStart = 1, oldLines = 1, newStart = 1, newLines = 1, oldText = "a\n", newText = "A\n" },
  { index = 1, oldStart = 5, oldLines = 1, newStart = 5, newLines = 2, oldText = "e\n", newText = "x\ny\n" },
} } }

local function request(meta)
  return {
    toolCall = {
      toolCallId = "t",
      content = { { type = "diff", path = "/p/file.lua", oldText = OLD, newText = NEW } },
      _meta = meta,
    },
  }
end

local function press(keys)
  api.nvim_feedkeys(api.nvim_replace_termcodes(keys, true, false, true), "x", false)
end

local function lines(buf)
  return api.nvim_buf_get_lines(buf, 0, -1, false)
end

local function decorations(r)
  local deleted, added, status = {}, {}, {}
  for _, mark in ipairs(api.nvim_buf_get_extmarks(r.proposed_buf, review.ns, 0, -1, { details = true })) do
    for _, virt in ipairs(mark[4].virt_lines or {}) do
      deleted[#deleted + 1] = vim.trim(virt[1][1])
    end
    if mark[4].line_hl_group then
      added[#added + 1] = mark[2]
    end
    if mark[4].virt_text then
      status[#status + 1] = vim.trim(mark[4].virt_text[1][1])
    end
  end
  return { deleted = deleted, added = added, status = status }
end

describe("review", function()
  local done

  before_each(function()
    config.setup({})
    review.close()
    done = nil
  end)

  after_each(function()
    review.close()
  end)

  local function open(opts)
    return review.open(request(opts.meta), {
      per_hunk = opts.per_hunk,
      style = opts.style,
      on_done = function(decision)
        done = decision
      end,
    })
  end

  it("shows the proposed file inline with removed lines as virtual lines", function()
    local r = open({ per_hunk = true })
    assert.equal(2, #r.hunks)
    assert.same({ "A", "b", "c", "d", "x", "y" }, lines(r.proposed_buf))
    assert.equal("lua", vim.bo[r.proposed_buf].filetype)
    assert.same({ deleted = { "a", "e" }, added = { 0, 4, 5 }, status = { "? hunk 1/2", "? hunk 2/2" } }, decorations(r))
    assert.matches("hunk 1/2", vim.wo[r.proposed_win].winbar)
    assert.equal(2, #api.nvim_list_tabpages())
    -- Removed lines span the window, on a background, not only as red text.
    local mark = api.nvim_buf_get_extmarks(r.proposed_buf, -1, 0, -1, { details = true })
    local removed
    for _, m in ipairs(mark) do
      removed = removed or (m[4].virt_lines and m[4].virt_lines[1][1])
    end
    assert.equal(api.nvim_win_get_width(r.proposed_win), vim.fn.strdisplaywidth(removed[1]))
    require("larik.ui.highlights").setup()
    assert.is_not_nil(api.nvim_get_hl(0, { name = removed[2], link = false }).bg)
    -- Tab labels read as labels, not as mangled paths.
    assert.matches("^Larik review: ", vim.fn.bufname(r.proposed_buf))
  end)

  it("rebuilds the proposal as hunks are rejected, and reports the kept ones", function()
    local r = open({ per_hunk = true, meta = AGENT_HUNKS })
    press("gr")
    assert.same({ "a", "b", "c", "d", "x", "y" }, lines(r.proposed_buf))
    assert.same({ "✗ rejected", "? hunk 2/2" }, decorations(r).status)
    -- A decided hunk is marked in the sign column and no longer coloured as a proposal.
    local signs = {}
    for _, mark in ipairs(api.nvim_buf_get_extmarks(r.proposed_buf, review.ns, 0, -1, { details = true })) do
      if mark[4].virt_text then
        signs[#signs + 1] = vim.trim(mark[4].sign_text or "")
      end
    end
    assert.same({ "✗", "" }, signs)
    assert.equal(5, api.nvim_win_get_cursor(r.proposed_win)[1])
    press("ga")
    assert.same({ accepted = { 1 }, all = false, none = false, total = 2 }, done)
    assert.is_nil(review.current())
    assert.equal(1, #api.nvim_list_tabpages())
  end)

  it("navigates between hunks", function()
    local r = open({ per_hunk = true })
    assert.equal(1, api.nvim_win_get_cursor(r.proposed_win)[1])
    press("]h")
    assert.equal(5, api.nvim_win_get_cursor(r.proposed_win)[1])
    press("]h")
    assert.equal(1, api.nvim_win_get_cursor(r.proposed_win)[1])
    press("[h")
    assert.equal(5, api.nvim_win_get_cursor(r.proposed_win)[1])
  end)

  it("refuses a mixed decision when the agent applies edits whole", function()
    local notify, warned = vim.notify, nil
    vim.notify = function(message)
      warned = message
    end
    local r = open({ per_hunk = false })
    press("ga")
    press("gr")
    vim.notify = notify
    assert.is_nil(done)
    assert.matches("accept all", warned)
    assert.same({ "A", "b", "c", "d", "x", "y" }, lines(r.proposed_buf))
    press("gA")
    assert.same({ accepted = { 0, 1 }, all = true, none = false, total = 2 }, done)
  end)

  it("uses the agent's hunk numbers when they match the change", function()
    local r = open({ per_hunk = true, meta = AGENT_HUNKS })
    assert.is_true(r.per_hunk)
    press("gr")
    press("ga")
    assert.same({ 1 }, done.accepted)
  end)

  it("ignores agent hunks that do not match the diff", function()
    local meta = { larik = { hunks = { { index = 0, oldStart = 1, oldLines = 1, newStart = 1, newLines = 1, oldText = "zz\n", newText = "A\n" } } } }
    local r = open({ per_hunk = true, meta = meta })
    assert.is_false(r.per_hunk)
    assert.equal(2, #r.hunks)
  end)

  it("shows original and proposed side by side with :diffthis", function()
    local r = open({ per_hunk = true, style = "split" })
    assert.same({ "a", "b", "c", "d", "e" }, lines(r.original_buf))
    assert.is_true(vim.wo[r.original_win].diff)
    assert.is_true(vim.wo[r.proposed_win].diff)
    assert.same({ deleted = {}, added = {}, status = { "? hunk 1/2", "? hunk 2/2" } }, decorations(r))
    press("gR")
    assert.same({ accepted = {}, all = false, none = true, total = 2 }, done)
    assert.equal(1, #api.nvim_list_tabpages())
  end)

  it("closes without deciding", function()
    local r = open({ per_hunk = true })
    api.nvim_set_current_win(r.proposed_win)
    press("q")
    assert.is_nil(done)
    assert.is_nil(review.current())
    assert.equal(1, #api.nvim_list_tabpages())
  end)

  it("has nothing to review without a diff", function()
    assert.is_nil(review.open({ toolCall = { toolCallId = "t", content = {} } }, { on_done = function() end }))
  end)
end)
