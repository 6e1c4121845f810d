--- Owns :checkhealth larik: the Neovim version, the agent binary and its version, whether a
--- model is configured, and the state of the running agent.
local M = {}

local health = vim.health

local function check_neovim()
  local version = vim.version()
  local text = ("%d.%d.%d"):format(version.major, version.minor, version.patch)
  if vim.fn.has("nvim-0.10") == 1 then
    health.ok("Neovim " .. text)
  else
    health.error("Neovim " .. text .. " is too old", { "Larik needs Neovim 0.10 or newer (0.11 recommended)" })
  end
end

local function check_binary()
  local binary = require("larik.binary")
  local path, source = binary.find()
  if not path then
    health.error(source, { "Install it with `cargo install --path rpc-server`, or set `cmd` in setup(), or $LARIK_BIN" })
    return
  end
  health.ok(("larik found: %s (%s)"):format(path, source))
  local ok, result = pcall(function()
    return vim.system({ path, "--version" }, { text = true }):wait(3000)
  end)
  if ok and result.code == 0 then
    health.ok("version: " .. vim.trim(result.stdout or ""))
  else
    health.warn("`larik --version` failed", { "Check that the binary runs: " .. path .. " --version" })
  end
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
--- then the settings files (later wins).
local function check_model()
  local env = require("larik.config").get().env or {}
  local function var(name)
    local value = env[name] or vim.env[name]
    return value ~= nil and value ~= "" and value or nil
  end
  local model = var("LARIK_MODEL")
  local config_home = var("XDG_CONFIG_HOME") or ((var("HOME") or "~") .. "/.config")
  local cwd = require("larik.client").cwd()
  for _, file in ipairs({ config_home .. "/larik/settings.json", cwd .. "/.larik/settings.json", cwd .. "/.larik/settings.local.json" }) do
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
  check_binary()
  check_model()
  check_agent()
end

return M
