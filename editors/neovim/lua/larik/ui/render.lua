--- Owns how protocol objects look in the chat: pure functions from a tool call, a plan or a
--- permission request to lines of markdown and the highlights on them. No buffer access, so
--- the shapes are unit-tested directly.
local config = require("larik.config")
local hunks = require("larik.hunks")

local M = {}

local status_groups = {
  pending = "LarikToolPending",
  in_progress = "LarikToolRunning",
  completed = "LarikToolDone",
  failed = "LarikToolFailed",
  cancelled = "LarikToolFailed",
}

--- A path relative to the current directory when it is inside it.
function M.short_path(path)
  if type(path) ~= "string" then
    return ""
  end
  local cwd = vim.fn.getcwd() .. "/"
  if path:sub(1, #cwd) == cwd then
    return path:sub(#cwd + 1)
  end
  return vim.fn.fnamemodify(path, ":~")
end

--- Body lines of a text, truncated to `max` lines; an already fenced text keeps its fences.
local function text_lines(text, max)
  local lines = vim.split((text or ""):gsub("\n$", ""), "\n", { plain = true })
  local fence_open, fence_close = "```", "```"
  if #lines >= 2 and lines[1]:match("^```") and lines[#lines]:match("^```%s*$") then
    fence_open = table.remove(lines, 1)
    table.remove(lines)
  end
  local hidden = 0
  if #lines > max then
    hidden = #lines - max
    lines = vim.list_slice(lines, 1, max)
  end
  local out = { fence_open }
  vim.list_extend(out, lines)
  if hidden > 0 then
    out[#out + 1] = ("… %d more line%s"):format(hidden, hidden == 1 and "" or "s")
  end
  out[#out + 1] = fence_close
  return out
end

local function content_text(block)
  if type(block) ~= "table" then
    return nil
  end
  if block.type == "text" then
    return block.text
  elseif block.type == "resource_link" then
    return ("[%s](%s)"):format(block.name or block.uri or "", block.uri or "")
  elseif block.type == "resource" and block.resource then
    return block.resource.text or block.resource.uri
  elseif block.type == "image" then
    return "[image]"
  end
  return nil
end

--- A one-line summary of a diff: "± path (+a −r)".
function M.diff_summary(item)
  local old = hunks.split(item.oldText)
  local new = hunks.split(item.newText)
  local added, removed = hunks.stats(hunks.compute(old, new))
  local verb = item.oldText == nil and "new file " or ""
  return ("± %s%s (+%d −%d)"):format(verb, M.short_path(item.path), added, removed)
end

--- The shell command a call runs, when it is one.
function M.command_of(call)
  local input = type(call) == "table" and call.rawInput or nil
  if type(input) == "table" and type(input.command) == "string" then
    return input.command
  end
  return nil
end

--- A call's name for the user: a command's description (its command is shown on its own, so
--- it is not repeated in the title with raw backticks), else the agent's title.
function M.title_of(call)
  if M.command_of(call) then
    local description = call.rawInput.description
    if type(description) == "string" and description:match("%S") then
      return vim.trim(description)
    end
    return "Run a command"
  end
  return call.title or call.name or call.kind or "tool"
end

--- What a completed read returned, when it returned text: such a call shows as one line that
--- expands to this text.
---@return string|nil
function M.read_text(call)
  if call.kind ~= "read" or call.status ~= "completed" then
    return nil
  end
  local parts = {}
  for _, item in ipairs(call.content or {}) do
    local text = item.type == "content" and content_text(item.content)
    if text and text ~= "" then
      parts[#parts + 1] = text:gsub("\n$", "")
    end
  end
  return #parts > 0 and table.concat(parts, "\n") or nil
end

--- Lines and highlights of a tool call block. While its permission prompt waits, only the
--- header (the prompt shows the command); once answered, the answer comes under the header,
--- above the output it allowed.
---@param call table merged ACP ToolCall fields (+ `asking`, `answer` set by the prompt, `expanded`
---  by the chat)
---@return string[], table[]
function M.tool(call)
  local icons = config.get().icons
  local status = call.status or "pending"
  local icon = icons[status] or icons.pending
  local header = icon .. " " .. M.title_of(call)
  local lines = { header }
  local highlights = {
    { 0, 0, #icon, status_groups[status] or "LarikToolPending" },
    { 0, #icon + 1, #header, "LarikToolTitle" },
  }
  if call.asking then
    return lines, highlights
  end
  -- A read is one line: the file and its length. The user already knows the file; <CR> on the
  -- line shows what the agent read (`expanded`, toggled by the chat).
  local read = M.read_text(call)
  if read then
    local count = #vim.split(read:gsub("\n$", ""), "\n", { plain = true })
    lines[1] = ("%s (%d line%s)"):format(header, count, count == 1 and "" or "s")
    highlights[2] = { 0, #icon + 1, #lines[1], "LarikToolTitle" }
    if call.expanded then
      vim.list_extend(lines, text_lines(read, math.huge))
    end
    return lines, highlights
  elseif call.kind == "read" and status == "completed" then
    return lines, highlights
  end
  if call.answer then
    local line = "  " .. config.get().icons.permission .. " " .. call.answer
    lines[#lines + 1] = line
    highlights[#highlights + 1] = { #lines - 1, 0, #line, "LarikHelp" }
  end
  for _, location in ipairs(call.locations or {}) do
    local where = "  → " .. M.short_path(location.path) .. (location.line and (":" .. location.line) or "")
    lines[#lines + 1] = where
    highlights[#highlights + 1] = { #lines - 1, 0, #where, "LarikLocation" }
  end
  local max = config.get().chat.max_output_lines
  for _, item in ipairs(call.content or {}) do
    if item.type == "diff" then
      local summary = "  " .. M.diff_summary(item)
      lines[#lines + 1] = summary
      highlights[#highlights + 1] = { #lines - 1, 0, #summary, "LarikDiffSummary" }
    elseif item.type == "terminal" then
      lines[#lines + 1] = "  [terminal " .. tostring(item.terminalId) .. "]"
    elseif item.type == "content" then
      local text = content_text(item.content)
      if text and text ~= "" then
        vim.list_extend(lines, text_lines(text, max))
      end
    end
  end
  return lines, highlights
end

--- Lines and highlights of the plan. Entries are marked with the tool status icons: a "[x]"
--- would read as a markdown link and lose its brackets to the chat's conceal.
function M.plan(entries)
  local icons = config.get().icons
  local lines, highlights = { "Plan" }, { { 0, 0, 4, "LarikPlanHeader" } }
  for _, entry in ipairs(entries or {}) do
    local mark = icons[entry.status] or icons.pending
    lines[#lines + 1] = "  " .. mark .. " " .. (entry.content or "")
    if entry.status == "completed" then
      highlights[#highlights + 1] = { #lines - 1, 2, #lines[#lines], "LarikPlanDone" }
    end
  end
  return lines, highlights
end

--- What a command outside the sandbox may do, said with its prompt.
M.OUTSIDE_SANDBOX = "⚠ Runs outside the sandbox: full write and network access"

--- Lines of a waiting permission request: what will happen (a command in a block of its own,
--- with a warning when it runs outside the sandbox), then the agent's options verbatim, numbered.
---@param request table session/request_permission params
---@param has_diff boolean
function M.permission(request, has_diff)
  local cfg = config.get()
  local icon = cfg.icons.permission
  local call = request.toolCall or {}
  local header = icon .. " Larik wants to: " .. M.title_of(call)
  local lines, highlights = { header }, { { 0, 0, #header, "LarikPermission" } }
  local command = M.command_of(call)
  if command then
    lines[#lines + 1] = "  ```sh"
    for _, line in ipairs(vim.split(command, "\n", { plain = true })) do
      lines[#lines + 1] = "  " .. line
    end
    lines[#lines + 1] = "  ```"
    if call.rawInput.sandbox == false then
      local warning = "  " .. M.OUTSIDE_SANDBOX
      lines[#lines + 1] = warning
      highlights[#highlights + 1] = { #lines - 1, 0, #warning, "LarikWarning" }
    end
  end
  for index, option in ipairs(request.options or {}) do
    local line = ("  %d. %s"):format(index, option.name or option.optionId)
    lines[#lines + 1] = line
    local group = (option.kind or ""):match("^reject") and "LarikOptionReject" or "LarikOptionAllow"
    highlights[#highlights + 1] = { #lines - 1, 2, 4 + #tostring(index), group }
  end
  local keys = cfg.permission.keys
  local help = ("  %s dismiss · %s reject with feedback"):format(keys.dismiss, keys.feedback)
  if has_diff then
    help = help .. (" · %s review the change"):format(keys.diff)
  end
  lines[#lines + 1] = help
  highlights[#highlights + 1] = { #lines - 1, 0, #help, "LarikHelp" }
  return lines, highlights
end

--- The line a permission request leaves once answered, when its tool call is not shown.
function M.permission_answered(request, answer)
  local call = request.toolCall or {}
  local line = ("%s %s → %s"):format(config.get().icons.permission, M.title_of(call), answer)
  return { line }, { { 0, 0, #line, "LarikHelp" } }
end

return M
