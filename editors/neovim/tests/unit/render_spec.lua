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
      "? Permission: Edit a.txt",
      "  1. Yes, and don't ask again for `edit`",
      "  2. No",
      "  x dismiss · f reject with feedback · d review the change",
    }, lines)
  end)

  it("shows the plan with its statuses", function()
    assert.same({ "Plan", "  [x] one", "  [~] two", "  [ ] three" }, (render.plan({
      { content = "one", status = "completed" },
      { content = "two", status = "in_progress" },
      { content = "three", status = "pending" },
    })))
  end)
end)
