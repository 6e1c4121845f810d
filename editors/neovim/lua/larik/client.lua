--- Owns the ACP client: the agent process's lifecycle (start, `initialize`, `session/new`,
--- stop), the one active session and its state, the requests the user triggers (prompt,
--- cancel, stop a subagent, mode, model, list and load sessions) and the routing of the
--- agent's requests (permission, fs) and notifications. Checkpoints and undo are
--- `larik.checkpoints`' job; it hears here when a turn ends or a session starts.
---
--- Invariants: at most one agent process and one `session/prompt` in flight; every permission
--- request gets exactly one answer; the process is stopped when Neovim exits.
local binary = require("larik.binary")
local chat = require("larik.ui.chat")
local checkpoints = require("larik.checkpoints")
local config = require("larik.config")
local context = require("larik.context")
local diagnostics = require("larik.diagnostics")
local fs = require("larik.fs")
local log = require("larik.log")
local permission = require("larik.ui.permission")
local review = require("larik.ui.review")
local rpc = require("larik.rpc")
local subagents = require("larik.subagents")
local updates = require("larik.updates")
local winbar = require("larik.ui.winbar")

local M = {}

M.version = "0.1.0"
M.default_modes = { "default", "accept-edits", "plan", "yolo" }

M.state = {
  rpc = nil,
  phase = "stopped", -- stopped | starting | ready | failed
  agent = nil, -- the initialize result
  session = nil, -- { id, modes, config_options, mode, model, usage, title, commands }
  prompt_id = nil,
  load_id = nil,
  waiting = {},
  tools = {},
  subagents = subagents.new(), -- the session's child sessions (see larik.subagents)
}
local state = M.state

local function notify(message, level)
  vim.notify("Larik: " .. message, level or vim.log.levels.INFO)
end

--- Where to look when the agent does not start: both run the agent's own checks (binary,
--- model, provider, sandbox...), which say more than an exit code.
M.start_hint = "Run :checkhealth larik (it runs `larik doctor`), or `larik doctor` in a terminal; :LarikLog has the agent's output."

--- The last lines the agent wrote to stderr since it was last started: why it stopped, usually.
local function last_stderr(count)
  local lines = {}
  for _, line in ipairs(log.lines()) do
    if line:match("^%S+ · starting ") then
      lines = {}
    end
    local text = line:match("^%S+ ! (.*)$")
    if text then
      lines[#lines + 1] = text
    end
  end
  return vim.list_slice(lines, math.max(1, #lines - count + 1))
end

--- The agent could not start: says why and where to look, once.
local function start_failed(message)
  state.phase = "failed"
  local stderr = last_stderr(3)
  local said = #stderr > 0 and ("\n" .. table.concat(stderr, "\n")) or ""
  notify(message .. said .. "\n" .. M.start_hint, vim.log.levels.ERROR)
end

--- Larik's extension capabilities as the agent advertised them.
function M.larik_capabilities()
  local caps = state.agent and state.agent.agentCapabilities or {}
  return (caps._meta or {}).larik or {}
end

function M.agent_capabilities()
  return state.agent and state.agent.agentCapabilities or {}
end

function M.refresh()
  local session = state.session or {}
  local phase = state.phase
  if phase == "ready" and (state.prompt_id or state.load_id) then
    phase = permission.pending_count() > 0 and "waiting" or "working"
  end
  local status = {
    state = phase,
    mode = session.mode,
    model = session.model,
    usage = session.usage,
    title = session.title,
    -- A background subagent goes on after the turn: the winbar says so while it runs.
    subagents = #state.subagents:list(true),
  }
  chat.set_winbar(function(width)
    return winbar.render(status, width)
  end)
end

--- The config option of a category ("mode", "model"), if the agent offers one.
function M.config_option(category)
  for _, option in ipairs((state.session or {}).config_options or {}) do
    if option.category == category or option.id == category then
      return option
    end
  end
  return nil
end

--- Replaces the config options (always the complete list) and derives mode and model.
function M.set_config_options(options)
  if type(options) ~= "table" or not state.session then
    return
  end
  state.session.config_options = options
  local mode = M.config_option("mode")
  if mode and mode.currentValue ~= nil then
    state.session.mode = mode.currentValue
  end
  local model = M.config_option("model")
  if model and model.currentValue ~= nil then
    state.session.model = model.currentValue
  end
end

local function cwd()
  local value = config.get().cwd
  if type(value) == "function" then
    value = value()
  end
  local path = vim.fn.fnamemodify(value or vim.fn.getcwd(), ":p")
  return (path:gsub("(.)/$", "%1"))
end
M.cwd = cwd

local function adopt_session(id, result)
  -- The agent's paths (an undo's files) are relative to the directory the session has.
  state.session = { id = id, modes = result.modes, usage = nil, commands = {}, cwd = cwd() }
  checkpoints.reset()
  state.tools = {}
  state.subagents = subagents.new()
  if result.modes then
    state.session.mode = result.modes.currentModeId
  end
  M.set_config_options(result.configOptions)
end

local function flush(err)
  local waiting = state.waiting
  state.waiting = {}
  for _, callback in ipairs(waiting) do
    callback(err)
  end
end

local function on_request(method, params, respond, id)
  if method == "session/request_permission" then
    local session = type(params) == "table" and state.session and params.sessionId ~= state.session.id and params.sessionId
    local child = session and state.subagents:get(session)
    if child then
      -- A subagent asks in its own session: the prompt names it, and its call (whose id is its
      -- own, not the parent's) stays in its place under the task call.
      permission.enqueue(id, params, respond, { label = child.title, session = child.id })
      return
    end
    if type(params) == "table" and type(params.toolCall) == "table" and params.toolCall.toolCallId then
      updates.show_tool(M, params.toolCall)
    end
    permission.enqueue(id, params, respond)
  elseif method == "fs/read_text_file" then
    respond(fs.read(params))
  elseif method == "fs/write_text_file" then
    respond(fs.write(params))
  elseif method == "_larik/diagnostics" then
    diagnostics.request(params, respond)
  else
    respond(nil, { code = rpc.errors.method_not_found, message = "Method not found: " .. tostring(method) })
  end
end

local function on_notification(method, params)
  if method == "session/update" then
    updates.apply(M, params)
  elseif method == "$/cancel_request" and type(params) == "table" then
    permission.cancel(params.requestId)
  end
end

local function on_exit(code, signal)
  local expected = state.stopping
  local starting = state.phase == "starting"
  state.rpc, state.phase, state.stopping = nil, "stopped", false
  if state.prompt_id then
    state.prompt_id = nil
    chat.write(function(t)
      t:notice("The agent exited during the turn.", "LarikError")
    end)
  end
  state.load_id = nil
  permission.cancel_all()
  review.close()
  for _, child in ipairs(state.subagents:abandon("agent_exited")) do
    updates.show_subagent(M, child)
  end
  flush("the agent exited")
  if starting and not expected then
    start_failed(("the agent exited as it started (code %s, signal %s)"):format(code, signal))
  elseif not expected then
    notify(("the agent exited (code %s, signal %s); see :LarikLog"):format(code, signal), vim.log.levels.WARN)
  end
  M.refresh()
end

local function new_session()
  state.rpc:request("session/new", { cwd = cwd(), mcpServers = {} }, function(err, result)
    if err or type(result) ~= "table" or not result.sessionId then
      start_failed("could not start a session: " .. (err and err.message or "no session id"))
      flush(err and err.message or "no session")
      return
    end
    adopt_session(result.sessionId, result)
    state.phase = "ready"
    local cfg = config.get()
    if cfg.mode and cfg.mode ~= state.session.mode then
      M.set_mode(cfg.mode)
    end
    if cfg.model and cfg.model ~= state.session.model then
      M.set_model(cfg.model)
    end
    M.refresh()
    flush(nil)
  end)
end

local function initialize_params()
  local cfg = config.get()
  return {
    protocolVersion = 1,
    clientCapabilities = {
      fs = { readTextFile = cfg.fs.read, writeTextFile = cfg.fs.write },
      terminal = false,
      -- Subagents as child sessions (ACP 1.20), shown under their task call. Without it the
      -- agent labels the children's calls and sends them in the parent's session.
      subagents = cfg.subagents.nested and vim.empty_dict() or nil,
      -- diagnostics: the agent asks us for a file's problems (larik.diagnostics) instead of
      -- starting a second language server next to ours.
      _meta = { larik = { hunkReview = true, diagnostics = true } },
    },
    clientInfo = { name = "larik.nvim", title = "Larik for Neovim", version = M.version },
  }
end
M.initialize_params = initialize_params

--- Starts the agent and a session (once); `callback(err)` runs when ready or failed.
---@param callback fun(err: string|nil)|nil
function M.ensure(callback)
  if state.phase == "ready" and state.session then
    if callback then
      callback(nil)
    end
    return
  end
  if callback then
    state.waiting[#state.waiting + 1] = callback
  end
  if state.phase == "starting" then
    return
  end
  local cmd, err = binary.command()
  if not cmd then
    start_failed(err)
    flush(err)
    return
  end
  state.phase = "starting"
  M.refresh()
  log.add("info", "starting " .. table.concat(cmd, " "))
  local connection, start_err = rpc.start({
    cmd = cmd,
    cwd = cwd(),
    env = next(config.get().env) and config.get().env or nil,
    on_request = on_request,
    on_notification = on_notification,
    on_exit = on_exit,
  })
  if not connection then
    start_failed("could not start " .. cmd[1] .. ": " .. tostring(start_err))
    flush(start_err)
    return
  end
  state.rpc = connection
  connection:request("initialize", initialize_params(), function(init_err, result)
    if init_err or type(result) ~= "table" then
      if connection.closed then
        -- The agent exited before it answered: on_exit says so, with what it printed.
        return
      end
      start_failed("initialize failed: " .. (init_err and init_err.message or "no result"))
      flush("initialize failed")
      return
    end
    if result.protocolVersion ~= 1 then
      state.phase = "failed"
      notify("the agent speaks ACP version " .. tostring(result.protocolVersion) .. ", this plugin speaks 1", vim.log.levels.ERROR)
      M.stop()
      flush("unsupported protocol version")
      return
    end
    state.agent = result
    new_session()
  end)
end

local function send_editor_context(selection)
  if not (config.get().context.editor and M.larik_capabilities().editorContext) then
    return
  end
  state.rpc:notify("_larik/editor_context", context.editor_context(state.session.id, selection))
end

local stop_reasons = {
  cancelled = "Cancelled.",
  max_tokens = "Stopped: the answer reached the token limit.",
  max_turn_requests = "Stopped: the turn reached its request limit.",
  refusal = "The model refused.",
}

local function finish_turn(err, result)
  state.prompt_id = nil
  local turn = state.prompt_turn
  permission.cancel_all()
  local reason = type(result) == "table" and result.stopReason or nil
  chat.write(function(t)
    if reason == "cancelled" then
      for _, call in pairs(state.tools) do
        if call.status == "pending" or call.status == "in_progress" then
          call.status = "cancelled"
          t:tool(call)
        end
      end
    end
    if err then
      t:notice("Error: " .. tostring(err.message or err.code), "LarikError")
    elseif reason and stop_reasons[reason] then
      t:notice(stop_reasons[reason], reason == "cancelled" and "LarikNotice" or "LarikError")
    end
    t:close_segment()
  end)
  M.refresh()
  -- The turn may have changed files: its checkpoint gets an undo line in the chat.
  checkpoints.after_turn(turn)
end

--- Sends a prompt. `opts.selection` (from context.selection) goes along as a resource block.
---@param text string
---@param opts { selection: table|nil }|nil
function M.prompt(text, opts)
  opts = opts or {}
  M.ensure(function(err)
    if err then
      return
    end
    if state.prompt_id then
      notify("a turn is running; :LarikCancel stops it", vim.log.levels.WARN)
      return
    end
    local blocks = { { type = "text", text = text } }
    local attachments = {}
    if opts.selection then
      local selection = opts.selection
      if (M.agent_capabilities().promptCapabilities or {}).embeddedContext then
        blocks[#blocks + 1] = context.selection_block(selection)
      else
        blocks[#blocks + 1] = { type = "text", text = ("%s lines %d-%d:\n%s"):format(selection.path, selection.startLine, selection.endLine, selection.text) }
      end
      attachments[1] = ("> selection: %s:%d-%d"):format(require("larik.ui.render").short_path(selection.path), selection.startLine, selection.endLine)
    end
    send_editor_context(opts.selection)
    state.prompt_turn = chat.write(function(t)
      t:user_prompt(text, attachments)
      return t.turn
    end)
    state.prompt_id = state.rpc:request("session/prompt", { sessionId = state.session.id, prompt = blocks }, finish_turn)
    M.refresh()
  end)
end

--- Cancels the running turn (and answers waiting permission requests `cancelled`).
function M.cancel()
  if not state.rpc then
    return
  end
  if state.prompt_id and state.session then
    state.rpc:notify("session/cancel", { sessionId = state.session.id })
    permission.cancel_all()
    review.close()
  elseif state.load_id then
    state.rpc:cancel_request(state.load_id)
  end
end

--- Stops one subagent (`session/cancel` with its session id); the parent's turn goes on and
--- the child ends idle, `cancelled`. Its waiting permission requests are answered cancelled.
---@param id string the child's session id
---@return boolean stopped, string|nil why not
function M.stop_subagent(id)
  local child = state.subagents:get(id)
  if not child then
    return false, "no such subagent"
  elseif child.state == "idle" then
    return false, child.title .. " has already ended"
  elseif not child.cancellable then
    return false, child.title .. " cannot be stopped"
  elseif child.stopping then
    return true
  elseif not state.rpc then
    return false, "the agent is not running"
  end
  child.stopping = true
  state.rpc:notify("session/cancel", { sessionId = id })
  permission.cancel_session(id)
  updates.show_subagent(M, child)
  return true
end

--- The subagents that are running, in the order they started.
---@return larik.Subagent[]
function M.running_subagents()
  return state.subagents:list(true)
end

local function report(action)
  return function(err)
    if err then
      notify(action .. " failed: " .. tostring(err.message or err.code), vim.log.levels.ERROR)
    end
  end
end

--- Sets a config option (complete new state comes back).
function M.set_config_option(id, value, callback)
  state.rpc:request("session/set_config_option", { sessionId = state.session.id, configId = id, value = value }, function(err, result)
    if not err and type(result) == "table" then
      M.set_config_options(result.configOptions)
      M.refresh()
    end
    report("setting " .. id)(err)
    if callback then
      callback(err)
    end
  end)
end

--- Switches the session's mode (default, accept-edits, plan, yolo, or what the agent offers).
function M.set_mode(mode)
  M.ensure(function(err)
    if err then
      return
    end
    local option = M.config_option("mode")
    if state.session.modes or not option then
      state.rpc:request("session/set_mode", { sessionId = state.session.id, modeId = mode }, function(set_err)
        if not set_err then
          state.session.mode = mode
          M.refresh()
        end
        report("setting the mode")(set_err)
      end)
    else
      M.set_config_option(option.id, mode)
    end
  end)
end

--- Switches the session's model through the agent's `model` config option.
function M.set_model(model)
  M.ensure(function(err)
    if err then
      return
    end
    local option = M.config_option("model")
    M.set_config_option(option and option.id or "model", model)
  end)
end

--- The mode ids to offer (the agent's, else Larik's defaults).
function M.mode_ids()
  local session = state.session or {}
  if session.modes and session.modes.availableModes then
    return vim.tbl_map(function(mode)
      return mode.id
    end, session.modes.availableModes)
  end
  local option = M.config_option("mode")
  if option and option.options then
    return vim.tbl_map(function(choice)
      return choice.value
    end, option.options)
  end
  return vim.deepcopy(M.default_modes)
end

--- The model ids the agent offers.
function M.model_ids()
  local option = M.config_option("model")
  local ids = {}
  for _, choice in ipairs(option and option.options or {}) do
    if choice.value then
      ids[#ids + 1] = choice.value
    end
    for _, grouped in ipairs(choice.options or {}) do
      ids[#ids + 1] = grouped.value
    end
  end
  return ids
end

--- Lists past sessions of this project: `callback(sessions|nil, err)`.
function M.list_sessions(callback)
  M.ensure(function(err)
    if err then
      return callback(nil, err)
    end
    if not (M.agent_capabilities().sessionCapabilities or {}).list then
      return callback(nil, "the agent does not list sessions")
    end
    local all, pages = {}, 0
    local function page(cursor)
      pages = pages + 1
      state.rpc:request("session/list", { cwd = cwd(), cursor = cursor }, function(list_err, result)
        if list_err then
          return callback(nil, list_err.message)
        end
        vim.list_extend(all, (result or {}).sessions or {})
        if result and result.nextCursor and pages < 10 then
          page(result.nextCursor)
        else
          callback(all)
        end
      end)
    end
    page(nil)
  end)
end

--- Loads a past session: the chat is cleared and the agent replays it.
function M.load_session(id, callback)
  M.ensure(function(err)
    if err then
      return
    end
    if not M.agent_capabilities().loadSession then
      notify("the agent cannot load sessions", vim.log.levels.WARN)
      return
    end
    if state.prompt_id then
      notify("a turn is running; :LarikCancel stops it", vim.log.levels.WARN)
      return
    end
    chat.write(function(t)
      t:clear()
    end)
    adopt_session(id, {})
    state.load_id = state.rpc:request("session/load", { sessionId = id, cwd = cwd(), mcpServers = {} }, function(load_err, result)
      state.load_id = nil
      if load_err then
        notify("loading the session failed: " .. tostring(load_err.message), vim.log.levels.ERROR)
      elseif type(result) == "table" then
        if result.modes then
          state.session.modes = result.modes
          state.session.mode = result.modes.currentModeId
        end
        M.set_config_options(result.configOptions)
      end
      chat.write(function(t)
        t:close_segment()
      end)
      -- The replayed turns get the checkpoints of their prompts.
      checkpoints.refresh()
      M.refresh()
      if callback then
        callback(load_err)
      end
    end)
    M.refresh()
  end)
end

--- Stops the agent. `grace_ms` = 0 kills it at once (Neovim is exiting).
function M.stop(grace_ms)
  permission.cancel_all()
  review.close()
  if state.rpc then
    state.stopping = true
    state.rpc:stop(grace_ms)
  end
end

--- The agent's process id while it runs.
function M.pid()
  return state.rpc and state.rpc:pid()
end

function M.log_note(text)
  log.add("info", text)
end

permission.per_hunk = function()
  return M.larik_capabilities().hunkReview == true
end

return M
