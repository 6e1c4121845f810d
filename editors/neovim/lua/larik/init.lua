--- Larik for Neovim: `setup()` and the public API. Everything here is a thin entry point; the
--- work happens in `larik.client` (the agent and its session), `larik.ui.*` (chat, review,
--- permission prompts) and the modules they name.
local M = {}

local did_setup = false

local function client()
  return require("larik.client")
end

local function map_keys(keymaps)
  if not keymaps or not keymaps.prefix then
    return
  end
  local prefix = keymaps.prefix
  local function map(modes, key, rhs, desc)
    if key then
      vim.keymap.set(modes, prefix .. key, rhs, { desc = "Larik: " .. desc, silent = true })
    end
  end
  map("n", keymaps.open, "<cmd>Larik<cr>", "open the chat")
  map("n", keymaps.ask, "<cmd>LarikAsk<cr>", "ask")
  map("x", keymaps.ask, ":LarikAsk<cr>", "ask about the selection")
  map("n", keymaps.cancel, "<cmd>LarikCancel<cr>", "cancel the turn")
  map("n", keymaps.mode, function()
    vim.ui.select(client().mode_ids(), { prompt = "Larik mode" }, function(mode)
      if mode then
        M.set_mode(mode)
      end
    end)
  end, "choose the mode")
  map("n", keymaps.model, function()
    local models = client().model_ids()
    if #models == 0 then
      vim.ui.input({ prompt = "Larik model: " }, function(model)
        if model and model ~= "" then
          M.set_model(model)
        end
      end)
      return
    end
    vim.ui.select(models, { prompt = "Larik model" }, function(model)
      if model then
        M.set_model(model)
      end
    end)
  end, "choose the model")
  map("n", keymaps.sessions, "<cmd>LarikSessions<cr>", "past sessions")
  map("n", keymaps.checkpoints, "<cmd>LarikCheckpoints<cr>", "undo a turn (checkpoints)")
  map("n", keymaps.log, "<cmd>LarikLog<cr>", "protocol log")
end

--- Configures the plugin (see `:h larik-config`). Safe to call again; later calls replace the
--- options.
---@param opts table|nil
function M.setup(opts)
  local cfg = require("larik.config").setup(opts)
  require("larik.ui.highlights").setup()
  require("larik.context").track()
  require("larik.diagnostics").track()
  local group = vim.api.nvim_create_augroup("larik", { clear = true })
  vim.api.nvim_create_autocmd("VimLeavePre", {
    group = group,
    callback = function()
      client().stop(0)
    end,
  })
  vim.api.nvim_create_autocmd("ColorScheme", {
    group = group,
    callback = function()
      require("larik.ui.highlights").setup()
    end,
  })
  local chat = require("larik.ui.chat")
  chat.on_submit = function(text, selection)
    M.ask(text, { selection = selection })
  end
  chat.on_cancel = M.cancel
  chat.on_stop_subagent = M.stop_task
  chat.on_undo_turn = function(turn)
    require("larik.checkpoints").undo_turn(turn)
  end
  map_keys(cfg.keymaps)
  did_setup = true
end

local function ensure_setup()
  if not did_setup then
    M.setup({})
  end
end

--- Opens the chat (starting the agent) or focuses it.
function M.open()
  ensure_setup()
  require("larik.ui.chat").open()
  client().ensure()
end

--- Sends a prompt. With `opts.range = { line1, line2 }` (or `opts.selection`), those lines
--- of the current buffer go along as context. Without text, the chat opens for typing and the
--- selection waits for that prompt.
---@param text string|nil
---@param opts { range: integer[]|nil, selection: table|nil, buf: integer|nil }|nil
function M.ask(text, opts)
  ensure_setup()
  opts = opts or {}
  local selection = opts.selection
  if not selection and opts.range then
    local context = require("larik.context")
    local buf = opts.buf or vim.api.nvim_get_current_buf()
    if context.is_file_buffer(buf) then
      selection = context.selection(buf, opts.range[1], opts.range[2])
    end
  end
  local chat = require("larik.ui.chat")
  if not text or vim.trim(text) == "" then
    chat.attach(selection)
    chat.open()
    client().ensure()
    return
  end
  chat.open({ focus = false })
  client().prompt(text, { selection = selection })
end

--- Cancels the running turn.
function M.cancel()
  client().cancel()
end

--- Stops one running subagent; the turn goes on. `name` is its title or session id; without
--- it, the only one running, or the one picked with vim.ui.select.
---@param name string|nil
function M.stop_task(name)
  local function stop(child)
    local ok, why = client().stop_subagent(child.id)
    if not ok then
      vim.notify("Larik: " .. tostring(why), vim.log.levels.WARN)
    end
  end
  if name and name ~= "" then
    local child = client().state.subagents:find(name)
    if not child then
      vim.notify("Larik: no running subagent named " .. name, vim.log.levels.WARN)
      return
    end
    return stop(child)
  end
  local running = client().running_subagents()
  if #running == 0 then
    vim.notify("Larik: no subagent is running", vim.log.levels.WARN)
  elseif #running == 1 then
    stop(running[1])
  else
    vim.ui.select(running, {
      prompt = "Stop which subagent?",
      kind = "larik_subagent",
      format_item = function(child)
        return child.title
      end,
    }, function(child)
      if child then
        stop(child)
      end
    end)
  end
end

--- The titles of the running subagents, for completion.
---@return string[]
function M.running_tasks()
  return vim.tbl_map(function(child)
    return child.title
  end, client().running_subagents())
end

--- Undoes a turn: restores the files to the checkpoint `id` (the latest when nil), taken
--- before its turn, and rewinds the conversation to before that turn. The later turns go too.
---@param id string|nil a checkpoint id such as "cp-3"
function M.undo(id)
  ensure_setup()
  require("larik.checkpoints").undo(id ~= "" and id or nil)
end

--- Lists the session's checkpoints and undoes the one picked (with the turns after it).
function M.checkpoints()
  ensure_setup()
  require("larik.checkpoints").pick()
end

--- Switches the mode: default, accept-edits, plan, yolo (or another the agent offers).
function M.set_mode(mode)
  ensure_setup()
  client().set_mode(mode)
end

--- Switches the model.
function M.set_model(model)
  ensure_setup()
  client().set_model(model)
end

--- Lists past sessions and loads the one picked.
function M.sessions()
  ensure_setup()
  require("larik.ui.sessions").pick()
end

--- Opens the protocol log.
function M.log()
  require("larik.log").open()
end

--- Stops the agent process.
function M.stop()
  client().stop()
end

--- The state for statuslines: { state, mode, model, usage, session }.
function M.status()
  local state = client().state
  local session = state.session or {}
  return {
    state = state.prompt_id and "working" or state.phase,
    mode = session.mode,
    model = session.model,
    usage = session.usage,
    session = session.id,
  }
end

return M
