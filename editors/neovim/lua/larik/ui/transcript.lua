--- Owns the text of the chat buffer: the conversation as markdown, written only at the tail or
--- inside a block's own lines.
---
--- Invariants:
--- - Streamed text is appended with one `nvim_buf_set_text` at the end of the buffer: a chunk
---   costs O(chunk), never a re-render.
--- - Blocks (tool calls, the plan, permission prompts) are line ranges tracked by an extmark in
---   `ns`, keyed by e.g. "tool:<toolCallId>"; an update replaces only that block's lines.
--- - Thoughts are ranges tracked in `thought_ns`; they are dimmed and `foldexpr` folds them.
--- - A turn starts at its "## You" header, tracked by an extmark in `turn_ns`, and runs to the
---   next turn's header; an undone turn is greyed by one range in `undone_ns`, drawn above
---   every other highlight.
local config = require("larik.config")
local render = require("larik.ui.render")

local api = vim.api

local M = {}

local ns = api.nvim_create_namespace("larik_blocks")
local hl_ns = api.nvim_create_namespace("larik_block_highlights")
local thought_ns = api.nvim_create_namespace("larik_thoughts")
local turn_ns = api.nvim_create_namespace("larik_turns")
local undone_ns = api.nvim_create_namespace("larik_undone")
M.ns, M.hl_ns, M.thought_ns, M.turn_ns, M.undone_ns = ns, hl_ns, thought_ns, turn_ns, undone_ns

local by_buf = {}

---@class larik.Transcript
---@field buf integer
---@field blocks table<string, integer> block key -> extmark id
---@field calls table<string, table> tool block key -> the call it shows
---@field owners table<string, table<integer, string>> block key -> row offset -> the session id
---  of the subagent shown on that row
---@field diffs table<string, table<integer, table>> block key -> row offset -> the diff shown there
---@field turns larik.Turn[] the conversation's turns, in order; `turn` is the latest's number
---@field role string|nil "user" | "agent"
---@field open table|nil the text segment being streamed into
---@field tail any what wrote the buffer's last lines
local Transcript = {}
Transcript.__index = Transcript

---@param buf integer
---@class larik.Turn
---@field mark integer extmark in `turn_ns` on its header
---@field prompt string what the user said
---@field checkpoint string|nil the agent's checkpoint of the files before it (cp-3)
---@field undone boolean

---@return larik.Transcript
function M.new(buf)
  local self = setmetatable({ buf = buf, blocks = {}, calls = {}, owners = {}, diffs = {}, turns = {}, role = nil, open = nil, tail = nil, turn = 0 }, Transcript)
  by_buf[buf] = self
  return self
end

function M.get(buf)
  return by_buf[buf]
end

function Transcript:_edit(fn)
  local bo = vim.bo[self.buf]
  local was = bo.modifiable
  bo.modifiable = true
  local ok, err = pcall(fn)
  bo.modifiable = was
  if not ok then
    error(err, 0)
  end
end

function Transcript:_is_empty()
  return api.nvim_buf_line_count(self.buf) == 1 and api.nvim_buf_get_lines(self.buf, 0, 1, true)[1] == ""
end

--- Stops the open thought's range from growing: from now on text goes elsewhere.
function Transcript:_seal()
  local open = self.open
  if not (open and open.mark) or open.sealed then
    return
  end
  open.sealed = true
  local pos = api.nvim_buf_get_extmark_by_id(self.buf, thought_ns, open.mark, { details = true })
  if pos[1] then
    api.nvim_buf_set_extmark(self.buf, thought_ns, pos[1], pos[2], {
      id = open.mark,
      end_row = pos[3].end_row,
      end_col = pos[3].end_col,
      hl_group = "LarikThought",
      hl_eol = true,
      end_right_gravity = false,
      priority = 100,
    })
  end
end

--- Appends whole lines as a new segment, after a blank line unless it follows a header or
--- the buffer is empty. Returns the first and last row of the new lines.
function Transcript:_append_lines(lines)
  self:_seal()
  local start
  self:_edit(function()
    if self:_is_empty() then
      api.nvim_buf_set_lines(self.buf, 0, 1, false, lines)
      start = 0
      return
    end
    local count = api.nvim_buf_line_count(self.buf)
    local last = api.nvim_buf_get_lines(self.buf, count - 1, count, true)[1]
    local block = lines
    if last ~= "" and self.tail ~= "header" then
      block = { "" }
      vim.list_extend(block, lines)
    end
    api.nvim_buf_set_lines(self.buf, count, count, false, block)
    start = count + (#block - #lines)
  end)
  return start, start + #lines - 1
end

--- The O(chunk) write: `text` goes at the very end of the buffer.
function Transcript:_append_text(text)
  if text == "" then
    return
  end
  local lines = vim.split(text, "\n", { plain = true })
  self:_edit(function()
    local row = api.nvim_buf_line_count(self.buf) - 1
    local col = #api.nvim_buf_get_lines(self.buf, row, row + 1, true)[1]
    api.nvim_buf_set_text(self.buf, row, col, row, col, lines)
  end)
end

function Transcript:_highlight(row, col_start, col_end, group)
  api.nvim_buf_set_extmark(self.buf, hl_ns, row, col_start, { end_col = col_end, hl_group = group, priority = 200 })
end

function Transcript:_ensure_role(role)
  if self.role == role then
    return
  end
  local title = role == "user" and "## You" or "## Larik"
  local row = self:_append_lines({ title })
  self:_highlight(row, 0, #title, role == "user" and "LarikUserHeader" or "LarikAgentHeader")
  self.role, self.open, self.tail = role, nil, "header"
  if role == "user" then
    -- Every "## You" starts a turn: the prompts typed here and those a loaded session replays.
    self.turn = self.turn + 1
    self.turns[self.turn] = { mark = api.nvim_buf_set_extmark(self.buf, turn_ns, row, 0, {}), prompt = "", undone = false }
  end
end

--- Appends streamed text. `kind` is "user", "message" or "thought"; a new segment starts when
--- the kind or message id changes or something else was written after the open segment.
---@param kind string
---@param text string
---@param message_id string|nil
function Transcript:append(kind, text, message_id)
  self:_ensure_role(kind == "user" and "user" or "agent")
  if kind == "user" and self.turns[self.turn] then
    self.turns[self.turn].prompt = self.turns[self.turn].prompt .. text
  end
  local open = self.open
  local continues = open and open.kind == kind and self.tail == open and (message_id == nil or open.message_id == message_id)
  if not continues then
    open = { kind = kind, message_id = message_id }
    if kind == "thought" then
      local label = config.get().icons.thought .. " Thinking"
      local row = self:_append_lines({ label, "" })
      self:_highlight(row, 0, #label, "LarikThoughtHeader")
      open.mark = api.nvim_buf_set_extmark(self.buf, thought_ns, row, 0, {
        end_row = row + 1,
        end_col = 0,
        hl_group = "LarikThought",
        hl_eol = true,
        end_right_gravity = true,
        priority = 100,
      })
    else
      self:_append_lines({ "" })
    end
    self.open, self.tail = open, open
  end
  self:_append_text(text)
end

--- Writes a block's lines: in place when the block exists, else at the tail.
---@param key string
---@param lines string[]
---@param highlights table[] { row offset, col start, col end, group }
function Transcript:block(key, lines, highlights)
  local id = self.blocks[key]
  local pos = id and api.nvim_buf_get_extmark_by_id(self.buf, ns, id, { details = true })
  local start
  if pos and pos[1] then
    start = pos[1]
    local last = pos[3].end_row or start
    self:_edit(function()
      api.nvim_buf_clear_namespace(self.buf, hl_ns, start, last + 1)
      api.nvim_buf_set_lines(self.buf, start, last + 1, false, lines)
    end)
  else
    self:_ensure_role("agent")
    start = self:_append_lines(lines)
    self.tail = key
  end
  local last_row = start + #lines - 1
  self.blocks[key] = api.nvim_buf_set_extmark(self.buf, ns, start, 0, {
    id = id,
    end_row = last_row,
    end_col = #lines[#lines],
    right_gravity = false,
    end_right_gravity = false,
  })
  for _, hl in ipairs(highlights or {}) do
    self:_highlight(start + hl[1], hl[2], hl[3], hl[4])
  end
  return start
end

--- The rows a block spans, or nil.
function Transcript:block_range(key)
  local id = self.blocks[key]
  if not id then
    return nil
  end
  local pos = api.nvim_buf_get_extmark_by_id(self.buf, ns, id, { details = true })
  if not pos[1] then
    return nil
  end
  return pos[1], pos[3].end_row or pos[1]
end

--- Deletes a block's lines; nothing if it is not shown.
function Transcript:remove_block(key)
  local first, last = self:block_range(key)
  if not first then
    return
  end
  self:_edit(function()
    api.nvim_buf_clear_namespace(self.buf, hl_ns, first, last + 1)
    api.nvim_buf_set_lines(self.buf, first, last + 1, false, {})
  end)
  api.nvim_buf_del_extmark(self.buf, ns, self.blocks[key])
  self.blocks[key] = nil
  self.owners[key] = nil
  self.diffs[key] = nil
  if self.tail == key then
    self.tail = nil
  end
end

function Transcript:has_block(key)
  return self.blocks[key] ~= nil
end

--- Renders (or re-renders) a tool call from its merged state, which is kept so the block can
--- be re-rendered from the chat (expanding a read). A task call's block holds its subagents.
function Transcript:tool(call)
  local key = "tool:" .. call.toolCallId
  self.calls[key] = call
  local lines, highlights, owners, diffs = render.tool(call)
  self.owners[key] = owners
  self.diffs[key] = diffs
  return self:block(key, lines, highlights)
end

--- The diff shown on `row` (a file an edit or a command changed) and the call it belongs to.
---@return table|nil diff, table|nil call
function Transcript:diff_at(row)
  local key = self:block_at(row)
  local first = key and self:block_range(key)
  local diff = first and (self.diffs[key] or {})[row - first] or nil
  return diff, diff and self.calls[key] or nil
end

--- Renders a subagent whose task call is not in the chat as a block of its own.
---@param child larik.Subagent
function Transcript:subagent(child)
  local key = "subagent:" .. child.id
  local lines, highlights = render.subagent(child)
  local owners = {}
  for row = 0, #lines - 1 do
    owners[row] = child.id
  end
  self.owners[key] = owners
  return self:block(key, lines, highlights)
end

--- The session id of the subagent shown on `row`, or nil.
function Transcript:subagent_at(row)
  local key = self:block_at(row)
  local first = key and self:block_range(key)
  return first and (self.owners[key] or {})[row - first] or nil
end

--- The key of the block that spans `row`, or nil.
function Transcript:block_at(row)
  for key in pairs(self.blocks) do
    local first, last = self:block_range(key)
    if first and first <= row and row <= last then
      return key
    end
  end
  return nil
end

--- Expands or folds the read on `row` (its text under its one line). Returns false when the
--- row is not on a read that returned text, so the key keeps its usual meaning there.
function Transcript:toggle(row)
  local key = self:block_at(row)
  local call = key and self.calls[key]
  if not (call and render.read_text(call)) then
    return false
  end
  call.expanded = not call.expanded
  self:tool(call)
  return true
end

--- Renders the plan of the current turn; a new plan replaces it whole.
function Transcript:plan(entries)
  local lines, highlights = render.plan(entries)
  return self:block("plan:" .. self.turn, lines, highlights)
end

--- A one-off line such as an error or the end of a cancelled turn.
function Transcript:notice(text, group)
  local row = self:_append_lines({ text })
  self:_highlight(row, 0, #text, group or "LarikNotice")
  self.tail, self.open = "notice", nil
end

--- Starts a new turn: the user's prompt (and what was attached) under a "You" header of its
--- own, even right after another prompt.
function Transcript:user_prompt(text, attachments)
  self.role = nil
  self:append("user", text)
  for _, line in ipairs(attachments or {}) do
    local row = self:_append_lines({ line })
    self:_highlight(row, 0, #line, "LarikAttachment")
    self.tail = "attachment"
  end
end

--- Closes the open segment so the next text starts a new one.
function Transcript:close_segment()
  self.open = nil
end

function Transcript:clear()
  self:_edit(function()
    api.nvim_buf_set_lines(self.buf, 0, -1, false, { "" })
  end)
  for _, namespace in ipairs({ ns, hl_ns, thought_ns, turn_ns, undone_ns }) do
    api.nvim_buf_clear_namespace(self.buf, namespace, 0, -1)
  end
  self.blocks, self.calls, self.owners, self.diffs, self.turns = {}, {}, {}, {}, {}
  self.role, self.open, self.tail, self.turn = nil, nil, nil, 0
end

--- The rows turn `number` spans: from its header to the line before the next turn's.
---@return integer|nil first, integer|nil last
function Transcript:turn_range(number)
  local turn = self.turns[number]
  local first = turn and api.nvim_buf_get_extmark_by_id(self.buf, turn_ns, turn.mark, {})[1]
  if not first then
    return nil
  end
  local following = self.turns[number + 1]
  local next_first = following and api.nvim_buf_get_extmark_by_id(self.buf, turn_ns, following.mark, {})[1]
  local last = next_first and next_first - 1 or api.nvim_buf_line_count(self.buf) - 1
  -- The blank line before the next header belongs to neither turn's text.
  while last > first and api.nvim_buf_get_lines(self.buf, last, last + 1, true)[1] == "" do
    last = last - 1
  end
  return first, last
end

--- The number of the turn that spans `row`, or nil above the first one.
function Transcript:turn_at(row)
  for number = #self.turns, 1, -1 do
    local first = self:turn_range(number)
    if first and first <= row then
      return number
    end
  end
  return nil
end

--- Ties a turn to the agent's checkpoint of the files before it. The turn that just ended gets
--- a line saying how to undo it; an earlier one (a later prompt came first) gets none there,
--- since the chat is written at its tail only, but the undo key works on its lines all the same.
function Transcript:set_checkpoint(number, checkpoint)
  local turn = self.turns[number]
  if not turn then
    return
  end
  turn.checkpoint = checkpoint
  if number == self.turn or self:has_block("undo:" .. number) then
    local lines, highlights = render.undo_line(checkpoint, turn.undone)
    self:block("undo:" .. number, lines, highlights)
    self.open = nil
  end
end

--- Greys turn `number` as undone: its lines, a mark on its header, its undo line.
function Transcript:mark_undone(number)
  local turn = self.turns[number]
  local first, last = self:turn_range(number)
  if not (turn and first) or turn.undone then
    return
  end
  turn.undone = true
  if turn.checkpoint and self:has_block("undo:" .. number) then
    local lines, highlights = render.undo_line(turn.checkpoint, true)
    self:block("undo:" .. number, lines, highlights)
  end
  first, last = self:turn_range(number)
  local last_line = api.nvim_buf_get_lines(self.buf, last, last + 1, true)[1]
  -- Drawn over the markdown, the headers' and the blocks' own highlights.
  api.nvim_buf_set_extmark(self.buf, undone_ns, first, 0, {
    end_row = last,
    end_col = #last_line,
    hl_group = "LarikUndone",
    hl_eol = true,
    priority = 300,
  })
  api.nvim_buf_set_extmark(self.buf, undone_ns, first, 0, {
    virt_text = { { "  ↶ undone", "LarikUndone" } },
    virt_text_pos = "eol",
  })
  self.open = nil
end

--- A folded thought's line: its header as written, and how to open it, instead of Vim's
--- "+--  2 lines: ..." with a row of fill characters.
function M.foldtext()
  local header = vim.fn.getline(vim.v.foldstart)
  local count = vim.v.foldend - vim.v.foldstart
  if count < 1 then
    return header
  end
  return ("%s  (%d more line%s · za)"):format(header, count, count == 1 and "" or "s")
end

--- The thought folds: a line inside a thought range is in a fold that starts at its header.
---@param lnum integer
function M.foldexpr(lnum)
  local buf = api.nvim_get_current_buf()
  local marks = api.nvim_buf_get_extmarks(buf, thought_ns, { lnum - 1, 0 }, { lnum - 1, -1 }, { overlap = true })
  if #marks == 0 then
    return "0"
  end
  return marks[1][2] == lnum - 1 and ">1" or "1"
end

return M
