local config = require("larik.config")
local updates = require("larik.updates")
local winbar = require("larik.ui.winbar")
local client = require("larik.client")

describe("config", function()
  it("merges options over the defaults", function()
    local merged = config.setup({ chat = { position = "left" }, review = { keys = { accept = "<leader>y" } } })
    assert.equal("left", merged.chat.position)
    assert.equal(0.4, merged.chat.size)
    assert.equal("<leader>y", merged.review.keys.accept)
    assert.equal("gr", merged.review.keys.reject)
    assert.equal(merged, config.get())
  end)

  it("rejects unknown choices at setup", function()
    assert.has_error(function()
      config.setup({ review = { style = "sideways" } })
    end)
    assert.has_error(function()
      config.setup({ cmd = "larik acp" })
    end)
    config.setup({})
  end)

  it("can turn the global keymaps off", function()
    assert.is_false(config.setup({ keymaps = false }).keymaps)
    config.setup({})
  end)
end)

describe("tool call merging", function()
  it("replaces present fields and keeps absent ones", function()
    local tools = {}
    updates.merge_tool(tools, { sessionUpdate = "tool_call", toolCallId = "t", title = "Edit", kind = "edit", locations = { { path = "/a" } } })
    local merged = updates.merge_tool(tools, { toolCallId = "t", status = "completed", content = { { type = "content" } } })
    assert.same({ toolCallId = "t", title = "Edit", kind = "edit", status = "completed", locations = { { path = "/a" } }, content = { { type = "content" } } }, merged)
    assert.equal(merged, tools.t)
  end)

  it("starts an unknown call as pending", function()
    assert.equal("pending", updates.merge_tool({}, { toolCallId = "u", title = "x" }).status)
  end)
end)

describe("winbar", function()
  it("shows mode, model, usage and the working state", function()
    local text = winbar.render({ state = "working", mode = "plan", model = "claude-x", usage = { used = 53000, size = 200000, cost = { amount = 0.045, currency = "USD" } } })
    assert.equal("%#LarikWinbar#Larik%* · %#LarikWinbarBusy#● working%*%< · mode: plan · model: claude-x · ctx 53k/200k (27%%) $0.04", text)
    assert.equal("%#LarikWinbar#Larik%* · %#LarikWinbarWaiting#● waiting for you%*%<", winbar.render({ state = "waiting" }))
    -- Small turns are not rounded to nothing.
    assert.equal("$0.0009", winbar.cost({ amount = 0.0009, currency = "USD" }))
    assert.equal("$1.20", winbar.cost({ amount = 1.2 }))
    assert.equal("%#LarikWinbar#Larik%*%<", winbar.render({ state = "ready" }))
    assert.equal("%#LarikWinbar#Larik%* · starting%<", winbar.render({ state = "starting" }))
  end)

  it("fits the width: the title shortened, then model, context and mode dropped, the status kept", function()
    local status = {
      state = "waiting",
      mode = "default",
      model = "claude-sonnet-4-5",
      title = "Fix the failing tests in calc.py",
      usage = { used = 142, size = 200000, cost = { amount = 0.0028 } },
    }
    local function plain(width)
      local text = winbar.render(status, width):gsub("%%#[%w]+#", ""):gsub("%%%*", ""):gsub("%%<", ""):gsub("%%%%", "%%")
      return text
    end
    local wide = plain(200)
    assert.equal("Larik · ● waiting for you · Fix the failing tests in calc.py · mode: default · model: claude-sonnet-4-5 · ctx 142/200k (0%) $0.0028", wide)
    for width = 20, 140 do
      assert.is_true(vim.api.nvim_strwidth(plain(width)) <= math.max(width, 25), width .. ": " .. plain(width) .. " is " .. vim.api.nvim_strwidth(plain(width)))
    end
    -- The default chat width (about 60 cells): status, a readable title and the mode.
    assert.equal("Larik · ● waiting for you · Fix the failing… · mode: default", plain(60))
    assert.equal("Larik · ● waiting for you · mode: default", plain(45))
    assert.equal("Larik · ● waiting for you", plain(30))
  end)
end)

describe("client", function()
  it("advertises fs access, hunk review and editor diagnostics", function()
    config.setup({})
    local params = client.initialize_params()
    assert.equal(1, params.protocolVersion)
    assert.same({ readTextFile = true, writeTextFile = true }, params.clientCapabilities.fs)
    assert.same({ larik = { hunkReview = true, diagnostics = true } }, params.clientCapabilities._meta)
    config.setup({ fs = { read = false, write = false } })
    assert.same({ readTextFile = false, writeTextFile = false }, client.initialize_params().clientCapabilities.fs)
    config.setup({})
  end)

  it("offers Larik's modes until the agent names its own", function()
    client.state.session = nil
    assert.same({ "default", "accept-edits", "plan", "yolo" }, client.mode_ids())
    client.state.session = { id = "s", modes = { currentModeId = "a", availableModes = { { id = "a" }, { id = "b" } } } }
    assert.same({ "a", "b" }, client.mode_ids())
    client.set_config_options({ { id = "model", category = "model", currentValue = "m1", options = { { value = "m1" }, { value = "m2" } } } })
    assert.equal("m1", client.state.session.model)
    assert.same({ "m1", "m2" }, client.model_ids())
    client.state.session = nil
  end)
end)

describe("setup", function()
  it("maps global keys only under the prefix, or none", function()
    require("larik").setup({ keymaps = { prefix = "<F5>", log = false } })
    assert.not_equal("", vim.fn.maparg("<F5>o", "n"))
    assert.not_equal("", vim.fn.maparg("<F5>a", "x"))
    assert.equal("<Cmd>LarikCheckpoints<CR>", vim.fn.maparg("<F5>u", "n"))
    assert.equal("", vim.fn.maparg("<F5>L", "n"))
    require("larik").setup({ keymaps = false })
    assert.equal("", vim.fn.maparg("<F6>o", "n"))
    config.setup({})
  end)

  it("defines the commands", function()
    for _, name in ipairs({ "Larik", "LarikAsk", "LarikCancel", "LarikStopTask", "LarikMode", "LarikModel", "LarikSessions", "LarikUndo", "LarikCheckpoints", "LarikLog" }) do
      assert.equal(2, vim.fn.exists(":" .. name), name)
    end
  end)
end)

describe("binary", function()
  local binary = require("larik.binary")

  it("uses the cmd option when it is executable", function()
    config.setup({ cmd = { "/bin/sh", "-c", "true" } })
    assert.same({ "/bin/sh", "-c", "true" }, binary.command())
    config.setup({ cmd = { "/nonexistent/larik", "acp" } })
    local command, err = binary.command()
    assert.is_nil(command)
    assert.matches("not executable", err)
    config.setup({})
  end)

  it("looks at $LARIK_BIN, PATH, then builds in the repository", function()
    local sources = vim.tbl_map(function(candidate)
      return candidate.source
    end, binary.candidates())
    assert.equal("repository build", sources[#sources])
    assert.matches("/target/debug/larik$", binary.candidates()[#sources].path)
  end)
end)
