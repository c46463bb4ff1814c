"""The store query behind recurrence: the incidents of a window, each as its latest stored report says it."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from bot.memory.keys import FACTS_READ, FIELDS_READ, incident_keys
from bot.memory.recurrence import WINDOW, Recurrence, Seen, recall
from bot.store.models import Incident, SlackMessage, TriageRun

# Runs read at most per recall (a few hundred bytes each): a week of a busy cluster, newest first.
RUN_LIMIT = 2000


def recent_incidents(session: Session, since: datetime, until: datetime) -> list[Seen]:
    """Every incident with a stored report between `since` and `until`, keyed by its latest report."""
    parts = [TriageRun.report[name] for name in FIELDS_READ] + \
        [TriageRun.report[("facts", name)] for name in FACTS_READ]
    runs = session.execute(
        select(TriageRun.incident_id, TriageRun.started_at, *parts)
        .where(TriageRun.incident_id.is_not(None), TriageRun.status == "ok", TriageRun.report.is_not(None),
               TriageRun.started_at >= since, TriageRun.started_at <= until)
        .order_by(TriageRun.started_at.desc(), TriageRun.id.desc()).limit(RUN_LIMIT)).all()
    latest: dict[int, tuple[datetime, dict[str, Any]]] = {}
    for incident_id, started_at, *values in runs:
        if incident_id is not None and incident_id not in latest:
            latest[incident_id] = (started_at, _report(values))
    if not latest:
        return []
    ids = list(latest)
    incidents = {i.id: i for i in session.scalars(select(Incident).where(Incident.id.in_(ids)))}
    threads = _threads(session, ids)
    out: list[Seen] = []
    for incident_id, (at, report) in latest.items():
        incident = incidents.get(incident_id)
        channel, ts = threads.get(incident_id, (None, None))
        if incident is not None and incident.thread_ts:
            channel, ts = incident.channel, incident.thread_ts
        out.append(Seen(incident_id=incident_id, at=at, title=incident.title if incident else "",
                        keys=incident_keys(report), channel=channel, thread_ts=ts))
    return out


def _report(values: list[Any]) -> dict[str, Any]:
    """The parts of a stored report the keys read, as a report of their own (a part it lacks is left out)."""
    fields = dict(zip(FIELDS_READ, values[:len(FIELDS_READ)], strict=True))
    facts = dict(zip(FACTS_READ, values[len(FIELDS_READ):], strict=True))
    return {**{k: v for k, v in fields.items() if v is not None},
            "facts": {k: v for k, v in facts.items() if v is not None}}


def _threads(session: Session, incident_ids: list[int]) -> dict[int, tuple[str, str]]:
    """Each incident's thread in Slack: the thread of its first posted message (or that message itself)."""
    rows = session.execute(
        select(SlackMessage.incident_id, SlackMessage.channel, SlackMessage.ts, SlackMessage.thread_ts)
        .where(SlackMessage.incident_id.in_(incident_ids)).order_by(SlackMessage.created_at, SlackMessage.id)).all()
    out: dict[int, tuple[str, str]] = {}
    for incident_id, channel, ts, thread_ts in rows:
        if incident_id is not None and incident_id not in out:
            out[incident_id] = (channel, thread_ts or ts)
    return out


def recall_for(session: Session, *, incident_id: int | None, report: dict[str, Any], at: datetime,
               title: str = "", window: timedelta = WINDOW) -> Recurrence:
    """What a new report recalls among the incidents stored in the `window` before `at`."""
    new = Seen(incident_id=incident_id if incident_id is not None else -1, at=at, title=title,
               keys=incident_keys(report))
    return recall(new, recent_incidents(session, at - window, at), window)
