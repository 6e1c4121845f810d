"""Larik in a real Helix 25.01, configured with the languages.toml scripts/languages.py writes,
config.toml and runtime queries, driven with keys in tmux: asking about a selection; proposed
edits applied and rejected hunk by hunk through code actions or all at once with the suggested
keymaps, in the open file, in one that is not open, and as a new file; a permission prompt
answered through the code-action fallback; cancelling a turn; quitting mid-turn; chat files."""

import json

import pytest

from harness import pid_alive, tool_results, user_texts, wait_for

APP = 'def greet(name):\n    return "Hello " + name\n'
EDITED = 'def greet(name):\n    return f"Hello, {name}!"\n'


def test_languages_toml_attaches_larik(start):
    helix = start()
    python = helix.health("python")
    assert "✓ larik:" in python, python
    chat = helix.health("larik-chat")
    assert "✓ larik:" in chat, chat
    # The chat language highlights as Markdown through the shipped runtime queries.
    assert "Highlight queries: ✓" in chat, chat

    helix.write_file("notes.larik.md", "# Question\n\nWhat does greet do?\n")
    helix.open("notes.larik.md")
    helix.status_of("lang", "larik-chat")


@pytest.mark.needs_lsp
def test_apply_a_proposed_edit_from_a_code_action(start, tmp_path):
    app = str(tmp_path / "project" / "app.py")
    helix = start(
        [
            {"tool_calls": [{"id": "toolu_1", "name": "read", "input": {"path": app}}]},
            {
                "text": "Using an f-string.",
                "tool_calls": [
                    {
                        "id": "toolu_2",
                        "name": "edit",
                        "input": {"path": app, "old_string": 'return "Hello " + name', "new_string": 'return f"Hello, {name}!"'},
                    }
                ],
            },
            {"text": "done"},
        ],
        files={"app.py": APP},
    )
    helix.open("app.py")
    helix.wait_server_ready()
    helix.type("2gg")  # line 2
    helix.type("x")  # select it
    helix.code_action("Larik: ask about selection")

    # The agent reads the file, then proposes the edit: offered on the line as code actions.
    wait_for(lambda: len(helix.mock.requests()) >= 2, "the model to be asked for the edit")
    helix.code_action("Larik: apply edit (+1 -1)")
    helix.wait_text('return f"Hello, {name}!"')
    helix.wait_text("app.py [+]")  # in the buffer, not saved
    assert helix.read_file("app.py") == APP, "the proposal was written behind the editor's back"

    # Every hunk is decided, but the agent waits for the user's :w before it goes on: what
    # runs next reads the disk.
    helix.wait_text("waits for you to save app.py (:w)")
    assert len(helix.mock.requests()) == 2
    helix.command("w")
    wait_for(lambda: helix.read_file("app.py") == EDITED, "the edit on disk after :w")
    wait_for(lambda: len(helix.mock.requests()) >= 3, "the model to be told about the edit")
    third = helix.mock.requests()[2]
    results = tool_results(third)
    assert results[-1]["is_error"] is False, results
    told = results[-1]["text"].lower()
    assert "app.py" in told and "applied" in told and "reject" not in told, results
    # The question carried the selection.
    assert 'return "Hello " + name' in user_texts(helix.mock.requests()[0])


@pytest.mark.needs_lsp
def test_fix_the_diagnostics_of_another_server(start):
    helix = start([{"text": "Renamed it."}], files={"app.py": APP.replace("+ name", "+ nme")}, lint=True)
    helix.open("app.py")
    helix.wait_server_ready()
    helix.wait_text("● 1")  # the statusline counts the user's own server's error
    helix.type("2gg")
    helix.type("x")
    helix.code_action("Larik: fix diagnostics here")
    wait_for(lambda: helix.mock.requests(), "the question to reach the model")
    asked = user_texts(helix.mock.requests()[0])
    assert "undefined name 'nme'" in asked and 'return "Hello " + nme' in asked, asked
    wait_for(lambda: _progress(helix, "end"), "the turn to end")


@pytest.mark.needs_lsp
def test_proposal_in_a_file_that_is_not_open(start, tmp_path):
    util = str(tmp_path / "project" / "util.py")
    helix = start(
        [
            {"tool_calls": [{"id": "toolu_1", "name": "read", "input": {"path": util}}]},
            {"tool_calls": [{"id": "toolu_2", "name": "edit", "input": {"path": util, "old_string": "x = 1", "new_string": "x = 2"}}]},
            {"text": "done"},
        ],
        files={"app.py": "import util\n", "util.py": "x = 1\n"},
    )
    helix.open("app.py")
    helix.wait_server_ready()
    helix.code_action("Larik: explain")
    # The proposal is published as a diagnostic of util.py; the workspace diagnostics picker
    # (space l d) lists it, and choosing it opens util.py at the hunk.
    wait_for(lambda: _proposal_diagnostic(helix, "/util.py"), "the proposal's diagnostic")
    helix.keys("Space", "l", "d")
    helix.wait_text("Larik proposes an edit (+1")
    helix.keys("Enter")
    helix.wait_screen(lambda screen: " util.py " in screen.splitlines()[-2], "util.py to open")
    helix.code_action("Larik: apply edit (+1 -1): + x = 2")
    helix.wait_text("x = 2")
    helix.wait_text("waits for you to save util.py (:w)")
    assert helix.read_file("util.py") == "x = 1\n"
    helix.command("w")
    wait_for(lambda: len(helix.mock.requests()) >= 3, "the model to be told about the edit")
    assert "applied" in tool_results(helix.mock.requests()[2])[-1]["text"]
    assert helix.read_file("util.py") == "x = 2\n"


@pytest.mark.needs_lsp
def test_proposal_of_a_new_file(start, tmp_path):
    new = str(tmp_path / "project" / "new.py")
    helix = start(
        [
            {"tool_calls": [{"id": "toolu_1", "name": "write", "input": {"path": new, "content": "print('new')\n"}}]},
            {"text": "done"},
        ],
        files={"app.py": APP},
    )
    helix.open("app.py")
    helix.wait_server_ready()
    helix.code_action("Larik: explain")
    wait_for(lambda: _proposal_diagnostic(helix, "/new.py"), "the proposal's diagnostic")
    helix.keys("Space", "l", "d")
    helix.wait_text("Larik proposes an edit (+1")
    helix.keys("Enter")  # a new buffer for new.py
    helix.wait_screen(lambda screen: " new.py " in screen.splitlines()[-2], "new.py to open")
    helix.code_action("Larik: apply edit (+1 -0): + print('new')")
    helix.wait_text("waits for you to save new.py (:w)")
    assert not (helix.project / "new.py").exists()
    helix.command("w")
    wait_for(lambda: helix.read_file("new.py") == "print('new')\n", "the new file on disk after :w")
    wait_for(lambda: len(helix.mock.requests()) >= 2, "the model to be told about the file")
    assert "applied" in tool_results(helix.mock.requests()[1])[-1]["text"]


LINES = "".join(f"line{n}\n" for n in range(1, 11))
TWO_HUNKS = LINES.replace("line1\n", "LINE1\n").replace("line10\n", "LINE10\n")


def two_hunk_steps(path: str) -> list[dict]:
    return [
        {"tool_calls": [{"id": "toolu_1", "name": "read", "input": {"path": path}}]},
        {"tool_calls": [{"id": "toolu_2", "name": "edit", "input": {"path": path, "old_string": LINES, "new_string": TWO_HUNKS}}]},
        {"text": "Edit finished."},
    ]


@pytest.mark.needs_lsp
def test_apply_one_hunk_and_reject_the_other(start, tmp_path):
    helix = start(two_hunk_steps(str(tmp_path / "project" / "a.py")), files={"a.py": LINES})
    helix.open("a.py")
    helix.wait_server_ready()
    helix.type("gg")
    helix.type("x")
    helix.code_action("Larik: ask about selection")
    wait_for(lambda: len(helix.mock.requests()) >= 2, "the model to be asked for the edit")

    helix.code_action("Larik: apply edit (+1 -1): + LINE1")  # hunk 1, on line 1
    helix.wait_text("LINE1")
    helix.type("10gg")
    helix.type("x")
    # Hunk 1 is decided; the proposal waits on hunk 2.
    assert len(helix.mock.requests()) == 2
    helix.code_action("Larik: reject")

    helix.wait_text("waits for you to save a.py (:w)")
    helix.command("w")
    wait_for(lambda: helix.read_file("a.py") == LINES.replace("line1\n", "LINE1\n"), "hunk 1 alone on disk after :w")
    wait_for(lambda: len(helix.mock.requests()) >= 3, "the model to be told about the edit")
    told = tool_results(helix.mock.requests()[2])[-1]["text"].lower()
    assert "reject" in told, told


@pytest.mark.needs_lsp
def test_a_proposal_reads_beside_its_line_and_an_applied_one_leaves_no_hint(start, tmp_path):
    path = str(tmp_path / "project" / "a.py")
    proposed = LINES.replace("line2\n", "LINE2a\nLINE2b\n")
    helix = start(
        [
            {"tool_calls": [{"id": "toolu_1", "name": "read", "input": {"path": path}}]},
            {"tool_calls": [{"id": "toolu_2", "name": "edit", "input": {"path": path, "old_string": LINES, "new_string": proposed}}]},
            {"text": "Edit finished."},
        ],
        files={"a.py": LINES},
    )
    helix.open("a.py")
    helix.wait_server_ready()
    helix.code_action("Larik: explain")
    # With the suggested config.toml the proposal is text beside its line, no key pressed...
    helix.wait_text("Larik proposes an edit (+2 -1) · space a: apply or reject")
    # ...and on the cursor's line, the hunk's lines, every one.
    helix.type("2gg")
    screen = helix.wait_text("+ LINE2b")
    assert "- line2" in screen and "+ LINE2a" in screen, screen
    helix.code_action("Larik: apply edit (+2 -1)")
    helix.wait_text("LINE2b")
    # Applied, the hunk no longer looks pending: no hint of the proposal or of its edit call.
    wait_for(lambda: "proposes an edit" not in helix.screen() and "Larik: Edit" not in helix.screen(), "the applied hunk's hints to go")
    assert _larik_diagnostics(helix, "/a.py") == []


@pytest.mark.needs_lsp
def test_reject_every_hunk_with_the_keymap(start, tmp_path):
    helix = start(two_hunk_steps(str(tmp_path / "project" / "a.py")), files={"a.py": LINES})
    helix.open("a.py")
    helix.wait_server_ready()
    helix.type("%")
    helix.code_action("Larik: ask about selection")
    helix.code_action("Larik: apply edit (+1 -1)", run=False)  # offered, left alone

    helix.keys("Space", "l", "n")  # config.toml: larik.reject
    wait_for(lambda: len(helix.mock.requests()) >= 3, "the model to be told about the edit")
    told = tool_results(helix.mock.requests()[2])[-1]["text"].lower()
    assert "reject" in told, told
    assert "LINE" not in helix.screen()
    helix.type("%")
    helix.code_action_absent("Larik: apply edit")
    assert helix.read_file("a.py") == LINES


@pytest.mark.needs_lsp
def test_cancel_with_the_keymap_ends_the_turn(start):
    helix = start([{"text": "Thinking out loud for ever", "hang": True}], files={"app.py": APP})
    helix.open("app.py")
    helix.wait_server_ready()
    helix.code_action("Larik: explain")
    wait_for(lambda: _progress(helix, "report"), "the answer to start streaming")
    assert not _progress(helix, "end")

    helix.keys("Space", "l", "c")  # config.toml: larik.cancel
    wait_for(lambda: _progress(helix, "end"), "the turn to end")


@pytest.mark.needs_lsp
def test_quitting_helix_mid_turn_stops_larik(start):
    helix = start([{"text": "Thinking out loud for ever", "hang": True}], files={"app.py": APP})
    helix.open("app.py")
    helix.wait_server_ready()
    helix.code_action("Larik: explain")
    wait_for(lambda: _progress(helix, "report"), "the answer to start streaming")
    helix.note_servers()
    servers = set(helix.larik_pids)
    assert servers
    helix.command("qa!")
    wait_for(lambda: not pid_alive(helix.hx_pid), "Helix to exit")
    wait_for(lambda: not any(pid_alive(pid) for pid in servers), "larik to exit with Helix", 10)


@pytest.mark.needs_lsp
def test_permission_prompt_falls_back_to_code_actions(start, tmp_path):
    helix = start(
        [
            {"tool_calls": [{"id": "toolu_1", "name": "bash", "input": {"command": "touch ran.txt && echo ran-by-bash"}}]},
            {"text": "Ran it."},
        ],
        files={"app.py": APP},
        user_settings={"sandbox": {"enabled": False}},
    )
    helix.open("app.py")
    helix.wait_server_ready()
    helix.type("%")  # the whole file: the permission diagnostic is somewhere in it
    helix.code_action("Larik: ask about selection")

    # Helix 25.01 answers window/showMessageRequest with "method not found"; the server falls
    # back to a diagnostic with code actions.
    wait_for(lambda: _permission_diagnostic(helix), "the permission diagnostic")
    assert not (helix.project / "ran.txt").exists()
    asked = [message for message in helix.lsp_messages() if message.get("method") == "window/showMessageRequest"]
    assert asked, "the server did not try window/showMessageRequest first"
    refused = [message for message in helix.lsp_messages("->") if message.get("id") == asked[0]["id"] and "error" in message]
    assert refused and refused[0]["error"]["code"] == -32601, refused
    options = [action["title"] for action in asked[0]["params"]["actions"]]
    helix.type("%")
    offered = helix.code_action("Larik: Allow once")
    # The agent's own options as code actions, in order, as plain text cut to fit the menu
    # (52 characters at most).
    def short(title):
        return title if len(title) <= 52 else title[:51].rstrip() + "…"

    expected = [short(f"Larik: {option.replace('`', '')}") for option in options]
    assert expected == [item for item in offered if item in expected], offered
    assert all(len(item) <= 52 for item in offered), offered
    assert options[0] == "Allow once" and options[-1] == "Reject", options

    wait_for(lambda: (helix.project / "ran.txt").exists(), "bash to run once allowed")
    wait_for(lambda: len(helix.mock.requests()) >= 2, "the model to get the command's output")
    assert any("ran-by-bash" in result["text"] for result in tool_results(helix.mock.requests()[1]))
    # The prompt's diagnostic is cleared once answered.
    wait_for(lambda: not _permission_diagnostic(helix), "the permission diagnostic to clear")


@pytest.mark.needs_lsp
def test_chat_file_streams_the_answer_in(start):
    helix = start(
        [{"text": "Greet returns a greeting for the name it is given.", "chunk_chars": 8, "chunk_delay_ms": 150}],
        files={"app.py": APP, "notes.larik.md": "# Question\n\nWhat does greet in app.py do?\n"},
    )
    helix.open("notes.larik.md")
    helix.wait_server_ready()
    helix.code_action("Larik: send")
    helix.wait_text("Greet returns a greeting for the name it is given.")
    # The answer came in pieces, each an edit at the end of the file.
    edits = [message for message in helix.lsp_messages() if message.get("method") == "workspace/applyEdit"]
    assert len(edits) >= 2, edits
    assert "What does greet in app.py do?" in user_texts(helix.mock.requests()[0])
    helix.command("w")
    wait_for(
        lambda: "Greet returns a greeting" in (helix.read_file("notes.larik.md") or ""),
        "the answer on disk after :w",
    )
    text = helix.read_file("notes.larik.md")
    assert text.startswith("# Question\n\nWhat does greet in app.py do?\n"), text


@pytest.mark.needs_lsp
def test_chat_keymap_opens_a_new_chat_file(start):
    helix = start([{"text": "Hi from Larik."}], files={"app.py": APP})
    helix.open("app.py")
    helix.wait_server_ready()
    helix.keys("Space", "l", "o")  # config.toml: open .larik/chat.larik.md
    helix.wait_text("chat.larik.md")
    helix.status_of("lang", "larik-chat")
    helix.keys("i")
    for line in ("# Question", "", "Say hi."):
        helix.type(line)
        helix.keys("Enter")
    helix.escape()
    helix.code_action("Larik: send")
    helix.wait_text("Hi from Larik.")
    assert "Say hi." in user_texts(helix.mock.requests()[0])
    helix.command("w!")  # creates .larik/
    wait_for(lambda: "Hi from Larik." in (helix.read_file(".larik/chat.larik.md") or ""), "the chat on disk after :w!")


def _progress(helix, kind: str) -> list[dict]:
    """The `$/progress` values of one kind (begin, report, end) larik sent."""
    return [
        message["params"]["value"]
        for message in helix.lsp_messages()
        if message.get("method") == "$/progress" and message["params"]["value"].get("kind") == kind
    ]


def _proposal_diagnostic(helix, path: str) -> list[dict]:
    return [diagnostic for diagnostic in _larik_diagnostics(helix, path) if "proposes an edit" in diagnostic["message"]]


def _larik_diagnostics(helix, path: str) -> list[dict]:
    """The larik diagnostics last published for a file (by the end of its path)."""
    latest = None
    for message in helix.lsp_messages():
        if message.get("method") == "textDocument/publishDiagnostics" and message["params"]["uri"].endswith(path):
            latest = message["params"]["diagnostics"]
    return [diagnostic for diagnostic in latest or [] if diagnostic.get("source") == "larik"]


def _permission_diagnostic(helix) -> list[dict]:
    return [diagnostic for diagnostic in _larik_diagnostics(helix, "/app.py") if "Larik asks" in diagnostic["message"]]
