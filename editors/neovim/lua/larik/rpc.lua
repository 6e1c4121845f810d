--- Owns the JSON-RPC 2.0 connection to the agent process: one JSON message per line over the
--- stdio of a `vim.system` child. It numbers outgoing requests and routes their responses,
--- routes the agent's requests and notifications to handlers, and answers what no handler
--- knows with -32601.
---
--- Invariant: every handler and callback runs on the main loop. Process callbacks arrive in
--- libuv's fast context, so they only buffer bytes and `vim.schedule` the complete lines.
local log = require("larik.log")

local M = {}

M.errors = {
  method_not_found = -32601,
  invalid_params = -32602,
  internal = -32603,
  request_cancelled = -32800,
  resource_not_found = -32002,
}

---@class larik.Rpc
---@field proc vim.SystemObj|nil
---@field pending table<integer, fun(err: table|nil, result: any)>
---@field handlers table
local Rpc = {}
Rpc.__index = Rpc

--- Decodes JSON with `null` as nil, so optional fields read naturally.
local function decode(line)
  return pcall(vim.json.decode, line, { luanil = { object = true, array = true } })
end

---@class larik.RpcOptions
---@field cmd string[]
---@field cwd string|nil
---@field env table<string,string>|nil
---@field on_request fun(method: string, params: any, respond: fun(result: any, err: table|nil), id: any)|nil
---@field on_notification fun(method: string, params: any)|nil
---@field on_exit fun(code: integer, signal: integer)|nil

--- Starts the process. Returns the connection, or nil and an error message.
---@param opts larik.RpcOptions
---@return larik.Rpc|nil, string|nil
function M.start(opts)
  local self = setmetatable({
    pending = {},
    next_id = 1,
    pieces = {},
    closed = false,
    handlers = {
      request = opts.on_request or function(_, _, respond)
        respond(nil, { code = M.errors.method_not_found, message = "Method not found" })
      end,
      notification = opts.on_notification or function() end,
      exit = opts.on_exit or function() end,
    },
  }, Rpc)

  local ok, proc = pcall(vim.system, opts.cmd, {
    cwd = opts.cwd,
    env = opts.env,
    stdin = true,
    stdout = function(_, data)
      self:_on_stdout(data)
    end,
    stderr = function(_, data)
      if data then
        vim.schedule(function()
          for _, line in ipairs(vim.split(data, "\n", { trimempty = true })) do
            log.add("stderr", line)
          end
        end)
      end
    end,
  }, function(out)
    vim.schedule(function()
      self:_on_exit(out.code, out.signal)
    end)
  end)
  if not ok then
    return nil, tostring(proc)
  end
  self.proc = proc
  log.add("info", "started " .. table.concat(opts.cmd, " ") .. " (pid " .. tostring(proc.pid) .. ")")
  return self
end

--- Splits stdout into lines (fast context: no API calls here) and hands complete lines to the
--- main loop in one batch per chunk, preserving order.
function Rpc:_on_stdout(data)
  if not data then
    return
  end
  -- A long line arrives in many reads: keep the pieces and join them once, at its newline.
  if not data:find("\n", 1, true) then
    self.pieces[#self.pieces + 1] = data
    return
  end
  self.pieces[#self.pieces + 1] = data
  local text = table.concat(self.pieces)
  local lines = vim.split(text, "\n", { plain = true })
  self.pieces = { table.remove(lines) }
  vim.schedule(function()
    for _, line in ipairs(lines) do
      line = line:gsub("\r$", "")
      if line ~= "" then
        self:_dispatch(line)
      end
    end
  end)
end

function Rpc:_dispatch(line)
  log.add("in", line)
  local ok, message = decode(line)
  if not ok or type(message) ~= "table" then
    log.add("info", "ignored a line that is not JSON")
    return
  end
  if message.method and message.id ~= nil then
    local id = message.id
    local answered = false
    local respond = function(result, err)
      if answered then
        return
      end
      answered = true
      self:_send({ jsonrpc = "2.0", id = id, result = err == nil and (result == nil and vim.NIL or result) or nil, error = err })
    end
    local handled, failure = pcall(self.handlers.request, message.method, message.params, respond, id)
    if not handled then
      respond(nil, { code = M.errors.internal, message = "Internal error: " .. tostring(failure) })
    end
  elseif message.method then
    local handled, failure = pcall(self.handlers.notification, message.method, message.params)
    if not handled then
      log.add("info", "notification handler failed: " .. tostring(failure))
    end
  elseif message.id ~= nil then
    local callback = self.pending[message.id]
    self.pending[message.id] = nil
    if callback then
      local handled, failure = pcall(callback, message.error, message.result)
      if not handled then
        log.add("info", "response handler failed: " .. tostring(failure))
        vim.notify("larik: " .. tostring(failure), vim.log.levels.ERROR)
      end
    end
  end
end

function Rpc:_send(message)
  if self.closed or not self.proc then
    return false
  end
  local line = vim.json.encode(message)
  log.add("out", line)
  local ok = pcall(self.proc.write, self.proc, line .. "\n")
  return ok
end

--- Sends a request; `callback(err, result)` runs on the main loop with the response.
---@return integer|nil id
function Rpc:request(method, params, callback)
  local id = self.next_id
  self.next_id = id + 1
  self.pending[id] = callback or function() end
  if not self:_send({ jsonrpc = "2.0", id = id, method = method, params = params or vim.empty_dict() }) then
    self.pending[id] = nil
    vim.schedule(function()
      if callback then
        callback({ code = M.errors.internal, message = "the agent is not running" })
      end
    end)
    return nil
  end
  return id
end

function Rpc:notify(method, params)
  return self:_send({ jsonrpc = "2.0", method = method, params = params or vim.empty_dict() })
end

--- Asks the agent to abandon one of our requests (`$/cancel_request`); it still answers it.
function Rpc:cancel_request(id)
  return self:notify("$/cancel_request", { requestId = id })
end

function Rpc:is_running()
  return not self.closed and self.proc ~= nil
end

function Rpc:pid()
  return self.proc and self.proc.pid
end

function Rpc:_on_exit(code, signal)
  if self.closed then
    return
  end
  self.closed = true
  log.add("info", ("agent exited (code %s, signal %s)"):format(tostring(code), tostring(signal)))
  local pending = self.pending
  self.pending = {}
  for _, callback in pairs(pending) do
    pcall(callback, { code = M.errors.internal, message = "the agent exited" })
  end
  self.handlers.exit(code, signal)
end

--- Stops the agent: closes its stdin (it exits at end of input) and kills it if it is still
--- there after `grace_ms`. With `grace_ms` = 0 it is killed at once (used when Neovim exits).
---@param grace_ms integer|nil
function Rpc:stop(grace_ms)
  if not self.proc or self.stopping then
    return
  end
  self.stopping = true
  local proc = self.proc
  pcall(proc.write, proc, nil)
  if grace_ms == 0 then
    pcall(proc.kill, proc, 15)
    return
  end
  vim.defer_fn(function()
    -- Killing a process that already exited fails harmlessly.
    if not self.closed then
      pcall(proc.kill, proc, 15)
    end
  end, grace_ms or 500)
end

return M
