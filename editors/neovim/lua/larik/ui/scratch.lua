--- Owns the read-only scratch buffers the review and the change view show a file's text in.
local api = vim.api

local M = {}

--- A read-only scratch buffer named `name` holding `lines`; a buffer of that name opened before
--- is replaced (the new one takes its name).
function M.buffer(name, lines, filetype)
  local old = vim.fn.bufnr(name)
  if old ~= -1 then
    pcall(api.nvim_buf_delete, old, { force = true })
  end
  local buf = api.nvim_create_buf(false, true)
  api.nvim_buf_set_name(buf, name)
  vim.b[buf].larik = true
  vim.bo[buf].buftype = "nofile"
  vim.bo[buf].bufhidden = "wipe"
  vim.bo[buf].swapfile = false
  api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].modifiable = false
  -- Read-only: entered in Normal mode, where its keys work, even from a prompt being typed.
  api.nvim_create_autocmd("BufEnter", { buffer = buf, command = "stopinsert" })
  if filetype and filetype ~= "" then
    vim.bo[buf].filetype = filetype
  end
  return buf
end

return M
