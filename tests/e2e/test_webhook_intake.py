"""kill -9 after the webhook answered 200 and before the ingester applied the notification: nothing is lost. The
notification waits in the intake (its own SQLite file, or PostgreSQL's alert_intake table), and the next process
applies it once: its group stored, its root posted once, its triage queued once."""

from __future__ import annotations

import signal
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import httpx
from sqlalchemy import func, select

from bot.store.db import make_engine, migrate, session_factory
from bot.store.models import AlertGroup, TriageJob
from bot.webhook.intake import open_intake
from tests.harness.bot_server import bearer, bot_values, start_bot_process, stop_bot_process
from tests.harness.webhooks import webhook_body
from tests.standins.slack_api import SlackStandIn

LABELS = {"alertname": "KubePodCrashLooping", "namespace": "shop", "pod": "checkout-0", "severity": "warning"}


def eventually(check: Callable[[], bool], what: str, deadline: float = 60.0) -> None:
    end = time.monotonic() + deadline
    while not check():
        if time.monotonic() > end:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.1)


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
        try:
            answer = client.post(f"{bot.url}/alertmanager", json=body, headers=bearer())
            assert (answer.status_code, answer.json()) == (200, {"status": "stored", "alerts": 1})
            assert bot.process.wait(timeout=30) == -signal.SIGKILL
            with engine.connect() as conn:
                assert conn.scalar(select(func.count()).select_from(AlertGroup)) == 0  # not applied
            assert intake.pending() == 1  # but kept

            bot = start_bot_process(values, tmp_path, "bot-1")
            eventually(lambda: len(slack.top_level("C0OPS")) >= 1, "the alert's root in Slack")
            eventually(lambda: intake.pending() == 0, "the intake to empty")
            with engine.connect() as conn:
                assert conn.scalar(select(func.count()).select_from(AlertGroup)) == 1
                assert conn.scalar(select(func.count()).select_from(TriageJob)) == 1
        except AssertionError:
            print(f"--- {bot.log}\n{bot.log_text()}")
            raise
        finally:
            stop_bot_process(bot)
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
        try:
            answer = client.post(f"{bot.url}/alertmanager", json=body, headers=bearer())
            assert (answer.status_code, answer.json()) == (200, {"status": "stored", "alerts": 1})
            eventually(died.exists, "the ingester process to die before applying")
            # The server was not killed, and answers meanwhile: the second notification waits in the intake too.
            assert bot.process.poll() is None
            assert client.post(f"{bot.url}/alertmanager", json=other, headers=bearer()).status_code == 200
            eventually(lambda: intake.pending() == 0, "the restarted ingester to empty the intake")
            eventually(lambda: len(slack.top_level("C0OPS")) >= 2, "both roots in Slack")
            with engine.connect() as conn:
                assert conn.scalar(select(func.count()).select_from(AlertGroup)) == 2
                assert conn.scalar(select(func.count()).select_from(TriageJob)) == 2
            assert bot.process.poll() is None
            assert int(died.read_text()) > 0  # the pid of the ingester process that was killed
            assert "alert ingester (pid" in bot.log_text()  # the serving process saw it exit and started another
        except AssertionError:
            print(f"--- {bot.log}\n{bot.log_text()}")
            raise
        finally:
            stop_bot_process(bot)
    assert len(slack.top_level("C0OPS")) == 2
    intake.close()
    engine.dispose()
