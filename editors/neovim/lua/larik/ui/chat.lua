--- Owns the chat's buffers and windows: the read-only transcript buffer (`Larik chat`), the
--- prompt input below it (`Larik prompt`), their layout, the winbar, and keeping the view on
--- the newest text. What the transcript says is `ui/transcript.lua`'s job; completing slash
--- commands in the prompt is `ui/completion.lua`'s.
local completion = require("larik.ui.completion")
local config = require("larik.config")
local transcript = require("larik.ui.transcript")

local api = vim.api

local M = {}

local state = {
  chat_buf = nil,
  input_buf = nil,
  transcript = nil,
  winbar = function()
    return "Larik"
  end,
  attachment = nil, -- a selection waiting for the next prompt typed in the input
}

--- The chat window's winbar for its current width.
local function winbar_text(win)
  return state.winbar(api.nvim_win_get_width(win))
end

--- Called with (text, selection|nil) when the user sends the input; set by the plugin.
M.on_submit = function(_, _) end
--- Called when the user presses the cancel key in the chat or input.
M.on_cancel = function() end
--- Called with a subagent's session id when the user presses the stop key on its lines.
M.on_stop_subagent = function(_) end
--- Called with the number of the turn under the cursor when the user presses the undo key.
M.on_undo_turn = function(_) end

local function scratch(name, filetype)
  local buf = api.nvim_create_buf(false, true)
  -- Names read as labels in tab lines and status lines ("Larik chat"), not as paths.
  api.nvim_buf_set_name(buf, name)
  vim.b[buf].larik = true
  vim.bo[buf].buftype = "nofile"
  vim.bo[buf].bufhidden = "hide"
  vim.bo[buf].swapfile = false
  vim.bo[buf].filetype = filetype
  return buf
end

local function map(buf, modes, lhs, rhs, desc)
  vim.keymap.set(modes, lhs, rhs, { buffer = buf, nowait = true, silent = true, desc = desc })
end

local function submit()
  local buf = state.input_buf
  local text = vim.trim(table.concat(api.nvim_buf_get_lines(buf, 0, -1, false), "\n"))
  if text == "" then
    return
  end
  api.nvim_buf_set_lines(buf, 0, -1, false, { "" })
  local attachment = state.attachment
  state.attachment = nil
  M.on_submit(text, attachment)
end

--- The transcript buffer, created on first use.
function M.buf()
  if state.chat_buf and api.nvim_buf_is_valid(state.chat_buf) then
    return state.chat_buf
  end
  local buf = scratch("Larik chat", "larik")
  vim.bo[buf].modifiable = false
  vim.bo[buf].undolevels = -1
  pcall(vim.treesitter.language.register, "markdown", "larik")
  if not pcall(vim.treesitter.start, buf, "markdown") then
    vim.bo[buf].syntax = "markdown"
  end
  map(buf, "n", "q", M.close, "Close the Larik chat")
  map(buf, { "n" }, "<C-c>", function()
    M.on_cancel()
  end, "Cancel the Larik turn")
  map(buf, "n", "<CR>", function()
    if not M.toggle_at_cursor() then
      M.diff_at_cursor()
    end
  end, "Show or hide what a read returned, or show the change on a file's line")
  map(buf, "n", "za", function()
    if not M.toggle_at_cursor() then
      pcall(vim.cmd, "normal! za") -- a thought's fold
    end
  end, "Show or hide what a read returned, or toggle a fold")
  local stop_key = config.get().subagents.keys.stop
  if stop_key then
    map(buf, "n", stop_key, function()
      local id = M.subagent_at_cursor()
      if id then
        M.on_stop_subagent(id)
      else
        vim.notify("Larik: no subagent on this line", vim.log.levels.WARN)
      end
    end, "Stop the Larik subagent under the cursor")
  end
  local undo_key = config.get().checkpoints.keys.undo
  if undo_key then
    map(buf, "n", undo_key, function()
      M.on_undo_turn(M.turn_at_cursor())
    end, "Undo the Larik turn under the cursor")
  end
  map(buf, "n", "i", M.focus_input, "Type a prompt")
  map(buf, "n", "a", M.focus_input, "Type a prompt")
  -- The transcript is read-only: reaching it from the prompt in Insert mode (a permission
  -- prompt taking the cursor, a click) lands in Normal mode, where its keys work.
  api.nvim_create_autocmd("BufEnter", { buffer = buf, command = "stopinsert" })
  state.chat_buf = buf
  state.transcript = transcript.new(buf)
  return buf
end

--- Expands or folds the read under the cursor in the chat window. Returns false elsewhere.
function M.toggle_at_cursor()
  local win = M.chat_win()
  if not (win and state.transcript) then
    return false
  end
  return state.transcript:toggle(api.nvim_win_get_cursor(win)[1] - 1)
end

--- The number of the turn the cursor is in, in the chat window, or nil.
function M.turn_at_cursor()
  local win = M.chat_win()
  if not (win and state.transcript) then
    return nil
  end
  return state.transcript:turn_at(api.nvim_win_get_cursor(win)[1] - 1)
end

--- Opens the change shown on the cursor's line (a file an edit or a command changed) side by
--- side. Returns false when the line shows none.
function M.diff_at_cursor()
  local win = M.chat_win()
  if not (win and state.transcript) then
    return false
  end
  local diff, call = state.transcript:diff_at(api.nvim_win_get_cursor(win)[1] - 1)
  if not diff then
    return false
  end
  require("larik.ui.diffview").open(diff, call and require("larik.ui.render").title_of(call))
  return true
end

--- The session id of the subagent shown on the cursor's line in the chat window, or nil.
function M.subagent_at_cursor()
  local win = M.chat_win()
  if not (win and state.transcript) then
    return nil
  end
  return state.transcript:subagent_at(api.nvim_win_get_cursor(win)[1] - 1)
end

--- The transcript object of the chat buffer.
---@return larik.Transcript
function M.transcript()
  M.buf()
  return state.transcript
end

function M.input_buf()
  if state.input_buf and api.nvim_buf_is_valid(state.input_buf) then
    return state.input_buf
  end
  local buf = scratch("Larik prompt", "larikinput")
  vim.bo[buf].syntax = "markdown"
  -- Vim's Markdown syntax marks `_` inside a word (snake_case) as an error; a prompt is prose
  -- with identifiers in it.
  api.nvim_buf_call(buf, function()
    pcall(vim.cmd, "syntax clear markdownError")
  end)
  map(buf, "n", "<CR>", submit, "Send the prompt")
  map(buf, { "n", "i" }, "<C-s>", function()
    vim.cmd("stopinsert")
    submit()
  end, "Send the prompt")
  map(buf, "n", "q", M.close, "Close the Larik chat")
  map(buf, { "n", "i" }, "<C-c>", function()
    M.on_cancel()
  end, "Cancel the Larik turn")
  -- `/` at the start of the prompt completes the agent's slash commands.
  completion.attach(buf)
  state.input_buf = buf
  return buf
end

function M.chat_win()
  local win = state.chat_buf and vim.fn.bufwinid(state.chat_buf) or -1
  return win ~= -1 and win or nil
end

function M.input_win()
  local win = state.input_buf and vim.fn.bufwinid(state.input_buf) or -1
  return win ~= -1 and win or nil
end

function M.is_open()
  return M.chat_win() ~= nil
end

local function size(total)
  local value = config.get().chat.size
  return value < 1 and math.max(math.floor(total * value), 20) or value
end

local function style_chat_window(win)
  local wo = vim.wo[win]
  wo.wrap, wo.linebreak = true, true
  wo.number, wo.relativenumber = false, false
  wo.signcolumn, wo.foldcolumn = "no", "0"
  wo.winfixwidth = true
  wo.foldmethod = "expr"
  wo.foldexpr = "v:lua.require'larik.ui.transcript'.foldexpr(v:lnum)"
  wo.foldlevel = 0
  wo.foldenable = config.get().chat.fold_thoughts
  wo.foldtext = "v:lua.require'larik.ui.transcript'.foldtext()"
  wo.fillchars = "fold: "
  wo.winbar = winbar_text(win)
  -- The transcript is markdown; the fences around a command and its output are not shown
  -- (tree-sitter's markdown query conceals their lines), on the cursor line too.
  wo.conceallevel, wo.concealcursor = 2, "nc"
end

local function style_input_window(win)
  local wo = vim.wo[win]
  wo.wrap = true
  wo.number, wo.relativenumber = false, false
  wo.signcolumn, wo.foldcolumn = "no", "0"
  wo.foldenable = false
  wo.winfixheight = true
  wo.winbar = "Prompt  (<CR> send · <C-c> cancel · / commands)"
end

--- Opens the chat (or leaves it where it is) and puts the cursor in the input.
---@param opts { focus: boolean|nil }|nil
function M.open(opts)
  opts = opts or {}
  local chat_buf, input_buf = M.buf(), M.input_buf()
  local chat_win = M.chat_win()
  if not chat_win then
    local position = config.get().chat.position
    if position == "tab" then
      vim.cmd("tabnew")
    elseif position == "bottom" then
      vim.cmd("botright " .. size(vim.o.lines) .. "split")
    elseif position == "left" then
      vim.cmd("topleft " .. size(vim.o.columns) .. "vsplit")
    else
      vim.cmd("botright " .. size(vim.o.columns) .. "vsplit")
    end
    chat_win = api.nvim_get_current_win()
    api.nvim_win_set_buf(chat_win, chat_buf)
    style_chat_window(chat_win)
    M.scroll_to_end(chat_win)
  end
  if not M.input_win() then
    api.nvim_win_call(chat_win, function()
      vim.cmd("belowright " .. config.get().chat.input_height .. "split")
      local input_win = api.nvim_get_current_win()
      api.nvim_win_set_buf(input_win, input_buf)
      style_input_window(input_win)
    end)
  end
  if opts.focus ~= false then
    M.focus_input()
  end
  return chat_win
end

--- Puts the cursor at the end of the prompt, in Insert mode: the user came to type (`i`,
--- `:Larik`), and `/` there opens the commands menu rather than a search.
function M.focus_input()
  local win = M.input_win()
  if win then
    api.nvim_set_current_win(win)
    vim.cmd("startinsert!")
  end
end

function M.focus_chat()
  local win = M.chat_win() or M.open({ focus = false })
  api.nvim_set_current_win(win)
  return win
end

function M.close()
  -- Either window may be missing (the user closed one), so no ipairs over a list with holes.
  local input_win, chat_win = M.input_win(), M.chat_win()
  for _, win in pairs({ input = input_win, chat = chat_win }) do
    if #api.nvim_list_wins() > 1 then
      pcall(api.nvim_win_close, win, false)
    end
  end
end

--- A selection to send along with the next prompt typed in the input.
function M.attach(selection)
  state.attachment = selection
end

--- Sets the winbar from `render(width)`, drawn again whenever the chat window's width changes.
---@param render fun(width: integer): string
function M.set_winbar(render)
  state.winbar = render
  local win = M.chat_win()
  if win then
    vim.wo[win].winbar = winbar_text(win)
  end
end

api.nvim_create_autocmd({ "WinResized", "VimResized" }, {
  group = api.nvim_create_augroup("larik_chat_winbar", { clear = true }),
  callback = function()
    local win = M.chat_win()
    if win then
      vim.wo[win].winbar = winbar_text(win)
    end
  end,
})

function M.scroll_to_end(win)
  local buf = M.buf()
  api.nvim_win_set_cursor(win, { api.nvim_buf_line_count(buf), 0 })
end

--- Runs `fn(transcript)` and keeps every chat window that was showing the last line on the
--- (new) last line, so streaming text stays in view without stealing the cursor from readers.
---@param fn fun(t: larik.Transcript)
function M.write(fn)
  local buf = M.buf()
  local followers = {}
  if config.get().chat.follow_tail then
    local count = api.nvim_buf_line_count(buf)
    for _, win in ipairs(vim.fn.win_findbuf(buf)) do
      if api.nvim_win_get_cursor(win)[1] >= count then
        followers[#followers + 1] = win
      end
    end
  end
  local result = fn(state.transcript)
  for _, win in ipairs(followers) do
    if api.nvim_win_is_valid(win) then
      M.scroll_to_end(win)
    end
  end
  return result
end

return M
