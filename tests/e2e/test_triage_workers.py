"""Live triages run in worker processes fed from the database queue; a worker killed with SIGKILL mid-job leaves
its job to be run again, and the report is queued exactly once.

Real processes (spawned as `serve` spawns them), a real SQLite database, the Kubernetes stand-in through the
real client; waits are on conditions with generous deadlines.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import func, select

from bot.config import Settings
from bot.metrics import Metrics
from bot.runner.jobs import TriageJobs, TriageRequest
from bot.runner.workers import TriageWorkers
from bot.store.db import make_engine, migrate, session_factory
from bot.store.models import AlertGroup, OutboxItem, TriageJob, TriageRun
from collectors.live.collect import LiveAccess
from collectors.models import Target
from tests.harness.bot_server import bearer, bot_values, start_bot_process, stopped_after
from tests.harness.fixtures import sqlite_url
from tests.harness.webhooks import webhook_body
from tests.integration.test_kubernetes_source import CRASH_POD, load
from tests.standins.kube_api import Fault, KubeStandIn
from tests.standins.slack_api import SlackStandIn

__all__ = ["sqlite_url"]  # a fixture, re-exported for pytest

DEADLINE = 120.0
LOG_PATH = rf"/api/v1/namespaces/shop/pods/{CRASH_POD}/log$"


def eventually(condition: Callable[[], Any], what: str, deadline: float = DEADLINE) -> Any:
    end = time.monotonic() + deadline
    while not (value := condition()):
        assert time.monotonic() < end, f"timed out waiting for {what}"
        time.sleep(0.1)
    return value


def test_a_worker_killed_mid_job_leaves_the_job_to_another_and_the_report_is_queued_once(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'bot.db'}"
    engine = make_engine(url)
    migrate(engine)
    factory = session_factory(engine)
    # The crash-looping pod's log answers only after 100 s the first time: the first worker is still in the job.
    with KubeStandIn(load("shop"), faults=[Fault(path=LOG_PATH, status=0, delay=100, times=1)]) as kube:
        settings = Settings(database_url=url, kubeconfig=kube.kubeconfig(tmp_path / "kubeconfig"),
                            triage_workers=1, triage_lease=2, call_timeout=60, deadline=200)
        metrics = Metrics()
        workers = TriageWorkers(settings, factory, metrics).start()
        try:
            jobs = TriageJobs(factory, lambda: LiveAccess(kube=None), metrics, queue=True,
                              on_enqueued=workers.notify)
            request = TriageRequest(target=Target(service="checkout", namespace="shop"), since=timedelta(hours=1),
                                    trigger="slash", channel="C0OPS", key="slash:kill9", parent_key=None)
            assert jobs.submit(request) is None  # queued, not run here

            def running_job() -> TriageJob | None:
                with factory() as session:
                    return session.scalars(select(TriageJob).where(TriageJob.status == "running")).first()

            first = eventually(running_job, "the job to be claimed")
            eventually(lambda: any(r.path.endswith(f"{CRASH_POD}/log") for r in kube.requests),
                       "the worker to be mid-job (waiting on the slow log)")
            pid = int(str(first.locked_by).rsplit(":", 1)[1])
            assert pid == workers.processes[0].pid and pid != os.getpid()
            os.kill(pid, signal.SIGKILL)

            def done() -> TriageJob | None:
                with factory() as session:
                    return session.scalars(select(TriageJob).where(TriageJob.status == "done")).first()

            finished = eventually(done, "the job to be run again and finished")
            assert finished.attempts == 2 and finished.outcome == "ok"
            assert workers.restarts >= 1 and workers.processes[0].pid != pid
            with factory() as session:
                assert session.scalar(select(func.count()).select_from(TriageRun)) == 1
                keys = session.scalars(select(OutboxItem.idempotency_key)).all()
            assert keys.count("slash:kill9:report") == 1
            eventually(lambda: b'triagebot_triages_total{outcome="ok",trigger="slash"} 1.0' in metrics.exposition(),
                       "the finished job in the serving process's metrics")
        finally:
            workers.stop()
            engine.dispose()


def test_the_same_key_queued_twice_is_one_job(tmp_path: Path) -> None:
    engine = make_engine(f"sqlite:///{tmp_path / 'bot.db'}")
    migrate(engine)
    factory = session_factory(engine)
    jobs = TriageJobs(factory, lambda: LiveAccess(kube=None), Metrics(), queue=True)
    request = TriageRequest(target=Target(service="checkout", namespace="shop"), since=timedelta(minutes=30),
                            trigger="alert", channel="C0OPS", key="alert:g1", parent_key="alert:g1:root",
                            symptoms=["oom-killed"])
    jobs.submit(request)
    jobs.submit(request)
    with factory() as session:
        rows = session.scalars(select(TriageJob)).all()
    assert len(rows) == 1 and rows[0].status == "pending"
    assert TriageRequest.from_json(rows[0].request) == request
    engine.dispose()


@pytest.mark.parametrize("bad", [-1, 33])
def test_worker_count_is_bounded(bad: int) -> None:
    with pytest.raises(ValueError, match="triage_workers"):
        Settings(triage_workers=bad)


def test_watch_namespaces_must_be_namespace_names() -> None:
    assert Settings(watch_namespaces=["ml", "shop"]).watch_namespaces == ["ml", "shop"]
    with pytest.raises(ValueError, match="not a namespace name"):
        Settings(watch_namespaces=["ml", "Bad_NS"])


@pytest.mark.parametrize("workers", [1, 0], ids=["worker-processes", "threads"])
def test_a_triage_whose_process_died_right_after_the_webhook_committed_is_run_after_the_restart(
        tmp_path: Path, sqlite_url: str, workers: int) -> None:
    """kill -9 between the commit that applies a webhook (episode opened, triage due) and anything after it: the
    next process runs the triage once, also when Alertmanager delivers the notification again."""
    engine = make_engine(sqlite_url)
    labels = {"alertname": "KubePodCrashLooping", "namespace": "shop", "pod": "checkout-0", "severity": "warning"}
    body = webhook_body(labels, starts=datetime.now(UTC), fingerprint="0ddba11")
    with SlackStandIn(channels=("C0OPS",)) as slack, httpx.Client(timeout=10.0) as client:
        values = bot_values(slack_api_url=slack.api_url, database_url=sqlite_url, triage_workers=workers,
                            permissions={"channels": {"C0OPS": ["*"]}})
        bot = start_bot_process(values, tmp_path, "bot-0", options=["--die-after-webhook-commit"])
        with stopped_after(lambda: bot):
            # Answered once appended to the intake; the ingester may kill the process before the answer left.
            with contextlib.suppress(httpx.TransportError):
                client.post(f"{bot.url}/alertmanager", json=body, headers=bearer())
            assert bot.process.wait(timeout=30) == -signal.SIGKILL
            with engine.connect() as conn:
                assert conn.scalar(select(AlertGroup.episode)) == 1  # the episode was committed

            bot = start_bot_process(values, tmp_path, "bot-1")
            # Alertmanager retries a notification that got no answer: a duplicate, which starts nothing itself.
            assert client.post(f"{bot.url}/alertmanager", json=body, headers=bearer()).status_code == 200

            def reported() -> bool:
                (root, *_) = slack.top_level("C0OPS") or [None]
                return root is not None and any(m.blocks for m in slack.thread("C0OPS", root.ts) if m.ts != root.ts)

            eventually(reported, "the triage's report in the root's thread", deadline=120)
            with engine.connect() as conn:
                assert conn.scalar(select(func.count()).select_from(TriageRun)) == 1
                assert conn.execute(select(TriageJob.status, TriageJob.attempts)).all() == [("done", 1)]
    (root,) = slack.top_level("C0OPS")
    assert sum(1 for m in slack.thread("C0OPS", root.ts) if m.blocks and m.ts != root.ts) == 1
    engine.dispose()


SERVING = """
import sys, time
from bot.config import Settings
from bot.metrics import Metrics
from bot.store.db import make_engine, migrate, session_factory
from bot.runner.workers import TriageWorkers
url = sys.argv[1]
engine = make_engine(url)
migrate(engine)
workers = TriageWorkers(Settings(database_url=url, triage_workers=1), session_factory(engine), Metrics()).start()
print(" ".join(str(p.pid) for p in workers.processes), flush=True)
time.sleep(600)
"""


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"  # a zombie has exited already
    except FileNotFoundError:
        return False


def test_workers_stop_when_the_serving_process_is_killed_with_minus_nine(tmp_path: Path) -> None:
    import subprocess
    import sys

    serving = subprocess.Popen([sys.executable, "-c", SERVING, f"sqlite:///{tmp_path / 'bot.db'}"],
                               stdout=subprocess.PIPE, text=True)
    try:
        assert serving.stdout is not None
        pids = [int(p) for p in serving.stdout.readline().split()]
        assert len(pids) == 1 and all(_alive(p) for p in pids)
        serving.kill()
        serving.wait(DEADLINE)
        eventually(lambda: not any(_alive(p) for p in pids), "the orphaned workers to stop", deadline=60)
    finally:
        if serving.poll() is None:
            serving.kill()


def _policies(pid: int) -> dict[int, int]:
    """The scheduling policy of each thread of `pid` (os.sched_getscheduler takes a thread id on Linux)."""
    found: dict[int, int] = {}
    for task in Path(f"/proc/{pid}/task").iterdir():
        with contextlib.suppress(OSError):  # a thread that ended meanwhile
            found[int(task.name)] = os.sched_getscheduler(int(task.name))
    return found


@pytest.mark.skipif(not hasattr(os, "SCHED_IDLE"), reason="SCHED_IDLE is Linux's")
def test_a_worker_process_runs_every_thread_as_sched_idle(tmp_path: Path) -> None:
    """A woken request thread of the serving process preempts a triage at once (bot/runner/cpu.py): the worker's
    main thread and the threads it starts (the lease heartbeat, the job pool) are SCHED_IDLE, not just niced."""
    url = f"sqlite:///{tmp_path / 'bot.db'}"
    engine = make_engine(url)
    migrate(engine)
    workers = TriageWorkers(Settings(database_url=url, triage_workers=1), session_factory(engine), Metrics()).start()
    try:
        pid = workers.processes[0].pid
        assert pid is not None
        # Ready: the main thread and the lease heartbeat it starts in run(), past the imports (seconds of CPU).
        policies = eventually(lambda: (p := _policies(pid)) and len(p) >= 2 and p, "the worker to start its threads")
        assert set(policies.values()) == {os.SCHED_IDLE}, policies
        assert os.sched_getscheduler(0) == os.SCHED_OTHER  # the serving process (this one) is untouched
    finally:
        workers.stop()
        engine.dispose()
