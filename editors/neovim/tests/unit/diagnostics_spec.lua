local diagnostics = require("larik.diagnostics")

local api = vim.api
local severity = vim.diagnostic.severity

local function temp_file(text)
  local path = vim.fn.tempname() .. ".py"
  local handle = assert(io.open(path, "w"))
  handle:write(text)
  handle:close()
  return vim.uv.fs_realpath(path)
end

--- Calls `diagnostics.request` and waits (pumping the loop) for its one answer.
local function ask(params)
  local answers = {}
  diagnostics.request(params, function(result, err)
    answers[#answers + 1] = { result = result, err = err }
  end)
  vim.wait(2000, function()
    return #answers > 0
  end, 10)
  return answers[1], answers
end

describe("diagnostics", function()
  local ns = api.nvim_create_namespace("larik_diagnostics_spec")

  before_each(function()
    diagnostics.track()
    vim.cmd("silent! %bwipeout!")
  end)

  it("converts positions to 1-based and names the severity", function()
    assert.same(
      { line = 5, character = 7, severity = "error", message = '"gret" is not defined', source = "pyright" },
      diagnostics.convert({ lnum = 4, col = 6, severity = severity.ERROR, message = '"gret" is not defined', source = "pyright" })
    )
    assert.equal("warning", diagnostics.convert({ lnum = 0, col = 0, severity = severity.WARN, message = "w" }).severity)
    assert.equal("information", diagnostics.convert({ lnum = 0, col = 0, severity = severity.INFO, message = "i" }).severity)
    assert.equal("hint", diagnostics.convert({ lnum = 0, col = 0, severity = severity.HINT, message = "h" }).severity)
  end)

  it("answers null for a file no buffer shows", function()
    local answer = ask({ sessionId = "s", path = temp_file("x = 1\n"), waitMs = 50 })
    assert.equal(vim.NIL, answer.result.diagnostics)
  end)

  it("answers null for a buffer with no language server and no diagnostics", function()
    local path = temp_file("x = 1\n")
    vim.cmd("edit " .. path)
    local answer = ask({ sessionId = "s", path = path, waitMs = 50 })
    assert.equal(vim.NIL, answer.result.diagnostics)
  end)

  it("answers at once what the buffer shows when its diagnostics are current", function()
    local path = temp_file("x = 1\nprint(y)\n")
    vim.cmd("edit " .. path)
    vim.diagnostic.set(ns, 0, { { lnum = 1, col = 6, severity = severity.ERROR, message = '"y" is not defined', source = "pyright" } })
    local started = vim.uv.now()
    local answer = ask({ sessionId = "s", path = path, waitMs = 1500 })
    assert.is_true(vim.uv.now() - started < 500)
    assert.same({ { line = 2, character = 7, severity = "error", message = '"y" is not defined', source = "pyright" } }, answer.result.diagnostics)
  end)

  it("waits for the diagnostics of changed text, answering once", function()
    local path = temp_file("x = 1\n")
    vim.cmd("edit " .. path)
    local buf = api.nvim_get_current_buf()
    vim.diagnostic.set(ns, buf, {})
    vim.diagnostic.set(ns, buf, { { lnum = 0, col = 0, severity = severity.HINT, message = "old" } })
    api.nvim_buf_set_lines(buf, 0, -1, false, { "x = gret" })
    vim.defer_fn(function()
      vim.diagnostic.set(ns, buf, { { lnum = 0, col = 4, severity = severity.ERROR, message = '"gret" is not defined' } })
    end, 100)
    local answer, answers = ask({ sessionId = "s", path = path, waitMs = 1500 })
    assert.same({ { line = 1, character = 5, severity = "error", message = '"gret" is not defined' } }, answer.result.diagnostics)
    vim.wait(100)
    assert.equal(1, #answers)
  end)

  it("answers what it has when waitMs passes", function()
    local path = temp_file("x = 1\n")
    vim.cmd("edit " .. path)
    local buf = api.nvim_get_current_buf()
    vim.diagnostic.set(ns, buf, { { lnum = 0, col = 0, severity = severity.WARN, message = "stale" } })
    api.nvim_buf_set_lines(buf, 0, -1, false, { "x = 2" })
    local answer = ask({ sessionId = "s", path = path, waitMs = 100 })
    assert.equal("stale", answer.result.diagnostics[1].message)
  end)

  it("reloads an unmodified buffer whose file changed on disk", function()
    local path = temp_file("x = 1\n")
    vim.cmd("edit " .. path)
    local buf = api.nvim_get_current_buf()
    vim.diagnostic.set(ns, buf, { { lnum = 0, col = 0, severity = severity.WARN, message = "w" } })
    local handle = assert(io.open(path, "w"))
    handle:write("x = 2\ny = 3\n")
    handle:close()
    ask({ sessionId = "s", path = path, waitMs = 50 })
    assert.same({ "x = 2", "y = 3" }, api.nvim_buf_get_lines(buf, 0, -1, false))
  end)
end)
