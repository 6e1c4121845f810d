"""The session around the chat: modes, models, past sessions, the protocol log, :checkhealth,
and the agent's lifetime."""

import pytest

from harness import pid_alive, wait_for


@pytest.mark.needs_agent("session/set_mode")
def test_mode_is_set_and_shown(start):
    editor = start([{"text": "ok"}])
    editor.command("Larik")
    wait_for(lambda: "mode: default" in editor.winbar(), "the initial mode in the winbar")
    assert set(editor.lua("return require('larik.client').mode_ids()")) >= {"default", "accept-edits", "plan", "yolo"}
    editor.command("LarikMode plan")
    wait_for(lambda: "mode: plan" in editor.winbar(), "the plan mode in the winbar")
    sent = [m for m in editor.sent_messages() if m.get("method") == "session/set_mode"]
    assert sent[0]["params"]["modeId"] == "plan"


@pytest.mark.needs_agent("session/set_mode")
def test_mode_from_setup_is_applied_to_new_sessions(start):
    editor = start([{"text": "ok"}], mode="accept-edits")
    editor.command("Larik")
    wait_for(lambda: "mode: accept-edits" in editor.winbar(), "the configured mode")


@pytest.mark.needs_agent("session/set_config_option")
def test_model_is_set_through_the_config_option(start):
    editor = start([{"text": "ok"}])
    settings = editor.home / ".config" / "larik" / "settings.json"
    settings.parent.mkdir(parents=True)
    settings.write_text('{"models": ["claude-mock", "claude-other"]}')
    editor.command("Larik")
    wait_for(lambda: "model: claude-mock" in editor.winbar(), "the model in the winbar")
    assert editor.lua("return require('larik.client').model_ids()") == ["claude-mock", "claude-other"]
    editor.command("LarikModel claude-other")
    wait_for(lambda: "model: claude-other" in editor.winbar(), "the new model in the winbar")
    sent = [m for m in editor.sent_messages() if m.get("method") == "session/set_config_option"]
    assert sent[0]["params"]["configId"] == "model" and sent[0]["params"]["value"] == "claude-other"


@pytest.mark.needs_agent("session/list", "loadSession")
def test_past_sessions_are_listed_and_loaded(start):
    editor = start([{"text": "The first answer."}])
    editor.command("Larik")
    editor.ask("the first question")
    editor.wait_chat("The first answer.")
    editor.wait_turn_done()
    first_session = editor.lua("return require('larik.client').state.session.id")
    # A new agent process: the chat starts empty, and the past session is loaded from the list.
    editor.lua("require('larik').stop()")
    wait_for(lambda: editor.lua("return require('larik.client').state.phase") == "stopped", "the agent to stop")
    editor.lua("require('larik.ui.chat').transcript():clear()")
    editor.lua(
        """
        vim.ui.select = function(items, opts, on_choice)
          _G.listed = vim.tbl_map(function(item) return item.sessionId end, items)
          on_choice(items[1])
        end
        """
    )
    editor.command("LarikSessions")
    wait_for(lambda: "The first answer." in editor.chat_text(), "the replayed session")
    text = editor.chat_text()
    assert "## You\nthe first question" in text
    assert first_session in editor.lua("return _G.listed")
    assert editor.lua("return require('larik.client').state.session.id") == first_session


def test_protocol_log_shows_the_traffic(start):
    editor = start([{"text": "logged"}])
    editor.command("Larik")
    editor.ask("hello")
    editor.wait_turn_done()
    editor.command("LarikLog")
    lines = editor.lua("return vim.api.nvim_buf_get_lines(0, 0, -1, false)")
    assert editor.lua("return vim.api.nvim_buf_get_name(0)").endswith("Larik log")
    assert any("→" in line and '"method":"initialize"' in line for line in lines)
    assert any("→" in line and '"method":"session/prompt"' in line for line in lines)
    assert any("←" in line and '"stopReason":"end_turn"' in line for line in lines)


def test_checkhealth_reports_binary_version_model_and_neovim(start):
    editor = start([{"text": "ok"}])
    editor.command("checkhealth larik")
    report = "\n".join(editor.lua("return vim.api.nvim_buf_get_lines(0, 0, -1, false)"))
    assert "Neovim 0.1" in report
    assert "larik found:" in report
    assert "version: larik " in report
    # From `larik doctor` ("Model: claude-mock …") or, without it, the plugin's own check.
    assert "model: claude-mock" in report.lower()
    assert "ERROR" not in report, report


def test_ask_without_text_opens_the_input_with_the_selection_attached(start):
    editor = start([{"text": "Seen."}], files={"a.txt": "first\nsecond\n"})
    editor.command("edit a.txt")
    editor.command("2LarikAsk")
    assert editor.lua("return vim.api.nvim_buf_get_name(0)").endswith("Larik prompt")
    editor.type("explain<Esc><CR>")
    editor.wait_chat("Seen.")
    assert "> selection: a.txt:2-2" in editor.chat_text()


def test_the_agent_stops_when_neovim_exits(start):
    editor = start([{"text": "ok"}])
    editor.command("Larik")
    pid = wait_for(editor.pid, "the agent to start")
    assert pid_alive(pid)
    editor.quit()
    wait_for(lambda: not pid_alive(pid), "the agent to exit with Neovim", timeout=10)
