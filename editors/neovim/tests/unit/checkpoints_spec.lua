local checkpoints = require("larik.checkpoints")
local chat = require("larik.ui.chat")
local client = require("larik.client")
local config = require("larik.config")

local api = vim.api

-- busted loads each spec file's modules afresh, while an earlier file's chat buffers stay:
-- they go, so this file's chat module can name its own.
for _, buf in ipairs(api.nvim_list_bufs()) do
  local name = api.nvim_buf_get_name(buf)
  if name:match("Larik chat$") or name:match("Larik prompt$") then
    pcall(api.nvim_buf_delete, buf, { force = true })
  end
end

local CP1 = { id = "cp-1", createdAt = "2026-12-02T06:30:00Z", prompt = "Tidy the project", files = { "a.txt", "notes.md" }, skipped = {} }
local CP2 = { id = "cp-2", createdAt = "2026-12-02T06:41:09Z", prompt = "Rename it", files = { "a.txt" }, skipped = {} }

local function chat_lines()
  return api.nvim_buf_get_lines(chat.buf(), 0, -1, false)
end

local function write(path, text)
  local handle = assert(io.open(path, "wb"))
  handle:write(text)
  handle:close()
end

--- A turn in the chat, as the client writes one.
local function turn(prompt, said)
  return chat.write(function(t)
    t:user_prompt(prompt)
    t:append("message", said)
    t:close_segment()
    return t.turn
  end)
end

describe("checkpoints", function()
  local sent, answers, notes, prompts, real_notify, real_prompt, real_select, dir

  before_each(function()
    config.setup({})
    chat.transcript():clear()
    checkpoints.reset()
    dir = vim.fn.tempname()
    vim.fn.mkdir(dir, "p")
    sent, answers, notes, prompts = {}, {}, {}, {}
    client.state.phase = "ready"
    client.state.prompt_id = nil
    client.state.session = { id = "s", cwd = dir }
    -- The agent: each method answers from `answers` (a function may act before it answers).
    client.state.rpc = {
      request = function(_, method, params, callback)
        sent[#sent + 1] = { method, params }
        local answer = answers[method]
        if type(answer) == "function" then
          answer = answer(params)
        end
        callback(answer.error, answer.result)
        return #sent
      end,
    }
    real_notify, real_prompt, real_select = vim.notify, client.prompt, vim.ui.select
    vim.notify = function(message, level)
      notes[#notes + 1] = { message, level }
    end
    client.prompt = function(text)
      prompts[#prompts + 1] = text
    end
  end)

  after_each(function()
    vim.notify, client.prompt, vim.ui.select = real_notify, real_prompt, real_select
    client.state.rpc, client.state.session, client.state.phase = nil, nil, "stopped"
    vim.cmd("silent! %bwipeout!")
  end)

  it("read as the picker shows them, and what an undo did in words", function()
    assert.equal("cp-1 · 06:30 · “Tidy the project” · 2 files", checkpoints.format(CP1))
    assert.equal("cp-9 · (no prompt) · 1 file", checkpoints.format({ id = "cp-9", files = { "x" } }))
    local result = { checkpoint = CP1, restored = { "a.txt", "b.txt" }, removed = { "notes.md" }, kept = { "c.txt" } }
    assert.equal("Undid “Tidy the project” (cp-1): restored a.txt, b.txt; removed notes.md (the turn created them). c.txt: changed by you since, kept.", checkpoints.describe(result))
    assert.equal(
      "Undid “Tidy the project” (cp-1): no file needed restoring. Not reloaded, unsaved in Neovim: a.txt (:e! shows the restored file). Still open, no longer on disk: notes.md.",
      checkpoints.describe({ checkpoint = CP1, restored = {}, removed = {}, kept = {} }, { "a.txt" }, { "notes.md" })
    )
  end)

  it("belong to the turn after which they appear, which gets an undo line", function()
    answers["_larik/checkpoints"] = { result = { checkpoints = { CP1 } } }
    local first = turn("Tidy the project", "Tidied.")
    checkpoints.after_turn(first)
    assert.same({ "_larik/checkpoints", { sessionId = "s" } }, sent[1])
    assert.equal("↶ undo this turn (cp-1) · u", chat_lines()[#chat_lines()])
    assert.equal("cp-1", chat.transcript().turns[first].checkpoint)
    -- A turn that changed nothing adds none; the earlier one keeps its own.
    local second = turn("What changed?", "Nothing more.")
    checkpoints.after_turn(second)
    assert.is_nil(chat.transcript().turns[second].checkpoint)
    answers["_larik/checkpoints"] = { result = { checkpoints = { CP1, CP2 } } }
    local third = turn("Rename it", "Renamed.")
    checkpoints.after_turn(third)
    assert.equal("cp-2", chat.transcript().turns[third].checkpoint)
    assert.same({ "cp-2", "cp-1" }, checkpoints.complete(""))
    assert.same({ "cp-1" }, checkpoints.complete("cp-1"))
  end)

  it("undo: restored buffers reloaded, a removed file's buffer told, the turns greyed, the user told", function()
    answers["_larik/checkpoints"] = { result = { checkpoints = { CP1, CP2 } } }
    local first = turn("Tidy the project", "Tidied.")
    checkpoints.after_turn(first)
    local second = turn("Rename it", "Renamed.")
    checkpoints.after_turn(second)
    write(dir .. "/a.txt", "uno\n")
    write(dir .. "/notes.md", "# Notes\n")
    vim.cmd("edit " .. dir .. "/a.txt")
    local a_buf = api.nvim_get_current_buf()
    vim.cmd("edit " .. dir .. "/notes.md")
    local notes_buf = api.nvim_get_current_buf()
    answers["_larik/undo"] = function(params)
      assert.same({ sessionId = "s", checkpointId = "cp-1" }, params)
      -- The agent writes the files back before it answers.
      write(dir .. "/a.txt", "one\n")
      os.remove(dir .. "/notes.md")
      return { result = { checkpoint = CP1, restored = { "a.txt" }, removed = { "notes.md" }, kept = { "c.txt" } } }
    end
    local done
    checkpoints.undo("cp-1", function(err)
      done = err or true
    end)
    assert.is_true(done)
    assert.same({ "one" }, api.nvim_buf_get_lines(a_buf, 0, -1, false))
    assert.is_false(vim.bo[a_buf].modified)
    assert.is_true(vim.bo[notes_buf].modified, "the removed file's text is no longer on disk")
    local said = notes[#notes][1]
    assert.matches("^Larik: Undid “Tidy the project” %(cp%-1%): restored a.txt; removed notes.md", said)
    assert.matches("c.txt: changed by you since, kept.", said, 1, true)
    assert.matches("Still open, no longer on disk: notes.md.", said, 1, true)
    local t = chat.transcript()
    assert.is_true(t.turns[first].undone and t.turns[second].undone, "the later turn went with it")
    local lines = chat_lines()
    assert.truthy(lines[#lines]:match("^↶ Undid “Tidy the project” %(cp%-1%)"), lines[#lines])
    assert.truthy(lines[#lines]:match("The conversation is back to before that turn%.$"))
    assert.truthy(vim.tbl_contains(lines, "↶ undone (cp-2)"))
    assert.same({}, checkpoints.list())
    assert.same({}, checkpoints.complete(""))
  end)

  it("the undo key asks first, and says why when a turn has nothing to undo", function()
    answers["_larik/checkpoints"] = { result = { checkpoints = { CP1 } } }
    local first = turn("Tidy the project", "Tidied.")
    checkpoints.after_turn(first)
    local second = turn("Explain", "It is tidy.")
    checkpoints.after_turn(second)
    checkpoints.undo_turn(second)
    assert.equal("Larik: this turn changed no file: nothing to undo", notes[#notes][1])
    local asked
    vim.ui.select = function(items, opts, on_choice)
      asked = { items, opts.prompt }
      on_choice("Keep")
    end
    checkpoints.undo_turn(first)
    assert.same({ { "Undo", "Keep" }, "Undo cp-1 · 06:30 · “Tidy the project” · 2 files?" }, asked)
    assert.is_nil(sent[3], "kept: nothing sent")
    answers["_larik/undo"] = { result = { checkpoint = CP1, restored = { "a.txt" }, removed = {}, kept = {} } }
    vim.ui.select = function(_, _, on_choice)
      on_choice("Undo")
    end
    checkpoints.undo_turn(first)
    assert.equal("_larik/undo", sent[3][1])
    assert.is_true(chat.transcript().turns[first].undone)
    checkpoints.undo_turn(first)
    assert.equal("Larik: this turn was undone already", notes[#notes][1])
  end)

  it("mark the turns a typed /undo undid", function()
    answers["_larik/checkpoints"] = { result = { checkpoints = { CP1 } } }
    local first = turn("Tidy the project", "Tidied.")
    checkpoints.after_turn(first)
    answers["_larik/checkpoints"] = { result = { checkpoints = {} } }
    local undo = turn("/undo", "Undid the turn \"Tidy the project\" (cp-1)")
    checkpoints.after_turn(undo)
    assert.is_true(chat.transcript().turns[first].undone)
    assert.is_false(chat.transcript().turns[undo].undone)
  end)

  it("fall back to /undo and /checkpoints prompts with an agent that lacks the methods", function()
    local missing = { error = { code = -32601, message = "Method not found" } }
    answers["_larik/undo"] = missing
    answers["_larik/checkpoints"] = missing
    checkpoints.undo("cp-2")
    assert.same({ "/undo cp-2" }, prompts)
    assert.is_false(checkpoints.supported())
    checkpoints.undo(nil)
    assert.same({ "/undo cp-2", "/undo" }, prompts)
    assert.equal(1, #sent, "known unsupported: not asked again")
    checkpoints.reset()
    checkpoints.pick()
    assert.same({ "/undo cp-2", "/undo", "/checkpoints" }, prompts)
  end)

  it("refuse while a turn runs, and report the agent's error", function()
    client.state.prompt_id = 7
    checkpoints.undo(nil)
    assert.equal("Larik: a turn is running; :LarikCancel stops it", notes[#notes][1])
    assert.equal(0, #sent)
    client.state.prompt_id = nil
    answers["_larik/undo"] = { error = { code = -32602, message = "there is nothing to undo: no turn of this session changed a file" } }
    checkpoints.undo(nil)
    assert.equal("Larik: undo: there is nothing to undo: no turn of this session changed a file", notes[#notes][1])
    assert.same({ sessionId = "s" }, sent[1][2])
  end)

  it("of a loaded session go to the replayed turns of their prompts", function()
    chat.write(function(t)
      for _, prompt in ipairs({ "Tidy the project", "Explain", "Rename it" }) do
        t:append("user", prompt)
        t:append("message", "ok")
      end
    end)
    answers["_larik/checkpoints"] = { result = { checkpoints = { CP1, CP2 } } }
    checkpoints.refresh()
    local turns = chat.transcript().turns
    assert.same({ "cp-1", nil, "cp-2" }, { turns[1].checkpoint, turns[2].checkpoint, turns[3].checkpoint })
  end)
end)
