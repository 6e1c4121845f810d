--- Owns the chat's winbar: status, mode, model and context usage in one line, built from the
--- session state (pure, so unit-tested without a window).
local M = {}

local function escape(text)
  return (tostring(text):gsub("%%", "%%%%"))
end

local function tokens(count)
  if count >= 1000000 then
    return ("%.1fM"):format(count / 1000000)
  elseif count >= 1000 then
    return ("%dk"):format(math.floor(count / 1000 + 0.5))
  end
  return tostring(count)
end

--- A cost in one format for every editor: dollars with two decimals, four below a cent, so a
--- small turn does not read as free ("$0.0009", "$0.05", "$1.20").
function M.cost(cost)
  if type(cost) ~= "table" or type(cost.amount) ~= "number" then
    return nil
  end
  local symbol = (cost.currency == "USD" or cost.currency == nil) and "$" or (cost.currency .. " ")
  local digits = (cost.amount > 0 and cost.amount < 0.01) and 4 or 2
  return symbol .. ("%." .. digits .. "f"):format(cost.amount)
end

--- The usage part: "24k/200k (12%) $0.05".
function M.usage(usage)
  if type(usage) ~= "table" or type(usage.used) ~= "number" then
    return nil
  end
  local text = tokens(usage.used)
  if type(usage.size) == "number" and usage.size > 0 then
    text = ("%s/%s (%d%%)"):format(text, tokens(usage.size), math.floor(usage.used * 100 / usage.size + 0.5))
  end
  local cost = M.cost(usage.cost)
  if cost then
    text = text .. " " .. cost
  end
  return text
end

--- The status comes right after the name, so a narrow window cuts the details, not the status.
--- Subagents still running come with it: a background one outlives the turn.
---@param status { state: string, mode: string|nil, model: string|nil, usage: table|nil, title: string|nil, subagents: integer|nil }
function M.render(status)
  local parts = { "%#LarikWinbar#Larik%*" }
  if status.state == "working" then
    parts[#parts + 1] = "%#LarikWinbarBusy#● working%*"
  elseif status.state == "waiting" then
    parts[#parts + 1] = "%#LarikWinbarWaiting#● waiting for you%*"
  elseif status.state and status.state ~= "ready" then
    parts[#parts + 1] = escape(status.state)
  end
  local running = status.subagents or 0
  if running > 0 then
    parts[#parts + 1] = ("%%#LarikWinbarBusy#%d subagent%s running%%*"):format(running, running == 1 and "" or "s")
  end
  -- Neovim cuts a too long winbar at its start unless told where: after the status.
  parts[#parts] = parts[#parts] .. "%<"
  if status.title and status.title ~= "" then
    parts[#parts + 1] = escape(status.title)
  end
  if status.mode then
    parts[#parts + 1] = "mode: " .. escape(status.mode)
  end
  if status.model then
    parts[#parts + 1] = "model: " .. escape(status.model)
  end
  local usage = M.usage(status.usage)
  if usage then
    parts[#parts + 1] = "ctx " .. escape(usage)
  end
  return table.concat(parts, " · ")
end

return M
