--- Owns the meaning of `session/update` notifications: each kind is applied to the session
--- state (tool calls merged field by field, mode, config options, usage, title, subagents) and
--- to the chat. Updates of a subagent's own session (its calls and text) go to its record and
--- are shown under the task call that made it. Unknown kinds are ignored, as ACP asks of
--- clients.
local chat = require("larik.ui.chat")
local completion = require("larik.ui.completion")
local follow = require("larik.follow")
local fs = require("larik.fs")

local M = {}

--- The text of a content block as the chat shows it.
function M.content_text(block)
  if type(block) ~= "table" then
    return ""
  end
  if block.type == "text" then
    return block.text or ""
  elseif block.type == "resource_link" then
    return ("[%s](%s)"):format(block.name or block.uri or "", block.uri or "")
  elseif block.type == "resource" and block.resource then
    return "[" .. (block.resource.uri or "resource") .. "]"
  elseif block.type == "image" then
    return "[image]"
  elseif block.type == "audio" then
    return "[audio]"
  end
  return ""
end

--- Merges a partial tool call into the known one: present fields replace, absent ones stay.
---@param tools table<string, table>
---@param fields table ToolCall or ToolCallUpdate fields
---@return table merged
function M.merge_tool(tools, fields)
  local id = fields.toolCallId
  local call = tools[id] or { toolCallId = id, status = "pending" }
  for key, value in pairs(fields) do
    if key ~= "sessionUpdate" and value ~= nil then
      call[key] = value
    end
  end
  tools[id] = call
  return call
end

--- Reloads a buffer the agent changed on disk (unless it has unsaved changes of its own).
local function reload_changed(call)
  for _, item in ipairs(call.content or {}) do
    if item.type == "diff" and type(item.path) == "string" then
      local buf = fs.find_buffer(item.path)
      if buf and not vim.bo[buf].modified then
        pcall(vim.cmd, "checktime " .. buf)
      end
    end
  end
end

local function show_tool(client, fields)
  local call = M.merge_tool(client.state.tools, fields)
  chat.write(function(t)
    t:tool(call)
  end)
  follow.tool_call(call)
  if call.status == "completed" then
    reload_changed(call)
  end
  return call
end
M.show_tool = show_tool

--- Shows a subagent where it belongs: inside its task call's block, or on its own when the
--- chat does not show that call.
---@param client table
---@param child larik.Subagent
function M.show_subagent(client, child)
  local call = child.parent and client.state.tools[child.parent]
  chat.write(function(t)
    if call and call.subagents then
      t:tool(call)
    else
      t:subagent(child)
    end
  end)
end

local handlers = {}

handlers.agent_message_chunk = function(_, update)
  chat.write(function(t)
    t:append("message", M.content_text(update.content), update.messageId)
  end)
end

handlers.agent_thought_chunk = function(_, update)
  chat.write(function(t)
    t:append("thought", M.content_text(update.content), update.messageId)
  end)
end

handlers.user_message_chunk = function(_, update)
  chat.write(function(t)
    t:append("user", M.content_text(update.content), update.messageId)
  end)
end

handlers.tool_call = show_tool
handlers.tool_call_update = show_tool

handlers.plan = function(_, update)
  chat.write(function(t)
    t:plan(update.entries or {})
  end)
end

handlers.plan_update = function(_, update)
  local plan = update.plan or {}
  local entries = plan.entries
  if plan.type == "markdown" then
    entries = vim.tbl_map(function(line)
      return { content = line, status = "pending" }
    end, vim.split(plan.content or "", "\n", { trimempty = true }))
  end
  chat.write(function(t)
    t:plan(entries or {})
  end)
end

handlers.current_mode_update = function(client, update)
  client.state.session.mode = update.currentModeId or update.modeId
  client.refresh()
end

handlers.config_option_update = function(client, update)
  client.set_config_options(update.configOptions)
  client.refresh()
end

handlers.usage_update = function(client, update)
  client.state.session.usage = { used = update.used, size = update.size, cost = update.cost }
  client.refresh()
end

handlers.session_info_update = function(client, update)
  if update.title ~= nil then
    client.state.session.title = update.title
    client.refresh()
  end
end

handlers.available_commands_update = function(client, update)
  client.state.session.commands = update.availableCommands or {}
  -- Skills are read again on /clear: a menu open in the prompt shows the new list.
  completion.refresh()
end

handlers.subagent_update = function(client, update)
  local child, announced = client.state.subagents:update(update)
  if not child then
    return
  end
  local call = child.parent and client.state.tools[child.parent]
  if announced and call then
    call.subagents = call.subagents or {}
    table.insert(call.subagents, child)
  end
  M.show_subagent(client, child)
  client.refresh()
end

--- What a subagent's own session says: its calls and its text. The rest (usage, mode, title,
--- plan) is the child's business and would overwrite the parent's state.
local child_handlers = {}

child_handlers.tool_call = function(client, child, update)
  local call = client.state.subagents:merge_tool(child, update)
  follow.tool_call(call)
  if call.status == "completed" then
    reload_changed(call)
  end
  M.show_subagent(client, child)
end
child_handlers.tool_call_update = child_handlers.tool_call

child_handlers.agent_message_chunk = function(client, child, update)
  client.state.subagents:append_text(child, M.content_text(update.content))
  M.show_subagent(client, child)
end

--- Applies one `session/update` to the client of that session.
---@param client table the client module (state, refresh, set_config_options)
---@param params table
function M.apply(client, params)
  local session = client.state.session
  if type(params) ~= "table" or type(params.update) ~= "table" or not session then
    return
  end
  if params.sessionId ~= session.id then
    local child = client.state.subagents and client.state.subagents:get(params.sessionId)
    local handler = child and child_handlers[params.update.sessionUpdate]
    if handler then
      handler(client, child, params.update)
    end
    return
  end
  local handler = handlers[params.update.sessionUpdate]
  if handler then
    handler(client, params.update)
  end
end

return M
