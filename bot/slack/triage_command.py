"""`/triage` in Slack: one handler per command the grammar (bot/slack/triage_grammar.py) reads.

Each handler acks within Slack's 3 s: help, a refusal or a usage error in the ack itself, anything else on the
pool after it (the flows in bot/slack/start.py). A new command is one entry in triage_grammar.SUBCOMMANDS and one
in HANDLERS here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from slack_bolt import Ack, App, Respond

from bot.context import BotContext
from bot.policy import scope
from bot.slack.common import Pool, audit, count, ephemeral, quoted
from bot.slack.memory import post_postmortem, switch_digest
from bot.slack.start import start_live, start_paste
from bot.slack.triage_grammar import (
    Command,
    CommandError,
    DigestCommand,
    HelpCommand,
    LiveCommand,
    PasteCommand,
    PostmortemCommand,
    parse_command,
)
from bot.slack.wording import help_text

COMMAND = "/triage"


@dataclass(frozen=True)
class Asked:
    """One /triage request: who asked where, what they typed, and how to answer them."""

    ctx: BotContext
    later: Pool
    ack: Ack
    respond: Respond
    user: str
    channel: str
    text: str


def register_triage(app: App, ctx: BotContext, later: Pool) -> None:
    @app.command(COMMAND)
    def triage(ack: Ack, command: dict[str, Any], respond: Respond) -> None:
        asked = Asked(ctx, later, ack, respond, user=str(command.get("user_id", "")),
                      channel=str(command.get("channel_id", "")), text=str(command.get("text", "")))
        try:
            parsed = parse_command(asked.text, ctx.settings.default_since)
        except CommandError as err:
            _invalid(asked, str(err))
            return
        HANDLERS[type(parsed)](asked, parsed)


def _invalid(asked: Asked, problem: str) -> None:
    ctx = asked.ctx
    asked.ack(text=f":warning: {problem}", response_type="ephemeral")
    count(ctx, "triage_invalid")
    asked.later("Auditing", None, lambda: audit(
        ctx, user=asked.user, channel=asked.channel, action="slash.triage", target=quoted(asked.text),
        detail={"error": problem}, outcome="invalid"))


def _help(asked: Asked, parsed: Command) -> None:
    ctx = asked.ctx
    asked.ack(text=help_text(ctx, channel=asked.channel, user=asked.user), response_type="ephemeral")
    count(ctx, "triage_help")
    asked.later("Auditing", None, lambda: audit(ctx, user=asked.user, channel=asked.channel, action="slash.help"))


def _live(asked: Asked, parsed: Command) -> None:
    assert isinstance(parsed, LiveCommand)  # HANDLERS picks the handler by type; this tells mypy so
    ctx, channel, user = asked.ctx, asked.channel, asked.user
    permissions = ctx.settings.permissions
    checked = scope(parsed.target)  # a node needs "*", whatever namespace the command named
    if not permissions.allowed_scope(checked, channel=channel, user=user):
        asked.ack(text=f":no_entry: {permissions.refusal(checked, channel=channel, user=user)}",
                  response_type="ephemeral")
        count(ctx, "triage_refused")
        asked.later("Auditing", None, lambda: audit(
            ctx, user=user, channel=channel, action="slash.triage", target=parsed.label,
            detail={"namespace": parsed.namespace}, outcome="refused"))
        return
    asked.ack()
    count(ctx, "triage")
    asked.later("Starting the triage", asked.respond, lambda: start_live(ctx, parsed, channel=channel, user=user))


def _paste(asked: Asked, parsed: Command) -> None:
    assert isinstance(parsed, PasteCommand)
    ctx = asked.ctx
    asked.ack()
    count(ctx, "triage_paste")
    asked.later("Analysing the pasted evidence", asked.respond,
                lambda: start_paste(ctx, parsed, channel=asked.channel, user=asked.user, origin="slash"))


def _postmortem(asked: Asked, parsed: Command) -> None:
    assert isinstance(parsed, PostmortemCommand)
    asked.ack()
    count(asked.ctx, "postmortem")

    def run() -> None:
        message = post_postmortem(asked.ctx, parsed.reference, channel=asked.channel, user=asked.user, via="slash")
        if message:
            ephemeral(asked.respond, message)

    asked.later("Writing the postmortem", asked.respond, run)


def _digest(asked: Asked, parsed: Command) -> None:
    assert isinstance(parsed, DigestCommand)
    asked.ack()
    count(asked.ctx, "digest")
    asked.later("Changing the digest", asked.respond, lambda: ephemeral(
        asked.respond, switch_digest(asked.ctx, parsed.on, channel=asked.channel, user=asked.user)))


# One handler per /triage command; the grammar (triage_grammar.SUBCOMMANDS) decides which.
HANDLERS: dict[type[Command], Callable[[Asked, Command], None]] = {
    HelpCommand: _help,
    LiveCommand: _live,
    PasteCommand: _paste,
    PostmortemCommand: _postmortem,
    DigestCommand: _digest,
}
