--- Owns the protocol log: every JSON-RPC message in and out, the agent's stderr and the
--- plugin's own notes, kept in a bounded ring in memory (and optionally appended to a file).
--- :LarikLog shows it in a scratch buffer that keeps growing while it is open.
local config = require("larik.config")

local M = {}

local entries = {}
local first = 1 -- index of the oldest entry in `entries`
local log_buf = nil

local arrows = { out = "→", ["in"] = "←", stderr = "!", info = "·" }

local function format(entry)
  return ("%s %s %s"):format(entry.time, arrows[entry.kind] or "·", entry.text)
end

--- Records one entry. `kind` is "out" (to the agent), "in" (from it), "stderr" or "info".
---@param kind string
---@param text string
function M.add(kind, text)
  local entry = { time = os.date("%H:%M:%S"), kind = kind, text = (text:gsub("\n", "\\n")) }
  entries[#entries + 1] = entry
  local max = config.get().log.max_entries
  while #entries - first + 1 > max do
    entries[first] = nil
    first = first + 1
  end
  local file = config.get().log.file
  if file then
    local handle = io.open(file, "a")
    if handle then
      handle:write(format(entry), "\n")
      handle:close()
    end
  end
  if log_buf and vim.api.nvim_buf_is_valid(log_buf) and not vim.in_fast_event() then
    vim.bo[log_buf].modifiable = true
    vim.api.nvim_buf_set_lines(log_buf, -1, -1, false, { format(entry) })
    vim.bo[log_buf].modifiable = false
  end
end

--- The entries currently kept, oldest first, formatted as the log buffer shows them.
---@return string[]
function M.lines()
  local lines = {}
  for index = first, #entries do
    lines[#lines + 1] = format(entries[index])
  end
  return lines
end

function M.clear()
  entries, first = {}, 1
end

--- Opens the log in a split (or focuses it when already shown).
function M.open()
  if not (log_buf and vim.api.nvim_buf_is_valid(log_buf)) then
    log_buf = vim.api.nvim_create_buf(false, true)
    vim.api.nvim_buf_set_name(log_buf, "Larik log")
    vim.b[log_buf].larik = true
    vim.bo[log_buf].bufhidden = "hide"
    vim.bo[log_buf].filetype = "lariklog"
  end
  vim.bo[log_buf].modifiable = true
  vim.api.nvim_buf_set_lines(log_buf, 0, -1, false, M.lines())
  vim.bo[log_buf].modifiable = false
  local win = vim.fn.bufwinid(log_buf)
  if win == -1 then
    vim.cmd("botright split")
    win = vim.api.nvim_get_current_win()
    vim.api.nvim_win_set_buf(win, log_buf)
  end
  vim.api.nvim_set_current_win(win)
  vim.api.nvim_win_set_cursor(win, { vim.api.nvim_buf_line_count(log_buf), 0 })
  return log_buf
end

return M
