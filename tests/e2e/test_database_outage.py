"""The database goes away and comes back, with the bot running: PostgreSQL restarted in the middle of a storm, and
SQLite's disk filling up.

While the store cannot commit, the webhook answers 503 with a JSON body, so Alertmanager keeps the notification
and retries; what was answered 200 is never lost. When the database is back, the poster and the triage workers
resume by themselves (the bot is not restarted), and /healthz and /metrics say what happened.

SQLite's disk is filled with `PRAGMA max_page_count` on the bot's own connections (SQLite then fails a write
that needs a new page with SQLITE_FULL, "database or disk is full", as on a full disk). A small filesystem needs
root to mount, and a file-size rlimit makes writes fail with EFBIG, which SQLite reports as a disk I/O error
instead (and which would stop the bot's log file too).
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
from sqlalchemy import Engine, event, func, select

from bot.store.db import make_engine
from bot.store.models import Alert, OutboxItem, TriageJob
from tests.harness.bot_server import (
    bearer,
    bot_in_thread,
    bot_values,
    settings_from,
    start_bot_process,
    stopped_after,
)
from tests.harness.fixtures import sqlite_url
from tests.harness.postgres import start_postgres, start_server, stop_server
from tests.harness.processes import wait_until
from tests.harness.webhooks import webhook_body
from tests.standins.slack_api import SlackStandIn

__all__ = ["sqlite_url"]  # fixture, re-exported for pytest

CHANNELS = ("C0OPS", "C0GPU", "C0SHOP", "C0DATA")
ROUTES = [{"match": {"route": c}, "channel": c} for c in CHANNELS]
PERMISSIONS = {"channels": {c: ["*"] for c in CHANNELS}}
GROUPS = 8  # over the four channels: the bot posts at most one message a second to each
RETRY_EVERY = 0.2  # Alertmanager backs off from 10 ms up; a short fixed pause keeps the test short


def group_body(n: int, note: str = "") -> dict[str, Any]:
    labels = {"alertname": f"Outage{n:02d}", "namespace": "shop", "pod": f"checkout-{n}", "severity": "warning",
              "route": CHANNELS[n % len(CHANNELS)]}
    body = webhook_body(labels, starts=datetime.now(UTC), fingerprint=f"outage{n:02d}",
                        group_key=f'{{}}:{{alertname="Outage{n:02d}"}}')
    if note:
        for alert in body["alerts"]:
            alert["annotations"] = {**alert.get("annotations", {}), "description": note}
    return body


class Alertmanager:
    """Sends each body until it is answered 200, as Alertmanager does with a 5xx; records every answer."""

    def __init__(self, url: str, bodies: list[dict[str, Any]], pause: float = 0.05) -> None:
        self.url, self.bodies, self.pause = url, bodies, pause
        self.answers: list[tuple[int, Any]] = []
        self.stored: list[str] = []
        self.done = threading.Event()

    def run(self) -> None:
        with httpx.Client(base_url=self.url, timeout=15.0, headers=bearer()) as client:
            for body in self.bodies:
                deadline = time.monotonic() + 60
                while time.monotonic() < deadline:
                    try:
                        response = client.post("/alertmanager", json=body)
                    except httpx.TransportError:
                        time.sleep(RETRY_EVERY)
                        continue
                    self.answers.append((response.status_code, response.json()))
                    if response.status_code == 200:
                        self.stored.append(body["groupKey"])
                        break
                    time.sleep(RETRY_EVERY)
                time.sleep(self.pause)
        self.done.set()


def refusals(answers: list[tuple[int, Any]]) -> list[tuple[int, Any]]:
    return [(status, body) for status, body in answers if status != 200]


def roots_in_slack(slack: SlackStandIn) -> Counter[str]:
    return Counter(str(m.extra["metadata"]["event_payload"]["group"]) for c in CHANNELS for m in slack.messages[c]
                   if (m.extra.get("metadata") or {}).get("event_type") == "triagebot_alert_episode")


def outbox_drained(engine: Engine) -> bool:
    with engine.connect() as conn:
        statuses = Counter(conn.scalars(select(OutboxItem.status)))
    assert not statuses.get("dead"), statuses
    return bool(statuses) and set(statuses) == {"sent"}


def metric(text: str, name: str) -> float:
    return sum(float(line.split()[-1]) for line in text.splitlines() if line.startswith(name))


def test_postgresql_restarted_in_the_middle_of_a_storm(tmp_path: Path) -> None:
    with start_postgres(tmp_path) as pg, SlackStandIn(channels=CHANNELS) \
            as slack:
        values = bot_values(slack_api_url=slack.api_url, database_url=pg.url, storm_groups=0,
                            routes=ROUTES, permissions=PERMISSIONS, outbox_lease=5, slack_timeout=4, triage_lease=5)
        bot = start_bot_process(values, tmp_path, "bot")
        engine = make_engine(pg.url)
        with stopped_after(lambda: bot):
            sender = Alertmanager(bot.url, [group_body(n) for n in range(GROUPS)], pause=0.05)
            feeder = threading.Thread(target=sender.run, daemon=True)
            feeder.start()
            wait_until(lambda: len(sender.stored) >= 4, 30, "the storm's first webhooks")
            stop_server(pg)
            try:
                wait_until(lambda: len(refusals(sender.answers)) >= 3, 15, "webhooks refused while it is down")
                with httpx.Client(base_url=bot.url, timeout=10) as client:
                    down = client.get("/healthz")
                    down_metrics = client.get("/metrics").text
            finally:
                start_server(pg)
            assert sender.done.wait(90), f"stored {len(sender.stored)} of {GROUPS}"
            engine.dispose()  # its pooled connections died with the server
            wait_until(lambda: outbox_drained(engine), 90, "the outbox to drain")
            wait_until(lambda: _jobs_done(engine), 60, "every triage job to finish")
            with httpx.Client(base_url=bot.url, timeout=10) as client:
                up = client.get("/healthz")
                up_metrics = client.get("/metrics").text
            assert bot.process.poll() is None  # the same process throughout: nothing was restarted
        with engine.connect() as conn:
            stored = set(conn.scalars(select(Alert.group_key)))
            jobs = conn.scalar(select(func.count()).select_from(TriageJob))
        engine.dispose()

    for status, body in refusals(sender.answers):
        assert status == 503 and "database" in body["error"] and body["expected"], (status, body)
    assert set(sender.stored) == stored and len(stored) == GROUPS  # every 200 kept, every group in the end
    assert Counter(roots_in_slack(slack).values()) == Counter({1: GROUPS})  # each root once, none lost
    assert jobs == GROUPS
    assert down.status_code == 200 and down.json()["database"]["up"] is False
    assert metric(down_metrics, "triagebot_db_up") == 0
    assert up.json()["database"]["up"] is True and up.json()["database"]["errors"] >= 3
    assert up.json()["database"]["last_outage_seconds"] > 0
    assert metric(up_metrics, "triagebot_db_up") == 1
    assert metric(up_metrics, 'triagebot_db_errors_total{where="webhook"}') >= 3


def _jobs_done(engine: Engine) -> bool:
    with engine.connect() as conn:
        states = Counter(conn.scalars(select(TriageJob.status)))
    return bool(states) and set(states) == {"done"}


def test_sqlite_disk_full_answers_503_and_resumes_when_there_is_room(sqlite_url: str) -> None:
    with SlackStandIn(channels=CHANNELS) as slack:
        values = bot_values(slack_api_url=slack.api_url, database_url=sqlite_url, storm_groups=0, triage_workers=0,
                            routes=ROUTES, permissions=PERMISSIONS)
        with bot_in_thread(settings_from(values)) as bot, bot.client() as client:
            # The disk holds both of the bot's files: the main database and the webhook's intake beside it.
            engines = [bot.ctx.engine, bot.ctx.intake.engine]
            assert engines[1] is not None, "on SQLite the intake is a file of its own"
            limits: dict[Engine, int | None] = {}
            for engine in engines:
                _cap_pages(engine, limits)

            before = [group_body(n) for n in range(3)]
            for body in before:
                assert client.post("/alertmanager", json=body, headers=bearer()).status_code == 200
            for engine in engines:
                with engine.connect() as conn:
                    limits[engine] = int(conn.exec_driver_sql("PRAGMA page_count").scalar_one())
            # Each alert carries 20 KB of description: storing it needs pages the full disk does not have.
            refused = [client.post("/alertmanager", json=group_body(n, "x" * 20_000), headers=bearer())
                       for n in range(3, 6)]
            down = client.get("/healthz").json()["database"]
            limits.clear()  # room again
            after = [client.post("/alertmanager", json=group_body(n, "x" * 20_000), headers=bearer())
                     for n in range(3, 6)]
            wait_until(lambda: outbox_drained(bot.ctx.engine), 60, "the outbox to drain")
            up = client.get("/healthz").json()["database"]
            exposed = client.get("/metrics").text
            with bot.ctx.engine.connect() as conn:
                stored = set(conn.scalars(select(Alert.group_key)))

    assert [r.status_code for r in refused] == [503] * 3
    assert all("database" in r.json()["error"] for r in refused)
    assert down["up"] is False and "full" in down["last_error"], down
    assert [r.status_code for r in after] == [200] * 3
    assert stored == {group_body(n)["groupKey"] for n in range(6)}
    assert Counter(roots_in_slack(slack).values()) == Counter({1: 6})
    assert up["up"] is True and up["errors"] >= 3
    assert metric(exposed, "triagebot_db_up") == 1 and metric(exposed, "triagebot_db_errors_total") >= 3


def _cap_pages(engine: Engine, limits: dict[Engine, int | None]) -> None:
    @event.listens_for(engine, "begin")
    def _cap(connection: Any) -> None:
        # The disk's size, as this connection sees it: no page beyond the file's limit (a later BEGIN widens it).
        pages = limits.get(engine) or 1_073_741_823
        connection.exec_driver_sql(f"PRAGMA max_page_count={pages}")
