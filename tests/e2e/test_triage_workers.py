"""Live triages run in worker processes fed from the database queue; a worker killed with SIGKILL mid-job leaves
its job to be run again, and the report is queued exactly once.

Real processes (spawned as `serve` spawns them), a real SQLite database, the Kubernetes stand-in through the
real client; waits are on conditions with generous deadlines.
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import func, select

from bot.config import Settings
from bot.jobs import TriageJobs, TriageRequest
from bot.metrics import Metrics
from bot.store.db import make_engine, migrate, session_factory
from bot.store.models import OutboxItem, TriageJob, TriageRun
from bot.workers import TriageWorkers
from collectors.live.collect import LiveAccess
from collectors.models import Target
from tests.integration.test_kubernetes_source import CRASH_POD, load
from tests.standins.kube_api import Fault, KubeStandIn

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


SERVING = """
import sys, time
from bot.config import Settings
from bot.metrics import Metrics
from bot.store.db import make_engine, migrate, session_factory
from bot.workers import TriageWorkers
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
