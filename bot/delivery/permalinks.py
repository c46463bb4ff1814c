"""Earlier incidents' thread links for the recurrence note, from Slack's chat.getPermalink, fetched once each.

A permalink never changes, so the first one Slack gives for an incident's thread is kept on the incident
(`incidents.permalink`) and every later note reuses it. chat.getPermalink is Slack's Tier 4 (about 100 calls a
minute for the workspace): the poster spends a budget of its own below that, and a 429 empties it until its
Retry-After. A link is a nicety: when Slack refuses (`channel_not_found`, `message_not_found`), is rate limiting
or cannot be reached, the note names the incident, its channel and its date instead, and is posted all the same.
"""

from __future__ import annotations

import http.client
import logging
from collections.abc import Iterable
from typing import Any

from slack_sdk.errors import SlackApiError
from sqlalchemy import select, update

from bot.delivery.desk import Desk
from bot.delivery.slack_errors import slack_failure
from bot.memory.recurrence import Recurrence, Seen
from bot.render.memory.recurrence import shown, slack_payload
from bot.store.models import Incident

log = logging.getLogger("triagebot.poster")


def recurrence_note(desk: Desk, data: dict[str, Any]) -> dict[str, Any]:
    """The note's text and blocks, rendered again as it is sent with the permalinks known by then; {} (keep the
    queued words) when the stored content is not a note this bot can read."""
    try:
        rec = Recurrence.from_json(data)
    except (KeyError, TypeError, ValueError):
        return {}
    return slack_payload(rec, thread_permalinks(desk, shown(rec)))


def thread_permalinks(desk: Desk, earlier: Iterable[Seen]) -> dict[int, str]:
    """The permalink of each earlier incident's thread that the store keeps or Slack gives now, by incident."""
    wanted = {s.incident_id: s for s in earlier if s.channel and s.thread_ts}
    if not wanted:
        return {}
    with desk.factory() as session:
        found: dict[int, str] = {i: link for i, link in session.execute(select(Incident.id, Incident.permalink).where(
            Incident.id.in_(list(wanted)), Incident.permalink.is_not(None))) if link}
    for incident_id, seen in wanted.items():
        if incident_id not in found and (link := permalink(desk, str(seen.channel), str(seen.thread_ts))) is not None:
            found[incident_id] = link
            with desk.factory.begin() as session:
                session.execute(update(Incident).where(Incident.id == incident_id).values(permalink=link))
    return found


def permalink(desk: Desk, channel: str, ts: str) -> str | None:
    """The link Slack gives for one message, within the poster's chat.getPermalink budget; None when the budget is
    spent or Slack refuses or is out of reach (the caller posts without the link)."""
    if desk.permalinks.take() > 0:
        return None  # the budget is spent: this note goes without the link, a later one gets it
    try:
        response = desk.client.chat_getPermalink(channel=channel, message_ts=ts)
    except SlackApiError as err:
        failure = slack_failure(err)
        if failure.retry_after is not None:
            desk.permalinks.hold(failure.retry_after)
        desk.metrics.slack_errors.labels("chat.getPermalink", failure.error).inc()
        log.info("no permalink for %s in %s: %s", ts, channel, failure.error)
        return None
    except (OSError, http.client.HTTPException) as err:  # Slack out of reach: the post itself will tell
        log.info("no permalink for %s in %s: %s", ts, channel, type(err).__name__)
        return None
    link = response.get("permalink")
    return link if isinstance(link, str) and link.startswith("https://") else None
