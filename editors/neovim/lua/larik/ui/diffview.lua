--- Owns the read-only view of a change already made (an ACP `diff` block of a finished call,
--- such as a file a command changed): a tab with the file before and after, side by side under
--- :diffthis, as the review's split style shows a proposal. Nothing is decided here, so the
--- only key is the one that closes it; the real file is never touched.
local config = require("larik.config")
local hunks = require("larik.hunks")

local api = vim.api

local M = {}

local active = nil

local scratch = require("larik.ui.scratch").buffer

--- What the winbar says of the change.
local function describe(item)
  if item.oldText == nil then
    return "added"
  elseif item.newText == "" then
    return "deleted"
  end
  return "changed"
end

--- Closes the open view.
function M.close()
  local view = active
  active = nil
  if not view then
    return
  end
  for _, win in ipairs({ view.before_win, view.after_win }) do
    if api.nvim_win_is_valid(win) and #api.nvim_list_wins() > 1 then
      pcall(api.nvim_win_close, win, true)
    end
  end
  for _, buf in ipairs({ view.before_buf, view.after_buf }) do
    if api.nvim_buf_is_valid(buf) then
      pcall(api.nvim_buf_delete, buf, { force = true })
    end
  end
end

--- Opens the view of one diff block; `label` says what made the change (a command's title).
---@param item { path: string, oldText: string|nil, newText: string|nil }
---@param label string|nil
---@return table view { before_buf, after_buf, before_win, after_win }
function M.open(item, label)
  M.close()
  local name = vim.fn.fnamemodify(item.path, ":t")
  local filetype = vim.filetype.match({ filename = item.path }) or ""
  local view = {
    path = item.path,
    before_buf = scratch("Larik before: " .. name, (hunks.split(item.oldText)), filetype),
    after_buf = scratch("Larik after: " .. name, (hunks.split(item.newText)), filetype),
  }
  vim.cmd("tab sbuffer " .. view.before_buf)
  view.before_win = api.nvim_get_current_win()
  vim.cmd("rightbelow vertical sbuffer " .. view.after_buf)
  view.after_win = api.nvim_get_current_win()
  for _, win in ipairs({ view.before_win, view.after_win }) do
    api.nvim_win_call(win, function()
      vim.cmd("diffthis")
    end)
  end
  local close = config.get().review.keys.close or "q"
  local what = ("%s%s"):format(describe(item), label and (" by " .. label) or "")
  vim.wo[view.before_win].winbar = ("Larik: %s before · %s"):format(name, what):gsub("%%", "%%%%")
  vim.wo[view.after_win].winbar = ("Larik: %s after · %s close"):format(name, close):gsub("%%", "%%%%")
  for _, buf in ipairs({ view.before_buf, view.after_buf }) do
    vim.keymap.set("n", close, M.close, { buffer = buf, nowait = true, silent = true, desc = "Close the Larik diff" })
  end
  active = view
  return view
end

--- The open view, if any.
function M.current()
  return active
end

return M
