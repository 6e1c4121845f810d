--- Owns "follow the agent": when enabled, the last window the user edited a file in shows the
--- location of the running tool call. The cursor stays where it was (usually the chat).
local config = require("larik.config")
local context = require("larik.context")

local M = {}

local last_shown = nil

--- Shows the first location of a tool call that is pending or running.
---@param call table merged tool call
function M.tool_call(call)
  if not config.get().follow then
    return
  end
  if call.status ~= "pending" and call.status ~= "in_progress" and call.status ~= nil then
    return
  end
  local location = (call.locations or {})[1]
  if not location or type(location.path) ~= "string" then
    return
  end
  local key = location.path .. ":" .. tostring(location.line)
  if key == last_shown then
    return
  end
  local win = context.file_window()
  if not win then
    return
  end
  last_shown = key
  vim.api.nvim_win_call(win, function()
    if vim.fn.fnamemodify(vim.api.nvim_buf_get_name(0), ":p") ~= vim.fn.fnamemodify(location.path, ":p") then
      local ok = pcall(vim.cmd, "keepalt edit " .. vim.fn.fnameescape(location.path))
      if not ok then
        return
      end
    end
    if location.line then
      local count = vim.api.nvim_buf_line_count(0)
      pcall(vim.api.nvim_win_set_cursor, 0, { math.min(math.max(location.line, 1), count), 0 })
      vim.cmd("normal! zz")
    end
  end)
end

return M
