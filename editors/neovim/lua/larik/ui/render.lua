--- Owns how protocol objects look in the chat: pure functions from a tool call (with the
--- subagents it made and the files its command changed), a plan, a permission request or a
--- turn's undo line to lines of markdown and the highlights on them. No buffer access, so the
--- shapes are unit-tested directly.
local changes = require("larik.changes")
local config = require("larik.config")
local hunks = require("larik.hunks")
local subagents = require("larik.subagents")

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

--- Prose (a subagent's report) as Markdown indented under its call, not as a code block: at
--- most `max` lines, the rest counted.
local function prose_lines(text, max)
  local lines = vim.split((text or ""):gsub("%s+$", ""), "\n", { plain = true })
  local hidden = math.max(#lines - max, 0)
  local out = {}
  for index = 1, #lines - hidden do
    out[index] = lines[index] == "" and "" or ("  " .. lines[index])
  end
  if hidden > 0 then
    out[#out + 1] = ("  … %d more line%s"):format(hidden, hidden == 1 and "" or "s")
  end
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

--- The first line of a tool call: its status icon and title; a read that returned text also
--- says how many lines.
---@return string line, table[] highlights on it (row 0)
local function tool_header(call)
  local icons = config.get().icons
  local status = call.status or "pending"
  local icon = icons[status] or icons.pending
  local line = icon .. " " .. M.title_of(call)
  local read = M.read_text(call)
  if read then
    local count = #vim.split(read:gsub("\n$", ""), "\n", { plain = true })
    line = ("%s (%d line%s)"):format(line, count, count == 1 and "" or "s")
  end
  return line, {
    { 0, 0, #icon, status_groups[status] or "LarikToolPending" },
    { 0, #icon + 1, #line, "LarikToolTitle" },
  }
end

--- Appends `more` (lines and highlights of their own, from row 0) to a block, each line
--- indented by `indent`; `owner` marks the added rows as that subagent's.
local function nest(out, more, indent, owner)
  local pad = (" "):rep(indent)
  local base = #out.lines
  for index, line in ipairs(more.lines) do
    out.lines[base + index] = pad .. line
    if owner then
      out.owners[base + index - 1] = owner
    end
  end
  for _, hl in ipairs(more.highlights) do
    out.highlights[#out.highlights + 1] = { base + hl[1], hl[2] + indent, hl[3] + indent, hl[4] }
  end
end

--- Lines and highlights of a subagent, unindented: a line with its state and title (and the
--- stop key while it can be stopped), then one line per tool call it made (the latest
--- `chat.max_output_lines`), then, while it runs, the last line of what it is saying. Its
--- final report is the task call's own output, so it is not repeated here.
---@param child larik.Subagent
---@return string[], table[]
function M.subagent(child, parent_title)
  local cfg = config.get()
  local status = subagents.tool_status(child)
  local icon = cfg.icons[status] or cfg.icons.pending
  -- Under a task call of the same title, the title is not said twice.
  local name = child.title == parent_title and "subagent" or child.title
  local header = ("%s %s · %s"):format(icon, name, subagents.status(child))
  local highlights = {
    { 0, 0, #icon, status_groups[status] },
    { 0, #icon + 1, #icon + 1 + #name, "LarikToolTitle" },
    { 0, #icon + 1 + #name, #header, "LarikHelp" },
  }
  local stop_key = (cfg.subagents.keys or {}).stop
  if stop_key and subagents.can_stop(child) then
    local hint = " · " .. stop_key .. " stop"
    highlights[#highlights + 1] = { 0, #header, #header + #hint, "LarikHelp" }
    header = header .. hint
  end
  local out = { lines = { header }, highlights = highlights, owners = {} }
  local max = cfg.chat.max_output_lines
  local first = math.max(1, #child.order - max + 1)
  if first > 1 then
    local earlier = ("… %d earlier call%s"):format(first - 1, first == 2 and "" or "s")
    nest(out, { lines = { earlier }, highlights = { { 0, 0, #earlier, "LarikHelp" } } }, 2)
  end
  for index = first, #child.order do
    local line, line_highlights = tool_header(child.tools[child.order[index]])
    nest(out, { lines = { line }, highlights = line_highlights }, 2)
  end
  if child.state ~= "idle" then
    local said = (child.text or ""):gsub("%s+$", ""):match("([^\n]*)$") or ""
    said = vim.trim(said)
    if said ~= "" then
      if vim.fn.strchars(said) > 100 then
        said = vim.fn.strcharpart(said, 0, 99) .. "…"
      end
      nest(out, { lines = { said }, highlights = { { 0, 0, #said, "LarikThought" } } }, 2)
    end
  end
  return out.lines, out.highlights
end

local file_marks = {
  added = { "+", "LarikFileAdded" },
  changed = { "~", "LarikFileChanged" },
  deleted = { "−", "LarikFileDeleted" },
}

--- How many lines a file's diff adds and removes, said briefly: "(+1 −1)", "(−2)", "".
local function counts(diff)
  if not diff then
    return ""
  end
  local added, removed = hunks.stats(hunks.compute(hunks.split(diff.oldText), hunks.split(diff.newText)))
  local parts = {}
  if added > 0 then
    parts[#parts + 1] = "+" .. added
  end
  if removed > 0 then
    parts[#parts + 1] = "−" .. removed
  end
  return #parts > 0 and (" (" .. table.concat(parts, " ") .. ")") or ""
end

--- A path as inline code: the chat is markdown, where `__pycache__` would read as bold.
local function code(path)
  if path:find("`", 1, true) then
    return path
  end
  return "`" .. path .. "`"
end

--- Lines of the files a command changed: a heading, then one line per file with its mark
--- (+ added, ~ changed, − deleted), its kind and its line counts; at most `max` files, the rest
--- counted. Rows of a file with a diff are mapped to it, so <CR> there shows the change.
--- Files the project ignores (bytecode, build output) come last, as one line with their count.
---@param files larik.FileChange[]
---@param max integer
---@param ignored { text: string, count: integer }|nil
---@return string[] lines, table[] highlights, table<integer, table> diffs: row offset -> diff
function M.file_changes(files, max, ignored)
  local heading = ("  Files the command changed (%d):"):format(#files + (ignored and ignored.count or 0))
  local lines, highlights, diffs = { heading }, { { 0, 0, #heading, "LarikHelp" } }, {}
  for index, file in ipairs(files) do
    if index > max then
      local more = ("    … %d more file%s"):format(#files - max, #files - max == 1 and "" or "s")
      lines[#lines + 1] = more
      highlights[#highlights + 1] = { #lines - 1, 0, #more, "LarikHelp" }
      break
    end
    local mark = file_marks[file.kind] or file_marks.changed
    local label = mark[1] .. " " .. file.kind
    local line = "    " .. label .. " " .. code(M.short_path(file.path)) .. counts(file.diff)
    lines[#lines + 1] = line
    highlights[#highlights + 1] = { #lines - 1, 4, 4 + #label, mark[2] }
    diffs[#lines - 1] = file.diff
  end
  if ignored then
    local line = "    · ignored by the project: " .. ignored.text
    lines[#lines + 1] = line
    highlights[#highlights + 1] = { #lines - 1, 0, #line, "LarikHelp" }
  end
  return lines, highlights, diffs
end

--- Appends lines and highlights made from row 0 to a block's.
local function extend(lines, highlights, more_lines, more_highlights)
  local base = #lines
  vim.list_extend(lines, more_lines)
  for _, hl in ipairs(more_highlights) do
    highlights[#highlights + 1] = { base + hl[1], hl[2], hl[3], hl[4] }
  end
  return base
end

--- Lines and highlights of a tool call block. While its permission prompt waits, only the
--- header (the prompt shows the command); once answered, the answer comes under the header,
--- above the output it allowed. A task call shows the subagents it made under its header; a
--- command the files it changed, under its output.
---@param call table merged ACP ToolCall fields (+ `asking`, `answer` set by the prompt, `expanded`
---  by the chat, `subagents` by the updates: the children a task call made)
---@return string[] lines, table[] highlights, table<integer, string> owners: row offset -> the
---  session id of the subagent shown there, table<integer, table> diffs: row offset -> the ACP
---  diff block shown there
function M.tool(call)
  local status = call.status or "pending"
  local header, header_highlights = tool_header(call)
  local lines = { header }
  local highlights = header_highlights
  -- Rows of the block that show a subagent, so a key on them knows which one is meant; rows
  -- that show a diff, so <CR> there opens it.
  local owners, diffs = {}, {}
  if call.asking then
    return lines, highlights, owners, diffs
  end
  -- A read is one line: the file and its length. The user already knows the file; <CR> on the
  -- line shows what the agent read (`expanded`, toggled by the chat).
  local read = M.read_text(call)
  if read then
    if call.expanded then
      vim.list_extend(lines, text_lines(read, math.huge))
    end
    return lines, highlights, owners, diffs
  elseif call.kind == "read" and status == "completed" then
    return lines, highlights, owners, diffs
  end
  -- The subagents a task call made, under it: their work comes before the report it returned.
  local out = { lines = lines, highlights = highlights, owners = owners }
  for _, child in ipairs(call.subagents or {}) do
    local child_lines, child_highlights = M.subagent(child, call.title)
    nest(out, { lines = child_lines, highlights = child_highlights }, 2, child.id)
  end
  if call.answer then
    local line = "  " .. (call.answer_icon or config.get().icons.permission) .. " " .. call.answer
    lines[#lines + 1] = line
    highlights[#highlights + 1] = { #lines - 1, 0, #line, "LarikHelp" }
  end
  for _, location in ipairs(call.locations or {}) do
    local where = "  → " .. M.short_path(location.path) .. (location.line and (":" .. location.line) or "")
    lines[#lines + 1] = where
    highlights[#highlights + 1] = { #lines - 1, 0, #where, "LarikLocation" }
  end
  local max = config.get().chat.max_output_lines
  -- A command's summary and the diffs it explains show once, as its list of files.
  local files, explained, ignored = changes.of(call.content)
  for index, item in ipairs(call.content or {}) do
    if explained[index] then
      if changes.is_summary(item) then
        local file_lines, file_highlights, file_diffs = M.file_changes(files, max, ignored)
        local base = extend(lines, highlights, file_lines, file_highlights)
        for row, diff in pairs(file_diffs) do
          diffs[base + row] = diff
        end
      end
    elseif item.type == "diff" then
      local summary = "  " .. M.diff_summary(item)
      lines[#lines + 1] = summary
      highlights[#highlights + 1] = { #lines - 1, 0, #summary, "LarikDiffSummary" }
      diffs[#lines - 1] = item
    elseif item.type == "terminal" then
      lines[#lines + 1] = "  [terminal " .. tostring(item.terminalId) .. "]"
    elseif item.type == "content" then
      local text = content_text(item.content)
      if text and text ~= "" then
        -- A task's report is the subagent's prose: Markdown under the call, not a code block.
        local report = (call.subagents and #call.subagents > 0) or (call.rawInput or {}).subagent_type
        vim.list_extend(lines, report and prose_lines(text, max) or text_lines(text, max))
      end
    end
  end
  return lines, highlights, owners, diffs
end

--- The line that ends a turn that changed files: how to undo it, or that it was undone.
---@param checkpoint string the checkpoint's id (cp-3)
---@param undone boolean
---@return string[] lines, table[] highlights
function M.undo_line(checkpoint, undone)
  local key = (config.get().checkpoints.keys or {}).undo
  local line
  if undone then
    line = ("↶ undone (%s)"):format(checkpoint)
  else
    line = ("↶ undo this turn (%s)%s"):format(checkpoint, key and (" · " .. key) or "")
  end
  return { line }, { { 0, 0, #line, undone and "LarikUndone" or "LarikHelp" } }
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
--- A subagent's request names it (`label`, its title), since its call is not the parent's.
---@param request table session/request_permission params
---@param has_diff boolean
---@param label string|nil the subagent asking, when it is one
function M.permission(request, has_diff, label, reviewing)
  local cfg = config.get()
  local icon = cfg.icons.permission
  local call = request.toolCall or {}
  local who = label and ("Larik (" .. label .. ")") or "Larik"
  local header = icon .. " " .. who .. " wants to: " .. M.title_of(call)
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
  if reviewing then
    -- One place decides an edit: while its review is open the options are not offered here.
    local where = "  ↳ Decide in the review tab, hunk by hunk"
    local review_keys = cfg.review.keys
    local how = ("    %s accept · %s reject · %s all · %s none · %s close"):format(
      review_keys.accept,
      review_keys.reject,
      review_keys.accept_all,
      review_keys.reject_all,
      review_keys.close
    )
    lines[#lines + 1] = where
    highlights[#highlights + 1] = { #lines - 1, 0, #where, "LarikWarning" }
    lines[#lines + 1] = how
    highlights[#highlights + 1] = { #lines - 1, 0, #how, "LarikHelp" }
  else
    for index, option in ipairs(request.options or {}) do
      local line = ("  %d. %s"):format(index, option.name or option.optionId)
      lines[#lines + 1] = line
      local group = (option.kind or ""):match("^reject") and "LarikOptionReject" or "LarikOptionAllow"
      highlights[#highlights + 1] = { #lines - 1, 2, 4 + #tostring(index), group }
    end
  end
  local keys = cfg.permission.keys
  local help = ("  %s dismiss · %s reject with feedback"):format(keys.dismiss, keys.feedback)
  if has_diff and not reviewing then
    help = help .. (" · %s review the change"):format(keys.diff)
  end
  lines[#lines + 1] = help
  highlights[#highlights + 1] = { #lines - 1, 0, #help, "LarikHelp" }
  return lines, highlights
end

--- The line a permission request leaves once answered, when its tool call is not shown (or is
--- a subagent's, `label` its title).
function M.permission_answered(request, answer, label, icon)
  local call = request.toolCall or {}
  local title = (label and (label .. " · ") or "") .. M.title_of(call)
  local line = ("%s %s → %s"):format(icon or config.get().icons.permission, title, answer)
  return { line }, { { 0, 0, #line, "LarikHelp" } }
end

return M
