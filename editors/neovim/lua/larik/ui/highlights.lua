--- Owns the highlight groups. Each links to a standard group by default, so colorschemes
--- style the chat; users override any of them with `:highlight`.
local M = {}

M.links = {
  LarikUserHeader = "Title",
  LarikAgentHeader = "Title",
  LarikThought = "Comment",
  LarikThoughtHeader = "Comment",
  LarikToolPending = "DiagnosticWarn",
  LarikToolRunning = "DiagnosticInfo",
  LarikToolDone = "DiagnosticOk",
  LarikToolFailed = "DiagnosticError",
  LarikToolTitle = { bold = true },
  LarikLocation = "Directory",
  LarikDiffSummary = "Special",
  LarikFileAdded = "Added",
  LarikFileChanged = "Changed",
  LarikFileDeleted = "Removed",
  LarikUndone = "Comment",
  LarikPlanHeader = "Title",
  LarikPlanDone = "Comment",
  LarikPermission = "WarningMsg",
  LarikWarning = "WarningMsg",
  LarikWinbarWaiting = "WarningMsg",
  LarikOptionAllow = "DiagnosticOk",
  LarikOptionReject = "DiagnosticError",
  LarikHelp = "Comment",
  LarikNotice = "WarningMsg",
  LarikError = "ErrorMsg",
  LarikAttachment = "Comment",
  LarikWinbar = "WinBar",
  LarikWinbarBusy = "DiagnosticWarn",
  LarikDiffAdd = "DiffAdd",
  LarikDiffDelete = "DiffDelete",
  LarikHunkAccepted = "DiagnosticOk",
  LarikHunkRejected = "DiagnosticError",
  LarikHunkPending = "DiagnosticWarn",
}

--- Removed lines need a background to read as removed at a glance; Neovim's default DiffDelete
--- has only a red foreground, so one is added when the colorscheme gives none.
local function removed_lines()
  local delete = vim.api.nvim_get_hl(0, { name = "DiffDelete", link = false })
  if delete.bg then
    return { link = "DiffDelete", default = true }
  end
  local dark = vim.o.background == "dark"
  return { fg = delete.fg, bg = dark and 0x4b1d1d or 0xffd7d7, default = true }
end

function M.setup()
  for group, link in pairs(M.links) do
    local spec = type(link) == "table" and vim.tbl_extend("force", link, { default = true }) or { link = link, default = true }
    if group == "LarikDiffDelete" then
      spec = removed_lines()
    end
    vim.api.nvim_set_hl(0, group, spec)
  end
end

return M
