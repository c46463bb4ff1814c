"""Reads and writes of the bot's state. Functions take a Session and never commit: the caller decides what is
one transaction (e.g. an alert and the outbox items it causes are committed together)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from pydantic_core import to_jsonable_python
from sqlalchemy import select, update
from sqlalchemy.orm import Session

from bot.keys import episode_incident_key
from bot.store.dialect import insert_ignoring_conflicts
from bot.store.models import (
    GROUP_STATUSES,
    INCIDENT_SOURCES,
    RUN_STATUSES,
    VERDICTS,
    Alert,
    AlertGroup,
    AuditEntry,
    Feedback,
    Incident,
    SlackMessage,
    TriageRun,
)
from bot.store.types import utcnow


class PayloadError(ValueError):
    """An Alertmanager webhook body that is not version-4 shaped; the message says what is wrong."""


def as_json(value: Any) -> Any:
    """Pydantic models, datetimes and the like as plain JSON values, so any column can take them."""
    return to_jsonable_python(value)


def _group_key_and_alerts(payload: Mapping[str, Any]) -> tuple[str, str, list[dict[str, Any]]]:
    group_key = payload.get("groupKey")
    if not isinstance(group_key, str) or not group_key:
        raise PayloadError("groupKey: expected a non-empty string")
    status = payload.get("status")
    if status not in GROUP_STATUSES:
        raise PayloadError(f"status: expected one of {', '.join(GROUP_STATUSES)}, got {status!r}")
    alerts = payload.get("alerts")
    if not isinstance(alerts, list) or not all(isinstance(a, dict) for a in alerts):
        raise PayloadError("alerts: expected a list of alert objects")
    return group_key, status, alerts


def store_alert_payload(
    session: Session, payload: Mapping[str, Any], receiver_instance: str, now: datetime | None = None
) -> tuple[AlertGroup, bool, list[Alert]]:
    """Record one Alertmanager webhook body: upsert its group by groupKey, insert every alert (repeats too).

    Returns the group, whether this call created it, and the new alert rows. Safe when two replicas store the same
    payload at once: exactly one of them sees `is_new_group=True`, and both payloads are kept.
    """
    group, created = lock_alert_group(session, payload, now)
    _, status, _ = _group_key_and_alerts(payload)
    rows = record_alert_payload(session, group, payload, receiver_instance, status=status, now=now)
    return group, created, rows


def lock_alert_group(session: Session, payload: Mapping[str, Any],
                     now: datetime | None = None) -> tuple[AlertGroup, bool]:
    """The payload's group, created if absent (then `True`), and locked until the transaction ends, unchanged."""
    group_key, status, _ = _group_key_and_alerts(payload)
    now = now or utcnow()
    common_labels = payload.get("commonLabels") if isinstance(payload.get("commonLabels"), dict) else {}
    created = session.execute(
        insert_ignoring_conflicts(session, AlertGroup, ["group_key"])
        .values(group_key=group_key, receiver=str(payload.get("receiver", "")), status=status,
                common_labels=common_labels, last_payload=as_json(dict(payload)), created_at=now, updated_at=now,
                episode=1, alert_states={})
        .returning(AlertGroup.id)
    ).first() is not None
    # Lock the row on PostgreSQL so two payloads for one group apply one after the other.
    group = session.scalars(
        select(AlertGroup).where(AlertGroup.group_key == group_key).with_for_update()
        .execution_options(populate_existing=True)
    ).one()
    return group, created


def record_alert_payload(
    session: Session, group: AlertGroup, payload: Mapping[str, Any], receiver_instance: str, *, status: str,
    now: datetime | None = None, current: bool = True,
) -> list[Alert]:
    """Insert every alert of the payload and give the group (and its incident) `status`.

    `current=False` (a stale or duplicate notification) keeps the group's latest payload and labels as they are.
    """
    _, _, alerts = _group_key_and_alerts(payload)
    if status not in GROUP_STATUSES:
        raise ValueError(f"status: expected one of {', '.join(GROUP_STATUSES)}, got {status!r}")
    now = now or utcnow()
    group.status = status
    group.updated_at = now
    if current:
        common_labels = payload.get("commonLabels") if isinstance(payload.get("commonLabels"), dict) else {}
        group.receiver = str(payload.get("receiver", group.receiver))
        group.common_labels = common_labels or {}
        group.last_payload = as_json(dict(payload))
    rows = [
        Alert(group_key=group.group_key, fingerprint=str(a.get("fingerprint", "")),
              status=str(a.get("status", status)), labels=a.get("labels") if isinstance(a.get("labels"), dict) else {},
              payload=as_json(a), received_at=now, receiver_instance=receiver_instance)
        for a in alerts
    ]
    session.add_all(rows)
    session.flush()
    if group.incident_id is not None:  # one statement, not a read and a write: webhooks answer within 50 ms
        session.execute(update(Incident).where(Incident.id == group.incident_id)
                        .values(status="resolved" if status == "resolved" else "open", updated_at=now))
    return rows


def open_incident(
    session: Session, key: str, *, title: str, source: str, namespace: str | None = None,
    target: Any = None, channel: str | None = None, thread_ts: str | None = None, now: datetime | None = None,
) -> tuple[Incident, bool]:
    """The incident with this key, created if absent; `True` when this call created it (one replica wins)."""
    if source not in INCIDENT_SOURCES:
        raise ValueError(f"source: expected one of {', '.join(INCIDENT_SOURCES)}, got {source!r}")
    now = now or utcnow()
    target_json = as_json(target) if target is not None else {}
    if isinstance(target_json, dict):
        target_json = {k: v for k, v in target_json.items() if v is not None}
    created = session.execute(
        insert_ignoring_conflicts(session, Incident, ["key"])
        .values(key=key, title=title, source=source, namespace=namespace, target=target_json, status="open",
                channel=channel, thread_ts=thread_ts, created_at=now, updated_at=now)
        .returning(Incident.id)
    ).first() is not None
    incident = session.scalars(select(Incident).where(Incident.key == key)).one()
    return incident, created


def open_incident_for_group(
    session: Session, group: AlertGroup, *, title: str, namespace: str | None = None, target: Any = None,
    channel: str | None = None, now: datetime | None = None,
) -> tuple[Incident, bool]:
    """The incident of the group's current firing episode (`bot.keys.episode_incident_key`), linked to it."""
    incident, created = open_incident(session, episode_incident_key(group.group_key, group.episode or 1),
                                      title=title, source="alert", namespace=namespace, target=target,
                                      channel=channel, now=now)
    if group.incident_id != incident.id:
        group.incident_id = incident.id
    if group.status == "resolved" and incident.status != "resolved":
        incident.status = "resolved"
    session.flush()
    return incident, created


def incident_for_group(session: Session, group_key: str) -> Incident | None:
    return session.scalars(
        select(Incident).join(AlertGroup, AlertGroup.incident_id == Incident.id)
        .where(AlertGroup.group_key == group_key)
    ).first()


def alert_group(session: Session, group_key: str) -> AlertGroup | None:
    return session.scalars(select(AlertGroup).where(AlertGroup.group_key == group_key)).first()


def recent_incidents(session: Session, limit: int = 20) -> list[Incident]:
    """The most recently updated incidents first."""
    return list(session.scalars(
        select(Incident).order_by(Incident.updated_at.desc(), Incident.id.desc()).limit(limit)
    ))


def record_triage_run(
    session: Session, *, incident_id: int | None, target: Any, trigger: str, status: str,
    started_at: datetime, finished_at: datetime | None = None, requested_by: str | None = None,
    report: Any = None, artifacts: Sequence[Any] = (), missing: Sequence[Any] = (), error: str | None = None,
) -> TriageRun:
    """Store one triage. `artifacts` must already be redacted: this layer stores what it is given."""
    if status not in RUN_STATUSES:
        raise ValueError(f"status: expected one of {', '.join(RUN_STATUSES)}, got {status!r}")
    duration = None if finished_at is None else round((finished_at - started_at).total_seconds() * 1000)
    run = TriageRun(
        incident_id=incident_id, target=as_json(target) if target is not None else {}, trigger=trigger,
        requested_by=requested_by, report=as_json(report) if report is not None else None,
        artifacts=as_json(list(artifacts)), missing=as_json(list(missing)), started_at=started_at,
        finished_at=finished_at, duration_ms=duration, status=status, error=error,
    )
    session.add(run)
    session.flush()
    return run


def add_feedback(
    session: Session, *, incident_id: int, user_id: str, verdict: str, triage_run_id: int | None = None,
    right_playbook: str | None = None, right_hypothesis: str | None = None, note: str | None = None,
    now: datetime | None = None,
) -> Feedback:
    if verdict not in VERDICTS:
        raise ValueError(f"verdict: expected one of {', '.join(VERDICTS)}, got {verdict!r}")
    row = Feedback(incident_id=incident_id, triage_run_id=triage_run_id, user_id=user_id, verdict=verdict,
                   right_playbook=right_playbook, right_hypothesis=right_hypothesis, note=note,
                   created_at=now or utcnow())
    session.add(row)
    session.flush()
    return row


def audit(
    session: Session, *, actor: str, action: str, channel: str | None = None, target: str | None = None,
    detail: Mapping[str, Any] | None = None, outcome: str = "ok", now: datetime | None = None,
) -> AuditEntry:
    """One line of the audit log: who (Slack user id or "cli:<user>"), where, what, on what, and how it ended."""
    row = AuditEntry(at=now or utcnow(), actor=actor, channel=channel, action=action, target=target,
                     detail=as_json(dict(detail or {})), outcome=outcome)
    session.add(row)
    session.flush()
    return row


def record_slack_message(
    session: Session, *, channel: str, ts: str, kind: str, thread_ts: str | None = None,
    incident_id: int | None = None, now: datetime | None = None,
) -> SlackMessage:
    """Remember a posted message; recording the same (channel, ts) twice keeps the first row."""
    session.execute(
        insert_ignoring_conflicts(session, SlackMessage, ["channel", "ts"])
        .values(channel=channel, ts=ts, kind=kind, thread_ts=thread_ts, incident_id=incident_id,
                created_at=now or utcnow())
    )
    return session.scalars(select(SlackMessage).where(SlackMessage.channel == channel, SlackMessage.ts == ts)).one()
