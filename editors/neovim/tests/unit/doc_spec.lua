-- doc/larik.txt as Vim help: `:helptags` accepts it (no duplicate tags), every |link| outside
-- examples names a tag (its own or Neovim's), and every user command and option the plugin
-- defines has its tag. The generated doc/tags is left in place for :help, and ignored by git.
local root = vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":p:h:h:h")
local doc = root .. "/doc"

local function read_lines(path)
  local lines = {}
  for line in io.lines(path) do
    lines[#lines + 1] = line
  end
  return lines
end

local function tags_of(path)
  local tags = {}
  for _, line in ipairs(read_lines(path)) do
    local tag = line:match("^([^\t]+)\t")
    if tag then
      tags[tag] = true
    end
  end
  return tags
end

--- The |links| of a help file, outside example blocks (a line ending in `>` or `>lang` opens
--- one; a line starting with `<`, or one not indented, closes it).
local function links_of(lines)
  local links, in_example = {}, false
  for number, line in ipairs(lines) do
    if in_example and (line:match("^<") or line:match("^%S")) then
      in_example = false
    end
    if not in_example then
      for link in line:gmatch("|([^|%s]+)|") do
        links[#links + 1] = { tag = link, line = number }
      end
      if line:match("%s>%w*$") or line:match("^>%w*$") then
        in_example = true
      end
    end
  end
  return links
end

--- The option names the plugin documents: every top-level key, and the keys of its sections
--- (`keymaps` and `icons` are documented as wholes, like each `keys` table).
local function option_names()
  local names = {}
  for key, value in pairs(require("larik.config").defaults) do
    names[#names + 1] = key
    if type(value) == "table" and key ~= "keymaps" and key ~= "icons" and not vim.islist(value) then
      for sub in pairs(value) do
        names[#names + 1] = key .. "." .. sub
      end
    end
  end
  table.sort(names)
  return names
end

describe("doc/larik.txt", function()
  local tags, lines

  setup(function()
    local result = vim.system({ vim.v.progpath, "--clean", "--headless", "-c", "helptags " .. doc, "-c", "q" }, { text = true }):wait(20000)
    assert.equal(0, result.code, result.stderr)
    -- :helptags reports a duplicate tag (E154) as an error message, not an exit code.
    assert.equal("", vim.trim(result.stderr or ""))
    tags = tags_of(doc .. "/tags")
    lines = read_lines(doc .. "/larik.txt")
  end)

  it("is a help file: its first line tags it, its last is a help modeline", function()
    assert.matches("^%*larik%.txt%*", lines[1])
    assert.truthy(tags["larik.txt"])
    assert.matches("vim:.*ft=help", lines[#lines])
  end)

  it("has a target for every link", function()
    local known = tags_of(vim.env.VIMRUNTIME .. "/doc/tags")
    local missing = {}
    for _, link in ipairs(links_of(lines)) do
      if not tags[link.tag] and not known[link.tag] then
        missing[#missing + 1] = ("line %d: |%s|"):format(link.line, link.tag)
      end
    end
    assert.same({}, missing)
    assert.is_true(#links_of(lines) > 20)
  end)

  it("has a tag for every user command the plugin defines", function()
    local commands = vim.tbl_keys(vim.api.nvim_get_commands({}))
    local ours = vim.tbl_filter(function(name)
      return name:match("^Larik")
    end, commands)
    assert.is_true(#ours >= 10, vim.inspect(ours))
    local missing = vim.tbl_filter(function(name)
      return not tags[":" .. name]
    end, ours)
    assert.same({}, missing)
  end)

  it("has a tag for every option", function()
    local missing = vim.tbl_filter(function(name)
      return not tags["larik-config-" .. name]
    end, option_names())
    assert.same({}, missing)
  end)

  it("documents the health check and the agent's doctor", function()
    assert.truthy(tags["larik-health"])
    local text = table.concat(lines, "\n")
    assert.matches("larik doctor %-%-json", text)
  end)
end)
