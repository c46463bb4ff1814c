"""From an Alertmanager webhook to stored alerts, one Slack root per firing episode, and one triage per episode.

A notification is merged alert by alert (bot.webhook.ordering): stale and duplicate ones (an HA pair sends every
notification twice) are stored and audited but change nothing in Slack. A group that fires after it resolved
opens a new episode: a new root message, linked to the previous one, a new incident and a new triage; the old
thread keeps its resolved state. Within an episode the root message *is* the state: changes edit it, collapsed
to the latest (an `Edit`, bot/delivery/), and a resolution adds one note in the thread. When many groups start an
episode in one channel within a minute, their roots are threaded under one roll-up message (bot.webhook.storm).
"""

from __future__ import annotations

import logging
from collections.abc import Collection
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy.orm import Session, sessionmaker

from bot.alerts.alert_message import AlertLinks, root_fields
from bot.delivery import PRIORITY_REFRESH, PRIORITY_ROOT, Edit, Reply, Root, find, queue
from bot.delivery.roots import root_outcome
from bot.delivery.words import alert_summary, fitted_text, full_text_upload
from bot.keys import alert_root_key, group_id
from bot.policy import Permissions, Route, route_channel
from bot.render.alert_root import AlertRoot, summarised
from bot.runner.capture import wants_capture
from bot.runner.jobs import TriageRequest
from bot.store import repo, triage_queue
from bot.store.models import AlertGroup, OutboxItem
from bot.store.types import utcnow
from bot.webhook.ordering import merge
from bot.webhook.payload import AlertmanagerPayload
from bot.webhook.storm import StormPolicy, adopt_storm, join_storm, refresh_rollup
from collectors.alert_target import target_for

log = logging.getLogger("triagebot.alerts")
ROOT_EVENT = "triagebot_alert_episode"  # Slack message metadata event type of every alert root


@dataclass(frozen=True)
class Episode:
    """What this notification did to its group."""

    number: int
    started: bool  # a new episode began (a new root)
    status_changed: bool
    absorbed: bool  # stale or duplicate: nothing to show


def accept_alerts(factory: sessionmaker[Session], payload: AlertmanagerPayload, raw: dict[str, Any], *,
                  routes: list[Route], default_channel: str | None, receiver_instance: str,
                  since: timedelta = timedelta(minutes=30), permissions: Permissions | None = None,
                  storm: StormPolicy | None = None, now: datetime | None = None,
                  capture_alerts: Collection[str] = (), links: AlertLinks | None = None,
                  digest: str | None = None) -> list[TriageRequest]:
    """`apply_alerts` in a transaction of its own."""
    with factory.begin() as session:
        return apply_alerts(session, payload, raw, routes=routes, default_channel=default_channel,
                            receiver_instance=receiver_instance, since=since, permissions=permissions, storm=storm,
                            now=now, capture_alerts=capture_alerts, links=links, digest=digest)


def apply_alerts(session: Session, payload: AlertmanagerPayload, raw: dict[str, Any], *,
                 routes: list[Route], default_channel: str | None, receiver_instance: str,
                 since: timedelta = timedelta(minutes=30), permissions: Permissions | None = None,
                 storm: StormPolicy | None = None, now: datetime | None = None,
                 capture_alerts: Collection[str] = (), links: AlertLinks | None = None,
                 digest: str | None = None) -> list[TriageRequest]:
    """Store the payload and queue its posts and its triage job in the caller's transaction (the ingester's,
    bot/webhook/intake.py); return the triages to hand to the triage runner after the commit
    (`TriageJobs.start_queued`, which finds their jobs queued already). `digest` (bot.webhook.repeat) is kept with
    the group, so the same notification again is known to change nothing."""
    received = now or utcnow()
    group, created = repo.lock_alert_group(session, raw, received)
    group.state_hash = digest
    previous = None if created else group.status
    merged = merge(group.alert_states or {}, payload.alerts, received)
    group.alert_states = merged.states
    episode = _episode(group, previous, merged.status, merged.absorbed)
    labels = payload.commonLabels or payload.alerts[0].labels
    channel = (group.channel if not episode.started and group.channel else None) \
        or route_channel(routes, default_channel, labels)
    if episode.started:
        group.episode, group.episode_started_at, group.channel, group.rollup_key = \
            episode.number, received, channel, None
    found = target_for(labels)
    if channel is not None and (episode.started or group.incident_id is None):
        repo.open_incident_for_group(
            session, group, title=f"{found.alertname or 'alert'} {found.target.service or ''}".strip(),
            namespace=found.target.namespace, target=found.target.model_dump(), channel=channel)
    # A notification that changed nothing leaves the group's status as it was, whatever it says.
    status = previous if episode.absorbed and previous is not None else merged.status
    repo.record_alert_payload(session, group, raw, receiver_instance, status=status, now=received,
                              current=not episode.absorbed)
    if channel is None:
        repo.audit(session, actor="alertmanager", action="alert.unrouted", target=payload.groupKey,
                   detail={"labels": labels}, outcome="dropped")
        return []
    repo.audit(session, actor="alertmanager", action="alert.duplicate" if episode.absorbed else "alert.received",
               channel=channel, target=found.target.service,
               detail={"group": group_id(payload.groupKey), "status": status,
                       "episode": episode.number, "alerts": len(payload.alerts)})
    if episode.absorbed:
        return []
    view = {**raw, "status": merged.status}
    allowed = permissions is None or permissions.allowed_scope(found.target.namespace, channel=channel)
    refusal = "" if allowed or permissions is None else \
        permissions.alert_refusal(found.target.namespace, found.target.node, channel=channel)
    # The root's blocks (severity, target, links, the latest verdict): bot/alerts/alert_message.py.
    text, cut = fitted_text(alert_summary(view))
    # A triage that ended without a verdict (target not found) keeps saying so through later notifications.
    outcome = "" if episode.started else root_outcome(session, alert_root_key(group.group_key, episode.number))
    shown = root_fields(session, view, links or AlertLinks(), allowed=allowed, incident_id=group.incident_id,
                        text=text, outcome=outcome, refusal=refusal)
    # A root that leaves names or text out (a wide group, long labels) gets the whole text in its thread.
    cut = cut or summarised(AlertRoot.model_validate(shown["root"]))
    root = _show(session, group, view, episode, channel, storm or StormPolicy(), received, shown, cut)
    if not episode.started or merged.status != "firing" or not found.triageable:
        return []
    if not allowed:
        # Once per episode (repeats and other replicas return above): the root says it too, for on-call.
        log.warning("alert %s not triaged: %s", found.alertname or payload.groupKey, refusal,
                    extra={"channel": channel, "group": group_id(payload.groupKey)})
        return []
    # Once per episode: the key is the root's, so a repeat (or the other replica) starts nothing new.
    request = TriageRequest(target=found.target, since=since, trigger="alert", channel=channel,
                            key=f"{root.idempotency_key}:triage", parent_key=root.idempotency_key,
                            requested_by="alertmanager", incident_id=group.incident_id,
                            symptoms=found.symptoms, capture=_capture_page(payload, found.alertname,
                                                                           capture_alerts),
                            alert=triggering_alerts(payload))
    # The job is committed with the episode: a process that dies after this commit leaves it to the next.
    triage_queue.enqueue(session, request.key, request.to_json(), now=received)
    return [request]


MAX_TRIAGE_ALERTS = 50  # of one group, carried into its triage as evidence; a storm's group need not all be


def triggering_alerts(payload: AlertmanagerPayload) -> dict[str, Any]:
    """The group's firing alerts as a webhook payload of their own: the triage reads their labels as evidence."""
    firing = [a for a in payload.alerts if a.status == "firing"][:MAX_TRIAGE_ALERTS]
    return {"status": "firing", "commonLabels": payload.commonLabels,
            "alerts": [{"status": a.status, "labels": a.labels, "annotations": a.annotations} for a in firing]}


def _capture_page(payload: AlertmanagerPayload, alertname: str, capture_alerts: Collection[str]) -> str:
    """The alert as on-call saw it, for a captured incident's page; "" when this alert is not captured."""
    if not wants_capture(alertname, capture_alerts):
        return ""
    summary = payload.alerts[0].annotations.get("summary", "")
    return f"{alertname}: {summary}" if summary else alertname


def _episode(group: AlertGroup, previous: str | None, status: str, absorbed: bool) -> Episode:
    number = group.episode or 1
    if previous is None:
        return Episode(number, started=True, status_changed=True, absorbed=False)
    if absorbed:
        return Episode(number, started=False, status_changed=False, absorbed=True)
    if previous == "resolved" and status == "firing":
        return Episode(number + 1, started=True, status_changed=True, absorbed=False)
    return Episode(number, started=False, status_changed=previous != status, absorbed=False)


def _show(session: Session, group: AlertGroup, view: dict[str, Any], episode: Episode, channel: str,
          storm: StormPolicy, received: datetime, shown: dict[str, Any], cut: bool) -> OutboxItem:
    """Queue what Slack should show for this change (`shown`: the root's text, blocks and data, from root_fields);
    returns the episode's root item."""
    summary = alert_summary(view)
    text = str(shown["text"])
    key = alert_root_key(group.group_key, episode.number)
    if episode.started:
        rollup = join_storm(session, group, channel, received, storm)
        state = {k: v for k, v in shown.items() if k not in ("text", "blocks")}
        if episode.number > 1:
            state["previous"] = alert_root_key(group.group_key, episode.number - 1)
        root = queue(session, Root(
            key=key, channel=channel, kind="alert", text=text, blocks=shown.get("blocks"),
            incident_id=group.incident_id, under=rollup, state=state,
            metadata={"event_type": ROOT_EVENT, "event_payload": {
                "group": group_id(group.group_key), "episode": episode.number, "outbox_key": key}}))
        if episode.number > 1:
            _queue_fired_again(session, str(state["previous"]), root, episode.number)
    else:
        found = find(session, key)
        if found is None:  # queued by a bot from before episodes, under another key: start from here
            found = queue(session, Root(key=key, channel=channel, kind="alert", text=text,
                                        incident_id=group.incident_id))
        root = found
        priority = PRIORITY_ROOT if episode.status_changed else PRIORITY_REFRESH
        queue(session, Edit(target=root, fields=shown, priority=priority))
        if episode.status_changed and view["status"] == "resolved":
            # Named, as under a storm's roll-up several groups share one thread.
            queue(session, Reply(key=f"{key}:resolved", channel=channel, parent=root, incident_id=group.incident_id,
                                 text=f"Resolved: {fitted_text(summary.split(chr(10))[0], 300)[0]}", kind="status",
                                 priority=PRIORITY_ROOT))
    if cut:
        queue(session, full_text_upload(key=f"{key}:full", channel=channel, text=summary, parent=root,
                                        incident_id=group.incident_id))
    if not episode.started:
        adopt_storm(session, group, channel, storm)
    if group.rollup_key:
        refresh_rollup(session, group.rollup_key)
    return root


def _queue_fired_again(session: Session, previous_key: str, root: OutboxItem, number: int) -> None:
    """One note in the previous episode's thread linking the new root. It waits for the new root (its link is made
    when it is sent) and goes to the old root's thread, in the old root's channel: routes may have changed."""
    previous = find(session, previous_key)
    if previous is None:
        return
    queue(session, Reply(key=f"{root.idempotency_key}:fired-again", channel=previous.channel, kind="fired-again",
                         text=f"Fired again (episode {number}).", thread_of=previous_key, parent=root,
                         incident_id=previous.payload.get("incident_id"), extra={"episode": number}))
