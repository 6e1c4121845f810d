local chat = require("larik.ui.chat")
local completion = require("larik.ui.completion")
local config = require("larik.config")
local updates = require("larik.updates")

local api = vim.api

local commands = {
  { name = "compact", description = "Summarize the conversation so far to free context" },
  { name = "code-review", description = "Review a change for correctness, tests and style", input = { hint = "[path or branch]" } },
  { name = "commit", description = "Create a git commit from the staged changes" },
}

local function words(items)
  return vim.tbl_map(function(item)
    return item.word
  end, items)
end

local root = vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":p:h:h:h")

--- A child Neovim running the plugin, typed into as a user would (`nvim_input`: keys arrive
--- one by one, with Neovim waiting for each, so TextChangedI runs as on a real keyboard).
local Child = {}
Child.__index = Child

function Child.start(options, list, older)
  local channel = vim.fn.jobstart({ vim.v.progpath, "--embed", "--headless", "--clean", "-n" }, { rpc = true })
  local child = setmetatable({ channel = channel }, Child)
  child:lua(
    [[
    local root, options, commands, older = ...
    vim.opt.rtp:prepend(root)
    vim.cmd("runtime plugin/larik.lua")
    -- As on Neovim 0.10, where 'completeopt' is global only.
    require("larik.ui.completion").local_completeopt = not older
    require("larik").setup(options)
    require("larik.client").state.session = { id = "s", commands = commands }
    require("larik.ui.chat").open()
    ]],
    root,
    options or vim.empty_dict(),
    list,
    older or false
  )
  return child
end

function Child:lua(code, ...)
  return vim.fn.rpcrequest(self.channel, "nvim_exec_lua", code, { ... })
end

--- Types each of `keys` once the child has handled the ones before (it waits for input).
function Child:type(keys)
  for _, key in ipairs(keys) do
    vim.fn.rpcrequest(self.channel, "nvim_input", key)
    vim.wait(2000, function()
      return not vim.fn.rpcrequest(self.channel, "nvim_get_mode").blocking and vim.fn.rpcrequest(self.channel, "nvim_eval", "getchar(1)") == 0
    end, 5)
  end
end

--- The words of the menu showing in the child (narrowed to what was typed), or nil.
function Child:menu()
  local words = self:lua([[
    local info = vim.fn.complete_info({ "pum_visible", "items" })
    if info.pum_visible ~= 1 then return nil end
    local typed = vim.api.nvim_get_current_line():sub(1, vim.fn.col(".") - 1):lower()
    local out = {}
    for _, item in ipairs(info.items) do
      if item.word:lower():sub(1, #typed) == typed then out[#out + 1] = item.word end
    end
    return out
  ]])
  return words ~= vim.NIL and words or nil -- nil comes back over RPC as vim.NIL
end

function Child:wait_menu(expected)
  local last
  local ok = vim.wait(5000, function()
    last = self:menu()
    return vim.deep_equal(last, expected)
  end, 10)
  assert.is_true(ok, "the menu never showed " .. vim.inspect(expected) .. "; last " .. vim.inspect(last))
end

function Child:line()
  return self:lua("return vim.api.nvim_get_current_line()")
end

function Child:stop()
  vim.fn.jobstop(self.channel)
end

describe("prompt completion", function()
  local client

  before_each(function()
    config.setup({})
    client = { state = { session = { id = "s", commands = {} } }, refresh = function() end }
    completion.commands = function()
      return client.state.session.commands
    end
    updates.apply(client, { sessionId = "s", update = { sessionUpdate = "available_commands_update", availableCommands = commands } })
  end)

  it("does not mark snake_case in the prompt as a Markdown error, and still highlights Markdown", function()
    local buf = chat.input_buf()
    api.nvim_buf_set_lines(buf, 0, -1, false, { "rename some_name **now**" })
    local function group(col)
      return api.nvim_buf_call(buf, function()
        return vim.fn.synIDattr(vim.fn.synID(1, col, 1), "name")
      end)
    end
    assert.matches("markdownBold", group(20))
    assert.are_not.equal("markdownError", group(12))
    api.nvim_buf_set_lines(buf, 0, -1, false, { "" })
  end)

  it("keeps the agent's list from available_commands_update", function()
    assert.same(commands, client.state.session.commands)
  end)

  it("sets the prompt's omnifunc and a menu that inserts nothing before a choice", function()
    local buf = chat.input_buf()
    assert.equal("v:lua.require'larik.ui.completion'.omnifunc", vim.bo[buf].omnifunc)
    if completion.local_completeopt then
      assert.truthy(vim.bo[buf].completeopt:find("noinsert", 1, true))
      assert.truthy(vim.bo[buf].completeopt:find("menuone", 1, true))
    end
  end)

  it("adds only what the menu needs to the user's completeopt", function()
    assert.equal("menu,popup,menuone,noinsert", completion.completeopt("menu,popup"))
    assert.equal("menuone,noselect", completion.completeopt("menuone,noselect"))
    assert.equal("menu,menuone,noinsert", completion.completeopt(""))
    assert.equal("menu,longest,menuone,noinsert", completion.completeopt("longest"))
  end)

  it("completes :LarikAsk /co<Tab>", function()
    assert.same({ "/compact", "/code-review", "/commit" }, vim.fn.getcompletion("LarikAsk /co", "cmdline"))
    assert.same({ "/commit" }, vim.fn.getcompletion("'<,'>LarikAsk /comm", "cmdline"))
    assert.same({}, vim.fn.getcompletion("LarikAsk fix /co", "cmdline"))
  end)

  it("answers the omnifunc at a slash and not after other text", function()
    local buf = chat.input_buf()
    api.nvim_set_current_buf(buf)
    api.nvim_buf_set_lines(buf, 0, -1, false, { "/co" })
    api.nvim_win_set_cursor(0, { 1, 3 })
    assert.equal(0, completion.omnifunc(1, ""))
    assert.same({ "/compact", "/code-review", "/commit" }, words(completion.omnifunc(0, "/co")))
    assert.same({ "/commit" }, words(completion.omnifunc(0, "/comm")))
    api.nvim_buf_set_lines(buf, 0, -1, false, { "see /co" })
    api.nvim_win_set_cursor(0, { 1, 7 })
    assert.equal(-3, completion.omnifunc(1, ""))
  end)

  it("opens the menu as / is typed at the start of the prompt, narrowed as the name is typed", function()
    local child = Child.start(nil, commands)
    child:type({ "/" })
    child:wait_menu({ "/compact", "/code-review", "/commit" })
    child:type({ "c", "o", "m" })
    child:wait_menu({ "/compact", "/commit" })
    child:type({ "m", "<C-y>", " ", "f", "i", "x" })
    assert.equal("/commit fix", child:line())
    assert.is_nil(child:menu())
    child:stop()
  end)

  it("opens no menu after other text", function()
    local child = Child.start(nil, commands)
    child:type({ "f", "i", "x", " ", "/", "c", "o" })
    assert.is_nil(child:menu())
    assert.equal("fix /co", child:line())
    child:stop()
  end)

  it("opens no menu when turned off; <C-x><C-o> still completes", function()
    local child = Child.start({ chat = { complete_commands = false } }, commands)
    child:type({ "/", "c", "o" })
    assert.is_nil(child:menu())
    child:type({ "<C-x><C-o>" })
    child:wait_menu({ "/compact", "/code-review", "/commit" })
    child:stop()
  end)

  it("without a buffer-local completeopt, sets the global one for the menu's lifetime only", function()
    local child = Child.start(nil, commands, true)
    child:lua("vim.o.completeopt = 'menu,preview'")
    child:type({ "/", "c", "o" })
    child:wait_menu({ "/compact", "/code-review", "/commit" })
    assert.equal("/co", child:line(), "nothing inserted before a choice")
    assert.equal("menu,preview,menuone,noinsert", child:lua("return vim.o.completeopt"))
    child:type({ "<C-e>" })
    assert.equal("menu,preview", child:lua("return vim.o.completeopt"))
    child:stop()
  end)

  it("stays closed after <C-e> until the name is typed on", function()
    local child = Child.start(nil, commands)
    child:type({ "/", "c", "o" })
    child:wait_menu({ "/compact", "/code-review", "/commit" })
    child:type({ "<C-e>" })
    assert.is_nil(child:menu())
    assert.equal("/co", child:line())
    child:type({ "m" })
    child:wait_menu({ "/compact", "/commit" })
    child:stop()
  end)

  it("shows a new list from the agent in a menu that is open", function()
    local child = Child.start(nil, commands)
    child:type({ "/", "c", "o" })
    child:wait_menu({ "/compact", "/code-review", "/commit" })
    child:lua([[
      require("larik.updates").apply(require("larik.client"), { sessionId = "s", update = {
        sessionUpdate = "available_commands_update", availableCommands = { { name = "code-review" }, { name = "compact" }, { name = "cost" } } } })
    ]])
    child:wait_menu({ "/code-review", "/compact", "/cost" })
    child:stop()
  end)
end)
