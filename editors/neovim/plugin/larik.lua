-- Defines Larik's user commands. They load the plugin on first use, so startup costs nothing
-- and the commands work with or without an explicit setup() call.
if vim.g.loaded_larik then
  return
end
vim.g.loaded_larik = true

if vim.fn.has("nvim-0.10") ~= 1 then
  vim.api.nvim_echo({ { "larik.nvim needs Neovim 0.10 or newer", "ErrorMsg" } }, true, {})
  return
end

local function larik()
  return require("larik")
end

local command = vim.api.nvim_create_user_command

command("Larik", function()
  larik().open()
end, { desc = "Open or focus the Larik chat" })

command("LarikAsk", function(args)
  local opts = {}
  if args.range > 0 then
    opts.range = { args.line1, args.line2 }
  end
  larik().ask(args.args, opts)
end, {
  nargs = "*",
  range = true,
  -- `:LarikAsk /co<Tab>` completes the agent's slash commands (the first word only).
  complete = function(_, line, pos)
    local args = line:sub(1, pos):match("LarikAsk!?%s+(.*)$") or ""
    return require("larik.slash").cmdline(args, require("larik.ui.completion").commands())
  end,
  desc = "Ask Larik (a range sends those lines as context)",
})

command("LarikCancel", function()
  larik().cancel()
end, { desc = "Cancel the running Larik turn" })

command("LarikStopTask", function(args)
  -- Titles have spaces; completion inserts them escaped (explore:\ find\ alpha) so the whole
  -- title is one argument to complete.
  larik().stop_task((args.args:gsub("\\(.)", "%1")))
end, {
  nargs = "?",
  complete = function(lead)
    lead = lead:gsub("\\(.)", "%1")
    local out = {}
    for _, title in ipairs(require("larik").running_tasks()) do
      if title:sub(1, #lead) == lead then
        out[#out + 1] = (title:gsub("([ \\])", "\\%1"))
      end
    end
    return out
  end,
  desc = "Stop one running Larik subagent (the turn goes on)",
})

command("LarikMode", function(args)
  larik().set_mode(args.args)
end, {
  nargs = 1,
  complete = function()
    return require("larik.client").mode_ids()
  end,
  desc = "Set the Larik session mode",
})

command("LarikModel", function(args)
  larik().set_model(args.args)
end, {
  nargs = 1,
  complete = function()
    return require("larik.client").model_ids()
  end,
  desc = "Set the Larik model",
})

command("LarikUndo", function(args)
  larik().undo(args.args)
end, {
  nargs = "?",
  complete = function(lead)
    -- The list the agent gave after the last turn (or undo): checkpoints change only then.
    return require("larik.checkpoints").complete(lead)
  end,
  desc = "Undo a Larik turn: restore the files to a checkpoint (the latest without one)",
})

command("LarikCheckpoints", function()
  larik().checkpoints()
end, { desc = "List the Larik session's checkpoints and undo to the one picked" })

command("LarikSessions", function()
  larik().sessions()
end, { desc = "List past Larik sessions and load one" })

command("LarikLog", function()
  larik().log()
end, { desc = "Show the Larik protocol log" })
