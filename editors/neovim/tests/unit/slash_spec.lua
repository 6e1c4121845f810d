local slash = require("larik.slash")

-- As the agent announces them: built-ins first, then MCP prompts, then skills and commands.
local commands = {
  { name = "compact", description = "Summarize the conversation so far to free context" },
  { name = "clear", description = "Start over with an empty conversation" },
  { name = "mode", description = "Switch mode", input = { hint = "default, accept-edits, plan or yolo" } },
  { name = "mcp__github__review_pr", description = "Review a pull request", input = { hint = "pr_number" } },
  { name = "code-review", description = "Review a change for correctness, tests and style", input = { hint = "[path or branch]" } },
  { name = "commit", description = "Create a git commit from the staged changes" },
  { name = "git:recent", description = "Summarize what changed in the last commits" },
}

local function names(items)
  return vim.tbl_map(function(item)
    return item.word
  end, items)
end

describe("slash command prefix", function()
  it("is a slash at the start of the prompt and the name's beginning", function()
    assert.equal("/", slash.prefix("/"))
    assert.equal("/co", slash.prefix("/co"))
    assert.equal("/git:re", slash.prefix("/git:re"))
    -- The prompt is trimmed when sent, so blank space and empty lines before it are nothing.
    assert.equal("/co", slash.prefix("  /co"))
    assert.equal("/co", slash.prefix("\n\n/co"))
  end)

  it("is not one after other text, or once the arguments began", function()
    assert.is_nil(slash.prefix("please /co"))
    assert.is_nil(slash.prefix("first line\n/co"))
    assert.is_nil(slash.prefix("x/co"))
    assert.is_nil(slash.prefix("/commit "))
    assert.is_nil(slash.prefix("/commit fix the"))
    assert.is_nil(slash.prefix(""))
  end)
end)

describe("slash command matches", function()
  it("are the commands whose name starts with what was typed, in the agent's order", function()
    assert.same({ "/compact", "/code-review", "/commit" }, names(slash.items(commands, "/co")))
    assert.same({ "/compact", "/commit" }, names(slash.items(commands, "/com")))
    assert.same({ "/mcp__github__review_pr" }, names(slash.items(commands, "/mcp")))
    assert.same({ "/git:recent" }, names(slash.items(commands, "/git:")))
    assert.equal(#commands, #slash.items(commands, "/"))
    assert.same({}, slash.items(commands, "/zz"))
  end)

  it("ignore case", function()
    assert.same({ "/compact", "/code-review", "/commit" }, names(slash.items(commands, "/CO")))
  end)

  it("offer nothing for a name typed whole that nothing longer extends", function()
    assert.same({}, slash.items(commands, "/commit"))
    local nested = { { name = "git" }, { name = "git:recent" } }
    assert.same({ "/git", "/git:recent" }, names(slash.items(nested, "/git")))
  end)

  it("list a name once, and skip entries without one", function()
    local list = { { name = "commit", description = "first" }, { name = "commit", description = "second" }, { description = "nameless" }, { name = "" } }
    local items = slash.items(list, "/")
    assert.same({ "/commit" }, names(items))
    assert.equal("first", items[1].menu)
  end)
end)

describe("slash command item", function()
  it("inserts /name and shows the hint and the description", function()
    local item = slash.item(commands[5])
    assert.equal("/code-review", item.word)
    assert.equal("/code-review", item.abbr)
    assert.equal("[path or branch]", item.kind)
    assert.equal("Review a change for correctness, tests and style", item.menu)
    assert.equal("/code-review [path or branch]\n\nReview a change for correctness, tests and style", item.info)
    assert.equal(1, item.icase)
    assert.same({ larik_command = "code-review" }, item.user_data)
  end)

  it("without a hint, has an empty kind and the usage is the name", function()
    local item = slash.item(commands[6])
    assert.equal("", item.kind)
    assert.equal("/commit\n\nCreate a git commit from the staged changes", item.info)
    assert.equal("/clear", slash.item({ name = "clear" }).info)
    assert.equal("", slash.item({ name = "x", input = { hint = "" } }).kind)
  end)

  it("cuts a long hint in the menu, the info has it whole", function()
    local item = slash.item({ name = "compact", description = "Summarize", input = { hint = "[what the summary should keep]" } })
    assert.equal("[what the summary s…", item.kind)
    assert.equal("/compact [what the summary should keep]\n\nSummarize", item.info)
    -- The menu's width counts the hint as cut.
    local matches = { { name = "compact", input = { hint = "[what the summary should keep]" } } }
    assert.equal(61 - (1 + 8 + 1 + 21 + 1), slash.menu_width(matches, 61))
  end)

  it("cuts a long description in the menu to its first line, the info has it whole", function()
    local long = "Review a change for correctness, tests and style before it is merged. Use when asked to review a diff."
    local item = slash.item({ name = "code-review", description = long })
    assert.equal("Review a change for correctness, tests and style before it…", item.menu)
    assert.is_true(vim.api.nvim_strwidth(item.menu) <= slash.max_menu_width)
    assert.truthy(item.info:find(long, 1, true))
    assert.equal("First line", slash.short("First line\nsecond line"))
    assert.equal("ééé…", slash.short("éééééé", 4))
  end)
end)

describe("slash command menu width", function()
  it("fits the descriptions to the room left of the screen's edge", function()
    local matches = slash.matches(commands, "/co") -- /code-review [path or branch] is the widest
    assert.equal(slash.max_menu_width, slash.menu_width(matches, nil))
    assert.equal(slash.max_menu_width, slash.menu_width(matches, 200))
    -- 1 + "/code-review" + 1 + "[path or branch]" + 1 + the menu + 1 = 61
    assert.equal(61 - 32, slash.menu_width(matches, 61))
    assert.equal(slash.min_menu_width, slash.menu_width(matches, 30))
    assert.equal(61 - 10, slash.menu_width(slash.matches(commands, "/comm"), 61))
  end)

  it("is asked for the slash's column", function()
    local asked
    local found = slash.complete({ "  /co" }, 5, commands, function(col)
      asked = col
      return 60
    end)
    assert.equal(2, asked)
    for _, item in ipairs(found.items) do
      assert.is_true(vim.api.nvim_strwidth(item.menu) <= 60 - 32, item.menu)
    end
    assert.equal("Summarize the conversation…", found.items[1].menu)
  end)
end)

describe("slash command completion", function()
  it("starts at the slash on the cursor's line", function()
    local found = slash.complete({ "/co" }, 3, commands)
    assert.equal(0, found.col)
    assert.same({ "/compact", "/code-review", "/commit" }, names(found.items))
    found = slash.complete({ "", "  /co" }, 5, commands)
    assert.equal(2, found.col)
  end)

  it("looks only at the text before the cursor", function()
    -- The cursor after "/co" of "/commit fix": the name's beginning is what counts.
    assert.same({ "/compact", "/code-review", "/commit" }, names(slash.complete({ "/commit fix" }, 3, commands).items))
    assert.is_nil(slash.complete({ "/commit fix" }, 11, commands))
  end)

  it("is nothing after other text or when nothing matches", function()
    assert.is_nil(slash.complete({ "please /co" }, 10, commands))
    assert.is_nil(slash.complete({ "explain this", "/co" }, 3, commands))
    assert.is_nil(slash.complete({ "/zz" }, 3, commands))
    assert.is_nil(slash.complete({ "/co" }, 3, {}))
    assert.is_nil(slash.complete({}, 0, commands))
  end)

  it("completes the first word of :LarikAsk", function()
    assert.same({ "/compact", "/code-review", "/commit" }, slash.cmdline("/co", commands))
    assert.same({}, slash.cmdline("fix /co", commands))
    assert.same({}, slash.cmdline("/commit fi", commands))
  end)
end)
