"""Planted secrets: the same secrets pushed through every door, then searched for everywhere they could land.

Doors: a /triage paste, the "Triage this message" shortcut, an interview-style thread reply is not needed here
(it has its own unit), an Alertmanager webhook (labels and annotations), a live triage reading a pod spec's env
and the pod's logs from the Kubernetes stand-in, a request bolt does not handle (bolt logs those), a request
with a bad signature, and the CLI (text and JSON). Places searched: every byte of the SQLite database, every
call the Slack stand-in received (posts, updates, uploaded files, response_url posts), the bot's JSON logs at
DEBUG, and the CLI's stdout and stderr. The expected count of secrets found is 0.
"""

from __future__ import annotations

import io
import json
import logging
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from pydantic import SecretStr
from slack_bolt.adapter.starlette import SlackRequestHandler
from sqlalchemy import func, select

from bot.config import Settings
from bot.context import BotContext, build_context
from bot.logs import JsonFormatter, NoBodies
from bot.policy import Permissions
from bot.server import create_app
from bot.slack.app import build_slack_app
from bot.store.models import OutboxItem, TriageRun
from collectors.live.collect import LiveAccess
from tests.harness.bot_server import serve_app
from tests.harness.shop import ago, checkout_objects
from tests.standins.kube_api import KubeStandIn
from tests.standins.slack_api import SlackStandIn, message_shortcut_body, signed_headers, slash_command_body

ROOT = Path(__file__).resolve().parents[2]
SIGNING = "planted-signing-secret-0123456789"
WEBHOOK = "planted-webhook-token-0123456789"
WAIT = 60.0  # generous: a handful of paced posts and a live triage, on a loaded machine

# Each secret is unique, so a hit names the shape that leaked. The lines are how people paste them.
PLANTED: dict[str, str] = {
    "hunter2-space-9f1": "migrate --db-password hunter2-space-9f1 --host db",
    "mysqlpwd-77a1c": "MYSQL_PWD=mysqlpwd-77a1c",
    "sk_live_51Hplantedabcdefghijkl": "charge failed: key sk_live_51Hplantedabcdefghijkl rejected",
    "Sup3rPlanted!pw": "login failed, password=Sup3rPlanted!pw for user svc",
    "bearerplanted0123456789": "Authorization: Bearer bearerplanted0123456789",
    "MIIEvQplantedKEYbody":
        '"private_key": "-----BEGIN PRIVATE KEY-----\\nMIIEvQplantedKEYbody\\n-----END PRIVATE KEY-----\\n"',
    "apikeyplanted7d0a1f4e": "X-Api-Key: apikeyplanted7d0a1f4e",
    "sk-proj-plantedABC123def456GHI789": "openai sk-proj-plantedABC123def456GHI789",
    "plantedHOOKsecretXYZ12345": "https://hooks.slack.com/services/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5",
    "wJalrXUtnPLANTED/K7MDENG/bPxRfiCYEXAMPLE": "aws wJalrXUtnPLANTED/K7MDENG/bPxRfiCYEXAMPLE",
    "Pass123planted": "mysql -uroot -pPass123planted -h db",
    "valuefirst-planted-33": '{"value": "valuefirst-planted-33", "name": "DB_PASSWORD"}',
}
SECRETS = list(PLANTED)
EVIDENCE = "\n".join([
    "Name:         checkout-6f7c9-x2x4p",
    "Namespace:    shop",
    "Containers:",
    "  app:",
    "    Last State:     Terminated",
    "      Reason:       OOMKilled",
    "      Exit Code:    137",
    *PLANTED.values(),
])


def shop_objects() -> list[dict[str, Any]]:
    """An OOMKilled pod whose spec's env holds planted secrets (name before value, and value before name)."""
    env = [{"name": "DB_PASSWORD", "value": "valuefirst-planted-33"}, {"name": "MYSQL_PWD", "value": "mysqlpwd-77a1c"},
           {"value": "sk_live_51Hplantedabcdefghijkl", "name": "STRIPE_KEY"}, {"name": "RANK", "value": "0"}]
    return checkout_objects({"env": env, "args": ["--db-password", "hunter2-space-9f1"],
                             "resources": {"limits": {"memory": "256Mi"}}}, {})


class Captured:
    """The bot's JSON log lines at DEBUG, formatted as `triagebot serve` formats them."""

    def __init__(self) -> None:
        self.stream = io.StringIO()
        self.handler = logging.StreamHandler(self.stream)
        self.handler.setFormatter(JsonFormatter())
        self.handler.addFilter(NoBodies())
        self.handler.setLevel(logging.DEBUG)

    def __enter__(self) -> Captured:
        root = logging.getLogger()
        self.level = root.level
        root.addHandler(self.handler)
        root.setLevel(logging.DEBUG)
        return self

    def __exit__(self, *exc: object) -> None:
        root = logging.getLogger()
        root.removeHandler(self.handler)
        root.setLevel(self.level)

    def text(self) -> str:
        return self.stream.getvalue()


def found_in(haystack: str | bytes) -> list[str]:
    data = haystack.encode("utf-8", errors="replace") if isinstance(haystack, str) else haystack
    return [s for s in SECRETS if s.encode() in data]


def standin_record(slack: SlackStandIn) -> bytes:
    """Everything the bot sent the Slack stand-in, as bytes: calls, its messages with their edits, files,
    response_url posts. (The person's own message that the shortcut points at is theirs, not the bot's.)"""
    parts: list[bytes] = [json.dumps([c.params for c in slack.calls], default=str).encode()]
    for messages in slack.messages.values():
        parts += [json.dumps([m.text, m.blocks, m.edits], default=str).encode() for m in messages if m.user == "U0BOT"]
    parts += [json.dumps([m.text, m.blocks], default=str).encode() for m in slack.ephemerals]
    parts += [f.bytes + (f.initial_comment or "").encode() for f in slack.files]
    parts.append(json.dumps(slack.response_urls, default=str).encode())
    return b"\n".join(parts)


@pytest.fixture(scope="module")
def planted(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[BotContext, SlackStandIn, Path, str]]:
    tmp = tmp_path_factory.mktemp("planted")
    logs = {("shop", "checkout-6f7c9-x2x4p", "app"): "\n".join(["starting", *PLANTED.values(), "killed"]) + "\n"}
    with SlackStandIn(channels=("C0PASTE", "C0SHORT", "C0LIVE", "C0ALERT"), burst=50) as slack, \
            KubeStandIn(shop_objects(), pod_logs=logs) as kube, Captured() as captured:
        db = tmp / "bot.sqlite"
        settings = Settings(
            slack_bot_token=SecretStr(slack.token), slack_signing_secret=SecretStr(SIGNING),
            slack_api_url=slack.api_url, database_url=f"sqlite:///{db}", webhook_token=SecretStr(WEBHOOK),
            drills_dir=tmp / "drills", default_channel="C0ALERT", log_level="DEBUG",
            permissions=Permissions(channels={"C0LIVE": ["shop"], "C0ALERT": ["*"]}))
        ctx = build_context(settings)
        api = kube.api_client()
        ctx.jobs.access = lambda: LiveAccess(kube=api, call_timeout=5.0, deadline=20.0)
        try:
            with serve_app(create_app(ctx, SlackRequestHandler(build_slack_app(ctx)))) as url, \
                    httpx.Client(base_url=url, timeout=30) as http:
                _push_everything(http, slack)
                _wait_until_done(ctx, slack)
                yield ctx, slack, db, captured.text()
        finally:
            ctx.close()


def _send(http: httpx.Client, body: bytes, *, secret: str = SIGNING, form: bool = True) -> httpx.Response:
    return http.post("/slack/events", content=body, headers=signed_headers(body, secret, form=form))


def _push_everything(http: httpx.Client, slack: SlackStandIn) -> None:
    url = slack.response_url(channel="C0PASTE")
    assert _send(http, slash_command_body("/triage", EVIDENCE, channel_id="C0PASTE", response_url=url)).status_code \
        == 200
    message = slack.post_user_message("C0SHORT", "```" + EVIDENCE + "```")
    body = message_shortcut_body("triage_message", message.text, channel_id="C0SHORT", message_ts=message.ts,
                                 response_url=slack.response_url(channel="C0SHORT"))
    assert _send(http, body).status_code == 200
    live = slash_command_body("/triage", "checkout -n shop --since 1h", channel_id="C0LIVE",
                              response_url=slack.response_url(channel="C0LIVE"))
    assert _send(http, live).status_code == 200
    alert = {"version": "4", "groupKey": '{}:{alertname="DBLoginFailures"}', "status": "firing",
             "receiver": "triagebot", "groupLabels": {"alertname": "DBLoginFailures"},
             "commonLabels": {"alertname": "DBLoginFailures", "namespace": "shop", "service": "checkout",
                              "db_password": "Sup3rPlanted!pw"},
             "commonAnnotations": {"summary": PLANTED["Sup3rPlanted!pw"],
                                   "description": "\n".join(PLANTED.values())},
             "alerts": [{"status": "firing", "labels": {"alertname": "DBLoginFailures", "namespace": "shop",
                                                        "service": "checkout"},
                         "annotations": {"summary": " ".join(PLANTED.values())},
                         "startsAt": ago(5), "fingerprint": "f1"}]}
    response = http.post("/alertmanager", json=alert, headers={"Authorization": f"Bearer {WEBHOOK}"})
    assert response.status_code == 200, response.text
    # A command bolt has no listener for: bolt logs unhandled requests with their body.
    unhandled = slash_command_body("/nosuch", EVIDENCE, response_url=slack.response_url())
    assert _send(http, unhandled).status_code == 404
    # A bad signature: bolt would log the body; the gate refuses it before bolt.
    assert _send(http, slash_command_body("/triage", EVIDENCE, response_url=url), secret="wrong").status_code == 401


def _wait_until_done(ctx: BotContext, slack: SlackStandIn) -> None:
    def done() -> bool:
        with ctx.factory() as session:
            runs = session.scalar(select(func.count()).select_from(TriageRun)) or 0
            pending = session.scalar(select(func.count()).select_from(OutboxItem)
                                     .where(OutboxItem.status != "sent")) or 0
        return runs >= 3 and pending == 0 and any(f.uploaded for f in slack.files)

    slack.wait_for(done, timeout=WAIT, interval=0.1)


def test_the_doors_were_really_used(planted: tuple[BotContext, SlackStandIn, Path, str]) -> None:
    ctx, slack, _, logs = planted
    with ctx.factory() as session:
        assert (session.scalar(select(func.count()).select_from(TriageRun)) or 0) >= 3
    posted = standin_record(slack).decode(errors="replace")
    assert "<redacted>" in posted  # the secrets arrived and were masked, rather than never arriving
    assert "OOMKilled" in posted
    assert "request body not logged" in logs  # bolt did try to log the unhandled request's body


def test_no_secret_in_the_database(planted: tuple[BotContext, SlackStandIn, Path, str]) -> None:
    _, _, db, _ = planted
    # The WAL and shared-memory files too, and the webhook's intake file beside the database (with its own).
    files = sorted(db.parent.glob(db.stem + "*"))
    assert db in files and db.with_name(f"{db.stem}.intake{db.suffix}") in files
    assert {str(p.name): found_in(p.read_bytes()) for p in files if found_in(p.read_bytes())} == {}


def test_no_secret_reached_slack(planted: tuple[BotContext, SlackStandIn, Path, str]) -> None:
    _, slack, _, _ = planted
    assert found_in(standin_record(slack)) == []


def test_no_secret_in_the_logs(planted: tuple[BotContext, SlackStandIn, Path, str]) -> None:
    _, _, _, logs = planted
    assert logs.strip(), "the bot logged nothing at DEBUG: the capture is broken"
    assert found_in(logs) == []


@pytest.mark.parametrize("fmt", ["text", "json", "markdown"])
def test_no_secret_in_the_cli_output(tmp_path: Path, fmt: str) -> None:
    paste = tmp_path / "paste.txt"
    paste.write_text(EVIDENCE + "\n")
    run = subprocess.run([sys.executable, "-m", "bot.cli", "analyze", str(paste), "--format", fmt],
                         cwd=ROOT, capture_output=True, text=True, timeout=300,
                         env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "COLUMNS": "200"})
    assert run.returncode == 0, run.stderr
    assert found_in(run.stdout + run.stderr) == []


def test_no_redact_is_the_local_escape_hatch(tmp_path: Path) -> None:
    paste = tmp_path / "paste.txt"
    paste.write_text(EVIDENCE + "\n")
    run = subprocess.run([sys.executable, "-m", "bot.cli", "analyze", str(paste), "--format", "json", "--no-redact"],
                         cwd=ROOT, capture_output=True, text=True, timeout=300,
                         env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    assert run.returncode == 0, run.stderr
    # The JSON report cites the lines behind its verdicts; without redaction nothing is masked there.
    assert "<redacted>" not in run.stdout
