"""The Slack command grammars, table-driven: what `/triage` and `/drill` texts mean, and the errors that say what
was expected. Pure functions, so these run without a server."""

from __future__ import annotations

from datetime import timedelta

import pytest

from bot.slack.drill_grammar import DrillCommand, DrillCommandError
from bot.slack.drill_grammar import parse_command as parse_drill
from bot.slack.flows import (
    CommandError,
    DigestCommand,
    HelpCommand,
    LiveCommand,
    PasteCommand,
    PostmortemCommand,
    parse_command,
)

# (text, target fields, namespace, since)
LIVE = [
    ("checkout", {"service": "checkout", "namespace": "default"}, "default", timedelta(minutes=30)),
    ("checkout shop", {"service": "checkout", "namespace": "shop"}, "shop", timedelta(minutes=30)),
    ("checkout shop 2h", {"service": "checkout"}, "shop", timedelta(hours=2)),
    ("checkout 2h", {"service": "checkout"}, "default", timedelta(hours=2)),  # a lone window is not a namespace
    ("checkout -n shop --since 15m", {"service": "checkout"}, "shop", timedelta(minutes=15)),
    ("checkout --namespace=shop --since=1h", {"service": "checkout"}, "shop", timedelta(hours=1)),
    ("pod/trainer-0 ml", {"pod": "trainer-0", "service": "pod/trainer-0"}, "ml", timedelta(minutes=30)),
    ("node/gpu-node-7", {"node": "gpu-node-7", "service": "node/gpu-node-7"}, "default", timedelta(minutes=30)),
    ("job/pretrain ml 6h", {"service": "job/pretrain"}, "ml", timedelta(hours=6)),
]


@pytest.mark.parametrize(("text", "target", "namespace", "since"), LIVE)
def test_live_commands(text: str, target: dict[str, str], namespace: str, since: timedelta) -> None:
    cmd = parse_command(text, "30m")
    assert isinstance(cmd, LiveCommand)
    assert cmd.namespace == namespace and cmd.since == since and cmd.label == text.split()[0]
    assert {k: getattr(cmd.target, k) for k in target} == target


@pytest.mark.parametrize(("text", "meant"), [
    ("postmortem", PostmortemCommand(None)),
    ("postmortem 42", PostmortemCommand("42")),
    ("Postmortem slash:0f3a9c", PostmortemCommand("slash:0f3a9c")),
    ("digest on", DigestCommand(on=True)),
    ("digest OFF", DigestCommand(on=False)),
])
def test_memory_commands(text: str, meant: object) -> None:
    assert parse_command(text, "30m") == meant


@pytest.mark.parametrize(("text", "label", "namespace"), [
    ("digest shop", "digest", "shop"),  # a service called digest is still triaged
    ("postmortem shop", "postmortem", "shop"),  # "shop" is no incident id or key
    ("digest", "digest", "default"),
])
def test_memory_words_that_are_targets(text: str, label: str, namespace: str) -> None:
    cmd = parse_command(text, "30m")
    assert isinstance(cmd, LiveCommand) and (cmd.label, cmd.namespace) == (label, namespace)


@pytest.mark.parametrize("text", ["", "help", "  HELP ", "-h", "--help", "?"])
def test_help(text: str) -> None:
    assert isinstance(parse_command(text, "30m"), HelpCommand)


# (text, what the error must say)
LIVE_ERRORS = [
    ("Checkout_Svc shop", "not a valid Kubernetes name"),
    ("checkout Shop", "namespace 'Shop' is not a valid name"),
    ("checkout shop 9w", "duration '9w' is not understood"),
    ("checkout shop 30d", "out of range"),
    ("deploy/ok shop 1h extra", "expected a target"),
    ("checkout --bogus", "unknown option"),
    ("checkout shop -n ml", "the namespace is given twice"),
    ("checkout -n", "`-n` needs a value"),
]


@pytest.mark.parametrize(("text", "needle"), LIVE_ERRORS)
def test_live_errors_say_what_was_expected(text: str, needle: str) -> None:
    with pytest.raises(CommandError, match="Usage") as err:
        parse_command(text, "30m")
    assert needle in str(err.value)


def test_pasted_evidence_is_a_paste_and_chatter_is_refused_with_what_was_looked_for() -> None:
    # An NVRM line as people paste it (tests/realworld/gpu-xid/bumblebee-issue-677-xid-32-31-card-died).
    paste = parse_command("[24128.828315] NVRM: Xid (PCI:0000:01:00): 32, Channel ID 00000000 intr 00004000", "30m")
    assert isinstance(paste, PasteCommand) and paste.artifacts
    with pytest.raises(CommandError, match="Nothing in this evidence was recognised") as err:
        parse_command("lunch at noon?\nsee you there", "30m")
    assert "kernel-log" in str(err.value)


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
