--- Owns the agent's permission requests (`session/request_permission`): a queue shown one at a
--- time, with the agent's own options verbatim, answered with buffer-local keys 1, 2, 3... in
--- the chat or through vim.ui.select. A request that carries a diff opens the review, whose
--- result answers it. Dismissing, cancelling the turn or the agent's `$/cancel_request`
--- answers `cancelled`; every request is answered exactly once. A subagent's request is named
--- after the subagent, and stopping that subagent answers its requests `cancelled`.
local config = require("larik.config")
local chat = require("larik.ui.chat")
local render = require("larik.ui.render")
local review = require("larik.ui.review")

local M = {}

local queue = {}
local current = nil
local mapped = {}

--- Whether the agent applies only accepted hunks (set by the client from its capabilities).
M.per_hunk = function()
  return false
end

local function find_option(request, kinds)
  for _, kind in ipairs(kinds) do
    for _, option in ipairs(request.params.options or {}) do
      if option.kind == kind then
        return option
      end
    end
  end
  return nil
end

--- The chat's merged state of the request's tool call, if the chat shows it. A subagent's call
--- is not among the session's (its ids are its own), so its answer gets a line of its own.
local function tool_state(request)
  if request.session then
    return nil
  end
  local id = (request.params.toolCall or {}).toolCallId
  local ok, client = pcall(require, "larik.client")
  if not ok or not id or type(client.state) ~= "table" or type(client.state.tools) ~= "table" then
    return nil
  end
  return client.state.tools[id]
end

local function unmap()
  local buf = chat.buf()
  for _, lhs in ipairs(mapped) do
    pcall(vim.keymap.del, "n", lhs, { buffer = buf })
  end
  mapped = {}
end

local show_next

--- Whether the request's change is open in the review: then the review alone decides it, and
--- the chat's option keys only say so (an option there would write hunks the user rejected).
local function in_review(request)
  local open = review.current()
  return open ~= nil and open.request == request.params
end

--- Redraws a request's prompt in the chat (options, or where to decide while reviewing).
local function draw_prompt(request)
  if not request.shown_in_chat or request.answered then
    return nil
  end
  local has_diff = review.diff_of(request.params.toolCall) ~= nil
  local lines, highlights = render.permission(request.params, has_diff, request.label, in_review(request))
  local row = chat.write(function(t)
    return t:block("permission:" .. tostring(request.id), lines, highlights)
  end)
  return row, lines
end

--- Answers a request once: `option` nil means cancelled; `meta` goes in `_meta.larik`.
local function answer(request, option, meta, note)
  if request.answered then
    return
  end
  request.answered = true
  local result = option and { outcome = { outcome = "selected", optionId = option.optionId } } or { outcome = { outcome = "cancelled" } }
  if meta and next(meta) then
    result._meta = { larik = meta }
  end
  request.respond(result)
  if current == request then
    unmap()
    if review.current() and review.current().request == request.params then
      review.close()
    end
    current = nil
  end
  if request.shown_in_chat then
    local text = (option and option.name or "cancelled") .. (note and (" " .. note) or "")
    -- The pending "?" gives way to what was decided.
    local icons = config.get().icons
    local icon = not option and icons.cancelled or (option.kind or ""):match("^reject") and icons.failed or icons.completed
    local key = "permission:" .. tostring(request.id)
    local call = tool_state(request)
    chat.write(function(t)
      if call and t:has_block("tool:" .. call.toolCallId) then
        -- The answer goes in place, in the call's own block above its output.
        call.asking, call.answer, call.answer_icon = nil, text, icon
        t:remove_block(key)
        t:tool(call)
      else
        local lines, highlights = render.permission_answered(request.params, text, request.label, icon)
        t:block(key, lines, highlights)
      end
    end)
  end
  vim.schedule(show_next)
end

--- Answers with an option chosen in the chat, unless the review is deciding this request.
local function choose(request, option)
  if in_review(request) then
    local keys = config.get().review.keys
    vim.notify(
      ("Larik: this edit is being reviewed hunk by hunk: decide in the review tab (%s accept, %s reject, %s all, %s none), or close it with %s to answer here"):format(
        keys.accept,
        keys.reject,
        keys.accept_all,
        keys.reject_all,
        keys.close
      ),
      vim.log.levels.WARN
    )
    return
  end
  answer(request, option)
end

--- Turns a finished review into an answer.
local function answer_review(request, decision)
  local per_hunk = M.per_hunk()
  if decision.none then
    local option = find_option(request, { "reject_once", "reject_always" })
    answer(request, option, per_hunk and { acceptedHunks = {} } or nil, "(all hunks rejected)")
    return
  end
  local option = find_option(request, { "allow_once", "allow_always" })
  if decision.all then
    answer(request, option, nil, "(all hunks accepted)")
  else
    local shown = vim.tbl_map(function(index)
      return tostring(index + 1)
    end, decision.accepted)
    answer(request, option, { acceptedHunks = decision.accepted }, ("(kept hunk %s of %d)"):format(table.concat(shown, ", "), decision.total))
  end
end

local function open_review(request)
  local opened = review.open(request.params, {
    per_hunk = M.per_hunk(),
    on_done = function(decision)
      answer_review(request, decision)
    end,
    on_close = function()
      if request.answered then
        return
      end
      if config.get().permission.ui == "select" then
        M.select(request)
      else
        draw_prompt(request)
      end
    end,
  })
  if opened then
    draw_prompt(request)
    if config.get().review.show_chat and opened.proposed_win then
      -- The conversation stays in view beside the change it asks about.
      chat.open({ focus = false })
      pcall(vim.api.nvim_set_current_win, opened.proposed_win)
    end
  end
  return opened
end

local function reject_with_feedback(request)
  vim.ui.input({ prompt = "Why reject? " }, function(text)
    if text == nil or request.answered then
      return
    end
    local option = find_option(request, { "reject_once", "reject_always" })
    answer(request, option, text ~= "" and { feedback = text } or nil)
  end)
end

--- Shows a request with vim.ui.select: the agent's options, plus "Review the change" first
--- when it carries a diff. No choice (Esc) answers cancelled.
function M.select(request)
  local items = {}
  if review.diff_of(request.params.toolCall) then
    items[#items + 1] = { name = "Review the change", review = true }
  end
  for _, option in ipairs(request.params.options or {}) do
    items[#items + 1] = { name = option.name or option.optionId, option = option }
  end
  local title = (request.params.toolCall or {}).title or "tool call"
  local who = request.label and ("Larik (" .. request.label .. ")") or "Larik"
  vim.ui.select(items, {
    prompt = who .. " wants to: " .. title,
    kind = "larik_permission",
    format_item = function(item)
      return item.name
    end,
  }, function(choice)
    if request.answered then
      return
    end
    if not choice then
      answer(request, nil)
    elseif choice.review then
      if not open_review(request) then
        M.select(request)
      end
    else
      answer(request, choice.option)
    end
  end)
end

local function show_in_chat(request)
  local cfg = config.get()
  local has_diff = review.diff_of(request.params.toolCall) ~= nil
  request.shown_in_chat = true
  local call = tool_state(request)
  if call then
    chat.write(function(t)
      if t:has_block("tool:" .. call.toolCallId) then
        -- The prompt shows the command; the call's block keeps only its header meanwhile.
        call.asking = true
        t:tool(call)
      end
    end)
  end
  local row, lines = draw_prompt(request)
  local buf = chat.buf()
  local function map(lhs, fn, desc)
    vim.keymap.set("n", lhs, fn, { buffer = buf, nowait = true, silent = true, desc = desc })
    mapped[#mapped + 1] = lhs
  end
  for index, option in ipairs(request.params.options or {}) do
    if index <= 9 then
      map(tostring(index), function()
        choose(request, option)
      end, "Larik: " .. (option.name or option.optionId))
    end
  end
  local keys = cfg.permission.keys
  map(keys.dismiss, function()
    answer(request, nil)
  end, "Larik: dismiss (cancelled)")
  map(keys.feedback, function()
    reject_with_feedback(request)
  end, "Larik: reject with a reason")
  if has_diff then
    map(keys.diff, function()
      open_review(request)
    end, "Larik: review the change")
  end
  if cfg.permission.focus then
    local win = chat.focus_chat()
    -- The whole prompt in view: its last line at the bottom of the window first, then the
    -- cursor on the first option (moving up within the window does not scroll).
    pcall(vim.api.nvim_win_set_cursor, win, { row + #lines, 0 })
    pcall(vim.api.nvim_win_call, win, function()
      vim.cmd("normal! zb")
    end)
    local first_option = row + 1
    for index, line in ipairs(lines) do
      if line:match("^  1%. ") then
        first_option = row + index
        break
      end
    end
    pcall(vim.api.nvim_win_set_cursor, win, { first_option, 0 })
  end
  if has_diff and cfg.review.auto_open then
    open_review(request)
  end
end

--- The winbar says "waiting for you" while a request is shown.
local function refresh_status()
  local ok, client = pcall(require, "larik.client")
  if ok and type(client.refresh) == "function" then
    pcall(client.refresh)
  end
end

show_next = function()
  if current then
    return
  end
  current = table.remove(queue, 1)
  refresh_status()
  if not current then
    return
  end
  if config.get().permission.ui == "select" then
    if review.diff_of(current.params.toolCall) and config.get().review.auto_open and open_review(current) then
      return
    end
    M.select(current)
  else
    show_in_chat(current)
  end
end

--- Queues a request from the agent; `respond(result)` sends the answer. `opts.label` and
--- `opts.session` name the subagent asking (its title and session id), when one does.
---@param id any the request's JSON-RPC id
---@param params table
---@param respond fun(result: table)
---@param opts { label: string|nil, session: string|nil }|nil
function M.enqueue(id, params, respond, opts)
  opts = opts or {}
  queue[#queue + 1] = { id = id, params = params, respond = respond, label = opts.label, session = opts.session }
  show_next()
end

--- Answers `cancelled` to the requests of one subagent (it is being stopped).
---@param session string the subagent's session id
function M.cancel_session(session)
  local kept = {}
  local dropped = {}
  for _, request in ipairs(queue) do
    if request.session == session then
      dropped[#dropped + 1] = request
    else
      kept[#kept + 1] = request
    end
  end
  queue = kept
  for _, request in ipairs(dropped) do
    answer(request, nil)
  end
  if current and current.session == session then
    answer(current, nil)
  end
end

--- Answers `cancelled` to every waiting request (the turn was cancelled or the agent left).
function M.cancel_all()
  local waiting = queue
  queue = {}
  for _, request in ipairs(waiting) do
    answer(request, nil)
  end
  if current then
    answer(current, nil)
  end
end

--- The agent withdrew one request (`$/cancel_request`).
function M.cancel(id)
  if current and current.id == id then
    answer(current, nil)
    return
  end
  for index, request in ipairs(queue) do
    if request.id == id then
      table.remove(queue, index)
      answer(request, nil)
      return
    end
  end
end

--- The request being shown, if any (its params).
function M.current()
  return current and current.params
end

--- Answers the shown request with its option number `index` (as the key `index` does).
function M.choose(index)
  if current then
    local option = (current.params.options or {})[index]
    if option then
      choose(current, option)
    end
  end
end

function M.pending_count()
  return (current and 1 or 0) + #queue
end

return M
