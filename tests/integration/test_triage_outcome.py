"""A triage that ends without a report edits the message it replies under, so that message never goes on saying
that a triage is running: the /triage placeholder says it ended, and why."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from sqlalchemy import select

from bot.metrics import Metrics
from bot.runner.jobs import TriageJobs, TriageRequest
from bot.store import outbox
from bot.store.db import make_engine, migrate, session_factory
from bot.store.models import OutboxItem
from collectors.live.collect import LiveAccess
from collectors.models import Target

ENDED = ":grey_question: The triage of *checkout* in `shop` (last 1h) for <@U0ALICE> ended without a report."


def test_a_triage_that_fails_says_so_on_its_placeholder(tmp_path: Path) -> None:
    engine = make_engine(f"sqlite:///{tmp_path / 'bot.db'}")
    migrate(engine)
    factory = session_factory(engine)
    with factory.begin() as session:
        outbox.enqueue(session, "slash:fails:root", "C0OPS", "chat.postMessage",
                       {"kind": "triage-root", "text": ":hourglass_flowing_sand: Triaging *checkout*…",
                        "ended_text": ENDED, "incident_id": None, "in_thread": False})

    def no_cluster() -> LiveAccess:
        raise RuntimeError("kubeconfig unreadable")

    jobs = TriageJobs(factory, no_cluster, Metrics())
    try:
        request = TriageRequest(target=Target(service="checkout", namespace="shop"), since=timedelta(hours=1),
                                trigger="slash", channel="C0OPS", key="slash:fails", parent_key="slash:fails:root")
        started = jobs.submit(request)
        assert started is not None
        started.result(timeout=60)
    finally:
        jobs.shutdown()
    with factory() as session:
        root = session.scalars(select(OutboxItem).where(OutboxItem.idempotency_key == "slash:fails:root")).one()
        note = session.scalars(select(OutboxItem).where(OutboxItem.idempotency_key == "slash:fails:note")).one()
    # Not posted yet, so the queued placeholder itself now says it (bot.store.outbox.set_latest).
    assert root.payload["text"] == f"{ENDED}\n*No verdict:* the triage failed (RuntimeError); the thread says more"
    assert note.payload["text"] == ":x: The triage failed: RuntimeError: kubeconfig unreadable"
