"""What a `/triage` text asks for: the grammar, pure, so it runs before the ack (beside drill_grammar.py).

Text in, a typed command out, or a CommandError that says what was expected. A word command (`/triage help`) is
one entry of SUBCOMMANDS; anything else names a live target or is pasted evidence.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta

from collectors.models import Artifact, Target
from collectors.parsers.registry import parse_artifact
from collectors.paste import PasteError, artifacts_from_text, nothing_recognised
from collectors.redact import redact
from collectors.validate import InvalidInput, duration, namespace, target_name

USAGE = "/triage <service|pod/NAME|node/NAME|job/NAME> [namespace] [since]"
_DURATION_LIKE = re.compile(r"^\d+[smhd]$")


class CommandError(ValueError):
    """A /triage the bot cannot act on; the message says what was expected."""


@dataclass(frozen=True)
class HelpCommand:
    pass


@dataclass(frozen=True)
class LiveCommand:
    target: Target
    label: str  # what the user named, e.g. "checkout" or "pod/trainer-0"
    namespace: str
    since: timedelta
    since_text: str


@dataclass(frozen=True)
class PasteCommand:
    artifacts: list[Artifact]  # already redacted


@dataclass(frozen=True)
class PostmortemCommand:
    reference: str | None  # an incident id or key; None: the channel's latest resolved incident


@dataclass(frozen=True)
class DigestCommand:
    on: bool


Command = HelpCommand | LiveCommand | PasteCommand | PostmortemCommand | DigestCommand

# A word command: the words after it -> the command. One entry per command; bot/slack/app.py's HANDLERS has the
# handler of each command type.
Subcommand = Callable[[list[str]], Command]


def _help(rest: list[str]) -> HelpCommand:
    if rest:
        raise CommandError(f"`/triage help` takes nothing after it. Usage: `{USAGE}`")
    return HelpCommand()


_INCIDENT_REF = re.compile(r"^(\d+|[a-z-]+:\S+)$")  # an incident's id, or its key ("slash:...", "alert:...")


def _postmortem(rest: list[str]) -> PostmortemCommand:
    if len(rest) > 1 or (rest and not _INCIDENT_REF.match(rest[0])):
        raise CommandError("`/triage postmortem` takes at most an incident's id or key (the App Home lists them); "
                           "alone, it is this channel's latest resolved incident. Usage: "
                           "`/triage postmortem [INCIDENT]`")
    return PostmortemCommand(rest[0] if rest else None)


def _digest(rest: list[str]) -> DigestCommand:
    if len(rest) != 1 or rest[0].lower() not in ("on", "off"):
        raise CommandError("`/triage digest` turns the weekly digest of this channel on or off. Usage: "
                           "`/triage digest on|off`")
    return DigestCommand(rest[0].lower() == "on")


SUBCOMMANDS: dict[str, Subcommand] = {word: _help for word in ("help", "-h", "--help", "?")} | {
    "postmortem": _postmortem, "digest": _digest}


def slack_unescape(text: str) -> str:
    """Slack sends &, < and > escaped, and pasted logs often sit in a code fence; undo both before parsing."""
    text = text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")
    stripped = text.strip()
    if stripped.startswith("```") and stripped.endswith("```") and len(stripped) >= 6:
        text = stripped[3:-3]
    return text


def parse_paste(text: str, name: str) -> PasteCommand:
    """Pasted evidence as redacted artifacts; CommandError says what is understood when nothing is recognised.

    In a channel, a report that only says "nothing recognised" would be noise in everyone's thread, so that
    answer goes to the sender alone (ephemeral), with what was looked for.
    """
    try:
        artifacts = artifacts_from_text(slack_unescape(text), name)
    except PasteError as err:
        raise CommandError(f"{err}. For a live triage type `{USAGE}`; `/triage help` explains more.") from None
    if not any(parse_artifact(a).facts for a in artifacts):
        raise CommandError(f"{nothing_recognised()} For a live triage type `{USAGE}`.")
    # Redacted before anything stores or echoes it: a paste can carry tokens as easily as a live capture.
    return PasteCommand([redact(a) for a in artifacts])


def parse_command(text: str, default_since: str) -> Command:
    """What a /triage text asks for: a word command, a live triage, or analysis of pasted evidence."""
    stripped = text.strip()
    if not stripped:
        return HelpCommand()
    if "\n" in stripped:
        return parse_paste(text, "paste")
    words = stripped.split()
    subcommand = SUBCOMMANDS.get(words[0].lower())
    if subcommand is not None:
        return subcommand(words[1:])
    try:
        return _parse_live(words, default_since)
    except CommandError as live_error:
        # One line that is not a target may still be evidence, e.g. a single kernel log line; if nothing in it is
        # recognised, it was a mistyped target, and the target's error is the helpful one.
        try:
            return parse_paste(text, "paste")
        except CommandError:
            raise live_error from None


def _parse_live(tokens: list[str], default_since: str) -> LiveCommand:
    options, positional = _split_options(tokens)
    # "/triage checkout 2h": a lone duration after the target is the window, not a namespace.
    if len(positional) == 2 and "since" not in options and _DURATION_LIKE.match(positional[1]):
        options["since"] = positional.pop()
    if not 1 <= len(positional) <= 3:
        raise CommandError(f"expected a target and at most a namespace and a window. Usage: `{USAGE}`")
    for slot, name in ((1, "namespace"), (2, "since")):
        if len(positional) > slot:
            if name in options:
                raise CommandError(f"the {name} is given twice. Usage: `{USAGE}`")
            options[name] = positional[slot]
    label, since_text = positional[0], options.get("since", default_since)
    try:
        kind, name = target_name(label)
        ns = namespace(options.get("namespace", "default"))
        since = duration(since_text)
    except InvalidInput as err:
        raise CommandError(f"{err}. Usage: `{USAGE}`") from None
    return LiveCommand(target=_target(kind, name, ns), label=label, namespace=ns, since=since,
                       since_text=since_text)


def _split_options(tokens: list[str]) -> tuple[dict[str, str], list[str]]:
    """`-n NS`, `--namespace[=]NS` and `--since[=]DURATION`, and the words that are not options."""
    options: dict[str, str] = {}
    positional: list[str] = []
    words = iter(tokens)
    for word in words:
        flag, has_value, value = word.partition("=")
        if flag in ("-n", "--namespace", "--since"):
            value = value if has_value else next(words, "")
            if not value:
                raise CommandError(f"`{flag}` needs a value. Usage: `{USAGE}`")
            options["since" if flag == "--since" else "namespace"] = value
        elif word.startswith("-"):
            raise CommandError(f"unknown option `{word}`. Usage: `{USAGE}`")
        else:
            positional.append(word)
    return options, positional


def _target(kind: str, name: str, ns: str) -> Target:
    """The Target the live sources resolve: pod and node by field, anything else by (kind/)name."""
    if kind == "pod":
        return Target(namespace=ns, pod=name, service=f"pod/{name}")
    if kind == "node":
        return Target(namespace=ns, node=name, service=f"node/{name}")
    return Target(namespace=ns, service=name if kind == "service" else f"{kind}/{name}")
