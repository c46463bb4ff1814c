"""The `/drill` command grammar, table-driven: what a `/drill` text means, and the errors that say what was
expected. Pure functions, so these run without a server. (`/triage`'s grammar: test_triage_grammar.py.)"""

from __future__ import annotations

import pytest

from bot.slack.drill_grammar import DrillCommand, DrillCommandError
from bot.slack.drill_grammar import parse_command as parse_drill

# (text, action, words, seed)
DRILL = [
    ("", "help", (), None),
    ("help", "help", (), None),
    ("start", "start", (), None),
    ("start oom-trainer-limit", "start", ("oom-trainer-limit",), None),
    ("START random hard --seed 7", "start", ("random", "hard"), 7),
    ("start --seed=-3", "start", (), -3),
    ("interview gpu-scheduling seed=11", "interview", ("gpu-scheduling",), 11),
    ("leaderboard", "leaderboard", (), None),
    ("history", "history", (), None),
]


@pytest.mark.parametrize(("text", "action", "words", "seed"), DRILL)
def test_drill_commands(text: str, action: str, words: tuple[str, ...], seed: int | None) -> None:
    assert parse_drill(text) == DrillCommand(action, words, seed)  # type: ignore[arg-type]


@pytest.mark.parametrize(("text", "needle"), [
    ("begin", "unknown `/drill begin`"),
    ("leaderboard now", "takes nothing after it"),
    ("start --seed seven", "--seed needs a whole number"),
])
def test_drill_errors_say_what_was_expected(text: str, needle: str) -> None:
    with pytest.raises(DrillCommandError) as err:
        parse_drill(text)
    assert needle in str(err.value)
