--- Owns the review of a proposed edit: a tab that shows the file as it would be, inline
--- (proposed text, removed lines as virtual lines) or split (original | proposed under
--- :diffthis), with keys to accept or reject each hunk or all of them. The proposed buffer is
--- rebuilt from the hunks still kept after every decision, so both styles always show the
--- outcome. The real file is never touched here: the agent applies the result.
---
--- When every hunk is decided it calls `on_done({ accepted = {agent indices}, all, none })`.
--- A mixed decision needs an agent that reviews per hunk (its hunks came with the request);
--- with any other agent only accept-all or reject-all can finish.
local config = require("larik.config")
local hunks = require("larik.hunks")

local api = vim.api

local M = {}

local ns = api.nvim_create_namespace("larik_review")
M.ns = ns

local active = nil

--- The first diff among a tool call's content blocks.
function M.diff_of(tool_call)
  for _, item in ipairs((tool_call or {}).content or {}) do
    if item.type == "diff" then
      return item
    end
  end
  return nil
end

local scratch = require("larik.ui.scratch").buffer

--- The review's windows (or buffers) that exist; in the inline style there is no original.
local function present(...)
  local out = {}
  for index = 1, select("#", ...) do
    local value = select(index, ...)
    if value then
      out[#out + 1] = value
    end
  end
  return out
end

local function set_lines(buf, lines)
  vim.bo[buf].modifiable = true
  api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].modifiable = false
end

local function counts(review)
  local accepted, rejected = 0, 0
  for index = 1, #review.hunks do
    if review.decisions[index] == true then
      accepted = accepted + 1
    elseif review.decisions[index] == false then
      rejected = rejected + 1
    end
  end
  return accepted, rejected, #review.hunks - accepted - rejected
end

local function banner(review)
  local keys = config.get().review.keys
  local accepted, rejected, open = counts(review)
  local text = ("Larik review: %s · hunk %d/%d · ✓%d ✗%d ?%d · %s accept %s reject %s all %s none %s/%s move %s close"):format(
    vim.fn.fnamemodify(review.path, ":t"),
    review.current,
    #review.hunks,
    accepted,
    rejected,
    open,
    keys.accept,
    keys.reject,
    keys.accept_all,
    keys.reject_all,
    keys.next,
    keys.prev,
    keys.close
  )
  -- A narrow window cuts the keys at the end, not the file's name at the start.
  local escaped = text:gsub("%%", "%%%%")
  local keys_at = escaped:find(" · " .. keys.accept .. " ", 1, true)
  return keys_at and (escaped:sub(1, keys_at - 1) .. "%<" .. escaped:sub(keys_at)) or escaped
end

local marks = {
  [true] = { "✓ accepted", "LarikHunkAccepted" },
  [false] = { "✗ rejected", "LarikHunkRejected" },
}

--- Rebuilds the proposed buffer from the current decisions and redraws the decorations.
local function render(review)
  local lines, placements = hunks.apply(review.old_lines, review.hunks, function(hunk)
    return review.decisions[hunk.position] ~= false
  end)
  set_lines(review.proposed_buf, lines)
  api.nvim_buf_clear_namespace(review.proposed_buf, ns, 0, -1)
  local line_count = math.max(#lines, 1)
  review.anchors = {}
  for position, place in ipairs(placements) do
    local hunk = review.hunks[position]
    local first = math.min(place.row, line_count - 1)
    local last = place.count > 0 and (place.row + place.count - 1) or first
    local below = place.count == 0 and place.row >= line_count
    review.anchors[position] = { first = first, last = last, old_first = hunk.before, old_last = hunk.before + math.max(#hunk.old - 1, 0) }
    local mark = marks[review.decisions[position]] or { ("? hunk %d/%d"):format(position, #review.hunks), "LarikHunkPending" }
    local opts = { virt_text = { { "  " .. mark[1], mark[2] } }, virt_text_pos = "eol" }
    local decided = review.decisions[position]
    if decided ~= nil then
      -- A decided hunk reads as settled: its mark in the sign column, no proposal colours.
      opts.sign_text, opts.sign_hl_group = decided and "✓" or "✗", mark[2]
    end
    if review.style == "inline" and place.applied and decided == nil then
      for row = place.row, place.row + place.count - 1 do
        api.nvim_buf_set_extmark(review.proposed_buf, ns, row, 0, { line_hl_group = "LarikDiffAdd" })
      end
      if #hunk.old > 0 then
        local virt = {}
        -- Padded to the window's width so the background marks the whole line, as the added
        -- lines' line highlight does.
        local width = review.proposed_win and api.nvim_win_is_valid(review.proposed_win) and api.nvim_win_get_width(review.proposed_win) or 80
        for _, old in ipairs(hunk.old) do
          virt[#virt + 1] = { { old .. string.rep(" ", math.max(width - vim.fn.strdisplaywidth(old), 0)), "LarikDiffDelete" } }
        end
        opts.virt_lines = virt
        opts.virt_lines_above = not below
      end
    end
    api.nvim_buf_set_extmark(review.proposed_buf, ns, first, 0, opts)
  end
  if review.style == "split" then
    for _, win in ipairs(present(review.original_win, review.proposed_win)) do
      if api.nvim_win_is_valid(win) then
        api.nvim_win_call(win, function()
          vim.cmd("diffupdate")
        end)
      end
    end
  end
  if api.nvim_win_is_valid(review.proposed_win) then
    vim.wo[review.proposed_win].winbar = banner(review)
  end
end

--- The hunk under the cursor (or the next one after it), as a position in `review.hunks`.
local function hunk_at_cursor(review)
  local win = api.nvim_get_current_win()
  local row = api.nvim_win_get_cursor(win)[1] - 1
  local original = win == review.original_win
  for position, anchor in ipairs(review.anchors) do
    local first = original and anchor.old_first or anchor.first
    local last = original and anchor.old_last or anchor.last
    if row >= first and row <= last then
      return position
    end
  end
  return review.current
end

local function jump(review, position)
  review.current = position
  local anchor = review.anchors[position]
  local win = api.nvim_get_current_win()
  if win ~= review.original_win and win ~= review.proposed_win then
    win = review.proposed_win
  end
  local row = (win == review.original_win) and anchor.old_first or anchor.first
  local count = api.nvim_buf_line_count(api.nvim_win_get_buf(win))
  pcall(api.nvim_win_set_cursor, win, { math.min(row, count - 1) + 1, 0 })
  local hunk = review.hunks[position]
  if win == review.proposed_win and row == 0 and review.style == "inline" and #hunk.old > 0 then
    -- Virtual lines above the first line show only when the window scrolls "past" the top.
    api.nvim_win_call(win, function()
      vim.fn.winrestview({ topline = 1, topfill = #hunk.old })
    end)
  end
  if api.nvim_win_is_valid(review.proposed_win) then
    vim.wo[review.proposed_win].winbar = banner(review)
  end
end

local function next_undecided(review, from)
  local total = #review.hunks
  for step = 1, total do
    local position = (from - 1 + step) % total + 1
    if review.decisions[position] == nil then
      return position
    end
  end
  return nil
end

local function close_ui(review)
  -- The whole tab goes, with any window opened in it meanwhile (the chat beside the review).
  if review.tab and api.nvim_tabpage_is_valid(review.tab) and #api.nvim_list_tabpages() > 1 then
    pcall(vim.cmd, "tabclose! " .. api.nvim_tabpage_get_number(review.tab))
  end
  for _, win in ipairs(present(review.original_win, review.proposed_win)) do
    if api.nvim_win_is_valid(win) and #api.nvim_list_wins() > 1 then
      pcall(api.nvim_win_close, win, true)
    end
  end
  for _, buf in ipairs(present(review.original_buf, review.proposed_buf)) do
    if api.nvim_buf_is_valid(buf) then
      pcall(api.nvim_buf_delete, buf, { force = true })
    end
  end
end

local function finish(review)
  local accepted, rejected, open = counts(review)
  if open > 0 then
    return
  end
  if accepted > 0 and rejected > 0 and not review.per_hunk then
    vim.notify("Larik: this agent applies an edit whole; accept all (" .. config.get().review.keys.accept_all .. ") or reject all (" .. config.get().review.keys.reject_all .. ")", vim.log.levels.WARN)
    review.decisions = {}
    render(review)
    return
  end
  local indices = {}
  for position, hunk in ipairs(review.hunks) do
    if review.decisions[position] then
      indices[#indices + 1] = hunk.index
    end
  end
  table.sort(indices)
  active = nil
  close_ui(review)
  review.on_done({ accepted = indices, all = rejected == 0, none = accepted == 0, total = #review.hunks })
end

local function decide(review, value)
  local position = hunk_at_cursor(review)
  review.decisions[position] = value
  render(review)
  local following = next_undecided(review, position)
  if following then
    jump(review, following)
  else
    finish(review)
  end
end

local function decide_rest(review, value)
  for position = 1, #review.hunks do
    if review.decisions[position] == nil then
      review.decisions[position] = value
    end
  end
  render(review)
  finish(review)
end

local function set_keys(review, buf)
  local keys = config.get().review.keys
  local function map(lhs, fn, desc)
    if lhs then
      vim.keymap.set("n", lhs, fn, { buffer = buf, nowait = true, silent = true, desc = desc })
    end
  end
  map(keys.accept, function()
    decide(review, true)
  end, "Accept this hunk")
  map(keys.reject, function()
    decide(review, false)
  end, "Reject this hunk")
  map(keys.accept_all, function()
    decide_rest(review, true)
  end, "Accept every undecided hunk")
  map(keys.reject_all, function()
    decide_rest(review, false)
  end, "Reject every undecided hunk")
  map(keys.next, function()
    jump(review, hunk_at_cursor(review) % #review.hunks + 1)
  end, "Next hunk")
  map(keys.prev, function()
    jump(review, (hunk_at_cursor(review) - 2) % #review.hunks + 1)
  end, "Previous hunk")
  map(keys.close, function()
    M.close()
    if review.on_close then
      review.on_close()
    end
  end, "Close the review (the request stays open in the chat)")
end

---@class larik.ReviewOptions
---@field per_hunk boolean the agent applies only the accepted hunks
---@field on_done fun(decision: table)
---@field on_close fun()|nil
---@field style string|nil "inline" | "split"

--- Opens the review of a permission request's diff. Returns the review, or nil when the
--- request carries no change to review.
---@param request table session/request_permission params
---@param opts larik.ReviewOptions
function M.open(request, opts)
  M.close()
  local item = M.diff_of(request.toolCall)
  if not item then
    return nil
  end
  local old_lines = hunks.split(item.oldText)
  local new_lines = hunks.split(item.newText)
  local meta = request.toolCall._meta and request.toolCall._meta.larik
  local list = hunks.from_agent(meta and meta.hunks, old_lines, new_lines)
  local from_agent = list ~= nil
  list = list or hunks.compute(old_lines, new_lines)
  if #list == 0 then
    return nil
  end
  for position, hunk in ipairs(list) do
    hunk.position = position
  end
  local review = {
    request = request,
    path = item.path,
    old_lines = old_lines,
    hunks = list,
    decisions = {},
    current = 1,
    per_hunk = opts.per_hunk and from_agent,
    style = opts.style or config.get().review.style,
    on_done = opts.on_done,
    on_close = opts.on_close,
    anchors = {},
  }
  local filetype = vim.filetype.match({ filename = item.path }) or ""
  review.proposed_buf = scratch("Larik review: " .. vim.fn.fnamemodify(item.path, ":t"), new_lines, filetype)
  if review.style == "split" then
    review.original_buf = scratch("Larik original: " .. vim.fn.fnamemodify(item.path, ":t"), old_lines, filetype)
    vim.cmd("tab sbuffer " .. review.original_buf)
    review.original_win = api.nvim_get_current_win()
    vim.cmd("rightbelow vertical sbuffer " .. review.proposed_buf)
    review.proposed_win = api.nvim_get_current_win()
    for _, win in ipairs({ review.original_win, review.proposed_win }) do
      api.nvim_win_call(win, function()
        vim.cmd("diffthis")
      end)
    end
    set_keys(review, review.original_buf)
  else
    vim.cmd("tab sbuffer " .. review.proposed_buf)
    review.proposed_win = api.nvim_get_current_win()
  end
  for _, win in ipairs(present(review.original_win, review.proposed_win)) do
    -- The chat points at lines (`calc.py:13`): the review shows their numbers.
    vim.wo[win].number, vim.wo[win].signcolumn = true, "yes"
  end
  review.tab = api.nvim_get_current_tabpage()
  set_keys(review, review.proposed_buf)
  active = review
  -- Closing the tab some other way (`:q`, `:tabclose`) ends the review as its close key does,
  -- so the request is answered in the chat again rather than waiting on a review nobody sees.
  api.nvim_create_autocmd("BufWipeout", {
    buffer = review.proposed_buf,
    once = true,
    callback = function()
      if active ~= review then
        return
      end
      active = nil
      vim.schedule(function()
        close_ui(review)
        if review.on_close then
          review.on_close()
        end
      end)
    end,
  })
  render(review)
  jump(review, 1)
  return review
end

--- The open review, if any.
function M.current()
  return active
end

--- Closes the open review without deciding.
function M.close()
  if active then
    local review = active
    active = nil
    close_ui(review)
  end
end

return M
