--- Owns the agent's file access through the editor (ACP `fs/read_text_file` and
--- `fs/write_text_file`): reads come from a loaded buffer when there is one, so the agent sees
--- unsaved text, else from disk; writes go into a loaded buffer as one undoable change (then
--- saved, unless `fs.save` is false), else to disk.
local config = require("larik.config")
local hunks = require("larik.hunks")

local M = {}

local function real(path)
  local absolute = vim.fn.fnamemodify(path, ":p")
  return vim.uv.fs_realpath(absolute) or vim.fs.normalize(absolute)
end

--- The loaded buffer showing `path`, if any.
---@param path string
---@return integer|nil
function M.find_buffer(path)
  local wanted = real(path)
  for _, buf in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(buf) and vim.bo[buf].buftype == "" then
      local name = vim.api.nvim_buf_get_name(buf)
      if name ~= "" and real(name) == wanted then
        return buf
      end
    end
  end
  return nil
end

--- A buffer's text as it would be written (with its final newline, if it has one).
local function buffer_text(buf)
  local lines = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
  local eol = vim.bo[buf].eol or vim.bo[buf].fixeol
  if #lines == 1 and lines[1] == "" then
    return ""
  end
  return table.concat(lines, "\n") .. (eol and "\n" or "")
end

local function read_disk(path)
  local handle = io.open(path, "rb")
  if not handle then
    return nil
  end
  local text = handle:read("*a")
  handle:close()
  return text
end

M.buffer_text = buffer_text
M.read_disk = read_disk

--- Keeps lines `line` (1-based) .. `line + limit - 1` of `text`, with their newlines.
local function window(text, line, limit)
  if not line and not limit then
    return text
  end
  local start = math.max(line or 1, 1)
  local out, number = {}, 0
  for piece in text:gmatch("[^\n]*\n?") do
    if piece == "" then
      break
    end
    number = number + 1
    if number >= start and (not limit or number < start + limit) then
      out[#out + 1] = piece
    end
  end
  return table.concat(out)
end

--- `fs/read_text_file`: returns the result table, or nil and a JSON-RPC error.
function M.read(params)
  if type(params) ~= "table" or type(params.path) ~= "string" then
    return nil, { code = -32602, message = "Invalid params: path is required" }
  end
  local buf = M.find_buffer(params.path)
  local text = buf and buffer_text(buf) or read_disk(params.path)
  if not text then
    return nil, { code = -32002, message = "Resource not found: " .. params.path, data = { path = params.path } }
  end
  return { content = window(text, params.line, params.limit) }
end

local function write_disk(path, content)
  vim.fn.mkdir(vim.fn.fnamemodify(path, ":h"), "p")
  local handle, err = io.open(path, "wb")
  if not handle then
    return false, err
  end
  handle:write(content)
  handle:close()
  return true
end

--- Replaces a buffer's text in one change (one undo step), keeping the final-newline setting.
local function write_buffer(buf, content)
  local lines, eol = hunks.split(content)
  if #lines == 0 then
    lines = { "" }
  end
  vim.bo[buf].modifiable = true
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].eol = eol
  if not eol then
    vim.bo[buf].fixeol = false
  end
  if config.get().fs.save then
    -- noautocmd: the file must hold exactly what the agent wrote, so no format-on-save.
    local ok, err = pcall(vim.api.nvim_buf_call, buf, function()
      vim.cmd("silent noautocmd keepalt write!")
    end)
    if not ok then
      return false, err
    end
  end
  return true
end

--- `fs/write_text_file`: returns the result table, or nil and a JSON-RPC error.
function M.write(params)
  if type(params) ~= "table" or type(params.path) ~= "string" or type(params.content) ~= "string" then
    return nil, { code = -32602, message = "Invalid params: path and content are required" }
  end
  local buf = M.find_buffer(params.path)
  local ok, err
  if buf then
    ok, err = write_buffer(buf, params.content)
  else
    ok, err = write_disk(params.path, params.content)
  end
  if not ok then
    return nil, { code = -32603, message = "Could not write " .. params.path .. ": " .. tostring(err) }
  end
  return vim.empty_dict()
end

return M
