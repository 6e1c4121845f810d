-- A busted output handler: one line per spec ("ok"/"FAIL" and its full name, with the failure
-- message), then a closing "busted: N passed, N failed" line that CI counts.
return function(options)
  local busted = require("busted")
  local handler = require("busted.outputHandlers.base")()

  local function write(line)
    io.write(line, "\n")
    io.flush()
  end

  local function failure(kind, element, message)
    if type(message) ~= "string" then
      message = vim.inspect(message)
    end
    local trace = element.trace or {}
    write(("%s %s (%s:%s)"):format(kind, handler.getFullName(element), trace.short_src or "?", trace.currentline or "?"))
    write("    " .. message:gsub("\n", "\n    "))
  end

  handler.testEnd = function(element, _, status)
    if status == "success" then
      write("ok   " .. handler.getFullName(element))
    elseif status == "pending" then
      write("skip " .. handler.getFullName(element))
    elseif status == "failure" then
      local last = handler.failures[#handler.failures]
      failure("FAIL", element, last and last.message)
    elseif status == "error" then
      local last = handler.errors[#handler.errors]
      failure("ERR ", element, last and last.message)
    end
    return nil, true
  end

  handler.error = function(element, _, message)
    -- Errors outside a spec (a file that does not load) count as failures too.
    if element.descriptor ~= "it" then
      write(("ERR  %s: %s"):format(element.name or element.descriptor or "?", tostring(message)))
    end
    return nil, true
  end

  handler.suiteEnd = function()
    local failed = #handler.failures + #handler.errors
    local line = ("busted: %d passed, %d failed"):format(#handler.successes, failed)
    if #handler.pendings > 0 then
      line = line .. (", %d skipped"):format(#handler.pendings)
    end
    write(line)
    return nil, true
  end

  busted.subscribe({ "test", "end" }, handler.testEnd, { predicate = handler.cancelOnPending })
  busted.subscribe({ "error" }, handler.error)
  busted.subscribe({ "failure" }, handler.error)
  busted.subscribe({ "suite", "end" }, handler.suiteEnd)
  return handler
end
