--- Owns finding the agent: the command that starts `larik acp`, from the `cmd` option, the
--- environment, PATH, or a build in the repository this plugin lives in.
local config = require("larik.config")

local M = {}

local function executable(path)
  return path and path ~= "" and vim.fn.executable(path) == 1
end

--- The repository root when the plugin runs from a checkout (editors/neovim/lua/larik/).
function M.repo_root()
  local source = debug.getinfo(1, "S").source:gsub("^@", "")
  local plugin_root = vim.fn.fnamemodify(source, ":p:h:h:h")
  return vim.fn.fnamemodify(plugin_root, ":h:h")
end

--- Candidate paths in the order they are tried, with where each came from.
---@return { path: string, source: string }[]
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
  if vim.env.CARGO_TARGET_DIR then
    add(vim.env.CARGO_TARGET_DIR .. "/release/larik", "$CARGO_TARGET_DIR")
    add(vim.env.CARGO_TARGET_DIR .. "/debug/larik", "$CARGO_TARGET_DIR")
  end
  local root = M.repo_root()
  add(root .. "/target/release/larik", "repository build")
  add(root .. "/target/debug/larik", "repository build")
  return list
end

--- The agent's executable and where it was found, or nil and the places looked at.
---@return string|nil path, string source_or_error
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
      return candidate.path, candidate.source
    end
    tried[#tried + 1] = candidate.path
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
