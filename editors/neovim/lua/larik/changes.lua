--- Owns the meaning of a command's change summary (pure): a bash call's final update carries,
--- after the command's own text (or terminal), a text block "Files the command changed: changed
--- /abs/a.txt, deleted /abs/b.txt, added /abs/c.txt", with a second line "Ignored by the
--- project: 3 files in `__pycache__/` (3)" when the command also changed files the project
--- ignores, and then one ACP `diff` block per text file it keeps (a deleted file: its oldText
--- and newText ""; an added one: no oldText). This module reads those blocks back into a list
--- of files, each with its kind and its diff when it has one, and the ignored ones' line.
---
--- Invariant: the summary names every file; a diff the summary does not name is still listed
--- (its kind guessed from its texts), so no change the agent reported is dropped.
local M = {}

M.PREFIX = "Files the command changed: "
M.IGNORED_PREFIX = "Ignored by the project: "

local KINDS = { "added", "changed", "deleted" }

--- The text of a tool call content item, when it is a text block.
local function text_of(item)
  local content = type(item) == "table" and item.type == "content" and item.content or nil
  return type(content) == "table" and content.type == "text" and content.text or nil
end

--- Whether a content item is the summary line.
---@param item table ToolCallContent
function M.is_summary(item)
  local text = text_of(item)
  return text ~= nil and text:sub(1, #M.PREFIX) == M.PREFIX
end

--- The entries of a summary's text, in its order: "changed /a, deleted /b" ->
--- { { kind = "changed", path = "/a" }, { kind = "deleted", path = "/b" } }. An entry ends where
--- ", <kind> " starts the next one, so a path may hold commas.
---@param text string
---@return { kind: string, path: string }[]
function M.parse(text)
  local rest = text:sub(1, #M.PREFIX) == M.PREFIX and text:sub(#M.PREFIX + 1) or text
  rest = rest:match("^[^\n]*")
  rest = (rest:gsub("%s+$", ""))
  local out = {}
  local position = 1
  while position <= #rest do
    local kind = rest:match("^(%a+) ", position)
    if not kind or not vim.tbl_contains(KINDS, kind) then
      break
    end
    local start = position + #kind + 1
    local stop = #rest + 1
    for _, next_kind in ipairs(KINDS) do
      local found = rest:find(", " .. next_kind .. " ", start, true)
      if found and found < stop then
        stop = found
      end
    end
    out[#out + 1] = { kind = kind, path = rest:sub(start, stop - 1) }
    position = stop + 2
  end
  return out
end

--- The summary's line about ignored files, after its prefix ("3 files in `__pycache__/` (3)"),
--- and how many files it counts; nil when there is none.
---@param text string
---@return string|nil, integer
function M.ignored(text)
  local line = text:match("\n" .. vim.pesc(M.IGNORED_PREFIX) .. "([^\n]+)")
  return line, line and tonumber(line:match("^(%d+)")) or 0
end

--- The kind of a diff the summary did not name.
local function guess(diff)
  if diff.oldText == nil then
    return "added"
  elseif diff.newText == "" then
    return "deleted"
  end
  return "changed"
end

---@class larik.FileChange
---@field kind string "added" | "changed" | "deleted"
---@field path string absolute
---@field diff table|nil the ACP diff block (none for a binary or large file)

--- The files a call's command changed, or nil when its content has no summary. `items` maps
--- the content index of each block it explains (the summary and its diffs), so a renderer
--- shows them once, as this list; `ignored` is the line about the ignored ones, if any.
---@param content table[]|nil ToolCallContent
---@return larik.FileChange[]|nil files, table<integer, boolean> items, { text: string, count: integer }|nil ignored
function M.of(content)
  local summary_index
  for index, item in ipairs(content or {}) do
    if M.is_summary(item) then
      summary_index = index
      break
    end
  end
  if not summary_index then
    return nil, {}
  end
  local items = { [summary_index] = true }
  local files, by_path = {}, {}
  for _, entry in ipairs(M.parse(text_of(content[summary_index]))) do
    local file = { kind = entry.kind, path = entry.path }
    files[#files + 1] = file
    by_path[entry.path] = file
  end
  for index = summary_index + 1, #content do
    local item = content[index]
    if type(item) == "table" and item.type == "diff" and type(item.path) == "string" then
      items[index] = true
      local file = by_path[item.path]
      if not file then
        file = { kind = guess(item), path = item.path }
        files[#files + 1] = file
        by_path[item.path] = file
      end
      file.diff = item
    end
  end
  local ignored_text, ignored_count = M.ignored(text_of(content[summary_index]))
  return files, items, ignored_text and { text = ignored_text, count = ignored_count } or nil
end

return M
