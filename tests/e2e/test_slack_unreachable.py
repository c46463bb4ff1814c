"""`serve` with the Slack API unreachable (issue 28, point 4): the bot starts, the webhook stores alerts, the log
says it once, /healthz tells, and once Slack is back the queued root is posted by itself.

The bot runs as `triagebot serve` composes it in HTTP mode (the context, the bolt app, whose start-up auth.test used
to crash the process, and the ASGI app under uvicorn), in this process so its log records can be counted. "Slack"
is the stand-in, on a port that is closed at first.
"""

from __future__ import annotations

import json
import logging
import time
from datetime import UTC, datetime
from pathlib import Path

import httpx
import pytest
from pydantic import SecretStr
from slack_bolt.adapter.starlette import SlackRequestHandler
from sqlalchemy import func, select

from bot.config import ConfigError, Settings
from bot.context import build_context
from bot.server import create_app
from bot.slack.app import build_slack_app
from bot.store.models import AlertGroup, OutboxItem
from tests.harness.bot_server import bearer, bot_values, serve_app, settings_from
from tests.harness.fixtures import sqlite_url
from tests.harness.prometheus import free_port
from tests.harness.webhooks import webhook_body
from tests.standins.slack_api import SlackStandIn

__all__ = ["sqlite_url"]  # fixture, re-exported for pytest
LABELS = {"alertname": "KubePodCrashLooping", "namespace": "shop", "pod": "checkout-7d9f8c6b5-abcde",
          "severity": "critical"}


def test_serve_starts_without_slack_and_posts_once_it_is_back(sqlite_url: str,
                                                              caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING)
    port = free_port()
    values = bot_values(slack_api_url=f"http://127.0.0.1:{port}/api/", database_url=sqlite_url,
                        slack_retry_interval=0.3)  # no permissions: the root also says why it is not triaged
    ctx = build_context(settings_from(values))  # as `serve` composes it, with the bolt app in HTTP mode
    try:
        handler = SlackRequestHandler(build_slack_app(ctx))  # its start-up auth.test used to crash the process
        with serve_app(create_app(ctx, handler)) as url, httpx.Client(base_url=url, timeout=10) as client:
            stored = client.post("/alertmanager", json=webhook_body(LABELS, starts=_now(), fingerprint="f1"),
                                 headers=bearer())
            assert (stored.status_code, stored.json()) == (200, {"status": "stored", "alerts": 1})
            assert ctx.ingester.settled()  # applied after the answer (bot/webhook/intake.py)
            with ctx.factory() as session:
                assert session.scalar(select(func.count()).select_from(AlertGroup)) == 1
                waiting = session.scalar(select(func.count()).select_from(OutboxItem)
                                         .where(OutboxItem.status != "sent"))
                assert waiting is not None and waiting >= 1  # the root waits in the outbox
            health = client.get("/healthz")
            # Liveness stays 200 (restarting does not bring Slack back); the body tells.
            assert health.status_code == 200 and health.json()["alive"] is True
            assert health.json()["slack"].startswith("unreachable since ")
            ready = client.get("/readyz")
            assert ready.status_code == 200 and ready.json()["slack"].startswith("unreachable since ")
            time.sleep(1.0)  # a few failed posts and probes: still one log line

            with SlackStandIn(channels=("C0OPS",), port=port) as slack:
                slack.wait_for(lambda: bool(slack.top_level("C0OPS")), timeout=15)
                root = slack.top_level("C0OPS")[0]
                deadline = time.monotonic() + 5
                while client.get("/healthz").json()["slack"] != "ok" and time.monotonic() < deadline:
                    time.sleep(0.05)
                back = client.get("/healthz").json()
                assert (back["alive"], back["slack"]) == (True, "ok")
    finally:
        ctx.close()
    said = "\n".join([root.text, *[json.dumps(b) for b in root.blocks]])
    assert "KubePodCrashLooping" in root.text
    assert ("Not triaged: channel C0OPS has no permission entry; set TRIAGEBOT_PERMISSIONS "
            "(permissions.channels).") in said
    lines = [r.getMessage() for r in caplog.records if r.name.startswith(("triagebot", "slack_sdk"))]
    assert len([line for line in lines if "Slack API" in line]) == 1, lines  # slack_sdk's own lines too
    assert [line for line in lines if "not triaged" in line] == [
        "alert KubePodCrashLooping not triaged: channel C0OPS has no permission entry; set TRIAGEBOT_PERMISSIONS "
        "(permissions.channels)"]


def _now() -> datetime:
    return datetime.now(UTC)


def test_a_token_slack_refuses_stops_the_start_in_one_line(tmp_path: Path) -> None:
    """Unlike an unreachable Slack, a refused token will not heal by waiting: the start stops, naming the setting."""
    with SlackStandIn(channels=("C0OPS",)) as slack:
        ctx = build_context(Settings(slack_bot_token=SecretStr("xoxb-not-the-right-one"),
                                     slack_signing_secret=SecretStr("s"), slack_api_url=slack.api_url,
                                     database_url=f"sqlite:///{tmp_path / 'bot.sqlite'}"), start_poster=False)
        try:
            with pytest.raises(ConfigError) as refused:
                build_slack_app(ctx)
        finally:
            ctx.close()
    assert str(refused.value) == "setting SLACK_BOT_TOKEN was refused by Slack: invalid_auth"
