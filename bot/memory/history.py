"""What the store holds about one incident, read in a few queries: the rows the postmortem is built from.

Store queries only; bot/memory/postmortem.py turns the rows into a postmortem without touching the database.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import timedelta

from sqlalchemy import ColumnElement, or_, select
from sqlalchemy.orm import Session

from bot.keys import EPISODE_PREFIX, episode_incident_key, group_id
from bot.store.models import Alert, AlertGroup, AuditEntry, Feedback, Incident, TriageRun

# The webhook stores an episode's first alerts just before it opens the episode's incident, in one transaction.
_LEEWAY = timedelta(seconds=1)


@dataclass
class IncidentRows:
    incident: Incident
    alerts: list[Alert] = field(default_factory=list)  # as received, oldest first (repeats included)
    runs: list[TriageRun] = field(default_factory=list)  # oldest first
    feedback: list[Feedback] = field(default_factory=list)  # oldest first
    actions: list[AuditEntry] = field(default_factory=list)  # commands and buttons on it, oldest first


class NoIncident(LookupError):
    """The reference names no stored incident; the message says how to name one."""


def find_incident(session: Session, reference: str) -> Incident:
    """An incident by id ("12") or key ("slash:...", "alert:...")."""
    text = reference.strip()
    by = Incident.id == int(text) if text.isdigit() else Incident.key == text
    found = session.scalars(select(Incident).where(by)).first() if text else None
    if found is None:
        raise NoIncident(f"no stored incident {reference!r} (give its id or key; the App Home lists recent ones)")
    return found


def latest_resolved_in(session: Session, channel: str) -> Incident | None:
    """The channel's most recently updated resolved incident: what `/triage postmortem` alone is about."""
    return session.scalars(select(Incident).where(Incident.channel == channel, Incident.status == "resolved")
                           .order_by(Incident.updated_at.desc(), Incident.id.desc()).limit(1)).first()


def _group(session: Session, incident: Incident) -> AlertGroup | None:
    """The alert group whose episode the incident is: the group's current one, its first, or a later one by the
    group's id in the key (bot.keys.episode_incident_key)."""
    group = session.scalars(select(AlertGroup).where(AlertGroup.incident_id == incident.id)).first()
    if group is not None:
        return group
    if incident.key.startswith("alert:"):
        return session.scalars(select(AlertGroup).where(AlertGroup.group_key == incident.key[6:])).first()
    if incident.key.startswith(EPISODE_PREFIX) and incident.channel:
        gid = incident.key.removeprefix(EPISODE_PREFIX).rpartition(":")[0]
        channel = session.scalars(select(AlertGroup).where(AlertGroup.channel == incident.channel))
        return next((g for g in channel if group_id(g.group_key) == gid), None)
    return None


def _episode(incident: Incident) -> int:
    if incident.key.startswith(EPISODE_PREFIX):
        number = incident.key.rpartition(":")[2]
        return int(number) if number.isdigit() else 1
    return 1


def _alerts(session: Session, incident: Incident) -> list[Alert]:
    group = _group(session, incident)
    if group is None:
        return []
    current = group.incident_id == incident.id and group.episode_started_at is not None
    # The current episode starts exactly where the group says; an earlier one where its incident was opened.
    since = group.episode_started_at if current and group.episode_started_at else incident.created_at - _LEEWAY
    query = select(Alert).where(Alert.group_key == group.group_key, Alert.received_at >= since)
    if not current:
        # An earlier episode ends where the next began: exactly, when the next is the group's current one.
        number = _episode(incident) + 1
        following = session.scalars(select(Incident.created_at).where(
            Incident.key == episode_incident_key(group.group_key, number))).first()
        until = group.episode_started_at if number == group.episode else \
            (following - _LEEWAY if following is not None else None)
        if until is not None:
            query = query.where(Alert.received_at < until)
    return list(session.scalars(query.order_by(Alert.received_at, Alert.id)))


def incident_rows(session: Session, incident: Incident) -> IncidentRows:
    runs = list(session.scalars(select(TriageRun).where(TriageRun.incident_id == incident.id)
                                .order_by(TriageRun.started_at, TriageRun.id)))
    feedback = list(session.scalars(select(Feedback).where(Feedback.incident_id == incident.id)
                                    .order_by(Feedback.created_at, Feedback.id)))
    targets = [f"run:{run.id}" for run in runs] + [incident.key]
    # Silences name no incident (their button carries the alert's labels): the builder keeps those whose
    # matchers this incident's alerts carry.
    mine: ColumnElement[bool] = AuditEntry.target.in_(targets)
    if incident.channel:
        mine = or_(mine, (AuditEntry.action == "button.silence") & (AuditEntry.channel == incident.channel))
    actions = list(session.scalars(select(AuditEntry).where(AuditEntry.at >= incident.created_at - _LEEWAY, mine)
                                   .order_by(AuditEntry.at, AuditEntry.id)))
    return IncidentRows(incident=incident, alerts=_alerts(session, incident), runs=runs, feedback=feedback,
                        actions=actions)
