local render = require("larik.ui.render")
local config = require("larik.config")

describe("render", function()
  before_each(function()
    config.setup({})
  end)

  it("shows a tool call's status, title, locations and output", function()
    local cwd = vim.fn.getcwd()
    local lines = render.tool({
      toolCallId = "t",
      title = "Read notes",
      status = "in_progress",
      locations = { { path = cwd .. "/notes.txt", line = 4 } },
      content = { { type = "content", content = { type = "text", text = "hello\nworld\n" } } },
    })
    assert.same({ "◐ Read notes", "  → notes.txt:4", "```", "hello", "world", "```" }, lines)
  end)

  it("shows a finished read as one line with its length", function()
    local lines = render.tool({
      toolCallId = "t",
      title = "Read calc.py",
      kind = "read",
      status = "completed",
      locations = { { path = "calc.py" } },
      content = { { type = "content", content = { type = "text", text = "1\ta\n2\tb\n3\tc\n" } } },
    })
    assert.same({ "✓ Read calc.py (3 lines)" }, lines)
  end)

  it("shows what a read returned under its line once expanded, whole", function()
    config.setup({ chat = { max_output_lines = 2 } })
    local call = {
      toolCallId = "t",
      title = "Read calc.py",
      kind = "read",
      status = "completed",
      content = { { type = "content", content = { type = "text", text = "1\ta\n2\tb\n3\tc\n" } } },
      expanded = true,
    }
    assert.same({ "✓ Read calc.py (3 lines)", "```", "1\ta", "2\tb", "3\tc", "```" }, (render.tool(call)))
    assert.equal("1\ta\n2\tb\n3\tc", render.read_text(call))
    call.status = "in_progress"
    assert.is_nil(render.read_text(call))
  end)

  it("keeps the fences of output that has them and truncates long output", function()
    config.setup({ chat = { max_output_lines = 2 } })
    local lines = render.tool({
      toolCallId = "t",
      title = "Run",
      status = "completed",
      content = { { type = "content", content = { type = "text", text = "```sh\n$ ls\na\nb\nc\n```" } } },
    })
    assert.same({ "✓ Run", "```sh", "$ ls", "a", "… 2 more lines", "```" }, lines)
  end)

  it("summarises a diff", function()
    local lines = render.tool({
      toolCallId = "t",
      title = "Edit",
      status = "pending",
      content = { { type = "diff", path = "/elsewhere/a.txt", oldText = "a\nb\n", newText = "a\nB\nc\n" } },
    })
    assert.same({ "○ Edit", "  ± /elsewhere/a.txt (+2 −1)" }, lines)
    assert.equal("± new file x (+1 −0)", render.diff_summary({ path = "x", newText = "hi\n" }))
  end)

  it("shows the files a command changed, with their marks, under its output", function()
    local cwd = vim.fn.getcwd()
    local a = { type = "diff", path = cwd .. "/a.txt", oldText = "one\n", newText = "uno\n" }
    local b = { type = "diff", path = cwd .. "/b.txt", oldText = "two\nthree\n", newText = "" }
    local c = { type = "diff", path = cwd .. "/c.txt", newText = "" }
    local lines, highlights, _, diffs = render.tool({
      toolCallId = "t",
      status = "completed",
      rawInput = { command = "sed -i 's/one/uno/' a.txt && rm b.txt && touch c.txt", description = "tidy" },
      content = {
        { type = "content", content = { type = "text", text = "```sh\n$ sed -i 's/one/uno/' a.txt && rm b.txt && touch c.txt\n(no output)\n```" } },
        { type = "content", content = { type = "text", text = ("Files the command changed: changed %s/a.txt, deleted %s/b.txt, added %s/c.txt"):format(cwd, cwd, cwd) } },
        a,
        b,
        c,
      },
    })
    assert.same({
      "✓ tidy",
      "```sh",
      "$ sed -i 's/one/uno/' a.txt && rm b.txt && touch c.txt",
      "(no output)",
      "```",
      "  Files the command changed (3):",
      "    ~ changed `a.txt` (+1 −1)",
      "    − deleted `b.txt` (−2)",
      "    + added `c.txt`",
    }, lines)
    -- <CR> on a file's line opens its diff: the rows know theirs.
    assert.same({ [6] = a, [7] = b, [8] = c }, diffs)
    local marks = {}
    for _, hl in ipairs(highlights) do
      if hl[1] >= 6 then
        marks[#marks + 1] = { hl[1], lines[hl[1] + 1]:sub(hl[2] + 1, hl[3]), hl[4] }
      end
    end
    assert.same({ { 6, "~ changed", "LarikFileChanged" }, { 7, "− deleted", "LarikFileDeleted" }, { 8, "+ added", "LarikFileAdded" } }, marks)
  end)

  it("counts the files past the output limit", function()
    config.setup({ chat = { max_output_lines = 2 } })
    local lines = render.file_changes({ { kind = "added", path = "/x/1" }, { kind = "added", path = "/x/2" }, { kind = "added", path = "/x/3" } }, 2)
    assert.same({ "  Files the command changed (3):", "    + added `/x/1`", "    + added `/x/2`", "    … 1 more file" }, lines)
  end)

  it("maps an edit's diff summary to its diff", function()
    local item = { type = "diff", path = "/elsewhere/a.txt", oldText = "a\n", newText = "b\n" }
    local _, _, _, diffs = render.tool({ toolCallId = "t", title = "Edit", status = "completed", content = { item } })
    assert.same({ [1] = item }, diffs)
  end)

  it("says how to undo a turn, then that it was undone", function()
    assert.same({ "↶ undo this turn (cp-3) · u" }, (render.undo_line("cp-3", false)))
    assert.same({ "↶ undone (cp-3)" }, (render.undo_line("cp-3", true)))
    config.setup({ checkpoints = { keys = { undo = false } } })
    assert.same({ "↶ undo this turn (cp-3)" }, (render.undo_line("cp-3", false)))
  end)

  it("uses the configured icons", function()
    config.setup({ icons = { failed = "FAIL" } })
    assert.same({ "FAIL T" }, (render.tool({ toolCallId = "t", title = "T", status = "failed" })))
  end)

  it("numbers permission options and keeps their names verbatim", function()
    local lines = render.permission({
      toolCall = { title = "Edit a.txt" },
      options = { { optionId = "x", name = "Yes, and don't ask again for `edit`", kind = "allow_always" }, { optionId = "n", name = "No", kind = "reject_once" } },
    }, true)
    assert.same({
      "? Larik wants to: Edit a.txt",
      "  1. Yes, and don't ask again for `edit`",
      "  2. No",
      "  x dismiss · f reject with feedback · d review the change",
    }, lines)
  end)

  it("shows a command of its own in a block, with the warning outside the sandbox", function()
    local call = {
      title = "Run the tests (`python3 -m unittest -v 2>&1 | tail`)",
      rawInput = { command = "python3 -m unittest -v 2>&1 | tail", description = "Run the tests", sandbox = false },
    }
    local lines = render.permission({
      toolCall = call,
      options = {
        { optionId = "allow_once", name = "Allow once", kind = "allow_once" },
        { optionId = "allow_always", name = "Always allow `bash(python3 -m unittest*)` in this project", kind = "allow_always" },
        { optionId = "reject_once", name = "Reject", kind = "reject_once" },
      },
    }, false)
    assert.same({
      "? Larik wants to: Run the tests",
      "  ```sh",
      "  python3 -m unittest -v 2>&1 | tail",
      "  ```",
      "  ⚠ Runs outside the sandbox: full write and network access",
      "  1. Allow once",
      "  2. Always allow `bash(python3 -m unittest*)` in this project",
      "  3. Reject",
      "  x dismiss · f reject with feedback",
    }, lines)
    call.rawInput.sandbox = nil
    assert.is_nil(table.concat(render.permission({ toolCall = call, options = {} }, false), "\n"):find("sandbox"))
    -- While asked about, the call's own block is its header alone; once answered, the answer
    -- comes above its output.
    assert.same({ "○ Run the tests" }, (render.tool(vim.tbl_extend("force", call, { toolCallId = "t", asking = true, content = { { type = "content", content = { type = "text", text = "ok" } } } }))))
    local answered = render.tool(vim.tbl_extend("force", call, { toolCallId = "t", status = "completed", answer = "Allow once", answer_icon = "✓", content = { { type = "content", content = { type = "text", text = "ok" } } } }))
    assert.same({ "✓ Run the tests", "  ✓ Allow once", "```", "ok", "```" }, answered)
  end)

  it("shows the plan with its statuses", function()
    assert.same({ "Plan", "  ✓ one", "  ◐ two", "  ○ three" }, (render.plan({
      { content = "one", status = "completed" },
      { content = "two", status = "in_progress" },
      { content = "three", status = "pending" },
    })))
  end)
end)
