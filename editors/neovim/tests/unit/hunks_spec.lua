local hunks = require("larik.hunks")

local function lines(text)
  return (hunks.split(text))
end

describe("hunks", function()
  it("splits text into lines and remembers the final newline", function()
    assert.same({ { "a", "b" }, true }, { hunks.split("a\nb\n") })
    assert.same({ { "a", "b" }, false }, { hunks.split("a\nb") })
    assert.same({ {}, false }, { hunks.split("") })
    assert.same({ {}, false }, { hunks.split(nil) })
    assert.equal("a\nb\n", hunks.join({ "a", "b" }, true))
    assert.equal("", hunks.join({}, true))
  end)

  it("finds separate hunks, numbered from 0", function()
    local old = lines("1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n")
    local new = lines("ONE\n2\n3\n4\n5\n6\n7\n8\n9\nTEN\n")
    local found = hunks.compute(old, new)
    assert.equal(2, #found)
    assert.same({ index = 0, before = 0, old = { "1" }, new = { "ONE" } }, found[1])
    assert.same({ index = 1, before = 9, old = { "10" }, new = { "TEN" } }, found[2])
  end)

  it("places pure insertions and deletions", function()
    local old = lines("a\nb\nc\n")
    local inserted = hunks.compute(old, lines("a\nb\nx\ny\nc\n"))
    assert.same({ { index = 0, before = 2, old = {}, new = { "x", "y" } } }, inserted)
    local deleted = hunks.compute(old, lines("a\nc\n"))
    assert.same({ { index = 0, before = 1, old = { "b" }, new = {} } }, deleted)
    local at_top = hunks.compute(old, lines("z\na\nb\nc\n"))
    assert.same({ { index = 0, before = 0, old = {}, new = { "z" } } }, at_top)
  end)

  it("rebuilds the file from the kept hunks only", function()
    local old = lines("1\n2\n3\n4\n5\n")
    local new = lines("ONE\n2\n3\nnew\n4\n")
    local found = hunks.compute(old, new)
    assert.equal(3, #found)
    local all = hunks.apply(old, found, function()
      return true
    end)
    assert.same(new, all)
    local none = hunks.apply(old, found, function()
      return false
    end)
    assert.same(old, none)
    local first_only, placements = hunks.apply(old, found, function(hunk)
      return hunk.index == 0
    end)
    assert.same({ "ONE", "2", "3", "4", "5" }, first_only)
    assert.same({ row = 0, count = 1, applied = true }, placements[1])
    assert.same({ row = 3, count = 0, applied = false }, placements[2])
    assert.same({ row = 4, count = 1, applied = false }, placements[3])
  end)

  it("reads the agent's hunks with unified-diff numbers", function()
    local old = lines("x = 1\n2\n3\n4\n5\n6\n7\n8\n9\n")
    local new = lines("x = 2\n2\n3\n4\n5\n6\n7\n8\n9\ny\nz\n")
    local agent = {
      { index = 0, oldStart = 1, oldLines = 1, newStart = 1, newLines = 1, oldText = "x = 1\n", newText = "x = 2\n" },
      { index = 1, oldStart = 9, oldLines = 0, newStart = 10, newLines = 2, oldText = "", newText = "y\nz\n" },
    }
    local read = hunks.from_agent(agent, old, new)
    assert.same({ index = 0, before = 0, old = { "x = 1" }, new = { "x = 2" } }, read[1])
    assert.same({ index = 1, before = 9, old = {}, new = { "y", "z" } }, read[2])
  end)

  it("rejects agent hunks that do not rebuild the proposed text", function()
    local old = lines("a\nb\n")
    local new = lines("a\nB\n")
    assert.is_nil(hunks.from_agent({ { index = 0, oldStart = 1, oldLines = 1, newStart = 1, newLines = 1, oldText = "a\n", newText = "A\n" } }, old, new))
    assert.is_nil(hunks.from_agent({}, old, new))
    assert.is_nil(hunks.from_agent(nil, old, new))
    assert.is_nil(hunks.from_agent({ { index = 0 } }, old, new))
  end)

  it("counts added and removed lines", function()
    local found = hunks.compute(lines("a\nb\nc\n"), lines("a\nx\ny\n"))
    assert.same({ 2, 2 }, { hunks.stats(found) })
  end)

  it("uses vim.diff where vim.text.diff does not exist (Neovim 0.10)", function()
    local text = rawget(vim, "text")
    package.loaded["larik.hunks"] = nil
    rawset(vim, "text", false)
    local ok, legacy = pcall(require, "larik.hunks")
    rawset(vim, "text", text)
    package.loaded["larik.hunks"] = hunks
    assert.is_true(ok)
    assert.same(hunks.compute(lines("a\nb\n"), lines("a\nB\n")), legacy.compute(lines("a\nb\n"), lines("a\nB\n")))
  end)
end)
