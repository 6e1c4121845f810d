--- Owns finding the agent: the command that starts `larik acp`, from the `cmd` option, the
--- environment, PATH, the folders the installers put `larik` in (pipx and pip, npm, cargo), or a
--- build in the repository this plugin lives in.
---
--- The installers' folders are looked in because a Neovim started from a desktop often has the
--- session's short PATH, without ~/.local/bin or npm's prefix, while the user's shell has them.
--- The lookup never takes long: every place but one is a file check; the exception, asking npm
--- for its prefix (`npm config get prefix`), comes last, only when nothing else was found, runs
--- at most once per Neovim and is given `npm_timeout_ms`.
local config = require("larik.config")

local M = {}

--- How long `npm config get prefix` may take before it is given up on (once per Neovim).
M.npm_timeout_ms = 1000

local function executable(path)
  return path and path ~= "" and vim.fn.executable(path) == 1
end

local function nonempty(value)
  return value ~= nil and value ~= "" and value or nil
end

--- The repository root when the plugin runs from a checkout (editors/neovim/lua/larik/).
function M.repo_root()
  local source = debug.getinfo(1, "S").source:gsub("^@", "")
  local plugin_root = vim.fn.fnamemodify(source, ":p:h:h:h")
  return vim.fn.fnamemodify(plugin_root, ":h:h")
end

--- The `prefix` a user's .npmrc sets (`npm config set prefix ~/.npm-global` writes it there), with
--- `~/` and `${VAR}` expanded as npm expands them; nil when the file sets none.
---@param home string
---@return string|nil prefix, string file
function M.npmrc_prefix(home)
  local file = nonempty(vim.env.NPM_CONFIG_USERCONFIG) or nonempty(vim.env.npm_config_userconfig) or (home .. "/.npmrc")
  local handle = io.open(file, "r")
  if not handle then
    return nil, file
  end
  local prefix
  for line in handle:lines() do
    local value = line:match("^%s*prefix%s*=%s*(.-)%s*$")
    if value then
      prefix = value:gsub('^"(.*)"$', "%1")
    end
  end
  handle:close()
  if not prefix or prefix == "" then
    return nil, file
  end
  prefix = prefix:gsub("%${([%w_]+)}", function(name)
    return vim.env[name] or ""
  end)
  if prefix == "~" or prefix:sub(1, 2) == "~/" then
    prefix = home .. prefix:sub(2)
  end
  return prefix, file
end

--- Where the installers put `larik`, in the order they are tried, each with what put it there.
---@param home string
---@return { path: string, source: string, installed: true }[]
function M.install_candidates(home)
  local list = {}
  local function add(dir, source)
    if dir then
      list[#list + 1] = { path = dir .. "/larik", source = source, installed = true }
    end
  end
  add(nonempty(vim.env.PIPX_BIN_DIR), "$PIPX_BIN_DIR, where pipx installs")
  add(home .. "/.local/bin", "~/.local/bin, where pipx, pip install --user and uv tool install put it")
  local npm_env = nonempty(vim.env.NPM_CONFIG_PREFIX) or nonempty(vim.env.npm_config_prefix)
  add(npm_env and npm_env .. "/bin", "$NPM_CONFIG_PREFIX/bin, where npm install -g puts it")
  local npmrc, npmrc_file = M.npmrc_prefix(home)
  add(npmrc and npmrc .. "/bin", "the npm prefix set in " .. vim.fn.fnamemodify(npmrc_file, ":~") .. ", where npm install -g puts it")
  add(home .. "/.npm-global/bin", "~/.npm-global/bin, where npm install -g puts it with that prefix")
  local cargo_home = nonempty(vim.env.CARGO_HOME)
  add((cargo_home or home .. "/.cargo") .. "/bin", (cargo_home and "$CARGO_HOME/bin" or "~/.cargo/bin") .. ", where cargo install puts it")
  return list
end

--- Candidate paths in the order they are tried, with where each came from. The npm prefix that
--- only `npm config get prefix` knows is not among them (see `npm_prefix_candidate`).
---@return { path: string, source: string, installed: boolean|nil }[]
function M.candidates()
  local list = {}
  local function add(path, source)
    if path and path ~= "" then
      list[#list + 1] = { path = path, source = source }
    end
  end
  add(vim.env.LARIK_BIN, "$LARIK_BIN")
  local on_path = vim.fn.exepath("larik")
  add(on_path ~= "" and on_path or nil, "PATH")
  local home = nonempty(vim.uv.os_homedir())
  if home then
    vim.list_extend(list, M.install_candidates(home))
  end
  if vim.env.CARGO_TARGET_DIR then
    add(vim.env.CARGO_TARGET_DIR .. "/release/larik", "$CARGO_TARGET_DIR")
    add(vim.env.CARGO_TARGET_DIR .. "/debug/larik", "$CARGO_TARGET_DIR")
  end
  local root = M.repo_root()
  add(root .. "/target/release/larik", "repository build")
  add(root .. "/target/debug/larik", "repository build")
  return list
end

-- npm's answer, asked once per Neovim: the prefix, or false when npm is missing, failed or
-- took too long.
local npm_prefix

--- `<npm config get prefix>/bin/larik` when npm is on PATH and answers within `npm_timeout_ms`;
--- npm is asked once, later calls reuse its answer.
---@return { path: string, source: string, installed: true }|nil
function M.npm_prefix_candidate()
  if npm_prefix == nil then
    npm_prefix = false
    local npm = vim.fn.exepath("npm")
    if npm ~= "" then
      local ok, result = pcall(function()
        return vim.system({ npm, "config", "get", "prefix" }, { text = true }):wait(M.npm_timeout_ms)
      end)
      local prefix = ok and result.code == 0 and vim.trim(result.stdout or "") or ""
      npm_prefix = prefix ~= "" and prefix or false
    end
  end
  if not npm_prefix then
    return nil
  end
  return { path = npm_prefix .. "/bin/larik", source = "`npm config get prefix`/bin, where npm install -g puts it", installed = true }
end

--- The agent's executable and where it was found, or nil and the places looked at. The third
--- value is true when the binary was found in an installer's folder rather than on PATH.
---@return string|nil path, string source_or_error, boolean|nil installed
function M.find()
  local cmd = config.get().cmd
  if cmd then
    local first = cmd[1]
    if executable(first) then
      return vim.fn.exepath(first) ~= "" and vim.fn.exepath(first) or first, "cmd option"
    end
    return nil, "the cmd option names " .. tostring(first) .. ", which is not executable"
  end
  local tried = {}
  for _, candidate in ipairs(M.candidates()) do
    if executable(candidate.path) then
      return candidate.path, candidate.source, candidate.installed
    end
    tried[#tried + 1] = candidate.path
  end
  local npm = M.npm_prefix_candidate()
  if npm then
    if executable(npm.path) then
      return npm.path, npm.source, true
    end
    tried[#tried + 1] = npm.path
  end
  return nil, "larik not found (looked at $LARIK_BIN, PATH, " .. table.concat(tried, ", ") .. ")"
end

--- The full command line that starts the agent.
---@return string[]|nil, string|nil
function M.command()
  local cmd = config.get().cmd
  if cmd then
    local path, err = M.find()
    if not path then
      return nil, err
    end
    return vim.deepcopy(cmd)
  end
  local path, source = M.find()
  if not path then
    return nil, source
  end
  local command = { path }
  vim.list_extend(command, config.get().args or {})
  return command
end

return M
