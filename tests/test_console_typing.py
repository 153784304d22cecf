"""`groupmate chat` in a real pseudo-terminal: a reminder that goes off while someone is
typing is printed above their line, and what they typed stays shown, ready to send."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.test_cli import Terminal, _config


@pytest.mark.slow  # the reminder goes off a minute after it is set
def test_text_typed_before_a_reminder_is_still_shown_after_it(tmp_path: Path) -> None:
    with Terminal(_config(tmp_path)) as terminal:
        terminal.expect("[group] tester>")
        terminal.type("/remind in 1 minute tea")
        terminal.expect("Reminder #1 set for")
        terminal.settle()
        terminal.keys("see you at the")  # and no Enter yet
        terminal.expect("see you at the")
        terminal.expect("[group] bot> ", within=120)  # the reminder, meanwhile
        terminal.settle()
        screen = terminal.screen()
        print("\n".join(screen))
        reminder = next(n for n, line in enumerate(screen) if "[group] bot> " in line)
        assert "tea" in "\n".join(screen[reminder:])
        # Below the reminder, the line being typed: the prompt and the words so far.
        assert screen[-1] == "[group] tester> see you at the"
        terminal.type(" station")  # sent as one message, both halves
        terminal.expect("[group] tester>")
        assert terminal.close() == 0
