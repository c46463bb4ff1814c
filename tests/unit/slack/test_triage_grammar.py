"""The `/triage` grammar (bot/slack/triage_grammar.py), table-driven: what a text means, and the errors that say
what was expected. Pure functions, so these run without a server."""

from __future__ import annotations

from datetime import timedelta
from typing import get_args

import pytest

from bot.slack.triage_command import HANDLERS
from bot.slack.triage_grammar import (
    SUBCOMMANDS,
    Command,
    CommandError,
    DigestCommand,
    HelpCommand,
    LiveCommand,
    PasteCommand,
    PostmortemCommand,
    parse_command,
    slack_unescape,
)
from tests.unit.slack.triage_errors import LIVE_ERRORS

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


@pytest.mark.parametrize("text", ["", "help", "  HELP ", "-h", "--help", "?"])
def test_help(text: str) -> None:
    assert isinstance(parse_command(text, "30m"), HelpCommand)


def test_every_word_command_is_one_entry_and_is_read_before_a_target() -> None:
    # A word command shadows a service of that name: the table is the whole list of them.
    assert sorted(SUBCOMMANDS) == ["--help", "-h", "?", "digest", "help", "postmortem"]
    for word in ("--help", "-h", "?", "help"):
        assert isinstance(parse_command(word.upper(), "30m"), HelpCommand)


@pytest.mark.parametrize(("text", "meant"), [
    ("postmortem", PostmortemCommand(None)),
    ("postmortem 42", PostmortemCommand("42")),
    ("Postmortem slash:0f3a9c", PostmortemCommand("slash:0f3a9c")),
    ("digest on", DigestCommand(on=True)),
    ("digest OFF", DigestCommand(on=False)),
])
def test_memory_commands(text: str, meant: Command) -> None:
    assert parse_command(text, "30m") == meant


def test_every_command_the_grammar_gives_has_one_handler() -> None:
    assert set(HANDLERS) == set(get_args(Command))


@pytest.mark.parametrize(("text", "needle"), [
    ("help me", "`/triage help` takes nothing after it"),
    ("? checkout", "`/triage help` takes nothing after it"),
    ("postmortem shop", "at most an incident's id or key"),
    ("postmortem 1 2", "at most an incident's id or key"),
    ("digest", "`/triage digest on|off`"),
    ("digest shop", "`/triage digest on|off`"),
])
def test_word_command_errors_say_what_was_expected(text: str, needle: str) -> None:
    with pytest.raises(CommandError, match="Usage") as err:
        parse_command(text, "30m")
    assert needle in str(err.value)


# (what Slack sends, what is parsed)
UNESCAPED = [
    ("a &lt;b&gt; &amp; c", "a <b> & c"),
    ("```\nline one\nline two\n```", "\nline one\nline two\n"),
    ("``````", ""),
    ("```", "```"),  # too short to be a fence
    ("plain", "plain"),
]


@pytest.mark.parametrize(("sent", "read"), UNESCAPED)
def test_slack_escapes_and_code_fences_are_undone(sent: str, read: str) -> None:
    assert slack_unescape(sent) == read


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
