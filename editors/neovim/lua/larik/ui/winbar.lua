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

--- Cuts `text` to `width` display cells, ending in "…" when cut.
local function cut(text, width)
  if vim.api.nvim_strwidth(text) <= width then
    return text
  end
  local chars = vim.fn.strchars(text)
  while chars > 0 and vim.api.nvim_strwidth(vim.fn.strcharpart(text, 0, chars)) > width - 1 do
    chars = chars - 1
  end
  return vim.fn.strcharpart(text, 0, chars) .. "…"
end

local SEPARATOR = " · "

--- The winbar for `status`, fitted to `width` cells when given: the name and the status always
--- show; when the window is too narrow the model goes first, then the context used, then the
--- title (shortened before it goes), and the mode last.
--- Subagents still running come with the status: a background one outlives the turn.
---@param status { state: string, mode: string|nil, model: string|nil, usage: table|nil, title: string|nil, subagents: integer|nil }
---@param width integer|nil
function M.render(status, width)
  local fixed = { { text = "Larik", group = "LarikWinbar" } }
  if status.state == "working" then
    fixed[#fixed + 1] = { text = "● working", group = "LarikWinbarBusy" }
  elseif status.state == "waiting" then
    fixed[#fixed + 1] = { text = "● waiting for you", group = "LarikWinbarWaiting" }
  elseif status.state and status.state ~= "ready" then
    fixed[#fixed + 1] = { text = tostring(status.state) }
  end
  local running = status.subagents or 0
  if running > 0 then
    fixed[#fixed + 1] = { text = ("%d subagent%s running"):format(running, running == 1 and "" or "s"), group = "LarikWinbarBusy" }
  end
  -- In display order; `rank` is the order they go in when space runs out (highest first).
  local optional = {}
  if status.title and status.title ~= "" then
    optional[#optional + 1] = { text = status.title, rank = 2, title = true }
  end
  if status.mode then
    optional[#optional + 1] = { text = "mode: " .. status.mode, rank = 1 }
  end
  if status.model then
    optional[#optional + 1] = { text = "model: " .. status.model, rank = 4 }
  end
  local usage = M.usage(status.usage)
  if usage then
    optional[#optional + 1] = { text = "ctx " .. usage, rank = 3 }
  end

  local function total()
    local cells = 0
    for _, list in ipairs({ fixed, optional }) do
      for _, part in ipairs(list) do
        cells = cells + vim.api.nvim_strwidth(part.text) + vim.api.nvim_strwidth(SEPARATOR)
      end
    end
    return cells - vim.api.nvim_strwidth(SEPARATOR)
  end
  while width and #optional > 0 and total() > width do
    local worst = 1
    for index, part in ipairs(optional) do
      if part.rank > optional[worst].rank then
        worst = index
      end
    end
    local part = optional[worst]
    local room = vim.api.nvim_strwidth(part.text) - (total() - width)
    if part.title and room >= 8 then
      part.text = cut(part.text, room)
    else
      table.remove(optional, worst)
    end
  end

  local rendered = {}
  for _, part in ipairs(fixed) do
    rendered[#rendered + 1] = part.group and ("%#" .. part.group .. "#" .. escape(part.text) .. "%*") or escape(part.text)
  end
  -- Past the width after all (a very narrow window), Neovim cuts after the status, not before.
  rendered[#rendered] = rendered[#rendered] .. "%<"
  for _, part in ipairs(optional) do
    rendered[#rendered + 1] = escape(part.text)
  end
  return table.concat(rendered, SEPARATOR)
end

return M
