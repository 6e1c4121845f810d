local subagents = require("larik.subagents")
local render = require("larik.ui.render")
local updates = require("larik.updates")
local chat = require("larik.ui.chat")
local permission = require("larik.ui.permission")
local client = require("larik.client")
local config = require("larik.config")
local winbar = require("larik.ui.winbar")

local api = vim.api

-- busted loads each spec file's modules afresh, while an earlier file's chat buffers stay:
-- they go, so this file's chat module can name its own.
for _, buf in ipairs(api.nvim_list_bufs()) do
  local name = api.nvim_buf_get_name(buf)
  if name:match("Larik chat$") or name:match("Larik prompt$") then
    pcall(api.nvim_buf_delete, buf, { force = true })
  end
end

local function announce(registry, id, title, call)
  return registry:update({
    sessionUpdate = "subagent_update",
    sessionId = id,
    title = title,
    cwd = "/p",
    capabilities = { cancel = {} },
    state = { state = "running" },
    _meta = { larik = { toolCallId = call } },
  })
end

local function chat_lines()
  return api.nvim_buf_get_lines(chat.buf(), 0, -1, false)
end

describe("subagent records", function()
  it("are announced once, then change only what an update carries", function()
    local registry = subagents.new()
    local child, announced = announce(registry, "p-t1", "explore: find alpha", "t1")
    assert.is_true(announced)
    assert.same({ "p-t1", "explore: find alpha", "t1", "running", true }, { child.id, child.title, child.parent, child.state, child.cancellable })
    local same, again = registry:update({ sessionId = "p-t1", state = { state = "idle", stopReason = "end_turn" } })
    assert.equal(child, same)
    assert.is_false(again)
    assert.same({ "explore: find alpha", "t1", "idle", "end_turn" }, { child.title, child.parent, child.state, child.stop_reason })
    assert.is_nil(registry:update({ title = "no id" }))
  end)

  it("say running, stopping, done or stopped", function()
    local registry = subagents.new()
    local child = announce(registry, "c", "explore: x", "t")
    assert.equal("running", subagents.status(child))
    assert.is_true(subagents.can_stop(child))
    child.stopping = true
    assert.equal("stopping", subagents.status(child))
    assert.is_false(subagents.can_stop(child))
    registry:update({ sessionId = "c", state = { state = "idle", stopReason = "cancelled" } })
    assert.is_false(child.stopping)
    assert.same({ "stopped", "cancelled" }, { subagents.status(child), subagents.tool_status(child) })
    child.stop_reason = "end_turn"
    assert.same({ "done", "completed" }, { subagents.status(child), subagents.tool_status(child) })
    child.stop_reason = "max_turn_requests"
    assert.same({ "stopped: request limit", "failed" }, { subagents.status(child), subagents.tool_status(child) })
  end)

  it("can be stopped only when they said so", function()
    local registry = subagents.new()
    local child = registry:update({ sessionId = "c", title = "explore: x", state = { state = "running" } })
    assert.is_false(subagents.can_stop(child))
  end)

  it("are found by session id or title among the running ones, in order", function()
    local registry = subagents.new()
    announce(registry, "a", "explore: find alpha", "t1")
    announce(registry, "b", "explore: wait forever", "t2")
    assert.equal("b", registry:find("explore: wait forever").id)
    assert.equal("a", registry:find("a").id)
    registry:update({ sessionId = "a", state = { state = "idle", stopReason = "end_turn" } })
    assert.is_nil(registry:find("explore: find alpha"))
    assert.same({ "b" }, vim.tbl_map(function(child)
      return child.id
    end, registry:list(true)))
    assert.equal(2, #registry:list())
  end)

  it("keep their own tool calls, and their latest text", function()
    local registry = subagents.new()
    local child = announce(registry, "c", "explore: x", "t")
    registry:append_text(child, "Looking")
    registry:merge_tool(child, { sessionUpdate = "tool_call", toolCallId = "c1", title = "Read a.txt", kind = "read" })
    assert.equal("", child.text, "a call starts a new message")
    local call = registry:merge_tool(child, { sessionUpdate = "tool_call_update", toolCallId = "c1", status = "completed" })
    assert.same({ toolCallId = "c1", title = "Read a.txt", kind = "read", status = "completed" }, call)
    assert.same({ "c1" }, child.order)
  end)

  it("still running when the agent exits are ended", function()
    local registry = subagents.new()
    announce(registry, "a", "explore: a", "t1")
    local b = announce(registry, "b", "explore: b", "t2")
    registry:update({ sessionId = "a", state = { state = "idle", stopReason = "end_turn" } })
    assert.same({ b }, registry:abandon("agent_exited"))
    assert.equal("ended: the agent exited", subagents.status(b))
  end)
end)

describe("subagent rendering", function()
  before_each(function()
    config.setup({})
  end)

  local function child_with_read(status)
    local registry = subagents.new()
    local child = announce(registry, "p-t1", "explore: find alpha", "t1")
    registry:merge_tool(child, { toolCallId = "c1", title = "Read alpha.txt", kind = "read", status = status or "completed", content = { { type = "content", content = { type = "text", text = "1\talpha\n" } } } })
    return registry, child
  end

  it("shows the state, the stop key while it can stop, each call's line and what it says", function()
    local registry, child = child_with_read()
    registry:merge_tool(child, { toolCallId = "c2", title = "Search beta", status = "in_progress" })
    registry:append_text(child, "Found alpha.\nNow bet")
    assert.same({ "◐ explore: find alpha · running · s stop", "  ✓ Read alpha.txt (1 line)", "  ◐ Search beta", "  Now bet" }, (render.subagent(child)))
    child.stopping = true
    assert.equal("◐ explore: find alpha · stopping", render.subagent(child)[1])
    registry:merge_tool(child, { toolCallId = "c2", status = "completed" })
    registry:update({ sessionId = "p-t1", state = { state = "idle", stopReason = "end_turn" } })
    -- Done: its report is the task call's output, so its text is not repeated.
    assert.same({ "✓ explore: find alpha · done", "  ✓ Read alpha.txt (1 line)", "  ✓ Search beta" }, (render.subagent(child)))
  end)

  it("keeps the latest calls and counts the others", function()
    config.setup({ chat = { max_output_lines = 2 } })
    local registry = subagents.new()
    local child = announce(registry, "c", "explore: busy", "t")
    for index = 1, 5 do
      registry:merge_tool(child, { toolCallId = "c" .. index, title = "Step " .. index, status = "completed" })
    end
    assert.same({ "◐ explore: busy · running · s stop", "  … 3 earlier calls", "  ✓ Step 4", "  ✓ Step 5" }, (render.subagent(child)))
  end)

  it("nests the children under their task call, above its report, and says which rows are whose", function()
    local _, alpha = child_with_read()
    local registry = subagents.new()
    local stuck = announce(registry, "p-t2", "explore: wait forever", "t2")
    local call = { toolCallId = "t1", title = "explore: find alpha", status = "in_progress", subagents = { alpha, stuck }, content = { { type = "content", content = { type = "text", text = "alpha done" } } } }
    local lines, highlights, owners = render.tool(call)
    assert.same({
      "◐ explore: find alpha",
      "  ◐ subagent · running · s stop",
      "    ✓ Read alpha.txt (1 line)",
      "  ◐ explore: wait forever · running · s stop",
      "  alpha done",
    }, lines)
    assert.same({ [1] = "p-t1", [2] = "p-t1", [3] = "p-t2" }, owners)
    -- The nested call's icon is highlighted where it now stands.
    local found = false
    for _, hl in ipairs(highlights) do
      if hl[1] == 2 and hl[4] == "LarikToolDone" then
        found = hl[2] == 4
      end
    end
    assert.is_true(found, vim.inspect(highlights))
  end)

  it("names the subagent in its permission prompt and in the answer", function()
    local request = { toolCall = { toolCallId = "c1", title = "Write notes.txt" }, options = { { optionId = "allow_once", name = "Allow once", kind = "allow_once" } } }
    assert.equal("? Larik (general-purpose: write notes) wants to: Write notes.txt", render.permission(request, false, "general-purpose: write notes")[1])
    assert.equal("? Larik wants to: Write notes.txt", render.permission(request, false)[1])
    assert.same({ "? general-purpose: write notes · Write notes.txt → Allow once" }, (render.permission_answered(request, "Allow once", "general-purpose: write notes")))
  end)

  it("counts running subagents in the winbar", function()
    assert.equal("%#LarikWinbar#Larik%* · %#LarikWinbarBusy#1 subagent running%*%<", winbar.render({ state = "ready", subagents = 1 }))
    assert.equal("%#LarikWinbar#Larik%* · %#LarikWinbarBusy#● working%* · %#LarikWinbarBusy#2 subagents running%*%<", winbar.render({ state = "working", subagents = 2 }))
  end)
end)

describe("subagent updates", function()
  local fake

  before_each(function()
    config.setup({})
    chat.transcript():clear()
    fake = {
      state = { session = { id = "p" }, tools = {}, subagents = subagents.new() },
      refresh = function() end,
      set_config_options = function() end,
    }
  end)

  local function update(session, fields)
    updates.apply(fake, { sessionId = session, update = fields })
  end

  it("show a child's calls and text under its task call, apart from the parent's ids", function()
    update("p", { sessionUpdate = "tool_call", toolCallId = "t1", title = "explore: find alpha", status = "in_progress" })
    update("p", { sessionUpdate = "tool_call", toolCallId = "c1", title = "Parent's own c1", status = "completed" })
    update("p", { sessionUpdate = "subagent_update", sessionId = "p-t1", title = "explore: find alpha", capabilities = { cancel = {} }, state = { state = "running" }, _meta = { larik = { toolCallId = "t1" } } })
    update("p-t1", { sessionUpdate = "tool_call", toolCallId = "c1", title = "Read alpha.txt", kind = "read" })
    update("p-t1", { sessionUpdate = "tool_call_update", toolCallId = "c1", status = "completed", content = { { type = "content", content = { type = "text", text = "alpha\n" } } } })
    update("p-t1", { sessionUpdate = "agent_message_chunk", content = { type = "text", text = "alpha do" } })
    update("p-t1", { sessionUpdate = "usage_update", used = 999, size = 1000 })
    assert.same({
      "## Larik",
      "◐ explore: find alpha",
      "  ◐ subagent · running · s stop",
      "    ✓ Read alpha.txt (1 line)",
      "    alpha do",
      "",
      "✓ Parent's own c1",
    }, chat_lines())
    assert.equal("Parent's own c1", fake.state.tools.c1.title, "the child's c1 left the parent's alone")
    assert.is_nil(fake.state.session.usage, "the child's usage is not the session's")
    local t = chat.transcript()
    assert.equal("p-t1", t:subagent_at(2))
    assert.equal("p-t1", t:subagent_at(3))
    assert.is_nil(t:subagent_at(1))
    assert.is_nil(t:subagent_at(6))

    update("p", { sessionUpdate = "subagent_update", sessionId = "p-t1", state = { state = "idle", stopReason = "end_turn" } })
    update("p", { sessionUpdate = "tool_call_update", toolCallId = "t1", status = "completed", content = { { type = "content", content = { type = "text", text = "alpha done" } } } })
    assert.same({ "✓ explore: find alpha", "  ✓ subagent · done", "    ✓ Read alpha.txt (1 line)", "  alpha done" }, vim.list_slice(chat_lines(), 2, 5))
  end)

  it("show a child whose task call is not in the chat on its own", function()
    update("p", { sessionUpdate = "subagent_update", sessionId = "p-bg", title = "explore: survey", capabilities = { cancel = {} }, state = { state = "running" }, _meta = { larik = { toolCallId = "gone" } } })
    assert.same({ "## Larik", "◐ explore: survey · running · s stop" }, chat_lines())
    assert.equal("p-bg", chat.transcript():subagent_at(1))
  end)

  it("of an unknown session are dropped", function()
    update("someone-else", { sessionUpdate = "agent_message_chunk", content = { type = "text", text = "hi" } })
    assert.same({ "" }, chat_lines())
  end)
end)

describe("stopping a subagent", function()
  local sent, answers

  before_each(function()
    config.setup({})
    permission.cancel_all()
    vim.wait(50, function()
      return false
    end)
    chat.transcript():clear()
    sent, answers = {}, {}
    client.state.session = { id = "p" }
    client.state.tools = {}
    client.state.subagents = subagents.new()
    client.state.rpc = {
      notify = function(_, method, params)
        sent[#sent + 1] = { method, params }
      end,
    }
  end)

  after_each(function()
    permission.cancel_all()
    client.state.rpc, client.state.session = nil, nil
    client.state.subagents = subagents.new()
  end)

  local function enqueue(id, session, label)
    permission.enqueue(id, { sessionId = session, toolCall = { toolCallId = "c" .. id, title = "Run " .. id }, options = { { optionId = "allow_once", name = "Allow once", kind = "allow_once" } } }, function(result)
      answers[#answers + 1] = { id, result.outcome.outcome }
    end, { label = label, session = session })
  end

  it("cancels its session alone and answers its waiting requests cancelled", function()
    announce(client.state.subagents, "p-t2", "explore: wait forever", "t2")
    enqueue(1, "p-t2", "explore: wait forever")
    enqueue(2, "p-t3", "explore: other")
    assert.matches("^%? Larik %(explore: wait forever%) wants to: Run 1", chat_lines()[2])
    assert.is_true(client.stop_subagent("p-t2"))
    assert.same({ { "session/cancel", { sessionId = "p-t2" } } }, sent)
    assert.same({ { 1, "cancelled" } }, answers)
    assert.equal(1, permission.pending_count(), "the other subagent's request still waits")
    assert.equal("stopping", subagents.status(client.state.subagents:get("p-t2")))
    -- Once asked, again is nothing new; an ended one cannot be stopped.
    assert.is_true(client.stop_subagent("p-t2"))
    assert.equal(1, #sent)
    client.state.subagents:update({ sessionId = "p-t2", state = { state = "idle", stopReason = "cancelled" } })
    local ok, why = client.stop_subagent("p-t2")
    assert.is_false(ok)
    assert.matches("already ended", why)
  end)

  it("is offered as a key on its lines and as :LarikStopTask with its title", function()
    announce(client.state.subagents, "p-a", "explore: find alpha", "t1")
    announce(client.state.subagents, "p-b", "explore: wait forever", "t2")
    assert.same({ "explore:\\ find\\ alpha", "explore:\\ wait\\ forever" }, vim.fn.getcompletion("LarikStopTask ", "cmdline"))
    assert.same({ "explore:\\ wait\\ forever" }, vim.fn.getcompletion("LarikStopTask explore:\\ w", "cmdline"))
    vim.cmd("LarikStopTask explore:\\ wait\\ forever")
    assert.same({ { "session/cancel", { sessionId = "p-b" } } }, sent)
    local keys = vim.tbl_map(function(map)
      return map.lhs
    end, api.nvim_buf_get_keymap(chat.buf(), "n"))
    assert.is_true(vim.tbl_contains(keys, "s"), vim.inspect(keys))
  end)
end)

describe("initialize", function()
  it("advertises subagents as child sessions unless turned off", function()
    config.setup({})
    local encoded = vim.json.encode(client.initialize_params().clientCapabilities)
    assert.matches('"subagents":{}', encoded, 1, true)
    config.setup({ subagents = { nested = false } })
    assert.is_nil(client.initialize_params().clientCapabilities.subagents)
    config.setup({})
  end)
end)
