--- Owns what :checkhealth larik learns about the agent's environment: the report of
--- `larik doctor --json` (run with a timeout, in the project, with the plugin's `env`), read
--- into checks; and, for a binary without that subcommand, the probes the plugin can make on
--- its own (language servers and Chromium on PATH, `larik sandbox check`, `larik mcp list`).
--- Nothing here draws: health.lua does.
local M = {}

--- How long `larik doctor` may take; it starts the project's MCP servers to list them.
M.timeout_ms = 15000

--- The statuses a doctor check may carry, as vim.health reports them.
M.statuses = { ok = true, warning = true, error = true }

--- The language servers the agent starts on its own, each with the binaries it tries (the
--- agent's built-in list).
M.language_servers = {
  { name = "pyright", binaries = { "pyright-langserver", "basedpyright-langserver" } },
  { name = "typescript", binaries = { "typescript-language-server" } },
  { name = "gopls", binaries = { "gopls" } },
  { name = "clangd", binaries = { "clangd" } },
  { name = "rust-analyzer", binaries = { "rust-analyzer" } },
}

--- The browsers the agent's browser tools look for on PATH, in its order.
M.chromium = { "chromium", "chromium-browser", "google-chrome-stable", "google-chrome", "chrome" }

local function first_line(text)
  text = vim.trim(text or "")
  return text:match("^[^\n]*") or ""
end

--- Reads the output of `larik doctor --json`. Returns the report, or nil and why it is not
--- one (an older binary answers with usage text on stderr and code 2).
---@param result { code: integer, stdout: string|nil, stderr: string|nil }|nil nil: no answer
---@return { ok: boolean, checks: { id: string, title: string, status: string, detail: string }[] }|nil, string|nil
function M.parse(result)
  -- Killed at the timeout (124), or no result at all: a child of its kept the output open.
  if result == nil or result.code == 124 then
    return nil, ("it did not answer within %d s"):format(math.floor(M.timeout_ms / 1000))
  end
  local ok, report = pcall(vim.json.decode, vim.trim(result.stdout or ""), { luanil = { object = true, array = true } })
  if not ok or type(report) ~= "table" or type(report.checks) ~= "table" then
    local why = first_line(result.stderr)
    if why == "" then
      why = first_line(result.stdout)
    end
    return nil, ("exit code %s%s"):format(tostring(result.code), why ~= "" and ": " .. why or "")
  end
  local checks = {}
  for _, check in ipairs(report.checks) do
    if type(check) == "table" then
      checks[#checks + 1] = {
        id = tostring(check.id or "?"),
        title = tostring(check.title or check.id or "?"),
        -- An unknown status is shown, as a warning, rather than dropped.
        status = M.statuses[check.status] and check.status or "warning",
        detail = type(check.detail) == "string" and check.detail or "",
      }
    end
  end
  return { ok = report.ok == true, checks = checks }
end

--- Runs `larik doctor --json` with `path`, in `cwd`, with `env` added to Neovim's environment.
---@param path string
---@param cwd string|nil
---@param env table<string,string>|nil
function M.run(path, cwd, env)
  local ok, result = pcall(function()
    return vim.system({ path, "doctor", "--json" }, { text = true, cwd = cwd, env = env }):wait(M.timeout_ms)
  end)
  if not ok then
    return nil, tostring(result)
  end
  return M.parse(result)
end

--- Runs another `larik` subcommand for its text: the output, or nil and why not.
---@param path string
---@param args string[]
---@return string|nil, string|nil
function M.text(path, args, cwd, env)
  local command = { path }
  vim.list_extend(command, args)
  local ok, result = pcall(function()
    return vim.system(command, { text = true, cwd = cwd, env = env }):wait(M.timeout_ms)
  end)
  if not ok then
    return nil, tostring(result)
  end
  if result == nil or result.code == 124 then
    return nil, "no answer in time"
  end
  if result.code ~= 0 then
    return nil, ("exit code %s: %s"):format(tostring(result.code), first_line(result.stderr))
  end
  return vim.trim(result.stdout or "")
end

--- The sandbox's one-line state from `larik sandbox check` ("on: user, mount… namespaces").
---@return string|nil, string|nil
function M.sandbox(path, cwd, env)
  local text, err = M.text(path, { "sandbox", "check" }, cwd, env)
  if not text then
    return nil, err
  end
  return text:match("\n?Sandbox:%s*([^\n]+)") or first_line(text)
end

local function on_path(names)
  for _, name in ipairs(names) do
    local found = vim.fn.exepath(name)
    if found ~= "" then
      return found
    end
  end
end

--- The agent's language servers that are on PATH, and those that are not.
---@return { name: string, path: string|nil, binaries: string[] }[]
function M.probe_language_servers()
  local list = {}
  for _, server in ipairs(M.language_servers) do
    list[#list + 1] = { name = server.name, path = on_path(server.binaries), binaries = server.binaries }
  end
  return list
end

--- The Chromium the browser tools would start, or nil.
---@return string|nil
function M.probe_chromium()
  return on_path(M.chromium)
end

return M
