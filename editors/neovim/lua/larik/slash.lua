--- Owns the meaning of a slash command in the prompt (pure): when the text typed so far asks
--- for one (a `/` at the very start of the prompt, then the name's beginning), which of the
--- agent's commands (`available_commands_update`: built-ins, MCP prompts, skills, custom
--- commands) match what was typed, and how each reads as a completion item (`:h complete-items`).
--- The agent runs `/name args` itself; the prompt is sent as typed.
local M = {}

-- Cells of a text alone: strdisplaywidth() would count the current window's 'linebreak'.
local width_of = vim.api.nvim_strwidth

-- A long description would push the menu off the screen; the info popup has it whole.
M.max_menu_width = 60
-- However little room the menu has, this much of a description shows.
M.min_menu_width = 20
-- A hint is a placeholder for the arguments; a long one ("[what the summary should keep]")
-- would leave a narrow menu no room for the description. The info popup has it whole.
M.max_hint_width = 20

--- The `/name` being typed, if the text up to the cursor is only that: a slash at the start of
--- the prompt (leading blank space aside, as the prompt is trimmed when sent) and no space yet.
--- After other text, or once the arguments have begun, it is not a command.
---@param before string the prompt's text up to the cursor, lines joined with "\n"
---@return string|nil prefix such as "/co"
function M.prefix(before)
  return before:match("^%s*(/%S*)$")
end

local function hint_of(command)
  local input = command.input
  local hint = type(input) == "table" and input.hint or nil
  return type(hint) == "string" and hint ~= "" and hint or nil
end

--- The first line of a description, cut to `width` display cells with an ellipsis.
---@param text string|nil
---@param width integer|nil
function M.short(text, width)
  width = width or M.max_menu_width
  local line = vim.trim((text or ""):match("^[^\n]*") or "")
  if width_of(line) <= width then
    return line
  end
  local chars = vim.fn.strchars(line)
  while chars > 0 and width_of(vim.fn.strcharpart(line, 0, chars)) > width - 1 do
    chars = chars - 1
  end
  return vim.trim(vim.fn.strcharpart(line, 0, chars)) .. "…"
end

--- One command as a completion item: `/name` inserted; the input hint in the kind column and
--- the description in the menu column, so the menu reads as a usage line
--- (`/code-review  [path or branch]  Review a change…`); the whole in the info popup.
---@param command { name: string, description: string|nil, input: { hint: string }|nil }
---@param width integer|nil the menu column's width (default `max_menu_width`)
---@return table complete-item
function M.item(command, width)
  local word = "/" .. command.name
  local hint = hint_of(command)
  local description = type(command.description) == "string" and command.description or ""
  local usage = hint and (word .. " " .. hint) or word
  return {
    word = word,
    abbr = word,
    kind = hint and M.short(hint, M.max_hint_width) or "",
    menu = M.short(description, width),
    info = description ~= "" and (usage .. "\n\n" .. description) or usage,
    icase = 1,
    dup = 0,
    empty = 0,
    user_data = { larik_command = command.name },
  }
end

--- The commands whose name starts with what was typed after the slash (ignoring case), in the
--- agent's order (its built-ins first), each name once. A name typed whole that nothing longer
--- extends offers nothing: the menu would only repeat it (right after accepting it, too).
---@param commands table[] availableCommands
---@param prefix string "/" or "/co"
---@return table[] commands
function M.matches(commands, prefix)
  local typed = prefix:gsub("^/", "")
  local lower = typed:lower()
  local out, seen = {}, {}
  for _, command in ipairs(commands or {}) do
    local name = type(command) == "table" and command.name
    if type(name) == "string" and name ~= "" and not seen[name] and name:lower():sub(1, #lower) == lower then
      seen[name] = true
      out[#out + 1] = command
    end
  end
  if #out == 1 and out[1].name == typed then
    return {}
  end
  return out
end

--- The width the descriptions get when the menu has `room` cells from the slash to the
--- screen's right edge: Neovim's menu does not move left for long items but is cut at the
--- edge, so descriptions are cut to what fits beside the names and hints, with an ellipsis.
---@param matches table[] commands
---@param room integer|nil nil: no limit but `max_menu_width`
---@return integer
function M.menu_width(matches, room)
  if not room then
    return M.max_menu_width
  end
  local name, hint = 0, 0
  for _, command in ipairs(matches) do
    name = math.max(name, width_of("/" .. command.name))
    hint = math.max(hint, math.min(width_of(hint_of(command) or ""), M.max_hint_width))
  end
  -- The menu's padding: one cell before the name, one after each column, one for a scrollbar.
  local used = 1 + name + 1 + (hint > 0 and hint + 1 or 0) + 1
  return math.max(M.min_menu_width, math.min(M.max_menu_width, room - used))
end

--- The completion items for what was typed.
---@param commands table[] availableCommands
---@param prefix string
---@param room integer|nil cells from the slash to the screen's right edge
---@return table[] complete-items
function M.items(commands, prefix, room)
  local matches = M.matches(commands, prefix)
  local width = M.menu_width(matches, room)
  return vim.tbl_map(function(command)
    return M.item(command, width)
  end, matches)
end

--- What to complete in a prompt: `{ col = <0-based byte column of the slash>, items = {...} }`,
--- or nil when the cursor is not on a command's name (or no command matches).
---@param lines string[] the prompt's lines up to and including the cursor's
---@param col integer the cursor's 0-based byte column in the last of them
---@param commands table[] availableCommands
---@param room (fun(col: integer): integer)|nil the cells from that column of the cursor's
---line to the screen's right edge
function M.complete(lines, col, commands, room)
  if #lines == 0 then
    return nil
  end
  local before = vim.list_slice(lines, 1, #lines - 1)
  local current = lines[#lines]:sub(1, col)
  before[#before + 1] = current
  local prefix = M.prefix(table.concat(before, "\n"))
  if not prefix then
    return nil
  end
  local col_of_slash = #current - #prefix
  local items = M.items(commands, prefix, room and room(col_of_slash))
  if #items == 0 then
    return nil
  end
  return { col = col_of_slash, items = items }
end

--- `:LarikAsk /co<Tab>`: the names that complete the first word of the command line's text.
---@param args string what follows the command name so far
---@param commands table[]
---@return string[]
function M.cmdline(args, commands)
  local prefix = M.prefix(args)
  if not prefix then
    return {}
  end
  return vim.tbl_map(function(command)
    return "/" .. command.name
  end, M.matches(commands, prefix))
end

return M
