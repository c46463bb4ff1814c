"""Running triages in the background for Slack commands and alerts, and queueing their reports.

Slack must be acknowledged within 3 s and the webhook answered within Alertmanager's timeout, so the
triage itself runs after the request has been answered. Every triage is a job in the database
(bot/store/triage_queue.py), finished by `run_job` in the transaction that queues its report. `serve` runs jobs in
worker processes (bot/runner/workers.py): `submit` only queues one. Without workers (`queue=False`, `triage_workers: 0`,
tests that reach into one process) this process claims its jobs and runs them on a bounded thread pool, renews
their leases, and sweeps the queue for jobs nobody runs: queued by a process that died before it could start them,
or held by one that died while running them (`start_sweeping`).
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
import uuid
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import Session, sessionmaker

from bot.alerts.rollup_outcomes import note_in_rollup
from bot.assist.llm import NO_MODEL, Assistant
from bot.assist.narrate import narrate_report
from bot.delivery import Reply, find, queue
from bot.delivery.roots import queue_outcome, queue_verdict
from bot.delivery.words import prepare_report, report_post
from bot.memory.recent import recall_for
from bot.memory.recurrence import Recurrence
from bot.metrics import Metrics
from bot.render.chart import render_report_chart
from bot.render.memory.recurrence import slack_payload
from bot.render.slack_assist import narrative_payload
from bot.store import repo, triage_queue
from collectors.live.base import TargetNotFound
from collectors.models import Artifact, Target, artifact_adapter
from playbooks.pipeline import analyse
from playbooks.report import Report

if TYPE_CHECKING:
    from bot.runner.triage import Triage
    from collectors.live.collect import LiveAccess  # the Kubernetes client: loaded by the first triage

log = logging.getLogger("triagebot.jobs")


class LostLease(Exception):
    """The job's lease passed to another worker while this one ran it."""

NARRATORS = 2  # model calls in flight at once for report narratives; each may take up to llm_timeout


@dataclass(frozen=True)
class TriageRequest:
    target: Target
    since: timedelta
    trigger: str  # slash | alert | rerun
    channel: str
    key: str  # outbox key prefix for everything this triage posts
    parent_key: str | None  # the message the report replies under
    requested_by: str | None = None
    incident_id: int | None = None
    symptoms: list[str] = field(default_factory=list)
    capture: str = ""  # the alert as on-call saw it, when its evidence is to be captured (bot/runner/capture.py)
    # The alerts that started the triage, as a webhook payload ({"status", "alerts": [{labels, annotations}]}):
    # their own labels are evidence, and their symptoms lead the report (bot.runner.triage.run_triage).
    alert: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"target": self.target.model_dump(mode="json"), "since": self.since.total_seconds(),
                "trigger": self.trigger, "channel": self.channel, "key": self.key, "parent_key": self.parent_key,
                "requested_by": self.requested_by, "incident_id": self.incident_id, "symptoms": list(self.symptoms),
                "capture": self.capture, "alert": self.alert}

    @classmethod
    def from_json(cls, doc: dict[str, Any]) -> TriageRequest:
        return cls(target=Target.model_validate(doc["target"]), since=timedelta(seconds=float(doc["since"])),
                   trigger=str(doc["trigger"]), channel=str(doc["channel"]), key=str(doc["key"]),
                   parent_key=doc.get("parent_key"), requested_by=doc.get("requested_by"),
                   incident_id=doc.get("incident_id"), symptoms=list(doc.get("symptoms") or []),
                   capture=str(doc.get("capture") or ""),
                   alert=doc["alert"] if isinstance(doc.get("alert"), dict) else {})


Finish = Callable[[Session, str], None]  # marks the job done (with its outcome) inside the report's transaction


class TriageJobs:
    """A bounded pool of live triages whose reports go to the outbox."""

    def __init__(self, factory: sessionmaker[Session], access: Callable[[], LiveAccess], metrics: Metrics,
                 max_workers: int = 4, templates_dir: Path | None = None,
                 on_queued: Callable[[], None] = lambda: None, assistant: Assistant = NO_MODEL,
                 capture_dir: Path | None = None, queue: bool = False,
                 on_enqueued: Callable[[], None] = lambda: None, lease: timedelta = timedelta(seconds=30),
                 recurrence: timedelta = timedelta(days=7)) -> None:
        self.factory = factory
        self.max_workers = max_workers
        self.lease = lease
        self.recurrence = recurrence  # how far back a report looks for what came back; zero: never
        self.worker_id = f"{socket.gethostname()}:{os.getpid()}:threads-{uuid.uuid4().hex[:6]}"
        self._stopping = threading.Event()
        self._sweeper: threading.Thread | None = None
        self._sweeping = False
        self.capture_dir = capture_dir
        self.queue = queue  # submit queues a job for the worker processes instead of running it here
        self.on_enqueued = on_enqueued
        self.access = access
        self.metrics = metrics
        self.templates_dir = templates_dir
        self.on_queued = on_queued
        self.assistant = assistant
        self.pool = ThreadPoolExecutor(max_workers=max_workers, thread_name_prefix="triage")
        # Narratives wait on a model for seconds: a pool of their own, so they hold up no triage and no report.
        self.narrators = ThreadPoolExecutor(max_workers=NARRATORS, thread_name_prefix="narrate")
        self._running: set[str] = set()
        self._lock = threading.Lock()

    def queue_in(self, session: Session, request: TriageRequest) -> None:
        """Queue the triage in the caller's transaction, so a crash after its commit cannot lose it; after the
        commit, `start_queued` starts it."""
        triage_queue.enqueue(session, request.key, request.to_json())

    def start_queued(self, request: TriageRequest) -> Future[None] | None:
        """A queued triage, after its transaction committed: wake the worker processes, or claim it and start it
        here; None when it is not started here (queued for workers, done, or another runner holds it)."""
        if self.queue:
            self.on_enqueued()
            return None
        job = triage_queue.claim(self.factory, self.worker_id, datetime.now(UTC), self.lease, key=request.key)
        return self._start(job) if job is not None else None

    def submit(self, request: TriageRequest) -> Future[None] | None:
        """Queue the triage (a no-op when its job is queued already) and start it as `start_queued` does."""
        with self.factory.begin() as session:
            self.queue_in(session, request)
        return self.start_queued(request)

    def _start(self, job: triage_queue.ClaimedJob) -> Future[None] | None:
        with self._lock:
            if job.key in self._running:
                return None
            self._running.add(job.key)
        self._keep_leases()
        return self.pool.submit(self._run_claimed, job)

    def _run_claimed(self, job: triage_queue.ClaimedJob) -> None:
        try:
            self.run_job(job, self.worker_id, counted=True)
        finally:
            with self._lock:
                self._running.discard(job.key)

    def start_sweeping(self, every: float | None = None) -> TriageJobs:
        """Run, here, the jobs no one runs: now (a process that died before or while running them left them
        queued) and then every third of a lease (a replica that died leaves its jobs once their leases run out)."""
        self._sweeping = True
        self._keep_leases(every)
        self.sweep()
        return self

    def sweep(self) -> int:
        """Claim and start claimable jobs while this process has room for them; returns how many were started."""
        started = 0
        while not self._stopping.is_set():
            with self._lock:
                if len(self._running) >= self.max_workers:
                    break
            job = triage_queue.claim(self.factory, self.worker_id, datetime.now(UTC), self.lease)
            if job is None:
                break
            if self._start(job) is not None:
                started += 1
                log.info("triage job %s taken up from the queue (attempt %d)", job.key, job.attempts)
        return started

    def _keep_leases(self, every: float | None = None) -> None:
        """Start the thread that renews this process's job leases (and sweeps, once `start_sweeping` was called)."""
        with self._lock:
            if self._sweeper is not None:
                return
            interval = every if every is not None else max(0.5, self.lease.total_seconds() / 3)
            self._sweeper = threading.Thread(target=self._lease_loop, args=(interval,), name="triage-leases",
                                             daemon=True)
            self._sweeper.start()

    def _lease_loop(self, interval: float) -> None:
        while not self._stopping.wait(interval):
            try:
                triage_queue.renew(self.factory, self.worker_id, datetime.now(UTC), self.lease)
                if self._sweeping:
                    self.sweep()
            except Exception:
                log.exception("renewing or sweeping triage jobs failed; trying again")

    def run_job(self, job: triage_queue.ClaimedJob, worker_id: str, counted: bool = False) -> None:
        """Run a claimed job (in a worker process) and finish it with its report, in one transaction."""
        request = TriageRequest.from_json(job.request)
        clock = time.monotonic()

        def finish(session: Session, outcome: str, missing: list[str] | None = None) -> None:
            if not triage_queue.finish(session, job.id, worker_id, request.trigger, outcome,
                                       time.monotonic() - clock, missing or [], counted=counted):
                # Another worker took the job over (this one stalled past its lease): its report wins.
                raise LostLease(f"job {job.key} is no longer held by {worker_id}")

        if job.exhausted:
            why = f"its worker stopped {job.attempts - 1} times while running it"
            self._note(request, f":x: The triage failed: {why}", outcome=f"the triage failed: {why}",
                       finish=lambda s: finish(s, "failed"))
            return
        self._run(request, finish)

    def _run(self, request: TriageRequest, finish: Callable[..., None] | None = None) -> None:
        started = datetime.now(UTC)
        clock = time.monotonic()
        try:
            from bot.runner.triage import run_triage

            triage = run_triage(request.target, request.since, self.access(), now=started,
                                symptoms=request.symptoms, alert=request.alert or None)
            if request.capture and self.capture_dir is not None:
                self._capture(request, triage)
            missing = [m.source.split(":")[0] for m in triage.report.missing]
            self.publish(request, triage.report, triage.collected.result.artifacts, started,
                         finish=(lambda s: finish(s, "ok", missing)) if finish else None)
            outcome = "ok"
        except LostLease:
            log.warning("triage %s was taken over by another worker; its result is dropped here", request.key)
            return
        except TargetNotFound as err:
            self._note(request, f":mag: {err}", outcome=str(err), rolled_up=True,
                       finish=(lambda s: finish(s, "not-found")) if finish else None)
            outcome = "not-found"
        except Exception as err:
            log.exception("triage %s failed", request.key)
            self._note(request, f":x: The triage failed: {type(err).__name__}: {err}",
                       outcome=f"the triage failed ({type(err).__name__}); the thread says more",
                       finish=(lambda s: finish(s, "failed")) if finish else None)
            outcome = "failed"
        finally:
            with self._lock:
                self._running.discard(request.key)
        self.metrics.triages.labels(request.trigger, outcome).inc()
        self.metrics.triage_seconds.labels(request.trigger).observe(time.monotonic() - clock)

    def publish(self, request: TriageRequest, report: Report, artifacts: list[Artifact],
                started: datetime, finish: Callable[[Session], None] | None = None) -> int:
        """Store the run and queue its report in one transaction (with the job's finish); returns the run id."""
        for missing in report.missing:
            self.metrics.missing_sources.labels(missing.source.split(":")[0]).inc()
        # Rendered and dumped before the transaction: on SQLite its write lock stalls every webhook meanwhile,
        # and in a worker running 20 triages the thread holding it gets a 20th of the interpreter.
        prepared = prepare_report(report, artifacts, self.templates_dir, render_report_chart(report, artifacts))
        dumped = report.model_dump(mode="json")
        dumped_artifacts = [artifact_adapter().dump_python(a, mode="json") for a in artifacts]
        recurrence = self.recall(request, dumped, started)
        if recurrence is not None:
            dumped["recurrence"] = recurrence.to_json()
        with self.factory.begin() as session:
            run = repo.record_triage_run(
                session, incident_id=request.incident_id, target=request.target.model_dump(),
                trigger=request.trigger, status="ok", started_at=started, finished_at=datetime.now(UTC),
                requested_by=request.requested_by, report=dumped, artifacts=dumped_artifacts,
                missing=[m.model_dump() for m in report.missing])
            parent = find(session, request.parent_key) if request.parent_key else None
            posted = queue(session, report_post(prepared, key=request.key, channel=request.channel, run_id=run.id,
                                                incident_id=request.incident_id, parent=parent))
            # In an alert storm the roots sit under one roll-up and recall one another: the stored report keeps
            # the recurrence, the thread gets no note per group.
            in_storm = parent is not None and parent.depends_on is not None and parent.payload.get("kind") == "alert"
            if recurrence and not in_storm:
                # Queued without links: the poster adds the earlier threads' permalinks as it sends the note.
                note = slack_payload(recurrence)
                queue(session, Reply(key=f"{request.key}:recurrence", channel=request.channel, kind="recurrence",
                                     incident_id=request.incident_id, text=note["text"], blocks=note["blocks"],
                                     parent=posted, extra={"recurrence": recurrence.to_json()}))
            if parent is not None:
                # The message the report replies under (an alert root, a /triage placeholder) shows the verdict.
                queue_verdict(session, parent, report)
            run_id = run.id
            if finish is not None:
                finish(session)
        self.on_queued()
        # After the commit and on another thread: the report is out of the door before any model is asked.
        if self.assistant.enabled and self.assistant.summaries:
            self.narrators.submit(self.narrate, request, report)
        return run_id

    def recall(self, request: TriageRequest, dumped: dict[str, Any], at: datetime) -> Recurrence | None:
        """What the report shares with the incidents stored before it (bot/memory/recurrence.py), read in a
        transaction of its own before the report's: a failed read costs the note, never the report."""
        if self.recurrence <= timedelta(0):
            return None
        try:
            with self.factory() as session:
                return recall_for(session, incident_id=request.incident_id, report=dumped, at=at,
                                  window=self.recurrence)
        except SQLAlchemyError:
            log.exception("recalling earlier incidents for %s failed; the report goes without", request.key)
            return None

    def narrate(self, request: TriageRequest, report: Report) -> None:
        """The report's narrative as a thread reply after the report, labelled with who wrote it."""
        try:
            narrative = narrate_report(report, self.assistant)  # never raises for a model's failure: falls back
            payload = narrative_payload(narrative, self.templates_dir)
            with self.factory.begin() as session:
                post = find(session, f"{request.key}:report")
                if post is None:
                    return
                # Depends on the report, so it is posted after it; a reply to a reply lands in the same thread.
                queue(session, Reply(key=f"{request.key}:narrative", channel=request.channel, kind="narrative",
                                     incident_id=request.incident_id, text=payload["text"], blocks=payload["blocks"],
                                     parent=post, extra={"generated": narrative.generated}))
        except Exception:
            log.exception("the narrative of %s failed", request.key)
            return
        log.info("narrative queued for %s (%s)", request.key,
                 "generated" if narrative.generated else f"rules: {narrative.fallback}")
        self.on_queued()

    def publish_paste(self, request: TriageRequest, artifacts: list[Artifact]) -> int:
        """Pasted evidence is analysed at once: it needs no cluster."""
        started = datetime.now(UTC)
        report = analyse(artifacts, request.target, symptoms=request.symptoms)
        self.metrics.triages.labels(request.trigger, "ok").inc()
        return self.publish(request, report, artifacts, started)

    def _capture(self, request: TriageRequest, triage: Triage) -> None:
        """Write the evidence before anything else; a capture that fails is said in the thread, never fatal."""
        from bot.runner.capture import store_capture

        try:
            folder = store_capture(self.capture_dir or Path("."), request.target, triage.captured_at,
                                   triage.collected.result.artifacts, triage.report.missing,
                                   page=request.capture, symptoms=request.symptoms)
        except (OSError, ValueError) as err:
            log.exception("capture for %s failed", request.key)
            self._note(request, f":warning: Could not capture the evidence: {type(err).__name__}: {err}",
                       suffix="capture")
            return
        self._note(request, f":floppy_disk: Evidence captured to `{folder}` "
                            f"(`triagebot replay {folder}`).", suffix="capture")

    def _note(self, request: TriageRequest, text: str, suffix: str = "note",
              finish: Callable[[Session], None] | None = None, outcome: str | None = None,
              rolled_up: bool = False) -> None:
        """A note in the thread; with `outcome` (why the triage ended without a report), the message it replies
        under says it too, instead of waiting for a verdict forever. `rolled_up`: in an alert storm the note is
        one line of the roll-up's outcomes message instead (bot/alerts/rollup_outcomes.py), not one note per group."""
        with self.factory.begin() as session:
            parent = find(session, request.parent_key) if request.parent_key else None
            if parent is not None and outcome:
                queue_outcome(session, parent, outcome)
            folded = rolled_up and parent is not None and bool(outcome) and \
                note_in_rollup(session, parent, request.incident_id, str(outcome))
            if not folded:
                queue(session, Reply(key=f"{request.key}:{suffix}", channel=request.channel, kind="note", text=text,
                                     parent=parent, incident_id=request.incident_id))
            if finish is not None:
                finish(session)
        self.on_queued()

    def shutdown(self, wait: bool = True) -> None:
        self._stopping.set()
        self.pool.shutdown(wait=wait, cancel_futures=not wait)
        self.narrators.shutdown(wait=wait, cancel_futures=not wait)
