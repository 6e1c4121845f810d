--- Owns the plugin's options: the documented defaults, and the merge of the user's `setup()`
--- options over them. Every other module reads options through `config.get()`, so a later
--- `setup()` call takes effect everywhere. Options are validated once, at `setup()`.
local M = {}

---@class larik.Config
M.defaults = {
  -- The command that starts the agent, as a list (`{ "/path/to/larik", "acp" }`). When nil,
  -- `larik` is looked up (larik.binary): $LARIK_BIN, then PATH, then the folders pipx, pip, npm
  -- and cargo install into, then $CARGO_TARGET_DIR and the repository's target/ (release, then
  -- debug), then npm's own prefix; and started with `args`.
  cmd = nil,
  args = { "acp" },
  -- Extra environment for the agent process (it inherits Neovim's environment).
  env = {},
  -- The project directory of new sessions: a path, a function returning one, or nil for the
  -- current working directory.
  cwd = nil,
  -- Mode and model to select when a session starts (nil keeps the agent's defaults).
  mode = nil,
  model = nil,

  chat = {
    -- Where the chat opens: "right", "left", "bottom" or "tab".
    position = "right",
    -- Width (right/left) or height (bottom): a fraction of the editor, or a number of cells.
    size = 0.4,
    -- Height of the prompt input below the chat.
    input_height = 5,
    -- Tool output lines shown in a tool call block (the rest is summarised).
    max_output_lines = 12,
    -- Fold reasoning ("thoughts") so they take one line until opened with `za`.
    fold_thoughts = true,
    -- Move the chat's cursor along with new text when it sits on the last line.
    follow_tail = true,
    -- Open the menu of the agent's slash commands (built-ins, MCP prompts, skills, custom
    -- commands) when `/` is typed at the start of the prompt. false: <C-x><C-o> only.
    complete_commands = true,
  },

  review = {
    -- How proposed edits are shown: "inline" (the proposed file with deleted lines as virtual
    -- lines) or "split" (original and proposed side by side with :diffthis).
    style = "inline",
    -- Open the review as soon as the agent asks to change a file.
    auto_open = true,
    -- Show the chat beside the review, in the review's tab.
    show_chat = true,
    -- Keys in the review buffers.
    keys = {
      accept = "ga",
      reject = "gr",
      accept_all = "gA",
      reject_all = "gR",
      next = "]h",
      prev = "[h",
      close = "q",
    },
  },

  permission = {
    -- How permission requests are answered: "buffer" (the options in the chat, answered with
    -- 1, 2, 3...) or "select" (vim.ui.select, so any picker plugin shows them).
    ui = "buffer",
    -- Move the cursor to the chat when a request arrives (buffer UI only).
    focus = true,
    -- Keys in the chat buffer while a request is shown (besides the option numbers).
    keys = {
      dismiss = "x", -- answers "cancelled"
      feedback = "f", -- rejects with a reason typed with vim.ui.input
      diff = "d", -- opens the review of a proposed edit
    },
  },

  subagents = {
    -- Show each subagent (a child session the agent's `task` tool starts) nested under the
    -- task call that made it, with its state and calls, and let the user stop it. false: the
    -- agent sends the children's calls in the parent's turn, labelled with the task.
    nested = true,
    keys = {
      stop = "s", -- in the chat, on a running subagent's lines: stop that subagent alone
    },
  },

  checkpoints = {
    -- Ask before the undo key in the chat undoes a turn (it rewrites files and rewinds the
    -- conversation). :LarikUndo and :LarikCheckpoints never ask: they are the decision.
    confirm = true,
    keys = {
      undo = "u", -- in the chat, on a turn's lines: undo that turn (and the turns after it)
    },
  },

  -- Follow the agent: show the locations of the running tool call in the last file window.
  follow = false,

  context = {
    -- Send the current file, selection, open files and diagnostics before each prompt
    -- (when the agent supports Larik's editor context).
    editor = true,
    diagnostics = true,
    max_diagnostics = 50,
  },

  fs = {
    -- Let the agent read files through Neovim, so it sees unsaved buffer content.
    read = true,
    -- Let the agent write files through Neovim: a loaded buffer is changed in place (one undo
    -- step); other files are written to disk.
    write = true,
    -- Save a buffer after the agent wrote into it, so tools that read the disk (tests,
    -- compilers) see the change. With false the buffer is left modified.
    save = true,
  },

  -- Global keymaps, all under one prefix; false disables them. Each key may be false.
  keymaps = {
    prefix = "<leader>a",
    open = "o",
    ask = "a",
    cancel = "c",
    mode = "m",
    model = "M",
    sessions = "s",
    checkpoints = "u",
    log = "L",
  },

  log = {
    -- Protocol messages kept in memory for :LarikLog.
    max_entries = 2000,
    -- Also append every message to this file (nil: memory only).
    file = nil,
  },

  icons = {
    pending = "○",
    in_progress = "◐",
    completed = "✓",
    failed = "✗",
    cancelled = "⊘",
    thought = "∴",
    permission = "?",
  },
}

local options = vim.deepcopy(M.defaults)

local enums = {
  ["chat.position"] = { "right", "left", "bottom", "tab" },
  ["review.style"] = { "inline", "split" },
  ["permission.ui"] = { "buffer", "select" },
}

--- Checks the options that take one of a few values, so a typo fails at setup and not
--- halfway through a turn.
---@param merged larik.Config
local function validate(merged)
  for key, allowed in pairs(enums) do
    local section, name = key:match("^(%w+)%.(%w+)$")
    local value = merged[section][name]
    if not vim.tbl_contains(allowed, value) then
      error(("larik: %s must be one of %s, got %s"):format(key, table.concat(allowed, ", "), vim.inspect(value)))
    end
  end
  if merged.cmd ~= nil and type(merged.cmd) ~= "table" then
    error("larik: cmd must be a list such as { '/path/to/larik', 'acp' }")
  end
end

---@param user table|nil
function M.setup(user)
  local merged = vim.tbl_deep_extend("force", vim.deepcopy(M.defaults), user or {})
  if user and user.keymaps == false then
    merged.keymaps = false
  end
  validate(merged)
  options = merged
  return options
end

---@return larik.Config
function M.get()
  return options
end

return M
