local rpc = require("larik.rpc")
local config = require("larik.config")

local fixture = vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":p:h") .. "/fixtures/fake_agent.py"

local function wait(condition)
  assert.is_true(vim.wait(5000, condition, 10), "timed out")
end

describe("rpc", function()
  local connection, notifications, requests, exited

  before_each(function()
    config.setup({})
    notifications, requests, exited = {}, {}, nil
    connection = assert(rpc.start({
      cmd = { "python3", fixture },
      on_notification = function(method, params)
        notifications[#notifications + 1] = { method = method, params = params, fast = vim.in_fast_event() }
      end,
      on_request = function(method, params, respond)
        requests[#requests + 1] = { method = method, params = params }
        if method == "fs/read_text_file" then
          respond({ content = "hello" })
        else
          respond(nil, { code = rpc.errors.method_not_found, message = "Method not found" })
        end
      end,
      on_exit = function(code)
        exited = code
      end,
    }))
  end)

  after_each(function()
    connection:stop(0)
  end)

  it("matches responses to requests", function()
    local results = {}
    connection:request("echo", { n = 1 }, function(err, result)
      results[1] = { err, result }
    end)
    connection:request("echo", { n = 2 }, function(err, result)
      results[2] = { err, result }
    end)
    wait(function()
      return results[1] and results[2]
    end)
    assert.same({ nil, { n = 1 } }, results[1])
    assert.same({ nil, { n = 2 } }, results[2])
  end)

  it("waits for the end of a line split across reads", function()
    local result
    connection:request("split", {}, function(_, value)
      result = value
    end)
    wait(function()
      return result
    end)
    assert.same({ whole = true }, result)
  end)

  it("reassembles a message larger than one read", function()
    local big = string.rep("0123456789", 50000)
    local result
    connection:request("echo", { big = big }, function(_, value)
      result = value
    end)
    wait(function()
      return result
    end)
    assert.equal(#big, #result.big)
    assert.equal(big, result.big)
  end)

  it("hands errors to the callback", function()
    local err
    connection:request("fail", {}, function(e)
      err = e
    end)
    wait(function()
      return err
    end)
    assert.same({ code = -32602, message = "bad" }, err)
  end)

  it("runs notification handlers on the main loop", function()
    local done
    connection:request("notify_me", { sessionId = "s", update = { sessionUpdate = "agent_message_chunk" } }, function()
      done = true
    end)
    wait(function()
      return done
    end)
    assert.equal(1, #notifications)
    assert.equal("session/update", notifications[1].method)
    assert.is_false(notifications[1].fast)
  end)

  it("answers the agent's requests through the handler", function()
    local result
    connection:request("ask_client", { method = "fs/read_text_file", params = { path = "/x" } }, function(_, value)
      result = value
    end)
    wait(function()
      return result
    end)
    assert.same({ { method = "fs/read_text_file", params = { path = "/x" } } }, requests)
    assert.same({ jsonrpc = "2.0", id = "agent-1", result = { content = "hello" } }, result.client_said)
  end)

  it("answers unknown methods with -32601", function()
    local result
    connection:request("ask_client", { method = "terminal/create", params = {} }, function(_, value)
      result = value
    end)
    wait(function()
      return result
    end)
    assert.equal(-32601, result.client_said.error.code)
  end)

  it("fails pending requests when the agent exits, and logs its stderr", function()
    local err
    connection:request("exit", {}, function(e)
      err = e
    end)
    wait(function()
      return err and exited
    end)
    assert.equal(3, exited)
    assert.matches("exited", err.message)
    assert.is_false(connection:is_running())
    wait(function()
      return vim.tbl_contains(require("larik.log").lines(), function(line)
        return line:find("leaving now", 1, true) ~= nil
      end, { predicate = true })
    end)
  end)
end)
