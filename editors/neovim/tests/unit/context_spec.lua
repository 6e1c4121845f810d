local context = require("larik.context")
local config = require("larik.config")

local api = vim.api

describe("context", function()
  local path

  before_each(function()
    config.setup({})
    vim.cmd("silent! %bwipeout!")
    path = vim.fn.tempname() .. ".py"
    vim.fn.writefile({ "x = 1", "y = z", "print(y)" }, path)
    path = vim.uv.fs_realpath(path)
    context.track()
    vim.cmd("edit " .. path)
  end)

  it("describes a selection of whole lines", function()
    local selection = context.selection(0, 2, 3)
    assert.same({ path = path, startLine = 2, endLine = 3, text = "y = z\nprint(y)\n" }, selection)
    local block = context.selection_block(selection)
    assert.equal("resource", block.type)
    assert.equal("file://" .. path .. "#L2-L3", block.resource.uri)
    assert.equal("y = z\nprint(y)\n", block.resource.text)
  end)

  it("builds the editor context with the active file, open files and diagnostics", function()
    local ns = api.nvim_create_namespace("context_spec")
    vim.diagnostic.set(ns, 0, {
      { lnum = 1, col = 4, severity = vim.diagnostic.severity.ERROR, message = "undefined z" },
      { lnum = 2, col = 0, severity = vim.diagnostic.severity.HINT, message = "a hint" },
    })
    -- The chat has focus when a prompt is sent: the last file window still counts.
    vim.cmd("botright new")
    vim.bo.buftype = "nofile"
    local params = context.editor_context("sess_1", nil)
    assert.equal("sess_1", params.sessionId)
    assert.equal(path, params.activeFile)
    assert.same({ path }, params.openFiles)
    assert.same({
      { path = path, line = 2, severity = "error", message = "undefined z" },
      { path = path, line = 3, severity = "hint", message = "a hint" },
    }, params.diagnostics)
    vim.cmd("close")
    vim.diagnostic.reset(ns)
  end)

  it("caps diagnostics and can leave them out", function()
    local ns = api.nvim_create_namespace("context_spec_many")
    local many = {}
    for i = 1, 10 do
      many[i] = { lnum = 0, col = 0, severity = 1, message = "e" .. i }
    end
    vim.diagnostic.set(ns, 0, many)
    config.setup({ context = { max_diagnostics = 3 } })
    assert.equal(3, #context.editor_context("s").diagnostics)
    config.setup({ context = { diagnostics = false } })
    assert.is_nil(context.editor_context("s").diagnostics)
    vim.diagnostic.reset(ns)
  end)
end)
