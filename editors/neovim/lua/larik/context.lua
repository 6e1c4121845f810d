--- Owns what the editor tells the agent about the user's view: the file being edited (the
--- last window that showed a real file, since the chat has focus when a prompt is sent), a
--- selection, the open files and diagnostics. It shapes them as Larik's `_larik/editor_context`
--- notification and as ACP resource blocks for a prompt.
local config = require("larik.config")

local M = {}

local last_file_win = nil

--- A buffer the user edits: a named, normal, loaded buffer (not one of ours).
function M.is_file_buffer(buf)
  return vim.api.nvim_buf_is_valid(buf)
    and vim.bo[buf].buftype == ""
    and vim.api.nvim_buf_get_name(buf) ~= ""
    and not vim.b[buf].larik
end

--- Remembers the last window showing a file, so context and "follow the agent" know where the
--- user works even while the chat has focus.
function M.track()
  local group = vim.api.nvim_create_augroup("larik_context", { clear = true })
  vim.api.nvim_create_autocmd({ "BufEnter", "WinEnter" }, {
    group = group,
    callback = function()
      local win = vim.api.nvim_get_current_win()
      if M.is_file_buffer(vim.api.nvim_win_get_buf(win)) then
        last_file_win = win
      end
    end,
  })
end

--- The window the user last edited a file in, if it is still open.
function M.file_window()
  if last_file_win and vim.api.nvim_win_is_valid(last_file_win) and M.is_file_buffer(vim.api.nvim_win_get_buf(last_file_win)) then
    return last_file_win
  end
  for _, win in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
    if M.is_file_buffer(vim.api.nvim_win_get_buf(win)) then
      return win
    end
  end
  return nil
end

local function path_of(buf)
  return vim.fn.fnamemodify(vim.api.nvim_buf_get_name(buf), ":p")
end

--- A selection of whole lines `line1..line2` (1-based) of `buf`.
function M.selection(buf, line1, line2)
  local lines = vim.api.nvim_buf_get_lines(buf, line1 - 1, line2, false)
  return {
    path = path_of(buf),
    startLine = line1,
    endLine = line2,
    text = table.concat(lines, "\n") .. "\n",
  }
end

local severities = { [1] = "error", [2] = "warning", [3] = "info", [4] = "hint" }

local function diagnostics(bufs)
  local out, max = {}, config.get().context.max_diagnostics
  for _, buf in ipairs(bufs) do
    for _, item in ipairs(vim.diagnostic.get(buf)) do
      if #out >= max then
        return out
      end
      out[#out + 1] = {
        path = path_of(buf),
        line = item.lnum + 1,
        severity = severities[item.severity] or "info",
        message = item.message,
      }
    end
  end
  return out
end

--- The `_larik/editor_context` params for a session.
---@param session_id string
---@param selection table|nil
function M.editor_context(session_id, selection)
  local params = { sessionId = session_id }
  local win = M.file_window()
  local active = win and vim.api.nvim_win_get_buf(win)
  if active then
    params.activeFile = path_of(active)
  end
  params.selection = selection
  local open = {}
  local bufs = {}
  for _, buf in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(buf) and vim.bo[buf].buflisted and M.is_file_buffer(buf) then
      open[#open + 1] = path_of(buf)
      bufs[#bufs + 1] = buf
    end
  end
  if #open > 0 then
    params.openFiles = open
  end
  if config.get().context.diagnostics then
    -- The active file's diagnostics come first, so they survive the cap.
    if active then
      table.sort(bufs, function(a, b)
        return a == active and b ~= active
      end)
    end
    local found = diagnostics(bufs)
    if #found > 0 then
      params.diagnostics = found
    end
  end
  return params
end

--- A selection as an ACP `resource` content block, so any ACP agent sees the exact text.
function M.selection_block(selection)
  return {
    type = "resource",
    resource = {
      uri = ("file://%s#L%d-L%d"):format(selection.path, selection.startLine, selection.endLine),
      mimeType = "text/plain",
      text = selection.text,
    },
  }
end

return M
