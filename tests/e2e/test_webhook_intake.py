"""kill -9 after the webhook answered 200 and before the ingester applied the notification: nothing is lost. The
notification waits in the intake (its own SQLite file, or PostgreSQL's alert_intake table), and the next process
applies it once: its group stored, its root posted once, its triage queued once."""

from __future__ import annotations

import signal
from datetime import UTC, datetime
from pathlib import Path

import httpx
from sqlalchemy import func, select

from bot.store.db import make_engine, migrate, session_factory
from bot.store.models import AlertGroup, TriageJob
from bot.webhook.intake import open_intake
from tests.harness.bot_server import bearer, bot_values, start_bot_process, stopped_after
from tests.harness.processes import wait_until
from tests.harness.webhooks import webhook_body
from tests.standins.slack_api import SlackStandIn

LABELS = {"alertname": "KubePodCrashLooping", "namespace": "shop", "pod": "checkout-0", "severity": "warning"}


def test_a_notification_answered_but_not_applied_when_the_process_died_is_applied_by_the_next(
        tmp_path: Path, db_url: str) -> None:
    engine = make_engine(db_url)
    migrate(engine)
    intake = open_intake(engine, session_factory(engine))
    body = webhook_body(LABELS, starts=datetime.now(UTC), fingerprint="0ddba11")
    with SlackStandIn(channels=("C0OPS",)) as slack, httpx.Client(timeout=10.0) as client:
        values = bot_values(slack_api_url=slack.api_url, database_url=db_url, triage_workers=0,
                            permissions={"channels": {"C0OPS": ["*"]}})
        bot = start_bot_process(values, tmp_path, "bot-0", options=["--die-before-apply"])
        with stopped_after(lambda: bot):
            answer = client.post(f"{bot.url}/alertmanager", json=body, headers=bearer())
            assert (answer.status_code, answer.json()) == (200, {"status": "stored", "alerts": 1})
            assert bot.process.wait(timeout=30) == -signal.SIGKILL
            with engine.connect() as conn:
                assert conn.scalar(select(func.count()).select_from(AlertGroup)) == 0  # not applied
            assert intake.pending() == 1  # but kept

            bot = start_bot_process(values, tmp_path, "bot-1")
            wait_until(lambda: len(slack.top_level("C0OPS")) >= 1, 60, "the alert's root in Slack")
            wait_until(lambda: intake.pending() == 0, 60, "the intake to empty")
            with engine.connect() as conn:
                assert conn.scalar(select(func.count()).select_from(AlertGroup)) == 1
                assert conn.scalar(select(func.count()).select_from(TriageJob)) == 1
    assert len(slack.top_level("C0OPS")) == 1
    intake.close()
    engine.dispose()


def test_a_killed_ingester_process_is_restarted_and_applies_what_it_left_once(tmp_path: Path, db_url: str) -> None:
    """Beside triage worker processes the ingester is a process of its own: kill -9 of it (not of the server)
    between the answer and the apply. The server keeps answering, starts another ingester within seconds, and that
    one applies the notification once: one group, one root, one triage job."""
    engine = make_engine(db_url)
    migrate(engine)
    intake = open_intake(engine, session_factory(engine))
    body = webhook_body(LABELS, starts=datetime.now(UTC), fingerprint="0ddba11")
    other = webhook_body({**LABELS, "pod": "checkout-1", "alertname": "KubePodNotReady"}, starts=datetime.now(UTC),
                         fingerprint="0ddba12")
    with SlackStandIn(channels=("C0OPS",)) as slack, httpx.Client(timeout=10.0) as client:
        values = bot_values(slack_api_url=slack.api_url, database_url=db_url, triage_workers=1,
                            permissions={"channels": {"C0OPS": ["*"]}})
        bot = start_bot_process(values, tmp_path, "bot-0", options=["--die-before-apply"])
        died = tmp_path / "bot-0.ingester-died"
        with stopped_after(lambda: bot):
            answer = client.post(f"{bot.url}/alertmanager", json=body, headers=bearer())
            assert (answer.status_code, answer.json()) == (200, {"status": "stored", "alerts": 1})
            wait_until(died.exists, 60, "the ingester process to die before applying")
            # The server was not killed, and answers meanwhile: the second notification waits in the intake too.
            assert bot.process.poll() is None
            assert client.post(f"{bot.url}/alertmanager", json=other, headers=bearer()).status_code == 200
            wait_until(lambda: intake.pending() == 0, 60, "the restarted ingester to empty the intake")
            wait_until(lambda: len(slack.top_level("C0OPS")) >= 2, 60, "both roots in Slack")
            with engine.connect() as conn:
                assert conn.scalar(select(func.count()).select_from(AlertGroup)) == 2
                assert conn.scalar(select(func.count()).select_from(TriageJob)) == 2
            assert bot.process.poll() is None
            assert int(died.read_text()) > 0  # the pid of the ingester process that was killed
            assert "alert ingester (pid" in bot.log_text()  # the serving process saw it exit and started another
    assert len(slack.top_level("C0OPS")) == 2
    intake.close()
    engine.dispose()
