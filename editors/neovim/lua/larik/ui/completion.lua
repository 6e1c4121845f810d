--- Owns the completion of slash commands in the prompt input: the buffer's 'omnifunc'
--- (<C-x><C-o>), the menu opened as `/` is typed at the start of the prompt (Neovim's own
--- popup menu through |complete()|, so no completion plugin is needed), and a menu that is
--- showing refreshed when the agent sends a new list. Which commands match and how an item
--- reads is `larik.slash`'s job.
local config = require("larik.config")
local slash = require("larik.slash")

local api = vim.api

local M = {}

--- The agent's commands for the session (its last `available_commands_update`).
M.commands = function()
  local session = require("larik.client").state.session
  return session and session.commands or {}
end

-- Since Neovim 0.11 'completeopt' may be set for one buffer; before, it is global, and is
-- swapped for the menu's lifetime only (put back when the completion is done).
M.local_completeopt = vim.fn.has("nvim-0.11") == 1

local attached = {} ---@type table<integer, boolean>
-- The buffer's changedtick when its menu last closed: what was typed while it showed triggers
-- TextChangedI right after, which must not open it again (<C-e> dismisses it for good).
local closed_at = {} ---@type table<integer, integer>
local saved_completeopt = nil ---@type string|nil

--- The options the prompt's menu needs, from the user's own: a menu even for one match, and
--- nothing inserted before one is chosen (the menu opens while the name is being typed, so an
--- inserted first match would overwrite it).
---@param current string the user's 'completeopt'
---@return string
function M.completeopt(current)
  local parts = vim.split(current or "", ",", { trimempty = true })
  local set = {}
  for _, part in ipairs(parts) do
    set[part] = true
  end
  if not set.menu and not set.menuone then
    table.insert(parts, 1, "menu")
  end
  if not set.menuone then
    parts[#parts + 1] = "menuone"
  end
  if not set.noinsert and not set.noselect then
    parts[#parts + 1] = "noinsert"
  end
  return table.concat(parts, ",")
end

local function restore_completeopt()
  if saved_completeopt then
    vim.o.completeopt = saved_completeopt
    saved_completeopt = nil
  end
end

--- What to complete at the cursor of the current window, if it shows `buf`.
local function at_cursor(buf)
  if api.nvim_get_current_buf() ~= buf then
    return nil
  end
  local row, col = unpack(api.nvim_win_get_cursor(0))
  local function room(slash_col)
    local screen = vim.fn.screenpos(0, row, slash_col + 1).col
    return screen > 0 and vim.o.columns - screen + 1 or nil
  end
  return slash.complete(api.nvim_buf_get_lines(buf, 0, row, false), col, M.commands(), room)
end

--- Opens (or replaces) the menu for the name being typed. Only in Insert mode in the prompt.
---@param buf integer
---@return boolean shown
function M.show(buf)
  if not attached[buf] or not api.nvim_get_mode().mode:match("^i") then
    return false
  end
  local found = at_cursor(buf)
  if not found then
    return false
  end
  if not M.local_completeopt and not saved_completeopt then
    saved_completeopt = vim.o.completeopt
    vim.o.completeopt = M.completeopt(saved_completeopt)
  end
  vim.fn.complete(found.col + 1, found.items)
  return true
end

local omni_found = nil -- what the first call found, for the second (same text, same room)

--- The prompt's 'omnifunc' (|complete-functions|): <C-x><C-o> on a command's name.
function M.omnifunc(findstart, base)
  if findstart == 1 then
    omni_found = at_cursor(api.nvim_get_current_buf())
    -- -3: not a command's name here; leave completion quietly.
    return omni_found and omni_found.col or -3
  end
  local found = omni_found
  omni_found = nil
  if found and found.items[1] and vim.startswith(found.items[1].word:lower(), (base or ""):lower()) then
    return found.items
  end
  return slash.items(M.commands(), "/" .. (base or ""):gsub("^/", ""))
end

--- Called when the agent's list changed: a menu showing in the prompt shows the new list.
function M.refresh()
  local buf = api.nvim_get_current_buf()
  if attached[buf] and vim.fn.pumvisible() == 1 then
    M.show(buf)
  end
end

--- Sets up completion in the prompt input buffer.
---@param buf integer
function M.attach(buf)
  if attached[buf] then
    return
  end
  attached[buf] = true
  vim.bo[buf].omnifunc = "v:lua.require'larik.ui.completion'.omnifunc"
  if M.local_completeopt then
    vim.bo[buf].completeopt = M.completeopt(vim.o.completeopt)
  end
  local group = api.nvim_create_augroup("larik_completion_" .. buf, { clear = true })
  -- TextChangedI runs after each change typed while no menu shows; while one shows, Neovim
  -- narrows it itself as the name is typed (and widens it on <BS>).
  api.nvim_create_autocmd("TextChangedI", {
    group = group,
    buffer = buf,
    callback = function()
      if config.get().chat.complete_commands and vim.fn.pumvisible() == 0 and closed_at[buf] ~= api.nvim_buf_get_changedtick(buf) then
        M.show(buf)
      end
    end,
  })
  api.nvim_create_autocmd("CompleteDone", {
    group = group,
    buffer = buf,
    callback = function()
      closed_at[buf] = api.nvim_buf_get_changedtick(buf)
      restore_completeopt()
    end,
  })
  -- Not on BufLeave: the menu's preview window is filled from inside it.
  api.nvim_create_autocmd("InsertLeave", {
    group = group,
    buffer = buf,
    callback = restore_completeopt,
  })
  api.nvim_create_autocmd("BufWipeout", {
    group = group,
    buffer = buf,
    callback = function()
      attached[buf], closed_at[buf] = nil, nil
      restore_completeopt()
      pcall(api.nvim_del_augroup_by_id, group)
    end,
  })
end

return M
