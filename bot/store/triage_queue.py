"""Live triages as jobs in the database, so they run in worker processes and survive a worker's crash.

Life cycle of a row::

    pending --claim--> running --finish--> done
                          '--lease expires (the worker died)--> claimable again (done, failed, after MAX_ATTEMPTS)

A triage an alert makes due is queued in the webhook's own transaction, so a process that dies right after that
commit leaves the job behind for the next one: nothing has to remember to queue it. Otherwise the serving process
only enqueues (one INSERT, ignored when the key is already queued). A worker (or the serving process itself, when
it has no workers) claims one job at a time in a transaction no other claimer can interleave with (SKIP LOCKED on
PostgreSQL, BEGIN IMMEDIATE on SQLite), renews its leases while it runs them, and finishes a job in the transaction
that stores its report, so a report is queued exactly once even when a worker is killed: before that commit the
job is run again, after it the job is done.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import and_, or_, select, update
from sqlalchemy.orm import Session, sessionmaker

from bot.store.dialect import insert_ignoring_conflicts
from bot.store.models import TriageJob
from bot.store.types import utcnow

MAX_ATTEMPTS = 3  # a job whose worker died this many times is given up, with a note in its thread


@dataclass(frozen=True)
class ClaimedJob:
    id: int
    key: str
    request: dict[str, Any]
    attempts: int  # including this one

    @property
    def exhausted(self) -> bool:
        return self.attempts > MAX_ATTEMPTS


@dataclass(frozen=True)
class Finished:
    trigger: str
    outcome: str
    seconds: float
    missing_sources: list[str]


def enqueue(session: Session, key: str, request: Mapping[str, Any], now: datetime | None = None) -> None:
    """Queue a triage under `key`; the same key again is ignored (a retried Slack command, a second replica)."""
    session.execute(insert_ignoring_conflicts(session, TriageJob, ["idempotency_key"]).values(
        idempotency_key=key, request=dict(request), status="pending", attempts=0, created_at=now or utcnow(),
        missing_sources=[], counted=False))


def claim(factory: sessionmaker[Session], worker_id: str, now: datetime, lease: timedelta,
          key: str | None = None) -> ClaimedJob | None:
    """The oldest pending job, or one whose worker's lease ran out; None when there is none. With `key`, only that
    job (None when it is done or another worker holds it)."""
    with factory.begin() as session:
        claimable = or_(TriageJob.status == "pending",
                        and_(TriageJob.status == "running", TriageJob.locked_until < now))
        which = [TriageJob.idempotency_key == key] if key is not None else []
        job = session.scalars(
            select(TriageJob).where(claimable, *which)
            .order_by(TriageJob.id).limit(1)
            .with_for_update(skip_locked=True)
        ).first()
        if job is None:
            return None
        job.status = "running"
        job.attempts += 1
        job.locked_by = worker_id
        job.locked_until = now + lease
        return ClaimedJob(id=job.id, key=job.idempotency_key, request=dict(job.request), attempts=job.attempts)


def renew(factory: sessionmaker[Session], worker_id: str, now: datetime, lease: timedelta) -> None:
    """Extend the leases of every job this worker runs (its heartbeat)."""
    with factory.begin() as session:
        session.execute(update(TriageJob)
                        .where(TriageJob.locked_by == worker_id, TriageJob.status == "running")
                        .values(locked_until=now + lease))


def finish(session: Session, job_id: int, worker_id: str, trigger: str, outcome: str, seconds: float,
           missing_sources: list[str], now: datetime | None = None, counted: bool = False) -> bool:
    """Mark the job done inside the caller's transaction; False when this worker no longer holds it. `counted`: the
    caller's process has counted it in its metrics already (a job run on the serving process's own threads)."""
    result = session.execute(
        update(TriageJob)
        .where(TriageJob.id == job_id, TriageJob.locked_by == worker_id, TriageJob.status == "running")
        .values(status="done", outcome=outcome, seconds=seconds, missing_sources=missing_sources,
                finished_at=now or utcnow(), locked_by=None, locked_until=None, counted=counted))
    return bool(getattr(result, "rowcount", 0))


def take_finished(factory: sessionmaker[Session], limit: int = 200) -> list[Finished]:
    """Finished jobs not yet counted in this deployment's metrics; each is handed out once."""
    with factory.begin() as session:
        jobs = session.scalars(
            select(TriageJob).where(TriageJob.status == "done", TriageJob.counted.is_(False))
            .order_by(TriageJob.id).limit(limit).with_for_update(skip_locked=True)).all()
        out = []
        for job in jobs:
            job.counted = True
            out.append(Finished(trigger=str(job.request.get("trigger", "")), outcome=job.outcome or "failed",
                                seconds=job.seconds or 0.0, missing_sources=list(job.missing_sources or [])))
        return out


def counts(session: Session) -> dict[str, int]:
    rows = session.execute(select(TriageJob.status, TriageJob.id)).all()
    out: dict[str, int] = {}
    for status, _ in rows:
        out[status] = out.get(status, 0) + 1
    return out
