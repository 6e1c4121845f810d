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
  LarikPlanHeader = "Title",
  LarikPlanDone = "Comment",
  LarikPermission = "WarningMsg",
  LarikWarning = "WarningMsg",
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

function M.setup()
  for group, link in pairs(M.links) do
    local spec = type(link) == "table" and vim.tbl_extend("force", link, { default = true }) or { link = link, default = true }
    vim.api.nvim_set_hl(0, group, spec)
  end
end

return M
