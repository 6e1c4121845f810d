local changes = require("larik.changes")

local function text(value)
  return { type = "content", content = { type = "text", text = value } }
end

describe("a command's change summary", function()
  it("is read back into files with their kinds, in its order", function()
    assert.same({
      { kind = "changed", path = "/p/a.txt" },
      { kind = "deleted", path = "/p/b.txt" },
      { kind = "added", path = "/p/c.txt" },
    }, changes.parse("Files the command changed: changed /p/a.txt, deleted /p/b.txt, added /p/c.txt"))
    -- A comma inside a path does not end it; only ", <kind> " starts the next file.
    assert.same({ { kind = "added", path = "/p/x, y.txt" }, { kind = "changed", path = "/p/z" } }, changes.parse("Files the command changed: added /p/x, y.txt, changed /p/z\n"))
    assert.same({}, changes.parse("Files the command changed: "))
  end)

  it("keeps the files the project ignores to one line, counted", function()
    local summary = "Files the command changed: changed /p/calc.py\nIgnored by the project: 3 files in `tests/__pycache__/` (2), `__pycache__/` (1)"
    assert.same({ { kind = "changed", path = "/p/calc.py" } }, changes.parse(summary))
    local files, _, ignored = changes.of({ text(summary), { type = "diff", path = "/p/calc.py", oldText = "a\n", newText = "b\n" } })
    assert.equal(1, #files)
    assert.same({ text = "3 files in `tests/__pycache__/` (2), `__pycache__/` (1)", count = 3 }, ignored)
    local lines = require("larik.ui.render").file_changes(files, 10, ignored)
    assert.same({
      "  Files the command changed (4):",
      "    ~ changed `calc.py` (+1 −1)",
      "    · ignored by the project: 3 files in `tests/__pycache__/` (2), `__pycache__/` (1)",
    }, vim.tbl_map(function(line)
      return (line:gsub("`/p/", "`"))
    end, lines))
  end)

  it("takes each file's diff from the blocks after it and says which blocks it explains", function()
    local content = {
      text("```sh\n$ sed -i s/one/uno/ a.txt && rm b.txt && touch c.txt\n(no output)\n```"),
      text("Files the command changed: changed /p/a.txt, deleted /p/b.txt, added /p/c.txt, added /p/logo.png"),
      { type = "diff", path = "/p/a.txt", oldText = "one\n", newText = "uno\n" },
      { type = "diff", path = "/p/b.txt", oldText = "two\n", newText = "" },
      { type = "diff", path = "/p/c.txt", newText = "" },
    }
    local files, items = changes.of(content)
    assert.same({ false, true, true, true, true }, { items[1] == true, items[2], items[3], items[4], items[5] })
    assert.same({ "changed", "deleted", "added", "added" }, vim.tbl_map(function(file)
      return file.kind
    end, files))
    assert.equal(content[3], files[1].diff)
    assert.equal(content[5], files[3].diff)
    assert.is_nil(files[4].diff, "a binary file has no diff, but is listed")
  end)

  it("lists a diff the summary does not name, its kind from its texts", function()
    local files = changes.of({
      text("Files the command changed: changed /p/a"),
      { type = "diff", path = "/p/new", newText = "x\n" },
      { type = "diff", path = "/p/gone", oldText = "x\n", newText = "" },
    })
    assert.same({ "/p/a", "/p/new", "/p/gone" }, vim.tbl_map(function(file)
      return file.path
    end, files))
    assert.same({ "changed", "added", "deleted" }, vim.tbl_map(function(file)
      return file.kind
    end, files))
  end)

  it("is absent from other calls", function()
    local files, items = changes.of({ text("a\nb"), { type = "diff", path = "/p/a", oldText = "a", newText = "b" } })
    assert.is_nil(files)
    assert.same({}, items)
    assert.is_nil((changes.of(nil)))
  end)
end)
