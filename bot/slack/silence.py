"""The "Silence 1h" button on an alert's root message: a silence in Alertmanager, authored by whoever clicked.

Off unless `silence_button` and `alertmanager_url` are set (bot/config.py); the button only appears then
(bot/alerts/alert_message.py). The clicker needs the alert's namespace granted, like /triage.
"""

from __future__ import annotations

import json
import logging
import uuid
from typing import Any

from slack_bolt import Ack, App, Respond

from bot.alerts.alertmanager_api import SilenceError, create_silence
from bot.context import BotContext
from bot.delivery import Reply, queue
from bot.policy import scope
from bot.render.alert_root import SILENCE_ACTION, SILENCE_DURATION, silenced_line
from bot.slack.common import Click, Pool, audit, click_from
from bot.store import repo
from collectors.alert_target import target_for

log = logging.getLogger("triagebot.slack.silence")

ACTION = "button.silence"


def _matchers(value: str) -> dict[str, str] | None:
    try:
        parsed = json.loads(value)
    except ValueError:
        return None
    if not isinstance(parsed, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in parsed.items()):
        return None
    return parsed


def author(body: dict[str, Any]) -> str:
    """createdBy: the Slack name people know, with the id that cannot be renamed."""
    user = body.get("user") or {}
    name = str(user.get("username") or user.get("name") or "").strip()
    uid = str(user.get("id", ""))
    return f"{name} (Slack {uid})" if name else f"Slack {uid}"


def silence(ctx: BotContext, value: str, click: Click, created_by: str) -> str | None:
    """Create the silence and say so in the alert's thread; returns a message only the clicker sees, if any."""
    settings = ctx.settings
    labels = _matchers(value)
    if labels is None:
        audit(ctx, user=click.user, channel=click.channel, action=ACTION, outcome="invalid")
        return ":warning: This button carries no alert labels; silence it in Alertmanager instead."
    if not (settings.silence_button and settings.alertmanager_url):
        audit(ctx, user=click.user, channel=click.channel, action=ACTION, detail={"matchers": labels},
                    outcome="refused")
        return ":no_entry: Silencing from Slack is off (`silence_button`); use the Silence link instead."
    # A node's alert, or one that names no namespace, is cluster-scoped: silencing it needs "*".
    namespace = scope(target_for(labels).target)
    if not settings.permissions.allowed_scope(namespace, channel=click.channel, user=click.user):
        audit(ctx, user=click.user, channel=click.channel, action=ACTION, target=namespace,
                    detail={"matchers": labels}, outcome="refused")
        return f":no_entry: {settings.permissions.refusal(namespace, channel=click.channel, user=click.user)}"
    comment = f"Silenced for 1h from Slack by {created_by}, with triagebot's Silence button."
    try:
        made = create_silence(settings.alertmanager_url, labels, created_by=created_by, comment=comment,
                              duration=SILENCE_DURATION)
    except SilenceError as err:
        audit(ctx, user=click.user, channel=click.channel, action=ACTION, target=namespace,
                    detail={"matchers": labels, "error": str(err)}, outcome="error")
        return f":x: {err}"
    until = made.ends_at.strftime("%H:%M UTC")
    text = silenced_line(click.user, made.id, until, labels)
    with ctx.factory.begin() as session:
        repo.audit(session, actor=click.user, channel=click.channel, action=ACTION, target=namespace,
                   detail={"silence": made.id, "matchers": labels, "created_by": created_by})
        queue(session, Reply(key=f"silence:{made.id or uuid.uuid4().hex}", channel=click.channel, kind="silence",
                             text=text, thread_ts=click.thread_ts))
    if ctx.poster is not None:
        ctx.poster.wake()
    return None


def register_silence(app: App, ctx: BotContext, later: Pool) -> None:
    @app.action(SILENCE_ACTION)
    def clicked(ack: Ack, body: dict[str, Any], respond: Respond) -> None:
        ack()
        ctx.metrics.commands.labels("silence").inc()
        actions = body.get("actions") or [{}]
        value = str(actions[0].get("value") or "")
        click, created_by = click_from(body), author(body)

        def run() -> None:
            message = silence(ctx, value, click, created_by)
            if message:
                try:
                    respond(text=message, response_type="ephemeral", replace_original=False)
                except Exception:
                    log.exception("could not answer through response_url")

        later("Silencing the alert", respond, run)
