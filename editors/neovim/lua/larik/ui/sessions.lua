--- Owns :LarikSessions: the agent's past sessions of this project in vim.ui.select, newest
--- first, and loading the one picked into the chat.
local M = {}

--- How a session is shown in the picker.
function M.format(session)
  local title = session.title and session.title ~= "" and session.title or session.sessionId
  local when = session.updatedAt and (" · " .. session.updatedAt:gsub("T", " "):gsub("%..*$", ""):gsub("Z$", "")) or ""
  return title .. when
end

function M.pick()
  local client = require("larik.client")
  client.list_sessions(function(sessions, err)
    if not sessions then
      vim.notify("Larik: " .. tostring(err), vim.log.levels.WARN)
      return
    end
    if #sessions == 0 then
      vim.notify("Larik: no past sessions in this project", vim.log.levels.INFO)
      return
    end
    table.sort(sessions, function(a, b)
      return (a.updatedAt or "") > (b.updatedAt or "")
    end)
    vim.ui.select(sessions, { prompt = "Larik sessions", format_item = M.format, kind = "larik_session" }, function(choice)
      if choice then
        require("larik.ui.chat").open({ focus = false })
        client.load_session(choice.sessionId)
      end
    end)
  end)
end

return M
