-- Runs the unit specs with Debian's lua-busted inside Neovim, so specs have the whole vim.* API:
--   nvim -l tests/run_busted.lua [busted options] tests/unit
-- Exits non-zero when a spec fails; the last line reads "busted: N passed, N failed".
package.path = "/usr/share/lua/5.1/?.lua;/usr/share/lua/5.1/?/init.lua;" .. package.path
package.cpath = "/usr/lib/x86_64-linux-gnu/lua/5.1/?.so;" .. package.cpath

local root = vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":p:h:h")
vim.opt.runtimepath:prepend(root)
vim.cmd("runtime plugin/larik.lua")

local has_output = false
for _, value in ipairs(arg) do
  if value:match("^%-o") or value:match("^%-%-output") then
    has_output = true
  end
end
if not has_output then
  table.insert(arg, 1, "--output=" .. root .. "/tests/busted_output.lua")
end

-- On failure busted raises an empty error (its Lua 5.1 way to exit non-zero): exit 1 quietly.
local ok = pcall(require("busted.runner"), { standalone = false })
os.exit(ok and 0 or 1)
