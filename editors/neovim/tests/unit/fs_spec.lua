local fs = require("larik.fs")
local config = require("larik.config")

local api = vim.api

local function temp_file(text)
  local path = vim.fn.tempname() .. ".txt"
  local handle = assert(io.open(path, "w"))
  handle:write(text)
  handle:close()
  return vim.uv.fs_realpath(path)
end

local function read_disk(path)
  local handle = assert(io.open(path))
  local text = handle:read("*a")
  handle:close()
  return text
end

describe("fs", function()
  before_each(function()
    config.setup({})
    vim.cmd("silent! %bwipeout!")
  end)

  it("reads a file from disk when no buffer shows it", function()
    local path = temp_file("one\ntwo\nthree\n")
    assert.same({ content = "one\ntwo\nthree\n" }, fs.read({ path = path }))
    assert.same({ content = "two\nthree\n" }, fs.read({ path = path, line = 2 }))
    assert.same({ content = "two\n" }, fs.read({ path = path, line = 2, limit = 1 }))
  end)

  it("reads the unsaved text of a loaded buffer", function()
    local path = temp_file("one\ntwo\n")
    vim.cmd("edit " .. path)
    api.nvim_buf_set_lines(0, 0, 1, false, { "changed" })
    assert.same({ content = "changed\ntwo\n" }, fs.read({ path = path }))
  end)

  it("answers a missing file with resource-not-found", function()
    local result, err = fs.read({ path = "/nonexistent/larik/file.txt" })
    assert.is_nil(result)
    assert.equal(-32002, err.code)
    local _, bad = fs.read({})
    assert.equal(-32602, bad.code)
  end)

  it("writes to disk, creating directories, when no buffer shows the file", function()
    local dir = vim.fn.tempname()
    local path = dir .. "/sub/new.txt"
    assert.same(vim.empty_dict(), fs.write({ path = path, content = "fresh\n" }))
    assert.equal("fresh\n", read_disk(path))
  end)

  it("writes into a loaded buffer as one undoable change and saves it", function()
    local path = temp_file("a\nb\n")
    vim.cmd("edit " .. path)
    local buf = api.nvim_get_current_buf()
    fs.write({ path = path, content = "a\nB\nc\n" })
    assert.same({ "a", "B", "c" }, api.nvim_buf_get_lines(buf, 0, -1, false))
    assert.equal("a\nB\nc\n", read_disk(path))
    assert.is_false(vim.bo[buf].modified)
    vim.cmd("silent undo")
    assert.same({ "a", "b" }, api.nvim_buf_get_lines(buf, 0, -1, false))
  end)

  it("leaves the buffer modified when saving is off", function()
    config.setup({ fs = { save = false } })
    local path = temp_file("x\n")
    vim.cmd("edit " .. path)
    fs.write({ path = path, content = "y\n" })
    assert.is_true(vim.bo.modified)
    assert.equal("x\n", read_disk(path))
    vim.cmd("silent undo")
  end)

  it("keeps a missing final newline", function()
    local path = temp_file("x\n")
    vim.cmd("edit " .. path)
    fs.write({ path = path, content = "no newline" })
    assert.equal("no newline", read_disk(path))
    assert.same({ content = "no newline" }, fs.read({ path = path }))
  end)
end)
