--- Owns what the client knows of the session's subagents: the child sessions the agent
--- announced with `subagent_update`, each with its title, state, the `task` call that made it
--- (from the announcement's `_meta.larik.toolCallId`), its own tool calls and its latest text.
--- Pure state: the chat's rendering of a child is `ui/render.lua`'s job, routing is
--- `updates.lua`'s.
---
--- Invariant: a child is known from its announcement on; its updates before that (ACP says
--- there are none) and after the session changed are dropped by the caller.
local M = {}

---@class larik.Subagent
---@field id string the child's session id
---@field title string
---@field parent string|nil the toolCallId of the `task` call that made it
---@field state string "running" or "idle" (or a later state ACP may add)
---@field stop_reason string|nil why it went idle: end_turn, cancelled, max_tokens...
---@field cancellable boolean it announced the `cancel` capability
---@field stopping boolean the user asked to stop it and it has not gone idle yet
---@field tools table<string, table> its tool calls, merged field by field, by toolCallId
---@field order string[] its toolCallIds in the order they first came
---@field text string its latest message so far (reset by each tool call)

---@class larik.Subagents
---@field children table<string, larik.Subagent>
---@field ids string[] in announcement order
local Registry = {}
Registry.__index = Registry

---@return larik.Subagents
function M.new()
  return setmetatable({ children = {}, ids = {} }, Registry)
end

--- Applies one `subagent_update`: the first one for an id announces the child; later ones
--- change only the fields they carry (the last has only `sessionId` and `state`).
---@param update table
---@return larik.Subagent|nil child, boolean announced whether this update made it known
function Registry:update(update)
  local id = type(update) == "table" and update.sessionId
  if type(id) ~= "string" then
    return nil, false
  end
  local child = self.children[id]
  local announced = child == nil
  if announced then
    child = { id = id, title = id, state = "running", cancellable = false, stopping = false, tools = {}, order = {}, text = "" }
    self.children[id] = child
    self.ids[#self.ids + 1] = id
  end
  if type(update.title) == "string" and update.title ~= "" then
    child.title = update.title
  end
  if type(update.capabilities) == "table" then
    child.cancellable = update.capabilities.cancel ~= nil
  end
  local meta = type(update._meta) == "table" and type(update._meta.larik) == "table" and update._meta.larik or {}
  if type(meta.toolCallId) == "string" then
    child.parent = meta.toolCallId
  end
  if type(update.state) == "table" and type(update.state.state) == "string" then
    child.state = update.state.state
    child.stop_reason = update.state.stopReason
    if child.state == "idle" then
      child.stopping = false
    end
  end
  return child, announced
end

function Registry:get(id)
  return id and self.children[id] or nil
end

--- The children, in announcement order; with `running` only those not idle.
---@param running boolean|nil
---@return larik.Subagent[]
function Registry:list(running)
  local out = {}
  for _, id in ipairs(self.ids) do
    local child = self.children[id]
    if not running or child.state ~= "idle" then
      out[#out + 1] = child
    end
  end
  return out
end

--- The running child named `name`: its session id or its title.
---@return larik.Subagent|nil
function Registry:find(name)
  if self.children[name] then
    return self.children[name]
  end
  for _, child in ipairs(self:list(true)) do
    if child.title == name then
      return child
    end
  end
  return nil
end

--- Merges one of the child's `tool_call` / `tool_call_update` into its calls. Its ids are its
--- own: a child's "c1" is not the parent's "c1", so they never share the session's table.
---@return table merged
function Registry:merge_tool(child, fields)
  local id = fields.toolCallId
  local call = child.tools[id]
  if not call then
    call = { toolCallId = id, status = "pending" }
    child.tools[id] = call
    child.order[#child.order + 1] = id
    -- What it says after a call is a new message; the chat shows only the latest.
    child.text = ""
  end
  for key, value in pairs(fields) do
    if key ~= "sessionUpdate" and value ~= nil then
      call[key] = value
    end
  end
  return call
end

function Registry:append_text(child, text)
  child.text = child.text .. (text or "")
end

--- Marks the children still running as ended, `reason` given (the agent exited).
---@return larik.Subagent[] the children it changed
function Registry:abandon(reason)
  local changed = self:list(true)
  for _, child in ipairs(changed) do
    child.state, child.stop_reason, child.stopping = "idle", reason, false
  end
  return changed
end

local outcomes = {
  end_turn = "done",
  cancelled = "stopped",
  max_tokens = "stopped: token limit",
  max_turn_requests = "stopped: request limit",
  refusal = "refused",
  agent_exited = "ended: the agent exited",
}

--- What the chat says of a child's state: running, stopping, done, stopped...
---@param child larik.Subagent
---@return string
function M.status(child)
  if child.state == "idle" then
    return outcomes[child.stop_reason] or (child.stop_reason and ("ended: " .. tostring(child.stop_reason))) or "done"
  elseif child.stopping then
    return "stopping"
  end
  return child.state == "running" and "running" or tostring(child.state)
end

--- The tool status whose icon and highlight stand for the child's state.
function M.tool_status(child)
  if child.state ~= "idle" then
    return "in_progress"
  elseif child.stop_reason == nil or child.stop_reason == "end_turn" then
    return "completed"
  elseif child.stop_reason == "cancelled" then
    return "cancelled"
  end
  return "failed"
end

--- Whether the user can stop it now.
function M.can_stop(child)
  return child.state ~= "idle" and child.cancellable and not child.stopping
end

return M
