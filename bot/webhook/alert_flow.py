"""From an Alertmanager webhook to stored alerts, one Slack thread per group, and a triage."""

from __future__ import annotations

import hashlib
from collections.abc import Collection
from datetime import timedelta
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from bot.capture import wants_capture
from bot.jobs import TriageRequest
from bot.keys import group_id
from bot.policy import Permissions, Route, route_channel
from bot.posts import alert_summary, queue_text
from bot.render.slack import mrkdwn_escape
from bot.store import outbox, repo
from bot.store.models import OutboxItem
from bot.webhook.payload import Alert, AlertmanagerPayload
from collectors.alert_target import target_for


def accept_alerts(factory: sessionmaker[Session], payload: AlertmanagerPayload, raw: dict[str, Any], *,
                  routes: list[Route], default_channel: str | None, receiver_instance: str,
                  since: timedelta = timedelta(minutes=30), permissions: Permissions | None = None,
                  capture_alerts: Collection[str] = (),
                  ) -> list[TriageRequest]:
    """Store the payload and queue its posts in one transaction; return the triages to start after commit."""
    gid = group_id(payload.groupKey)
    root_key = f"alert:{gid}:root"
    with factory.begin() as session:
        before = repo.alert_group(session, payload.groupKey)
        previous_status = before.status if before is not None else None
        group, _created, _rows = repo.store_alert_payload(session, raw, receiver_instance)
        labels = payload.commonLabels or payload.alerts[0].labels
        channel = route_channel(routes, default_channel, labels)
        if channel is None:
            repo.audit(session, actor="alertmanager", action="alert.unrouted", target=payload.groupKey,
                       detail={"labels": labels}, outcome="dropped")
            return []
        found = target_for(labels)
        incident, _ = repo.open_incident_for_group(
            session, group, title=f"{found.alertname or 'alert'} {found.target.service or ''}".strip(),
            namespace=found.target.namespace, target=found.target.model_dump(), channel=channel)
        # `covers`: the alerts the root message already shows. Only the replica that creates the root sets it;
        # later payloads (repeats included) reply in the thread for alerts not covered there.
        root = outbox.enqueue(session, root_key, channel, "chat.postMessage",
                              {"kind": "alert", "text": alert_summary(raw), "incident_id": incident.id,
                               "covers": [_alert_state(a) for a in payload.alerts]})
        _queue_alert_changes(session, payload, gid, channel, root, incident.id)
        if previous_status is not None and previous_status != payload.status:
            # The group changed state: the root message shows the new status.
            outbox.enqueue(session, f"alert:{gid}:status:{payload.status}:{_moment(payload)}", channel,
                           "chat.update", {"kind": "alert-status", "text": alert_summary(raw),
                                          "incident_id": incident.id}, depends_on=root)
        repo.audit(session, actor="alertmanager", action="alert.received", channel=channel,
                   target=found.target.service, detail={"group": gid, "status": payload.status,
                                                        "alerts": len(payload.alerts)})
        if payload.status != "firing" or found.target.service is None:
            return []
        if previous_status == "firing":
            # Triage once per firing episode: repeats and alerts joining a firing group are thread replies only.
            # The target comes from the group's common labels, so another triage would mostly repeat the first.
            return []
        allowed = permissions is None or permissions.allowed(found.target.namespace or "default", channel=channel)
        if not allowed:
            return []
        return [TriageRequest(target=found.target, since=since, trigger="alert", channel=channel,
                              key=f"alert:{gid}:triage:{_moment(payload)}", parent_key=root_key,
                              requested_by="alertmanager", incident_id=incident.id,
                              symptoms=found.symptoms, capture=_capture_page(payload, found.alertname,
                                                                             capture_alerts))]


def _capture_page(payload: AlertmanagerPayload, alertname: str, capture_alerts: Collection[str]) -> str:
    """The alert as on-call saw it, for a captured incident's page; "" when this alert is not captured."""
    if not wants_capture(alertname, capture_alerts):
        return ""
    summary = payload.alerts[0].annotations.get("summary", "")
    return f"{alertname}: {summary}" if summary else alertname


def _moment(payload: AlertmanagerPayload) -> str:
    """The latest start (firing) or end (resolved) in the payload: a state change has a new one."""
    times = [a.startsAt if payload.status == "firing" else a.endsAt for a in payload.alerts]
    known = [t for t in times if t is not None]
    return max(known).strftime("%Y%m%dT%H%M%S") if known else "0"


def _alert_state(alert: Alert) -> str:
    """fingerprint:status:time, the same in every replica for the same alert in the same state."""
    fingerprint = alert.fingerprint or hashlib.sha256(repr(sorted(alert.labels.items())).encode()).hexdigest()[:16]
    when = alert.startsAt if alert.status == "firing" else alert.endsAt
    return f"{fingerprint}:{alert.status}:{when.strftime('%Y%m%dT%H%M%S') if when else '0'}"


def _queue_alert_changes(session: Session, payload: AlertmanagerPayload, gid: str, channel: str,
                         root: OutboxItem, incident_id: int) -> None:
    """A reply in the group's thread for each alert that is new or changed state; repeats map to the same key."""
    covered = set(root.payload.get("covers") or [])
    fresh = {f"alert:{gid}:fp:{state}": alert for alert in payload.alerts
             if (state := _alert_state(alert)) not in covered}
    # One query for the replies already queued, instead of a conflicting INSERT each: a group's k-th webhook
    # carries k alerts, most of them seen before. A reply queued meanwhile by another replica still conflicts.
    queued = set(session.scalars(select(OutboxItem.idempotency_key).where(OutboxItem.idempotency_key.in_(fresh))))
    for key, alert in fresh.items():
        if key in queued:
            continue
        icon = ":rotating_light:" if alert.status == "firing" else ":white_check_mark:"
        summary = alert.annotations.get("summary", "")
        queue_text(session, key=key, channel=channel,
                   text=mrkdwn_escape(f"{icon} {alert.status}: {alert.labels.get('alertname', '')} {summary}".strip()),
                   parent=root, incident_id=incident_id, kind="alert-update")
