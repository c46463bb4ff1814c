"""The store on a SQLite file and on a real PostgreSQL: migrations, alerts, repo functions, the outbox, and two
bot processes sharing one database that must post every Slack message exactly once."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from collections import Counter
from datetime import UTC, datetime, timedelta, timezone
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Engine, MetaData, inspect, select
from sqlalchemy.exc import StatementError

from bot.store import outbox, repo
from bot.store.db import alembic_config, current_revision, make_engine, migrate, normalize_url, session_factory
from bot.store.drill_sessions import SqlSessionStore
from bot.store.drill_sessions import metadata as sessions_metadata
from bot.store.models import Alert, AlertGroup, AlertStorm, Base, Incident, OutboxItem
from collectors.models import Missing, Target
from playbooks.report import Report
from tests.harness.fixtures import MigratedStore

WORKER = Path(__file__).with_name("store_worker.py")
T0 = datetime(2030, 1, 1, 12, 0, tzinfo=UTC)
TABLES = {"incidents", "alert_groups", "alerts", "triage_runs", "slack_messages", "feedback", "audit_log", "outbox",
          "channel_pace", "alert_storms", "digest_channels"}


def webhook(group: str, status: str = "firing", fingerprints: tuple[str, ...] = ("f1",),
            alert_status: str | None = None) -> dict[str, Any]:
    """An Alertmanager version-4 webhook body."""
    alerts = [{"status": alert_status or status, "fingerprint": fp,
               "labels": {"alertname": group, "namespace": "ml", "pod": f"trainer-{fp}"},
               "annotations": {"summary": "GPU fell off the bus"}, "startsAt": "2030-01-01T11:55:00Z",
               "endsAt": "0001-01-01T00:00:00Z", "generatorURL": "http://prometheus/graph"} for fp in fingerprints]
    return {"version": "4", "groupKey": f'{{}}:{{alertname="{group}"}}', "truncatedAlerts": 0, "status": status,
            "receiver": "triagebot", "groupLabels": {"alertname": group},
            "commonLabels": {"alertname": group, "namespace": "ml"}, "commonAnnotations": {},
            "externalURL": "http://alertmanager:9093", "alerts": alerts}


def assert_no_drift(engine: Engine) -> None:
    """The revisions create exactly what the models (the bot's and the drills table) describe."""
    targets = [Base.metadata, sessions_metadata]
    combined = MetaData()
    for metadata in targets:
        for table in metadata.tables.values():
            table.to_metadata(combined)
    with engine.connect() as connection:
        drift = compare_metadata(MigrationContext.configure(connection, opts={"compare_type": True}), combined)
    assert drift == [], "models and bot/store/migrations/versions/ disagree: add a revision"


# --- migrations and types -------------------------------------------------------------------------------------


def test_migrations_upgrade_head_from_empty_and_are_idempotent(db_url: str) -> None:
    engine = make_engine(db_url)
    head = ScriptDirectory.from_config(alembic_config()).get_current_head()
    assert current_revision(engine) is None
    migrate(engine)
    migrate(engine)  # a restart, or the second replica
    assert current_revision(engine) == head
    assert set(inspect(engine).get_table_names()) >= TABLES
    assert_no_drift(engine)
    config = alembic_config()
    with engine.begin() as connection:
        config.attributes["connection"] = connection
        command.downgrade(config, "base")
    assert not TABLES & set(inspect(engine).get_table_names())
    migrate(engine)
    assert current_revision(engine) == head
    engine.dispose()


def test_the_default_database_is_a_wal_sqlite_file_in_the_state_dir(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TRIAGEBOT_STATE_DIR", str(tmp_path / "state"))
    engine = make_engine()
    assert engine.url.database == str(tmp_path / "state" / "triagebot.sqlite")
    with engine.connect() as connection:
        assert connection.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
        assert connection.exec_driver_sql("PRAGMA busy_timeout").scalar() == 30_000
        assert connection.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1
    engine.dispose()
    assert normalize_url("postgresql://bot:s3cret@db:5432/triagebot") == \
        "postgresql+psycopg://bot:s3cret@db:5432/triagebot"
    assert normalize_url("postgres://db/triagebot").startswith("postgresql+psycopg://")


def test_datetimes_come_back_aware_utc(store: MigratedStore) -> None:
    berlin = datetime(2030, 1, 1, 13, 30, tzinfo=timezone(timedelta(hours=1)))
    with store.factory.begin() as session:
        incident, _ = repo.open_incident(session, "triage:tz", title="tz", source="paste", now=berlin)
    with store.factory() as session:
        again = session.get(Incident, incident.id)
        assert again is not None
        assert again.created_at.tzinfo is UTC
        assert again.created_at == berlin and again.created_at.hour == 12
        newer = session.scalars(select(Incident).where(Incident.created_at > berlin - timedelta(seconds=1))).all()
        assert [i.id for i in newer] == [incident.id]
    with pytest.raises(StatementError, match="naive datetime"), store.factory.begin() as session:
        repo.open_incident(session, "triage:naive", title="x", source="paste", now=datetime(2030, 1, 1))


def test_a_drills_table_made_by_create_all_is_adopted(db_url: str) -> None:
    engine = make_engine(db_url)
    sessions_metadata.create_all(engine)  # SqlSessionStore got there before the bot's first migration
    migrate(engine)
    assert "drill_sessions" in inspect(engine).get_table_names()
    assert_no_drift(engine)
    engine.dispose()


def test_two_commands_opening_a_new_drill_file_at_once_both_open_it(tmp_path: Path) -> None:
    """`triagebot drill list` started beside `triagebot drill NAME` on a fresh state dir (tests/e2e/test_drill_saved.py
    does): one makes the tables, the other waits and finds them. Each used to check, find nothing and create: the
    second failed with "table interview_sessions already exists"."""
    path = tmp_path / "drills.sqlite"
    first = make_engine(f"sqlite:///{path}")
    errors: list[BaseException] = []

    def open_second() -> None:
        try:
            SqlSessionStore.from_path(path).engine.dispose()
        except BaseException as err:
            errors.append(err)

    second = threading.Thread(target=open_second)
    with first.begin() as connection:
        sessions_metadata.create_all(connection)  # made, not yet committed
        second.start()
        second.join(0.5)  # time to reach its check; it cannot finish before this commit
    second.join(60)
    assert not second.is_alive() and errors == []
    first.dispose()


def test_a_storm_in_progress_keeps_its_rollup_through_the_upgrade(db_url: str) -> None:
    """Revision 0006: each channel's latest storm (from its groups' rollup_key) becomes the channel's storm row."""
    engine = make_engine(db_url)
    migrate(engine, "0005")
    groups = Base.metadata.tables["alert_groups"]
    t0 = datetime(2026, 11, 26, 9, 0, tzinfo=UTC)
    rows = [("g1", "C1", "rollup:C1:old", t0), ("g2", "C1", "rollup:C1:new", t0 + timedelta(minutes=5)),
            ("g3", "C1", "rollup:C1:new", t0 + timedelta(minutes=6)), ("g4", "C2", None, t0)]
    with engine.begin() as conn:
        for key, channel, rollup, started in rows:
            conn.execute(groups.insert().values(group_key=key, receiver="", status="firing", common_labels={},
                                                last_payload={}, channel=channel, created_at=t0, updated_at=t0,
                                                episode=1, episode_started_at=started, alert_states={},
                                                rollup_key=rollup))
    migrate(engine)
    with session_factory(engine)() as session:
        storms = {s.channel: (s.rollup_key, s.started_at, s.last_at) for s in session.scalars(select(AlertStorm))}
    assert storms == {"C1": ("rollup:C1:new", t0 + timedelta(minutes=5), t0 + timedelta(minutes=6))}
    assert_no_drift(engine)
    engine.dispose()


def test_interviews_kept_in_the_drills_table_move_to_their_own(db_url: str) -> None:
    """Revision 0003: an interview stored the old way (prefixed columns in drill_sessions) moves, payload intact."""
    engine = make_engine(db_url)
    migrate(engine, "0002")
    started = datetime(2026, 11, 20, 9, 0, tzinfo=UTC)
    old = sessions_metadata.tables["drill_sessions"]
    with engine.begin() as conn:
        conn.execute(old.insert().values(
            id="iv-1", incident_id="interview:gpu-scheduling-01", trainee="interview:U0ALICE",
            channel="interview:C0TRAIN", finished=False, score=None, started_at=started, updated_at=started,
            payload={"id": "iv-1", "kept": "as is"}))
        conn.execute(old.insert().values(
            id="drill-1", incident_id="oom-trainer-limit", trainee="U0BOB", channel="C0TRAIN", finished=True,
            score=80, started_at=started, updated_at=started, payload={"id": "drill-1"}))
    migrate(engine)
    new = sessions_metadata.tables["interview_sessions"]
    with engine.connect() as conn:
        moved = conn.execute(select(new)).mappings().all()
        left = conn.execute(select(old.c.id)).scalars().all()
    assert [(r["id"], r["question_id"], r["user_id"], r["channel"]) for r in moved] == \
        [("iv-1", "gpu-scheduling-01", "U0ALICE", "C0TRAIN")]
    assert moved[0]["payload"] == {"id": "iv-1", "kept": "as is"}
    assert left == ["drill-1"]
    assert current_revision(engine) == ScriptDirectory.from_config(alembic_config()).get_current_head()
    assert_no_drift(engine)
    engine.dispose()


# --- alerts and the repo --------------------------------------------------------------------------------------


def test_alert_groups_are_upserted_and_every_payload_kept(store: MigratedStore) -> None:
    first = webhook("GpuXid", fingerprints=("a", "b"))
    with store.factory.begin() as session:
        group, is_new, rows = repo.store_alert_payload(session, first, "replica-1", now=T0)
        assert is_new and len(rows) == 2 and group.status == "firing"
        incident, created = repo.open_incident_for_group(session, group, title="GpuXid", namespace="ml",
                                                         target=Target(namespace="ml", pod="trainer-a"))
        assert created
    with store.factory.begin() as session:  # Alertmanager repeats the notification: stored, not a new group
        group, is_new, rows = repo.store_alert_payload(session, first, "replica-2", now=T0 + timedelta(minutes=5))
        assert not is_new and len(rows) == 2
        again, created = repo.open_incident_for_group(session, group, title="GpuXid")
        assert not created and again.id == incident.id
    resolved = webhook("GpuXid", status="resolved", fingerprints=("a", "b"))
    with store.factory.begin() as session:
        group, is_new, _ = repo.store_alert_payload(session, resolved, "replica-1", now=T0 + timedelta(minutes=9))
        assert not is_new and group.status == "resolved"
    with store.factory() as session:
        assert session.scalars(select(AlertGroup)).one().last_payload == resolved
        alerts = session.scalars(select(Alert).order_by(Alert.id)).all()
        assert len(alerts) == 6
        assert alerts[0].payload == first["alerts"][0] and alerts[0].labels["pod"] == "trainer-a"
        assert {a.receiver_instance for a in alerts} == {"replica-1", "replica-2"}
        found = repo.incident_for_group(session, first["groupKey"])
        assert found is not None and found.status == "resolved" and found.target == {"namespace": "ml",
                                                                                       "pod": "trainer-a"}


@pytest.mark.parametrize(("payload", "message"), [
    ({"status": "firing", "alerts": []}, "groupKey"),
    ({"groupKey": "g", "status": "burning", "alerts": []}, "status"),
    ({"groupKey": "g", "status": "firing", "alerts": "nope"}, "alerts"),
])
def test_a_malformed_payload_is_refused_with_its_field(store: MigratedStore, payload: dict[str, Any],
                                                      message: str) -> None:
    with pytest.raises(repo.PayloadError, match=message), store.factory.begin() as session:
        repo.store_alert_payload(session, payload, "replica-1")


def test_triage_runs_feedback_audit_and_recent_incidents(store: MigratedStore) -> None:
    report = Report(target=Target(namespace="ml", pod="trainer-0"), symptoms=["oom-killed"], findings=[], facts={},
                    artifacts=[], missing=[Missing(source="prometheus", reason="timeout")])
    with store.factory.begin() as session:
        older, _ = repo.open_incident(session, "triage:1", title="old", source="slash", now=T0)
        newer, _ = repo.open_incident(session, "triage:2", title="new", source="paste", now=T0 + timedelta(hours=1))
        run = repo.record_triage_run(
            session, incident_id=newer.id, target=report.target, trigger="slash", status="ok", requested_by="U1",
            started_at=T0, finished_at=T0 + timedelta(seconds=2.5), report=report,
            artifacts=[{"id": "a1", "kind": "pod", "content": "token=[REDACTED]"}], missing=report.missing)
        repo.add_feedback(session, incident_id=newer.id, triage_run_id=run.id, user_id="U2", verdict="wrong",
                          right_playbook="oom-killed", right_hypothesis="limit-too-low", note="it was the limit")
        repo.audit(session, actor="U1", channel="C1", action="/triage", target="ml/trainer-0",
                   detail={"since": "30m"}, outcome="ok", now=T0)
        with pytest.raises(ValueError, match="verdict"):
            repo.add_feedback(session, incident_id=newer.id, user_id="U2", verdict="meh")
        repo.record_slack_message(session, channel="C1", ts="1.1", kind="triage", incident_id=newer.id)
        repo.record_slack_message(session, channel="C1", ts="1.1", kind="triage", incident_id=newer.id)
    with store.factory() as session:
        assert [i.key for i in repo.recent_incidents(session, limit=5)] == ["triage:2", "triage:1"]
        assert older.id != newer.id
        stored = session.get(type(run), run.id)
        assert stored is not None and stored.duration_ms == 2500
        assert Report.model_validate(stored.report) == report
        assert stored.missing == [{"source": "prometheus", "reason": "timeout"}]


# --- the outbox -----------------------------------------------------------------------------------------------


def test_enqueue_is_idempotent(store: MigratedStore) -> None:
    with store.factory.begin() as session:
        first = outbox.enqueue(session, "alert:g:post", "C1", "chat.postMessage", {"text": "one"}, now=T0)
        second = outbox.enqueue(session, "alert:g:post", "C1", "chat.postMessage", {"text": "two"}, now=T0)
        assert first.id == second.id and second.payload == {"text": "one"}
    with store.factory.begin() as session:
        third = outbox.enqueue(session, "alert:g:post", "C9", "chat.postMessage", {"text": "three"}, now=T0)
        assert third.id == first.id
        assert outbox.counts(session) == {"pending": 1}
        with pytest.raises(ValueError, match="method"):
            outbox.enqueue(session, "x", "C1", "chat.delete", {})


def test_claims_are_paced_per_channel(store: MigratedStore) -> None:
    with store.factory.begin() as session:
        for key, channel in [("c1-a", "C1"), ("c1-b", "C1"), ("c2-a", "C2")]:
            outbox.enqueue(session, key, channel, "chat.postMessage", {"text": key}, now=T0)
    claimed_at: dict[str, datetime] = {}

    def claim_and_send(now: datetime) -> list[str]:
        items = outbox.claim(store.factory, "w1", now)
        with store.factory.begin() as session:
            for item in items:
                assert outbox.mark_sent(session, item.id, "w1", {"ts": item.idempotency_key}, now=now)
                claimed_at[item.idempotency_key] = now
        return sorted(i.idempotency_key for i in items)

    assert claim_and_send(T0) == ["c1-a", "c2-a"]  # one per channel per claim
    assert claim_and_send(T0 + timedelta(seconds=0.5)) == []  # C1 was posted to half a second ago
    assert claim_and_send(T0 + timedelta(seconds=0.999)) == []
    assert claim_and_send(T0 + timedelta(seconds=1)) == ["c1-b"]
    assert claimed_at["c1-b"] - claimed_at["c1-a"] >= timedelta(seconds=1)


def test_no_second_post_to_a_channel_while_one_is_in_flight(store: MigratedStore) -> None:
    with store.factory.begin() as session:
        outbox.enqueue(session, "a", "C1", "chat.postMessage", {}, now=T0)
        outbox.enqueue(session, "b", "C1", "chat.postMessage", {}, now=T0)
    assert [i.idempotency_key for i in outbox.claim(store.factory, "w1", T0)] == ["a"]
    assert outbox.claim(store.factory, "w2", T0 + timedelta(seconds=5)) == []  # "a" is still being posted
    with store.factory.begin() as session:
        assert outbox.mark_sent(session, 1, "w1", {"ts": "1"})
    assert [i.idempotency_key for i in outbox.claim(store.factory, "w2", T0 + timedelta(seconds=5))] == ["b"]


def test_a_reply_waits_for_its_parent_and_receives_its_ts(store: MigratedStore) -> None:
    with store.factory.begin() as session:
        post = outbox.enqueue(session, "post", "C1", "chat.postMessage", {"text": "alert"}, now=T0)
        outbox.enqueue(session, "reply", "C2", "chat.postMessage", {"text": "thread"}, depends_on=post, now=T0)
        outbox.enqueue(session, "update", "C1", "chat.update", {"text": "resolved"}, depends_on=post.id, now=T0)
    first = outbox.claim(store.factory, "w1", T0)
    assert [i.idempotency_key for i in first] == ["post"]  # the reply's channel is free, but its parent is not sent
    assert outbox.claim(store.factory, "w1", T0 + timedelta(seconds=2)) == []
    with store.factory.begin() as session:
        assert outbox.mark_sent(session, first[0].id, "w1", {"ts": "1700000000.000100", "channel": "C1"})
    later = outbox.claim(store.factory, "w1", T0 + timedelta(seconds=2))
    assert {i.idempotency_key: i.parent_result for i in later} == {
        "reply": {"ts": "1700000000.000100", "channel": "C1"},
        "update": {"ts": "1700000000.000100", "channel": "C1"},
    }


def test_an_expired_lease_is_claimed_again_and_the_old_worker_loses_it(store: MigratedStore) -> None:
    with store.factory.begin() as session:
        outbox.enqueue(session, "k", "C1", "chat.postMessage", {}, now=T0)
    (item,) = outbox.claim(store.factory, "crashed", T0, lease=timedelta(seconds=30))
    assert outbox.claim(store.factory, "w2", T0 + timedelta(seconds=29)) == []
    (again,) = outbox.claim(store.factory, "w2", T0 + timedelta(seconds=30))
    assert again.id == item.id and again.attempts == 2
    with store.factory.begin() as session:
        assert not outbox.mark_sent(session, item.id, "crashed", {"ts": "1"})
        assert outbox.mark_failed(session, item.id, "crashed", "boom") is None
        assert outbox.mark_sent(session, item.id, "w2", {"ts": "2"})
    with store.factory() as session:
        row = session.get(OutboxItem, item.id)
        assert row is not None and row.status == "sent" and row.result == {"ts": "2"} and row.locked_by is None


def test_failures_back_off_exponentially_and_honour_retry_after(store: MigratedStore) -> None:
    with store.factory.begin() as session:
        outbox.enqueue(session, "k", "C1", "chat.postMessage", {}, now=T0)
        outbox.enqueue(session, "other", "C1", "chat.postMessage", {}, now=T0)
    now = T0
    for expected in (1.0, 2.0, 4.0):
        (item,) = outbox.claim(store.factory, "w1", now, pace=timedelta(0))
        assert item.idempotency_key == "k"
        with store.factory.begin() as session:
            assert outbox.mark_failed(session, item.id, "w1", "slack 503", now=now) == "failed"
            row = session.get(OutboxItem, item.id)
            assert row is not None and row.next_attempt_at == now + timedelta(seconds=expected)
        # "other" goes out meanwhile: a failed item does not block its channel
        for other in outbox.claim(store.factory, "w1", now + timedelta(seconds=0.5), pace=timedelta(0)):
            with store.factory.begin() as session:
                outbox.mark_failed(session, other.id, "w1", "also down", now=now)
        now += timedelta(seconds=expected)
    assert outbox.backoff(20) == 300.0
    (item,) = [i for i in outbox.claim(store.factory, "w1", now, pace=timedelta(0)) if i.idempotency_key == "k"]
    with store.factory.begin() as session:  # a 429: Slack's Retry-After, for the whole channel
        assert outbox.mark_failed(session, item.id, "w1", "ratelimited", retry_after=7, now=now) == "failed"
        row = session.get(OutboxItem, item.id)
        assert row is not None and row.next_attempt_at == now + timedelta(seconds=7)
        assert row.last_error == "ratelimited" and row.attempts == 4
    assert outbox.claim(store.factory, "w1", now + timedelta(seconds=6.9), pace=timedelta(0)) == []
    assert [i.idempotency_key for i in outbox.claim(store.factory, "w1", now + timedelta(seconds=7))] in (
        ["k"], ["other"])


def test_dead_letters_after_the_attempt_budget_and_dependants_follow(store: MigratedStore) -> None:
    with store.factory.begin() as session:
        post = outbox.enqueue(session, "post", "C1", "chat.postMessage", {}, now=T0)
        reply = outbox.enqueue(session, "reply", "C2", "chat.postMessage", {}, depends_on=post, now=T0)
        grandchild = outbox.enqueue(session, "reply-2", "C3", "chat.postMessage", {}, depends_on=reply, now=T0)
        bad = outbox.enqueue(session, "bad-channel", "C4", "chat.postMessage", {}, now=T0)
    now = T0
    for expected in ("failed", "dead"):
        items = {i.idempotency_key: i for i in outbox.claim(store.factory, "w1", now, max_attempts=2)}
        with store.factory.begin() as session:
            assert outbox.mark_failed(session, items["post"].id, "w1", "500", now=now, max_attempts=2) == expected
            if "bad-channel" in items:
                assert outbox.mark_failed(session, bad.id, "w1", "channel_not_found", permanent=True) == "dead"
        now += timedelta(minutes=10)
    assert outbox.claim(store.factory, "w1", now, max_attempts=2) == []
    with store.factory() as session:
        statuses = {r.idempotency_key: (r.status, r.last_error) for r in session.scalars(select(OutboxItem))}
    assert statuses == {
        "post": ("dead", "500"),
        "reply": ("dead", "the item it depends on is dead"),
        "reply-2": ("dead", "the item it depends on is dead"),
        "bad-channel": ("dead", "channel_not_found"),
    }
    with store.factory.begin() as session:
        assert outbox.retry_dead(session, bad.id, now=now)
    assert [i.idempotency_key for i in outbox.claim(store.factory, "w1", now)] == ["bad-channel"]
    assert grandchild.id > reply.id


def test_a_worker_that_keeps_crashing_ends_in_the_dead_letters(store: MigratedStore) -> None:
    with store.factory.begin() as session:
        outbox.enqueue(session, "poison", "C1", "chat.postMessage", {}, now=T0)
    now = T0
    for _ in range(3):
        assert len(outbox.claim(store.factory, "w1", now, lease=timedelta(seconds=30), max_attempts=3)) == 1
        now += timedelta(seconds=31)  # the worker died holding it
    assert outbox.claim(store.factory, "w1", now, max_attempts=3) == []
    with store.factory() as session:
        row = session.scalars(select(OutboxItem)).one()
        assert row.status == "dead" and "lease expired" in (row.last_error or "")


def test_concurrent_claimers_never_share_an_item(store: MigratedStore) -> None:
    with store.factory.begin() as session:
        for n in range(60):
            outbox.enqueue(session, f"k{n}", f"C{n % 12}", "chat.postMessage", {}, now=T0)
    seen: list[str] = []
    lock = threading.Lock()
    errors: list[BaseException] = []

    def worker(name: str) -> None:
        deadline = time.monotonic() + 30
        try:
            while time.monotonic() < deadline:
                items = outbox.claim(store.factory, name, T0 + timedelta(hours=1), pace=timedelta(0))
                for item in items:
                    with store.factory.begin() as session:
                        assert outbox.mark_sent(session, item.id, name, {"ts": name})
                    with lock:
                        seen.append(item.idempotency_key)
                with lock:
                    if len(seen) == 60:
                        return
        except BaseException as err:  # surfaced by the main thread below
            errors.append(err)

    threads = [threading.Thread(target=worker, args=(f"w{n}",)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert not errors
    assert sorted(seen) == sorted(f"k{n}" for n in range(60))


# --- two processes, one database ------------------------------------------------------------------------------


def test_two_bot_processes_post_every_alert_exactly_once(db_url: str, tmp_path: Path) -> None:
    gpu, disk = webhook("GpuXid", fingerprints=("a", "b", "c")), webhook("DiskFull", fingerprints=("d", "e"))
    deliveries = [
        {"channel": "C-GPU", "payload": gpu},
        {"channel": "C-DISK", "payload": disk},
        {"channel": "C-GPU", "payload": gpu},  # Alertmanager's repeat: nothing new to post
        {"channel": "C-GPU", "payload": webhook("GpuXid", status="resolved", fingerprints=("a", "b", "c"))},
    ]
    payloads, log, go = tmp_path / "payloads.json", tmp_path / "sent.jsonl", tmp_path / "go"
    payloads.write_text(json.dumps(deliveries))
    log.touch()
    rate_limited = f"alert:{gpu['groupKey']}:fp:b:firing"
    pace = 0.1
    procs = [subprocess.Popen([sys.executable, str(WORKER), db_url, f"replica-{n}", str(payloads), str(log), str(go),
                               "--pace", str(pace), "--timeout", "60", "--rate-limit-once", rate_limited],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for n in (1, 2)]
    deadline = time.monotonic() + 60
    while not all((tmp_path / f"ready-replica-{n}").exists() for n in (1, 2)):
        assert time.monotonic() < deadline and all(p.poll() is None for p in procs), "workers did not start"
        time.sleep(0.01)
    go.touch()
    outputs = [proc.communicate(timeout=90) for proc in procs]
    for proc, (out, err) in zip(procs, outputs, strict=True):
        assert proc.returncode == 0, f"worker failed:\n{out}\n{err}"
    summaries = [json.loads(out.strip().splitlines()[-1]) for out, _ in outputs]

    sends = [json.loads(line) for line in log.read_text().splitlines()]
    expected_keys = set(summaries[0]["keys"])
    assert set(summaries[1]["keys"]) == expected_keys
    assert len(expected_keys) == 2 + 5 + 3 + 1  # two posts, five thread replies, three resolved replies, one update
    per_key = Counter(s["key"] for s in sends)
    assert per_key == Counter(dict.fromkeys(expected_keys, 1)), "a Slack call was made twice, or never"
    assert sum(s["sent"] for s in summaries) == len(expected_keys)
    # Each group was new to exactly one replica, whichever won.
    assert sorted(g for s in summaries for g in s["new_groups"]) == sorted([gpu["groupKey"], disk["groupKey"]])
    # Replies and the update went to the parent's ts.
    ts_of = {s["key"]: s["ts"] for s in sends}
    for s in sends:
        parent = f"alert:{gpu['groupKey']}:post" if s["channel"] == "C-GPU" else f"alert:{disk['groupKey']}:post"
        if s["key"] != parent:
            assert s["parent_ts"] == ts_of[parent], s
    # Per channel, posts were claimed at least `pace` apart across both processes (pacing runs on the clock the
    # claimers pass in), and really went out one after the other, never together.
    for channel in ("C-GPU", "C-DISK"):
        ours = sorted((s for s in sends if s["channel"] == channel), key=lambda s: s["claimed_at"])
        claim_gaps = [b["claimed_at"] - a["claimed_at"] for a, b in pairwise(ours)]
        assert min(claim_gaps) >= pace - 1e-6, claim_gaps
        assert all(b["at"] > a["at"] for a, b in pairwise(ours))

    engine = make_engine(db_url)
    with session_factory(engine)() as session:
        assert session.scalars(select(AlertGroup).where(AlertGroup.group_key == gpu["groupKey"])).one().status == \
            "resolved"
        # Both replicas stored every delivery: 3 + 2 + 3 + 3 alerts each.
        assert len(session.scalars(select(Alert)).all()) == 2 * 11
        assert len(session.scalars(select(Incident)).all()) == 2
        assert outbox.counts(session) == {"sent": len(expected_keys)}
    engine.dispose()


# --- collapsing a message's state, priorities, the update lane, maybe-sent ------------------------------------


def test_set_latest_rewrites_a_queued_post_then_collapses_edits(store: MigratedStore) -> None:
    with store.factory.begin() as session:
        root = outbox.enqueue(session, "root", "C1", "chat.postMessage", {"text": "v1", "kind": "alert"}, now=T0)
        assert outbox.set_latest(session, root, {"text": "v2"}).id == root.id  # not posted yet: rewritten
    (item,) = outbox.claim(store.factory, "w1", T0)
    assert item.payload["text"] == "v2"
    with store.factory.begin() as session:
        root = outbox.find(session, "root")
        assert root is not None
        # In flight: the new state waits behind it as an edit; later states rewrite that edit.
        first = outbox.set_latest(session, root, {"text": "v3"})
        second = outbox.set_latest(session, root, {"text": "v4"}, priority=outbox.PRIORITY_ROOT)
        assert first.id == second.id and first.method == "chat.update"
        assert outbox.mark_sent(session, item.id, "w1", {"ts": "1.0", "channel": "C1"})
    (edit,) = outbox.claim(store.factory, "w1", T0 + timedelta(seconds=2))
    assert edit.method == "chat.update" and edit.payload["text"] == "v4" and edit.parent_result == {"ts": "1.0",
                                                                                                    "channel": "C1"}
    with store.factory() as session:
        assert outbox.counts(session) == {"sent": 1, "sending": 1}


def test_roots_go_before_reports_and_edits_share_a_workspace_budget(store: MigratedStore) -> None:
    with store.factory.begin() as session:
        outbox.enqueue(session, "report", "C1", "chat.postMessage", {}, now=T0)
        outbox.enqueue(session, "root", "C1", "chat.postMessage", {}, now=T0, priority=outbox.PRIORITY_ROOT)
        for n in range(12):  # edits in twelve channels: the workspace lane lets a burst through, then paces
            outbox.enqueue(session, f"edit{n}", f"E{n}", "chat.update", {"ts": "1.0"}, now=T0)
    first = outbox.claim(store.factory, "w1", T0)
    assert [i.idempotency_key for i in first if i.channel == "C1"] == ["root"]
    edits = [i for i in first if i.method == "chat.update"]
    assert len(edits) == 1  # one per claim
    got = len(edits)
    for n in range(1, 20):
        got += sum(i.method == "chat.update" for i in outbox.claim(store.factory, "w1", T0 + timedelta(
            milliseconds=n)))
    assert got == outbox.UPDATE_BURST  # the burst, within a few milliseconds
    later = outbox.claim(store.factory, "w1", T0 + outbox.UPDATE_INTERVAL)
    assert sum(i.method == "chat.update" for i in later) == 1


def test_a_lease_that_runs_out_marks_the_post_maybe_sent(store: MigratedStore) -> None:
    with store.factory.begin() as session:
        outbox.enqueue(session, "k", "C1", "chat.postMessage", {}, now=T0)
        outbox.enqueue(session, "t", "C2", "chat.postMessage", {}, now=T0)
    items = {i.idempotency_key: i for i in outbox.claim(store.factory, "dies", T0)}
    assert not any(i.maybe_sent for i in items.values())
    with store.factory.begin() as session:  # a 429 is a clear "no"; a timeout is not
        assert outbox.mark_failed(session, items["t"].id, "dies", "ReadTimeout", now=T0, uncertain=True) == "failed"
    again = {i.idempotency_key: i for i in outbox.claim(store.factory, "w2", T0 + timedelta(seconds=31))}
    assert again["k"].maybe_sent and again["t"].maybe_sent and again["k"].created_at == T0


def test_a_stale_notification_leaves_the_group_as_it_was(store: MigratedStore) -> None:
    """Alert a resolved while b fires; a's old firing, delivered late, neither reopens nor resolves anything."""
    from bot.webhook.alert_flow import accept_alerts
    from bot.webhook.payload import AlertmanagerPayload

    def deliver(body: dict[str, Any], at: datetime) -> None:
        accept_alerts(store.factory, AlertmanagerPayload.model_validate(body), body, routes=[],
                      default_channel="C1", receiver_instance="r", now=at)

    both = webhook("GpuXid", fingerprints=("a", "b"))
    one_resolved = webhook("GpuXid", fingerprints=("a", "b"))
    one_resolved["alerts"][0].update(status="resolved", endsAt="2030-01-01T11:58:00Z")
    stale = webhook("GpuXid", fingerprints=("a",))
    deliver(both, T0)
    deliver(one_resolved, T0 + timedelta(seconds=10))
    with store.factory() as session:
        before = outbox.counts(session)
    deliver(stale, T0 + timedelta(seconds=20))
    with store.factory() as session:
        group = session.scalars(select(AlertGroup)).one()
        assert (group.status, group.episode) == ("firing", 1)
        assert group.last_payload == one_resolved  # the stale body is stored as an alert row, not as the state
        assert group.alert_states["a"]["status"] == "resolved"
        assert outbox.counts(session) == before
        assert len(session.scalars(select(Alert)).all()) == 5
