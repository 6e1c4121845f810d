--- Owns :checkhealth larik: the Neovim version, the agent binary (where it was found and how,
--- what `larik --version` says), the agent's own checks from `larik doctor --json` (model,
--- provider, sandbox, language servers, MCP servers, Chromium, settings) shown as
--- ok/warn/error, and the state of the running agent. A binary without `larik doctor` gets the
--- checks the plugin can make itself instead (larik.doctor's probes, the model from the
--- environment and settings files), and says so.
local M = {}

local health = vim.health
local doctor = require("larik.doctor")

local HINT_INSTALL = "Install it (`npm install -g larik`, `pipx install larik`, or `cargo install --locked --path rpc-server` in the Larik repository), or set `cmd` in setup(), or $LARIK_BIN"

local function check_neovim()
  local version = vim.version()
  local text = ("%d.%d.%d"):format(version.major, version.minor, version.patch)
  if vim.fn.has("nvim-0.10") == 1 then
    health.ok("Neovim " .. text)
  else
    health.error("Neovim " .. text .. " is too old", { "Larik needs Neovim 0.10 or newer (0.11 recommended)" })
  end
end

--- The binary and its version; returns its path when it was found.
local function check_binary()
  local binary = require("larik.binary")
  local path, source, installed = binary.find()
  if not path then
    health.error(source, { HINT_INSTALL })
    return nil
  end
  health.ok(("larik found: %s (%s)"):format(path, source))
  if installed then
    -- Found where an installer put it, but Neovim's own PATH does not reach it: the plugin
    -- starts it all the same, a shell in :terminal would not.
    health.info(("%s is not on Neovim's PATH (an editor started from the desktop often has a shorter PATH than a terminal); the plugin runs larik from there"):format(vim.fn.fnamemodify(path, ":h")))
  end
  local ok, result = pcall(function()
    return vim.system({ path, "--version" }, { text = true }):wait(3000)
  end)
  if ok and result.code == 0 then
    health.ok("version: " .. vim.trim(result.stdout or ""))
  else
    health.warn("`larik --version` failed", { "Check that the binary runs: " .. path .. " --version" })
  end
  return path
end

local function read_json(path)
  local handle = io.open(path, "r")
  if not handle then
    return nil
  end
  local text = handle:read("*a")
  handle:close()
  local ok, value = pcall(vim.json.decode, text)
  return ok and type(value) == "table" and value or nil
end

--- Where the model comes from, as the agent resolves it: the plugin's env, the environment,
--- then the user's settings file (a project's model waits for the user's approval, so the
--- fallback does not guess it).
local function check_model()
  local env = require("larik.config").get().env or {}
  local function var(name)
    local value = env[name] or vim.env[name]
    return value ~= nil and value ~= "" and value or nil
  end
  local model = var("LARIK_MODEL")
  local config_home = var("XDG_CONFIG_HOME") or ((var("HOME") or "~") .. "/.config")
  for _, file in ipairs({ config_home .. "/larik/settings.json" }) do
    local settings = read_json(file)
    if settings and settings.model and not var("LARIK_MODEL") then
      model = settings.model .. " (from " .. file .. ")"
    end
  end
  local keys = {}
  for _, name in ipairs({ "ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_BASE_URL" }) do
    if var(name) then
      keys[#keys + 1] = name
    end
  end
  if model then
    health.ok("model: " .. model)
  end
  if #keys > 0 then
    health.ok("model access configured: " .. table.concat(keys, ", ") .. " set")
  elseif not model then
    health.warn("no model configured", {
      "Set ANTHROPIC_API_KEY or OPENAI_API_KEY (or OPENAI_BASE_URL for a local server)",
      "or write ~/.config/larik/settings.json; see the project README",
    })
  end
end

local report_by_status = {
  ok = function(text)
    health.ok(text)
  end,
  warning = function(text, advice)
    health.warn(text, advice)
  end,
  error = function(text, advice)
    health.error(text, advice)
  end,
}

--- One check of `larik doctor`: its title, then its detail (the detail's later lines, when it
--- has several, become the advice under it).
local function report_check(check)
  local lines = vim.split(check.detail, "\n", { trimempty = true })
  local text = check.title .. (lines[1] and ": " .. lines[1] or "")
  local advice = #lines > 1 and vim.list_slice(lines, 2) or nil
  report_by_status[check.status](text, advice)
end

local function check_language_servers()
  local found, missing = {}, {}
  for _, server in ipairs(doctor.probe_language_servers()) do
    if server.path then
      found[#found + 1] = server.name .. " (" .. server.path .. ")"
    else
      missing[#missing + 1] = table.concat(server.binaries, " or ")
    end
  end
  if #found > 0 then
    health.ok("language servers on PATH: " .. table.concat(found, ", "))
  else
    health.warn("no language server of the agent's on PATH", { "The agent starts " .. table.concat(missing, ", ") .. " when one is on PATH; Neovim's own servers also answer it (_larik/diagnostics)" })
  end
  if #found > 0 and #missing > 0 then
    health.info("not on PATH: " .. table.concat(missing, ", "))
  end
end

local function check_chromium()
  local browser = doctor.probe_chromium()
  if browser then
    health.ok("Chromium for the browser tools: " .. browser)
  else
    health.warn("no Chromium on PATH (" .. table.concat(doctor.chromium, ", ") .. ")", { "The browser tools need one: install chromium, or name it in the settings as `browser.executable`" })
  end
end

--- What the plugin can check without `larik doctor`.
local function fallback_checks(path, cwd, env)
  check_model()
  local sandbox, sandbox_err = doctor.sandbox(path, cwd, env)
  if sandbox then
    health.info("sandbox: " .. sandbox)
  else
    health.info("`larik sandbox check` failed: " .. tostring(sandbox_err))
  end
  local mcp = doctor.text(path, { "mcp", "list" }, cwd, env)
  if mcp and mcp ~= "" then
    health.info("MCP servers (`larik mcp list`):\n" .. mcp)
  end
  check_language_servers()
  check_chromium()
end

local function check_doctor(path)
  local cwd = require("larik.client").cwd()
  local env = require("larik.config").get().env
  env = env and next(env) and env or nil
  local report, why = doctor.run(path, cwd, env)
  if report then
    health.start("larik: larik doctor")
    for _, check in ipairs(report.checks) do
      report_check(check)
    end
    if #report.checks == 0 then
      health.warn("`larik doctor` reported no checks")
    end
    return
  end
  health.start("larik: environment (the plugin's own checks)")
  health.warn("`larik doctor` is unavailable (" .. why .. ")", {
    "A larik that has `larik doctor --json` checks the model, the provider, the sandbox, language servers, MCP servers and Chromium itself",
    "Update it: `cargo install --locked --path rpc-server` in the Larik repository",
  })
  fallback_checks(path, cwd, env)
end

local function check_agent()
  local client = require("larik.client")
  local state = client.state
  if state.phase == "ready" and state.agent then
    local info = state.agent.agentInfo or {}
    health.ok(("agent running (pid %s): %s %s, session %s"):format(tostring(client.pid()), info.name or "?", info.version or "?", state.session and state.session.id or "none"))
    local larik = client.larik_capabilities()
    local features = {}
    for _, name in ipairs({ "permissionFeedback", "hunkReview", "editorContext" }) do
      features[#features + 1] = name .. "=" .. tostring(larik[name] == true)
    end
    health.info("Larik extensions: " .. table.concat(features, ", "))
  else
    health.info("agent not running (" .. state.phase .. "); it starts with :Larik")
  end
end

function M.check()
  health.start("larik: Neovim")
  check_neovim()
  health.start("larik: agent")
  local path = check_binary()
  if path then
    check_doctor(path)
  else
    check_model()
  end
  health.start("larik: running agent")
  check_agent()
end

return M
