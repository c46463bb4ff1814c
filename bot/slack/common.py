"""What every Slack handler and flow shares: who acted where, the pool work goes to after the ack, a private answer,
a form opened and its answer read, the command counter, the audit line, waking the poster, a link to a message."""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

from slack_bolt import Ack, Respond
from slack_sdk import WebClient

from bot.context import BotContext
from bot.store import repo
from collectors.redact import redact_text

log = logging.getLogger("triagebot.slack")
T = TypeVar("T")


class Pool(Protocol):
    """bot.slack.app.Later: runs work after the ack and tells the user when it fails."""

    def __call__(self, what: str, respond: Respond | None, work: Callable[[], object]) -> None: ...


def ephemeral(respond: Respond, text: str) -> None:
    """A message only the requester sees, through the request's response_url."""
    try:
        respond(text=text, response_type="ephemeral", replace_original=False)
    except Exception:
        log.exception("could not answer through response_url")


def count(ctx: BotContext, name: str) -> None:
    """One more of this command, button or form in triagebot_commands_total."""
    ctx.metrics.commands.labels(name).inc()


@dataclass(frozen=True)
class Click:
    """Who clicked, where: the channel, and the thread the clicked message sits in."""

    user: str
    channel: str
    thread_ts: str | None
    trigger_id: str | None = None


def click_from(body: dict[str, Any]) -> Click:
    container = body.get("container") or {}
    message = body.get("message") or {}
    channel = (body.get("channel") or {}).get("id") or container.get("channel_id") or ""
    thread = container.get("thread_ts") or message.get("thread_ts") or container.get("message_ts")
    return Click(user=str((body.get("user") or {}).get("id", "")), channel=str(channel),
                 thread_ts=str(thread) if thread else None, trigger_id=body.get("trigger_id"))



def open_modal(client: WebClient, respond: Respond, click: Click, what: str,
               opener: Callable[[], tuple[dict[str, Any] | None, str | None]]) -> None:
    """Open the modal a button asks for, or say privately why not. On the listener's thread, not the pool: a
    trigger_id is good for 3 s, so the modal opens now or never."""
    try:
        view, message = opener()
        if view is not None:
            client.views_open(trigger_id=click.trigger_id or "", view=view)
    except Exception as err:
        log.exception("opening the %s form failed", what)
        message = f":x: Opening the form failed on triagebot's side ({type(err).__name__}); try again."
    if message:
        ephemeral(respond, message)


def accepted(ack: Ack, submission: T | dict[str, str]) -> T | None:
    """A modal's submission when it reads (acked), or None once Slack has been shown the errors per block."""
    if isinstance(submission, dict):
        ack(response_action="errors", errors=submission)
        return None
    ack()
    return submission


def audit(ctx: BotContext, *, user: str, channel: str | None, action: str, target: str | None = None,
          detail: dict[str, Any] | None = None, outcome: str = "ok") -> None:
    """An audit line in a transaction of its own, for commands that change nothing else (help, refusals)."""
    with ctx.factory.begin() as session:
        repo.audit(session, actor=user, channel=channel, action=action, target=target, detail=detail,
                   outcome=outcome)


def quoted(text: str, limit: int = 200) -> str:
    """What a user typed, fit for the audit log: the first line, shortened, with secrets masked."""
    first = text.strip().split("\n", 1)[0]
    return redact_text(first[:limit])


def wake(ctx: BotContext) -> None:
    if ctx.poster is not None:
        ctx.poster.wake()


def message_link(team_domain: str, channel: str, ts: str) -> str:
    """A link to a message, built the way Slack's permalinks are, without an API call."""
    if not (re.fullmatch(r"[a-z0-9-]+", team_domain) and re.fullmatch(r"[A-Z0-9]+", channel)
            and re.fullmatch(r"\d+\.\d+", ts)):
        return ""  # never put something unexpected into a link
    return f"https://{team_domain}.slack.com/archives/{channel}/p{ts.replace('.', '')}"

