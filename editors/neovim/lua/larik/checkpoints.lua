--- Owns undo per turn on the client's side: the session's checkpoints as the agent lists them
--- (`_larik/checkpoints`: the project's files before each turn that changed one), which chat
--- turn each belongs to, undoing one (`_larik/undo`), and what follows an undo: buffers of the
--- restored files reloaded, the user told what was restored, removed and kept, and the undone
--- turns greyed in the chat. An agent without these methods gets the `/undo [id]` and
--- `/checkpoints` prompts instead, which it answers in words.
---
--- Invariants: a checkpoint belongs to the turn after which it first appeared in the list; an
--- undo rewinds the conversation to before its turn, so that turn and every later one are
--- marked undone, and their checkpoints forgotten; only one list or undo request is in flight
--- per call, and none while a turn runs (the agent would undo under a running turn).
local config = require("larik.config")
local fs = require("larik.fs")

local M = {}

local METHOD_NOT_FOUND = -32601

local state = {
  supported = nil, -- nil until the agent answered once; false: it lacks the methods
  list = {}, -- the latest list, oldest first
  turn_of = {}, -- checkpoint id -> chat turn number
}

local function client()
  return require("larik.client")
end

local function chat()
  return require("larik.ui.chat")
end

local function notify(message, level)
  vim.notify("Larik: " .. message, level or vim.log.levels.INFO)
end

--- Forgets the session's checkpoints (a new or loaded session starts), and what the agent
--- was found to support: the next request finds out again.
function M.reset()
  state.supported, state.list, state.turn_of = nil, {}, {}
end

--- The latest list of checkpoints, oldest first (for completion and tests).
function M.list()
  return state.list
end

--- Whether the agent lists checkpoints: true, false, or nil before it was asked.
function M.supported()
  return state.supported
end

--- The checkpoint with this id in the latest list.
local function find(id)
  for _, checkpoint in ipairs(state.list) do
    if checkpoint.id == id then
      return checkpoint
    end
  end
  return nil
end

--- How a checkpoint reads in a picker: "cp-2 · 06:30 · Tidy the project · 3 files".
function M.format(checkpoint)
  local when = (checkpoint.createdAt or ""):match("T(%d%d:%d%d)") or ""
  local prompt = vim.trim((checkpoint.prompt or ""):match("^[^\n]*") or "")
  if vim.fn.strchars(prompt) > 60 then
    prompt = vim.fn.strcharpart(prompt, 0, 59) .. "…"
  end
  local count = #(checkpoint.files or {})
  local parts = { checkpoint.id }
  if when ~= "" then
    parts[#parts + 1] = when
  end
  parts[#parts + 1] = prompt ~= "" and ("“" .. prompt .. "”") or "(no prompt)"
  parts[#parts + 1] = ("%d file%s"):format(count, count == 1 and "" or "s")
  return table.concat(parts, " · ")
end

--- What an undo did, in one sentence per kind of file: the notification's and the chat's text.
---@param result table the `_larik/undo` result
---@param unsaved string[]|nil restored files whose buffers have unsaved changes (not reloaded)
---@param open_removed string[]|nil removed files that still have a buffer
---@return string
function M.describe(result, unsaved, open_removed)
  local checkpoint = result.checkpoint or {}
  local prompt = vim.trim((checkpoint.prompt or ""):match("^[^\n]*") or "")
  local parts = {}
  local function list(paths)
    return table.concat(paths, ", ")
  end
  if #(result.restored or {}) > 0 then
    parts[#parts + 1] = "restored " .. list(result.restored)
  end
  if #(result.removed or {}) > 0 then
    parts[#parts + 1] = "removed " .. list(result.removed) .. " (the turn created them)"
  end
  if #parts == 0 then
    parts[1] = "no file needed restoring"
  end
  local text = ("Undid “%s” (%s): %s."):format(prompt, checkpoint.id or "?", table.concat(parts, "; "))
  if #(result.kept or {}) > 0 then
    text = text .. " " .. list(result.kept) .. ": changed by you since, kept."
  end
  if unsaved and #unsaved > 0 then
    text = text .. " Not reloaded, unsaved in Neovim: " .. list(unsaved) .. " (:e! shows the restored file)."
  end
  if open_removed and #open_removed > 0 then
    text = text .. " Still open, no longer on disk: " .. list(open_removed) .. "."
  end
  return text
end

--- The session's directory, which the agent's paths are relative to.
local function session_dir()
  local session = client().state.session or {}
  return session.cwd or client().cwd()
end

local function absolute(path)
  if path:sub(1, 1) == "/" then
    return path
  end
  return session_dir() .. "/" .. path
end

--- Shows the restored files in their buffers (unless a buffer has unsaved changes of its own:
--- reloading would ask, and losing them is the user's call). Returns the files not reloaded
--- and the removed files that still have a buffer.
local function reload(restored, removed)
  local unsaved, open_removed = {}, {}
  for _, path in ipairs(restored or {}) do
    local buf = fs.find_buffer(absolute(path))
    if buf and vim.bo[buf].modified then
      unsaved[#unsaved + 1] = path
    elseif buf then
      pcall(vim.cmd, "checktime " .. buf)
    end
  end
  for _, path in ipairs(removed or {}) do
    local buf = fs.find_buffer(absolute(path))
    if buf then
      open_removed[#open_removed + 1] = path
      -- The file is gone, its text is still here: marked modified, the buffer no longer claims
      -- to match the disk, and quitting warns before the text is lost. (Not :checktime: its
      -- E211 "no longer available" reads as an error and says less than the notification.)
      vim.bo[buf].modified = true
    end
  end
  return unsaved, open_removed
end

--- Greys the turns `first` to `last` (the latest when nil): the conversation was rewound to
--- before `first`. Their checkpoints are forgotten.
local function mark_from(first, last)
  last = last or chat().transcript().turn
  for id, turn in pairs(state.turn_of) do
    if turn >= first and turn <= last then
      state.turn_of[id] = nil
    end
  end
  chat().write(function(transcript)
    for number = first, last do
      transcript:mark_undone(number)
    end
  end)
end

local function tie(id, turn)
  state.turn_of[id] = turn
  chat().write(function(t)
    t:set_checkpoint(turn, id)
  end)
end

--- Ties the checkpoints no turn has to the chat's turns of the same prompt, in order: a loaded
--- session's turns were replayed, so none ended here.
local function tie_by_prompt(list)
  local turns = chat().transcript().turns
  local taken = {}
  for _, turn in pairs(state.turn_of) do
    taken[turn] = true
  end
  local from = 1
  for _, checkpoint in ipairs(list) do
    if not state.turn_of[checkpoint.id] then
      local wanted = vim.trim(checkpoint.prompt or "")
      for number = from, #turns do
        if not taken[number] and vim.trim(turns[number].prompt) == wanted then
          tie(checkpoint.id, number)
          taken[number], from = true, number + 1
          break
        end
      end
    end
  end
end

--- Applies the agent's list: a checkpoint not seen before belongs to `turn` (which just
--- ended), or without one to the turn of its prompt; one that is gone was undone by a `/undo`
--- typed as a prompt (turn `turn` itself), so its turn and the later ones before `turn` are
--- marked and their files reloaded.
local function reconcile(list, turn)
  local previous = state.list
  state.list = list
  local present = {}
  for _, checkpoint in ipairs(list) do
    present[checkpoint.id] = true
    if turn and not state.turn_of[checkpoint.id] then
      tie(checkpoint.id, turn)
    end
  end
  if not turn then
    tie_by_prompt(list)
  end
  local first, files = nil, {}
  for _, checkpoint in ipairs(previous) do
    if not present[checkpoint.id] then
      vim.list_extend(files, checkpoint.files or {})
      local number = state.turn_of[checkpoint.id]
      if number and (not first or number < first) then
        first = number
      end
    end
  end
  if #files > 0 then
    reload(files, {})
  end
  if first and turn and first < turn then
    mark_from(first, turn - 1)
  end
end

--- Asks the agent for the list; `callback(list|nil, err)`. The method missing marks the agent
--- as one without checkpoints.
function M.fetch(callback)
  local c = client()
  if state.supported == false or not (c.state.rpc and c.state.session) then
    return callback(nil, state.supported == false and "unsupported" or "the agent is not running")
  end
  local session = c.state.session.id
  c.state.rpc:request("_larik/checkpoints", { sessionId = session }, function(err, result)
    if err then
      if err.code == METHOD_NOT_FOUND then
        state.supported = false
        return callback(nil, "unsupported")
      end
      return callback(nil, err.message or tostring(err.code))
    end
    state.supported = true
    if not (c.state.session and c.state.session.id == session) then
      return callback(nil, "the session changed")
    end
    callback(type(result) == "table" and result.checkpoints or {})
  end)
end

--- After a turn ended: learn its checkpoint, or that a typed /undo removed some.
---@param turn integer the chat turn that ended
function M.after_turn(turn)
  M.fetch(function(list)
    if list then
      reconcile(list, turn)
    end
  end)
end

--- Refreshes the list without tying anything to a turn (a session was loaded).
function M.refresh(callback)
  M.fetch(function(list, err)
    if list then
      reconcile(list, nil)
    end
    if callback then
      callback(list, err)
    end
  end)
end

--- What follows the agent's answer to an undo.
local function apply(result)
  local unsaved, open_removed = reload(result.restored, result.removed)
  local id = result.checkpoint and result.checkpoint.id
  local turn = id and state.turn_of[id]
  -- The undone checkpoint and every later one are gone from the agent's list.
  local kept = {}
  for _, checkpoint in ipairs(state.list) do
    if checkpoint.id == id then
      break
    end
    kept[#kept + 1] = checkpoint
  end
  state.list = kept
  if turn then
    mark_from(turn)
  end
  local text = M.describe(result, unsaved, open_removed)
  chat().write(function(t)
    t:notice("↶ " .. text .. " The conversation is back to before that turn.", "LarikUndone")
  end)
  notify(text)
end

--- Sends `text` as a prompt, for an agent that answers `/undo` and `/checkpoints` in words.
local function as_prompt(text)
  chat().open({ focus = false })
  client().prompt(text)
end

--- Undoes the checkpoint `id` (the latest when nil): the turn it was taken before and every
--- later one. `callback(err)` runs when done.
---@param id string|nil
---@param callback fun(err: string|nil)|nil
function M.undo(id, callback)
  callback = callback or function() end
  local c = client()
  c.ensure(function(start_err)
    if start_err then
      return callback(start_err)
    end
    if c.state.prompt_id then
      notify("a turn is running; :LarikCancel stops it", vim.log.levels.WARN)
      return callback("a turn is running")
    end
    if state.supported == false then
      as_prompt("/undo" .. (id and (" " .. id) or ""))
      return callback(nil)
    end
    c.state.rpc:request("_larik/undo", { sessionId = c.state.session.id, checkpointId = id }, function(err, result)
      if err and err.code == METHOD_NOT_FOUND then
        state.supported = false
        as_prompt("/undo" .. (id and (" " .. id) or ""))
        return callback(nil)
      elseif err then
        notify("undo: " .. tostring(err.message or err.code), vim.log.levels.WARN)
        return callback(err.message or tostring(err.code))
      end
      state.supported = true
      apply(type(result) == "table" and result or {})
      callback(nil)
    end)
  end)
end

--- The ids to complete for :LarikUndo, newest first.
---@param lead string|nil
---@return string[]
function M.complete(lead)
  lead = lead or ""
  local out = {}
  for index = #state.list, 1, -1 do
    local id = state.list[index].id
    if id and id:sub(1, #lead) == lead then
      out[#out + 1] = id
    end
  end
  return out
end

--- :LarikCheckpoints: the checkpoints in vim.ui.select, newest first; the one picked is
--- undone (with the turns after it).
function M.pick()
  client().ensure(function(start_err)
    if start_err then
      return
    end
    M.refresh(function(list, err)
      if not list then
        if err == "unsupported" then
          as_prompt("/checkpoints")
        else
          notify("checkpoints: " .. tostring(err), vim.log.levels.WARN)
        end
        return
      end
      if #list == 0 then
        notify("no checkpoints: no turn of this session changed a file")
        return
      end
      local newest_first = {}
      for index = #list, 1, -1 do
        newest_first[#newest_first + 1] = list[index]
      end
      vim.ui.select(newest_first, {
        prompt = "Larik: undo which turn? (the turns after it go too)",
        kind = "larik_checkpoint",
        format_item = M.format,
      }, function(choice)
        if choice then
          M.undo(choice.id)
        end
      end)
    end)
  end)
end

--- The undo key on a chat turn: that turn's checkpoint, after a confirmation when
--- `checkpoints.confirm` asks for one.
---@param number integer|nil the chat turn under the cursor
function M.undo_turn(number)
  local t = chat().transcript()
  local turn = number and t.turns[number]
  if not turn then
    notify("no turn on this line", vim.log.levels.WARN)
    return
  elseif turn.undone then
    notify("this turn was undone already", vim.log.levels.WARN)
    return
  elseif not turn.checkpoint or not state.turn_of[turn.checkpoint] then
    local why = state.supported == false and "this agent keeps no checkpoints (try :LarikUndo)" or "this turn changed no file: nothing to undo"
    notify(why, vim.log.levels.WARN)
    return
  end
  local id = turn.checkpoint
  if not config.get().checkpoints.confirm then
    return M.undo(id)
  end
  local later = 0
  for _, other in pairs(state.turn_of) do
    if other > number then
      later = later + 1
    end
  end
  local checkpoint = find(id) or { id = id, prompt = turn.prompt, files = {} }
  local question = ("Undo %s?%s"):format(M.format(checkpoint), later > 0 and (" The %d later turn%s that changed files go too."):format(later, later == 1 and "" or "s") or "")
  vim.ui.select({ "Undo", "Keep" }, { prompt = question, kind = "larik_confirm" }, function(choice)
    if choice == "Undo" then
      M.undo(id)
    end
  end)
end

return M
