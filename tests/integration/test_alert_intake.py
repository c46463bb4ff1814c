"""The webhook's intake and its ingester (bot/webhook/intake.py) on both databases: rows are applied in arrival
order and removed with their effect, a row whose effect committed is never applied twice, a row that cannot be
applied is set aside without holding up the rows behind it, and a database that is away leaves every row in place."""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import func, select, update
from sqlalchemy.exc import OperationalError
from sqlalchemy.orm import Session

from bot.store import repo
from bot.store.db import read_session
from bot.store.models import AlertIntake, AlertIntakeDone, AuditEntry
from bot.webhook.intake import Ingester, Intake, intake_path, open_intake
from tests.harness.fixtures import MigratedStore

T0 = datetime(2026, 11, 29, 8, 0, tzinfo=UTC)


class Recorder:
    """An apply that leaves one audit row per notification (its effect) and remembers the order it saw."""

    def __init__(self, fail: dict[str, BaseException] | None = None) -> None:
        self.seen: list[str] = []
        self.fail = fail or {}

    def __call__(self, session: Session, body: dict[str, Any], received: datetime, digest: str | None) -> list[Any]:
        key = str(body["groupKey"])
        if key in self.fail:
            raise self.fail[key]
        self.seen.append(key)
        repo.audit(session, actor="alertmanager", action="alert.received", target=key, now=received)
        return [key]


def ingester(store: MigratedStore, apply: Recorder) -> tuple[Intake, Ingester, list[list[Any]]]:
    intake = open_intake(store.engine, store.factory)
    after: list[list[Any]] = []
    return intake, Ingester(intake, store.factory, apply, after.append, lambda _err: None, lambda: None), after


def body(n: int) -> dict[str, Any]:
    return {"version": "4", "groupKey": f"group-{n}", "status": "firing", "alerts": [{"labels": {"alertname": "A"}}]}


def effects(store: MigratedStore) -> list[str]:
    with store.factory() as session:
        return [str(t) for t in session.scalars(select(AuditEntry.target).order_by(AuditEntry.id))]


def test_rows_are_applied_in_arrival_order_and_removed_with_their_effect(store: MigratedStore) -> None:
    apply = Recorder()
    intake, ingest, after = ingester(store, apply)
    for n in (3, 1, 2):
        intake.append(body(n), None, T0 + timedelta(seconds=n))
    assert intake.pending() == 3
    assert ingest.drain() == 3
    assert apply.seen == ["group-3", "group-1", "group-2"] == effects(store)
    assert after == [["group-3"], ["group-1"], ["group-2"]]  # what follows each commit, in the same order
    assert intake.pending() == 0 and ingest.drain() == 0
    # On SQLite with a file the rows were in a file of their own, so the webhook never takes the main write lock.
    assert intake.separate is (store.backend == "sqlite")
    intake.close()


def test_a_row_whose_effect_committed_before_a_kill_is_removed_not_applied_again(store: MigratedStore) -> None:
    intake, _, _ = ingester(store, Recorder())
    if not intake.separate:
        pytest.skip("in the main database a row is deleted in the transaction that applies it")
    intake.append(body(1), None, T0)
    with read_session(intake.factory) as session:
        token = session.scalars(select(AlertIntake.token)).one()
    # What a process killed between the main commit and the intake's delete leaves behind: effect and token, row.
    with store.factory.begin() as session:
        repo.audit(session, actor="alertmanager", action="alert.received", target="group-1")
        session.add(AlertIntakeDone(token=token, applied_at=T0))
    apply = Recorder()
    _, again, after = ingester(store, apply)
    assert again.drain() == 1 and after == [[]]
    assert apply.seen == [] and effects(store) == ["group-1"] and intake.pending() == 0
    intake.close()


def test_a_row_that_cannot_be_applied_is_set_aside_and_the_rows_behind_it_flow(store: MigratedStore) -> None:
    apply = Recorder(fail={"group-2": ValueError("a bug")})
    intake, ingest, _ = ingester(store, apply)
    for n in (1, 2, 3, 4):
        intake.append(body(n), None, T0)
    with intake.factory.begin() as session:  # a row stored as a JSON string, not an object (a bug, a hand edit)
        session.execute(update(AlertIntake).where(AlertIntake.id == select(func.max(AlertIntake.id))
                                                  .scalar_subquery()).values(body="not an object"))
    assert ingest.drain() == 4  # taken: 1 applied, 2 set aside, 3 applied, 4 set aside
    assert apply.seen == ["group-1", "group-3"] == effects(store)
    with read_session(intake.factory) as session:
        aside = session.execute(select(AlertIntake.body, AlertIntake.error).order_by(AlertIntake.id)).all()
    # Bodies are kept as JSON text (migration 0011); the edited one is not even JSON.
    assert [(json.loads(b)["groupKey"] if b.startswith("{") else b, e.split(":")[0]) for b, e in aside] == [
        ("group-2", "ValueError"), ("not an object", "ValueError")]
    assert intake.pending() == 0
    intake.close()


def test_a_database_that_is_away_leaves_the_row_for_the_next_attempt(store: MigratedStore) -> None:
    away = OperationalError("INSERT", {}, Exception("could not connect to server"))
    apply = Recorder(fail={"group-1": away})
    intake, ingest, _ = ingester(store, apply)
    intake.append(body(1), None, T0)
    with pytest.raises(OperationalError):
        ingest.drain()
    assert intake.pending() == 1 and effects(store) == []
    apply.fail.clear()
    assert ingest.drain() == 1 and effects(store) == ["group-1"] and intake.pending() == 0
    intake.close()


def test_the_intake_file_sits_beside_the_database() -> None:
    from pathlib import Path

    assert intake_path(Path("/var/lib/triagebot/triagebot.sqlite")) == Path(
        "/var/lib/triagebot/triagebot.intake.sqlite")


def test_the_ingester_process_reports_what_its_thread_would_record_here() -> None:
    """/healthz and /metrics live in the serving process: the child's failure, recovery and commits reach them."""
    from bot.metrics import Metrics
    from bot.webhook.apply import WHERE, reporters
    from bot.webhook.ingester_process import relay

    metrics, committed = Metrics(), []
    on_report = relay(*reporters(metrics), committed.append)
    on_report(("failed", "OperationalError", "(psycopg.OperationalError) connection refused"))
    state = metrics.db_state()
    assert (state["up"], state["failing"], state["errors"]) == (False, [WHERE], 1)
    assert state["last_error"] == "alert-intake: OperationalError: (psycopg.OperationalError) connection refused"
    on_report(("ok",))
    assert (metrics.db_state()["up"], metrics.db_state()["failing"]) == (True, [])
    on_report(("applied", 2))
    assert committed == [2]
    assert b'triagebot_db_errors_total{where="alert-intake"} 1.0' in metrics.exposition()


def test_a_kill_9_of_the_ingester_process_loses_and_doubles_nothing(store: MigratedStore) -> None:
    """The ingester in its own process (bot/webhook/ingester_process.py), on a real database: killed with SIGKILL,
    it is started again; a notification answered while it was dead is applied by its successor, once."""
    import signal
    import time

    from bot.config import Settings
    from bot.store.models import AlertGroup
    from bot.webhook.ingester_process import IngesterProcess
    from tests.harness.webhooks import webhook_body

    def group(n: int) -> dict[str, Any]:
        return webhook_body({"alertname": f"Alert{n}", "namespace": "shop"}, starts=T0, fingerprint=f"f{n}")

    def groups() -> int:
        with store.factory() as session:
            return int(session.scalar(select(func.count()).select_from(AlertGroup)) or 0)

    def eventually(check: Any, what: str, deadline: float = 90.0) -> None:
        end = time.monotonic() + deadline
        while not check():
            assert time.monotonic() < end, f"timed out waiting for {what}"
            time.sleep(0.05)

    intake = open_intake(store.engine, store.factory)
    reports: list[tuple[Any, ...]] = []
    ingester = IngesterProcess(Settings(database_url=store.url, default_channel="C0OPS"), intake, "test",
                               reports.append).start()
    try:
        intake.append(group(1), None, T0)
        ingester.wake()
        eventually(lambda: groups() == 1 and intake.pending() == 0, "the first notification applied")
        eventually(lambda: ("applied", 0) in reports, "its commit reported to the serving process")
        assert ingester.process is not None
        first = ingester.process.pid
        assert first is not None
        os.kill(first, signal.SIGKILL)
        ingester.process.join(10)
        # Answered while no ingester runs: appended, and the wake neither blocks nor fails.
        intake.append(group(2), None, T0)
        ingester.wake()
        eventually(lambda: ingester.restarts == 1, "the supervisor to start another ingester", deadline=10)
        eventually(lambda: groups() == 2 and intake.pending() == 0, "the successor to apply what was left")
        assert ingester.process.pid != first and ingester.process.is_alive()
        assert ingester.settled(1.0)
    finally:
        ingester.stop()
        intake.close()
    assert groups() == 2 and ingester.process is not None and not ingester.process.is_alive()


@pytest.mark.skipif(not hasattr(os, "SCHED_BATCH"), reason="SCHED_BATCH is Linux's")
def test_the_ingester_process_runs_behind_requests_without_preempting_them(tmp_path: Path) -> None:
    """SCHED_BATCH at nice 5 (bot/runner/cpu.py): behind the serving process, ahead of the SCHED_IDLE triages, and
    its wake-up after each webhook does not take the core from that webhook's answer."""
    from bot.config import Settings
    from bot.store.db import make_engine, migrate, session_factory
    from bot.webhook.ingester_process import IngesterProcess

    url = f"sqlite:///{tmp_path / 'bot.db'}"
    engine = make_engine(url)
    migrate(engine)
    intake = open_intake(engine, session_factory(engine))
    ingester = IngesterProcess(Settings(database_url=url, default_channel="C0OPS"), intake, "test",
                               lambda _report: None).start()
    try:
        assert ingester.ready(90.0), "the ingester process did not start"
        assert ingester.process is not None and ingester.process.pid is not None
        pid = ingester.process.pid
        threads = [int(task.name) for task in Path(f"/proc/{pid}/task").iterdir()]
        assert len(threads) >= 2  # its main thread and the thread that applies the intake
        assert {os.sched_getscheduler(tid) for tid in threads} == {os.SCHED_BATCH}
        assert {os.getpriority(os.PRIO_PROCESS, tid) for tid in threads} == {os.getpriority(os.PRIO_PROCESS, 0) + 5}
        assert os.sched_getscheduler(0) == os.SCHED_OTHER  # the serving process (this one) is untouched
    finally:
        ingester.stop()
        intake.close()
        engine.dispose()
