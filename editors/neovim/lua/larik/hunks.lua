--- Owns the arithmetic of per-hunk review, with no UI: splitting a change into hunks (runs of
--- changed lines), reading the agent's hunks, and rebuilding the file from the hunks the user
--- kept. Pure functions over lists of lines, so they are unit-tested on their own.
---
--- A normalised hunk is `{ index = agent index (0-based), before = old lines preceding it,
--- old = { lines removed }, new = { lines added } }`.
local M = {}

local diff = (vim.text and vim.text.diff) or vim.diff

--- Splits text into lines; `eol` tells whether it ended with a newline.
---@param text string|nil
---@return string[] lines, boolean eol
function M.split(text)
  text = text or ""
  if text == "" then
    return {}, false
  end
  local lines = vim.split(text, "\n", { plain = true })
  local eol = lines[#lines] == ""
  if eol then
    table.remove(lines)
  end
  return lines, eol
end

--- Joins lines back into text, with a final newline when `eol`.
function M.join(lines, eol)
  if #lines == 0 then
    return ""
  end
  return table.concat(lines, "\n") .. (eol and "\n" or "")
end

local function slice(list, from, count)
  local out = {}
  for offset = 0, count - 1 do
    out[#out + 1] = list[from + offset]
  end
  return out
end

--- The hunks of old -> new, numbered from 0 in order.
---@param old_lines string[]
---@param new_lines string[]
function M.compute(old_lines, new_lines)
  local old_text = #old_lines > 0 and table.concat(old_lines, "\n") .. "\n" or ""
  local new_text = #new_lines > 0 and table.concat(new_lines, "\n") .. "\n" or ""
  local indices = diff(old_text, new_text, { result_type = "indices", algorithm = "myers" }) or {}
  local hunks = {}
  for position, range in ipairs(indices) do
    local start_a, count_a, start_b, count_b = range[1], range[2], range[3], range[4]
    -- A pure insertion names the old line it follows; otherwise start_a is its first line.
    local before = count_a == 0 and start_a or start_a - 1
    local first_new = count_b == 0 and start_b + 1 or start_b
    hunks[position] = {
      index = position - 1,
      before = before,
      old = slice(old_lines, before + 1, count_a),
      new = slice(new_lines, first_new, count_b),
    }
  end
  return hunks
end

local function equal(a, b)
  if #a ~= #b then
    return false
  end
  for i = 1, #a do
    if a[i] ~= b[i] then
      return false
    end
  end
  return true
end

--- Rebuilds the file: each hunk is applied when `keep(hunk)` is true, else its old lines stay.
--- Also returns where each hunk landed: `placements[i] = { row = 0-based first line, count,
--- applied }` (for a hunk that left no line, `row` is where its lines would be).
---@param old_lines string[]
---@param hunks table[]
---@param keep fun(hunk: table): boolean
function M.apply(old_lines, hunks, keep)
  local out, placements = {}, {}
  local cursor = 0 -- old lines consumed
  for position, hunk in ipairs(hunks) do
    for line = cursor + 1, hunk.before do
      out[#out + 1] = old_lines[line]
    end
    local applied = keep(hunk)
    local lines = applied and hunk.new or hunk.old
    placements[position] = { row = #out, count = #lines, applied = applied }
    for _, line in ipairs(lines) do
      out[#out + 1] = line
    end
    cursor = hunk.before + #hunk.old
  end
  for line = cursor + 1, #old_lines do
    out[#out + 1] = old_lines[line]
  end
  return out, placements
end

--- Reads the agent's hunks (`toolCall._meta.larik.hunks`: 1-based unified-diff numbers and the
--- texts). Returns nil when they do not rebuild `new_lines` from `old_lines`, so the caller falls
--- back to computing hunks itself rather than showing a wrong review.
---@param agent_hunks table[]
---@param old_lines string[]
---@param new_lines string[]
---@return table[]|nil
function M.from_agent(agent_hunks, old_lines, new_lines)
  if type(agent_hunks) ~= "table" or #agent_hunks == 0 then
    return nil
  end
  local hunks = {}
  for _, raw in ipairs(agent_hunks) do
    if type(raw.index) ~= "number" or type(raw.oldStart) ~= "number" then
      return nil
    end
    local old = M.split(raw.oldText)
    local new = M.split(raw.newText)
    local old_count = raw.oldLines or #old
    -- Like unified diffs, a hunk that removes nothing names the line it follows.
    local before = old_count > 0 and raw.oldStart - 1 or raw.oldStart
    hunks[#hunks + 1] = { index = raw.index, before = before, old = old, new = new }
  end
  table.sort(hunks, function(a, b)
    return a.before < b.before or (a.before == b.before and a.index < b.index)
  end)
  local cursor = 0
  for _, hunk in ipairs(hunks) do
    if hunk.before < cursor or not equal(slice(old_lines, hunk.before + 1, #hunk.old), hunk.old) then
      return nil
    end
    cursor = hunk.before + #hunk.old
  end
  local rebuilt = M.apply(old_lines, hunks, function()
    return true
  end)
  if not equal(rebuilt, new_lines) then
    return nil
  end
  return hunks
end

--- Lines added and removed by a list of hunks.
function M.stats(hunks)
  local added, removed = 0, 0
  for _, hunk in ipairs(hunks) do
    added = added + #hunk.new
    removed = removed + #hunk.old
  end
  return added, removed
end

return M
