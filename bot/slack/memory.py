"""Incident memory in Slack: the postmortem draft (the button under a resolved incident and `/triage postmortem`)
and `/triage digest on|off`. The postmortem is posted as a markdown file in the incident's thread, through the
outbox; the digest itself is queued by the clock (bot/runner/digests.py)."""

from __future__ import annotations

import hashlib
from typing import Any

from slack_bolt import Ack, App, Respond

from bot.context import BotContext
from bot.delivery import Upload, find, queue
from bot.keys import incident_root_key
from bot.memory.history import NoIncident, find_incident, incident_rows, latest_resolved_in
from bot.memory.postmortem import build_postmortem
from bot.render.memory.postmortem import postmortem_markdown
from bot.render.slack_triage import POSTMORTEM_ACTION
from bot.runner.digests import set_digest
from bot.slack.common import Pool, click_from, count, ephemeral, wake
from bot.store import repo
from bot.store.models import Incident


def _allowed(ctx: BotContext, incident: Incident, channel: str, user: str) -> bool:
    """Whoever could see the incident's thread, or triage its namespace, may have its postmortem."""
    if incident.channel == channel:
        return True
    return ctx.settings.permissions.allowed_scope(incident.namespace, channel=channel, user=user) \
        if incident.namespace else False


def post_postmortem(ctx: BotContext, reference: str | None, *, channel: str, user: str, via: str) -> str | None:
    """Queue the postmortem draft as a file in the incident's thread; returns what to tell the requester, if
    anything. `reference` is an incident id or key; None means the channel's latest resolved incident."""
    action = f"{via}.postmortem"
    with ctx.factory.begin() as session:
        try:
            incident = find_incident(session, reference) if reference else latest_resolved_in(session, channel)
        except NoIncident as err:
            repo.audit(session, actor=user, channel=channel, action=action, target=reference,
                       detail={"error": str(err)}, outcome="invalid")
            return f":warning: {str(err)[0].upper()}{str(err)[1:]}."
        if incident is None:
            return ":warning: No resolved incident in this channel yet: name one, `/triage postmortem INCIDENT`."
        if not _allowed(ctx, incident, channel, user):
            repo.audit(session, actor=user, channel=channel, action=action, target=incident.key, outcome="refused")
            return ":no_entry: That incident was posted in another channel, and its namespace is not granted here."
        root = find(session, incident_root_key(incident.key))
        if root is None:
            return (f":warning: Incident {incident.id} has no thread in Slack; `triagebot postmortem {incident.id}` "
                    "prints its postmortem.")
        where = root.channel
        text = postmortem_markdown(build_postmortem(incident_rows(session, incident)), slack_names=True)
        # Keyed by content: asking again before anything changed posts nothing new.
        key = f"postmortem:{incident.id}:{hashlib.sha256(text.encode()).hexdigest()[:16]}"
        if find(session, key) is not None:
            return "The postmortem draft in the thread is up to date: nothing happened since it was written."
        queue(session, Upload(key=key, channel=root.channel, incident_id=incident.id, kind="postmortem",
                              filename=f"postmortem-incident-{incident.id}.md",
                              title=f"Postmortem draft: {incident.title or incident.key}"[:250], content=text,
                              parent=root))
        repo.audit(session, actor=user, channel=channel, action=action, target=incident.key,
                   detail={"outbox": key})
    wake(ctx)
    return None if where == channel else f"The postmortem draft is going to <#{where}>, in the incident's thread."


def switch_digest(ctx: BotContext, on: bool, *, channel: str, user: str) -> str:
    with ctx.factory.begin() as session:
        set_digest(session, channel, on, user)
        repo.audit(session, actor=user, channel=channel, action="slash.digest", target="on" if on else "off")
    return (":calendar: The weekly digest is on for this channel: every Monday, the week before (incidents by "
            "symptom and verdict, what came back, accuracy from feedback)." if on else
            ":calendar: The weekly digest is off for this channel.")


def register_memory(app: App, ctx: BotContext, later: Pool) -> None:
    @app.action(POSTMORTEM_ACTION)
    def clicked(ack: Ack, body: dict[str, Any], respond: Respond) -> None:
        ack()
        count(ctx, "postmortem")
        actions = body.get("actions") or [{}]
        value = str(actions[0].get("value") or "")
        click = click_from(body)

        def run() -> None:
            message = post_postmortem(ctx, value or None, channel=click.channel, user=click.user, via="button")
            if message:
                ephemeral(respond, message)

        later("Writing the postmortem", respond, run)
