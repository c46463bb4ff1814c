"""A running bot as Slack sees it: signed requests go in, and the bot's posts are read back from the stand-in."""

from __future__ import annotations

from dataclasses import dataclass

import httpx
from sqlalchemy import select

from bot.context import BotContext
from bot.store.models import AuditEntry
from tests.standins.slack_api import Message, SlackStandIn, signed_headers, slash_command_body

BOT_USER = "U0BOT"


@dataclass
class SlackBot:
    url: str
    slack: SlackStandIn
    ctx: BotContext
    http: httpx.Client
    secret: str
    wait: float = 25.0  # seconds for a handful of posts paced at one per second per channel

    def send(self, body: bytes, *, form: bool = True) -> httpx.Response:
        return self.http.post(f"{self.url}/slack/events", content=body,
                              headers=signed_headers(body, self.secret, form=form))

    def command(self, command: str, text: str, channel: str, user: str = "U0ALICE") -> tuple[httpx.Response, str]:
        """A slash command; the HTTP response and the command's response_url."""
        url = self.slack.response_url(channel=channel, user_id=user)
        body = slash_command_body(command, text, channel_id=channel, user_id=user, response_url=url)
        return self.send(body), url

    def roots(self, channel: str) -> list[Message]:
        return [m for m in self.slack.top_level(channel) if m.user == BOT_USER]

    def said(self, channel: str, root: Message) -> list[Message]:
        """The bot's messages in the thread, oldest first, files left out (a shared file shows up as a message)."""
        return [m for m in self.slack.thread(channel, root.ts) if m.ts != root.ts and m.user == BOT_USER
                and not m.file_ids]

    def wait_said(self, channel: str, root: Message, count: int) -> list[Message]:
        self.slack.wait_for(lambda: len(self.said(channel, root)) >= count, timeout=self.wait)
        return self.said(channel, root)

    def audited(self, action: str) -> list[AuditEntry]:
        with self.ctx.factory() as session:
            return list(session.scalars(select(AuditEntry).where(AuditEntry.action == action).order_by(AuditEntry.id)))

    def wait_audits(self, action: str, count: int) -> list[AuditEntry]:
        self.slack.wait_for(lambda: len(self.audited(action)) >= count, timeout=self.wait)
        return self.audited(action)
