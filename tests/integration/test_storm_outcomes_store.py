"""The storm roll-up's outcomes message in the store, on SQLite and PostgreSQL (issue 31, point 7): triages that
ended before the storm was recognised have their notes queued under roots that then move into the roll-up's
thread; those notes are taken back and said once, grouped by reason, with the ones that end later."""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy import select

from bot.metrics import Metrics
from bot.policy import Permissions
from bot.runner.jobs import TriageJobs, TriageRequest
from bot.store.models import OutboxItem
from bot.webhook.alert_flow import accept_alerts
from bot.webhook.payload import AlertmanagerPayload
from bot.webhook.storm import StormPolicy
from collectors.live.collect import LiveAccess
from tests.harness.fixtures import MigratedStore
from tests.integration.test_store import T0, webhook

REASON = 'namespace "ml" not found'


def test_notes_queued_before_the_storm_are_said_once_in_its_outcomes(store: MigratedStore) -> None:
    def deliver(n: int) -> TriageRequest:
        body = webhook(f"quota-{n}")  # its own group key; the labels of a quota alert, as kube-prometheus sends it
        labels = {"alertname": "KubeQuotaFullyUsed", "namespace": "ml", "resourcequota": f"q{n}"}
        body.update(groupLabels={"alertname": "KubeQuotaFullyUsed", "resourcequota": f"q{n}"}, commonLabels=labels)
        for alert in body["alerts"]:
            alert["labels"] = labels
        (request,) = accept_alerts(store.factory, AlertmanagerPayload.model_validate(body), body, routes=[],
                                   default_channel="C1", receiver_instance="r", storm=StormPolicy(groups=5),
                                   permissions=Permissions(channels={"C1": ["*"]}),
                                   now=T0 + timedelta(seconds=n))
        return request

    jobs = TriageJobs(store.factory, lambda: LiveAccess(kube=None), Metrics(), max_workers=1)
    try:
        early = [deliver(n) for n in range(4)]
        for request in early:  # as a triage whose namespace is gone ends: at once, before the storm
            jobs._note(request, f":mag: {REASON}", outcome=REASON, rolled_up=True)
        with store.factory() as session:
            notes = session.scalars(select(OutboxItem.idempotency_key)
                                    .where(OutboxItem.idempotency_key.like("%:triage:note"))).all()
        assert len(notes) == 4  # no storm yet: each in its own thread
        fifth = deliver(4)  # the storm: the four roots move under the roll-up, their notes are taken back
        jobs._note(fifth, f":mag: {REASON}", outcome=REASON, rolled_up=True)
    finally:
        jobs.shutdown(wait=False)
    with store.factory() as session:
        notes = session.scalars(select(OutboxItem.idempotency_key)
                                .where(OutboxItem.idempotency_key.like("%:triage:note"))).all()
        (said,) = session.scalars(select(OutboxItem).where(OutboxItem.idempotency_key.like("rollup:%:outcomes")))
        rollup = session.scalars(select(OutboxItem).where(OutboxItem.id == said.depends_on)).one()
        text = str({**said.payload, **(session.scalars(select(OutboxItem.payload).where(
            OutboxItem.collapse_key == f"{said.idempotency_key}:state")).first() or {})}["text"])
    assert notes == []
    assert rollup.payload["kind"] == "rollup" and said.payload["in_thread"] is True
    assert text.splitlines() == [
        ":mag: *5 triages in this storm ended without a verdict*, by reason:",
        f"• {REASON} — 5 groups: " + ", ".join(f"KubeQuotaFullyUsed (resourcequota=q{n})" for n in range(5)),
    ]
