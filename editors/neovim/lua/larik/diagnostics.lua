--- Owns Larik's `_larik/diagnostics` request: the agent asks for a file's problems as the editor
--- shows them (after a read, the baseline, and after each edit), so it need not start language
--- servers of its own next to ours.
---
--- The rule for "the editor covers this file": a loaded buffer shows it and either a language
--- server is attached to that buffer or some namespace has put diagnostics on it (a linter
--- plugin counts too: the answer is what the editor shows). Otherwise the answer is
--- `{diagnostics = null}` and the agent asks its own servers.
---
--- The answer waits (without blocking the main loop) until the buffer's diagnostics are newer
--- than its text, or `waitMs` passed: the agent may have just written the file.
local fs = require("larik.fs")

local M = {}

-- Indexed by `vim.diagnostic.severity` (1 = ERROR .. 4 = HINT).
local severities = { "error", "warning", "information", "hint" }

-- The buffer's changedtick when its diagnostics last changed: diagnostics set at the current
-- tick were computed from the current text, so there is nothing to wait for.
local settled = {}

--- Starts tracking when each buffer's diagnostics change. Safe to call again.
function M.track()
  local group = vim.api.nvim_create_augroup("larik_diagnostics", { clear = true })
  vim.api.nvim_create_autocmd("DiagnosticChanged", {
    group = group,
    callback = function(args)
      if vim.api.nvim_buf_is_valid(args.buf) then
        settled[args.buf] = vim.b[args.buf].changedtick
      end
    end,
  })
  -- Writing bumps changedtick without changing the text: diagnostics current before a save
  -- stay current after it.
  vim.api.nvim_create_autocmd("BufWritePre", {
    group = group,
    callback = function(args)
      vim.b[args.buf].larik_tick_before_write = vim.b[args.buf].changedtick
    end,
  })
  vim.api.nvim_create_autocmd("BufWritePost", {
    group = group,
    callback = function(args)
      if settled[args.buf] and settled[args.buf] == vim.b[args.buf].larik_tick_before_write then
        settled[args.buf] = vim.b[args.buf].changedtick
      end
    end,
  })
  vim.api.nvim_create_autocmd("BufWipeout", {
    group = group,
    callback = function(args)
      settled[args.buf] = nil
    end,
  })
end

--- A Neovim diagnostic (0-based `lnum`/`col`) as Larik's (1-based `line`/`character`).
---@param item vim.Diagnostic
function M.convert(item)
  return {
    line = item.lnum + 1,
    character = item.col + 1,
    severity = severities[item.severity] or "error",
    message = item.message,
    source = item.source,
  }
end

--- Whether the editor has anything to say about `buf`: a language server attached, or
--- diagnostics from any namespace.
function M.covers(buf)
  local get_clients = vim.lsp.get_clients or vim.lsp.get_active_clients
  return #get_clients({ bufnr = buf }) > 0 or #vim.diagnostic.get(buf) > 0
end

--- The result for `buf` as it is now.
function M.result(buf)
  if not M.covers(buf) then
    return { diagnostics = vim.NIL }
  end
  local out = {}
  for _, item in ipairs(vim.diagnostic.get(buf)) do
    out[#out + 1] = M.convert(item)
  end
  return { diagnostics = out }
end

--- Reloads `buf` when the agent wrote its file on disk and the buffer has no changes of its
--- own, so the servers see the text that is on disk.
local function reload_if_stale(buf, path)
  if vim.bo[buf].modified or fs.buffer_text(buf) == fs.read_disk(path) then
    return
  end
  -- 'autoread' for this check only: a prompt about the changed file would block the answer.
  local autoread = vim.bo[buf].autoread
  vim.bo[buf].autoread = true
  pcall(vim.cmd, "silent checktime " .. buf)
  vim.bo[buf].autoread = autoread
end

--- Handles `_larik/diagnostics`; `respond(result, err)` is called once, maybe later.
function M.request(params, respond)
  if type(params) ~= "table" or type(params.path) ~= "string" then
    respond(nil, { code = -32602, message = "Invalid params: path is required" })
    return
  end
  local buf = fs.find_buffer(params.path)
  if not buf then
    -- Loading the file would attach servers only to wait for their start-up: the agent's
    -- own servers answer sooner for a file nobody has open.
    respond({ diagnostics = vim.NIL })
    return
  end
  reload_if_stale(buf, params.path)
  if not M.covers(buf) or settled[buf] == vim.b[buf].changedtick then
    respond(M.result(buf))
    return
  end
  local done = false
  local autocmd
  local function finish()
    if done then
      return
    end
    done = true
    pcall(vim.api.nvim_del_autocmd, autocmd)
    respond(vim.api.nvim_buf_is_valid(buf) and M.result(buf) or { diagnostics = vim.NIL })
  end
  -- The first change after the request answers: with several servers on one buffer, what the
  -- slower ones report later is not in this answer.
  autocmd = vim.api.nvim_create_autocmd("DiagnosticChanged", {
    buffer = buf,
    callback = function()
      -- After the tracking autocmd has run, and out of the callback that set the diagnostics.
      vim.schedule(finish)
    end,
  })
  local wait = tonumber(params.waitMs) or 3000
  vim.defer_fn(finish, math.max(wait, 0))
end

return M
