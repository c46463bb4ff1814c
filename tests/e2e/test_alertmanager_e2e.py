"""Alertmanager webhooks end to end: real Prometheus and Alertmanager (Debian's packages) firing into the bot's
real HTTP server, which stores, triages and posts into the Slack stand-in; and /alertmanager, /healthz, /readyz,
/metrics and `triagebot serve` over plain HTTP and as a subprocess.
"""

from __future__ import annotations

import copy
import functools
import json
import os
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine, func, select

from bot.store.db import make_engine
from bot.store.models import Alert, AlertGroup, AuditEntry, OutboxItem, TriageRun
from tests.harness.alertmanager import GaugeExporter, start_alerting_prometheus, start_alertmanager
from tests.harness.bot_server import (
    ROOT,
    WEBHOOK_TOKEN,
    RunningBot,
    basic,
    bearer,
    bot_in_thread,
    bot_values,
    settings_from,
)
from tests.harness.postgres import PgServer
from tests.harness.processes import wait_until
from tests.standins.kube_api import KubeStandIn
from tests.standins.slack_api import Message, SlackStandIn

CHANNELS = ("C0ALERTS", "C0OPS", "C0GPU")
# GPU alerts to the GPU channel, anything from an ml-* namespace to the alerts channel, the rest to C0OPS.
ROUTES: list[dict[str, Any]] = [{"match": {"alertname": "~GPU.*"}, "channel": "C0GPU"},
                                {"match": {"namespace": "~ml-.*"}, "channel": "C0ALERTS"}]
PERMISSIONS = {"channels": {c: ["*"] for c in CHANNELS}}
XID_RULES = {"groups": [{"name": "gpu", "rules": [{
    "alert": "GPUXidError",
    "expr": 'DCGM_FI_DEV_XID_ERRORS{job="dcgm"} > 0',
    "for": "0s",
    "labels": {"severity": "critical"},
    "annotations": {"summary": "XID {{ $value }} on {{ $labels.Hostname }} GPU {{ $labels.gpu }}",
                    "runbook": "gpu-xid"},
}]}]}
NODE = {"apiVersion": "v1", "kind": "Node",
        "metadata": {"name": "gpu-node-2", "labels": {"kubernetes.io/hostname": "gpu-node-2",
                                                      "nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3"}},
        "status": {"conditions": [{"type": "Ready", "status": "True"}],
                   "capacity": {"nvidia.com/gpu": "8"}, "allocatable": {"nvidia.com/gpu": "8"},
                   "addresses": [{"type": "InternalIP", "address": "10.0.0.2"}]}}


def payload(alertname: str = "KubePodCrashLooping", *, status: str = "firing", group: str | None = None,
            labels: dict[str, str] | None = None, fingerprint: str = "f00d", version: str = "4") -> dict[str, Any]:
    """An Alertmanager version-4 webhook body with one alert, shaped like a real one (components.md section 3)."""
    all_labels = {"alertname": alertname, "namespace": "shop", "pod": "checkout-0", "severity": "warning",
                  **(labels or {})}
    alert = {"status": status, "labels": all_labels, "annotations": {"summary": f"{alertname} on the test"},
             "startsAt": "2026-11-22T06:05:46.501Z",
             "endsAt": "2026-11-22T06:15:46.501Z" if status == "resolved" else "0001-01-01T00:00:00Z",
             "generatorURL": "http://127.0.0.1:9090/graph", "fingerprint": fingerprint}
    return {"receiver": "bot", "status": status, "alerts": [alert], "groupLabels": {"alertname": alertname},
            "commonLabels": all_labels, "commonAnnotations": alert["annotations"],
            "externalURL": "http://127.0.0.1:9093", "version": version,
            "groupKey": group or f'{{}}:{{alertname="{alertname}", id="{uuid.uuid4().hex[:8]}"}}',
            "truncatedAlerts": 0}


def outbox_keys(engine: Engine) -> dict[str, str]:
    with engine.connect() as conn:
        return {key: status for key, status in conn.execute(select(OutboxItem.idempotency_key, OutboxItem.status))}


def all_sent(engine: Engine) -> bool:
    statuses = set(outbox_keys(engine).values())
    assert "dead" not in statuses, outbox_keys(engine)
    return statuses <= {"sent"}


def roots(slack: SlackStandIn, channel: str) -> list[Message]:
    return slack.top_level(channel)


def replies(slack: SlackStandIn, root: Message) -> list[Message]:
    return [m for m in slack.thread(root.channel, root.ts) if m.ts != root.ts]


@pytest.fixture
def slack() -> Iterator[SlackStandIn]:
    with SlackStandIn(channels=CHANNELS) as standin:
        yield standin


# --------------------------------------------------------------------------------------------------------------
# The whole chain
# --------------------------------------------------------------------------------------------------------------


def test_a_firing_rule_is_triaged_in_one_thread_and_its_resolution_updates_the_root(
        tmp_path: Path, slack: SlackStandIn, postgres_url: str) -> None:
    token = WEBHOOK_TOKEN
    labels = ("gpu", "UUID", "Hostname", "modelName")
    gpu = {"gpu": "1", "UUID": "GPU-test-1", "Hostname": "gpu-node-2", "modelName": "NVIDIA H100 80GB HBM3"}
    with GaugeExporter("DCGM_FI_DEV_XID_ERRORS", "Value of the last XID error.", labels) as exporter, \
            KubeStandIn([NODE]) as kube:
        other_gpu = {**gpu, "gpu": "0", "UUID": "GPU-test-0"}
        exporter.set(gpu, 0)
        exporter.set(other_gpu, 0)
        values = bot_values(slack_api_url=slack.api_url, database_url=postgres_url, routes=ROUTES,
                            permissions=PERMISSIONS, kubeconfig=kube.kubeconfig(tmp_path / "kubeconfig"))
        am_root = tmp_path / "chain"
        with bot_in_thread(settings_from(values)) as bot, \
                start_alertmanager(am_root, f"{bot.url}/alertmanager", token) as am, \
                start_alerting_prometheus(am_root, rules=XID_RULES, scrape=[exporter.target], alertmanager=am) as prom:
            # The bot had to start first (Alertmanager needs its URL, Prometheus needs Alertmanager's), so it
            # learns Prometheus' URL now, before the first triage builds its sources from these settings.
            bot.ctx.settings.prometheus_url = prom.url
            engine = bot.ctx.engine
            prom.wait_scraped()
            exporter.set(gpu, 79)

            # Fires: one root message in the routed channel, and the triage report in its thread.
            wait_until(lambda: len(roots(slack, "C0GPU")) == 1, 15, "the alert's root message in C0GPU")
            root = roots(slack, "C0GPU")[0]
            assert "FIRING" in root.text and "GPUXidError" in root.text and "gpu-node-2" in root.text
            wait_until(lambda: any(m.blocks for m in replies(slack, root)), 25, "the triage report in the thread")
            report = next(m for m in replies(slack, root) if m.blocks)
            assert "gpu-xid" in report.text  # the alert name picked the playbook
            with engine.connect() as conn:
                run = conn.execute(select(TriageRun.trigger, TriageRun.target, TriageRun.artifacts)).one()
            assert run.trigger == "alert" and run.target["node"] == "gpu-node-2"
            # The triage read the real Prometheus too: the XID series the rule fired on, value included.
            xid = next(a for a in run.artifacts if a["id"] == "prom-gpu-xid-max.json")
            assert "gpu-node-2" in xid["content"] and "79" in xid["content"]
            assert any(r.path == "/api/v1/nodes/gpu-node-2" for r in kube.requests)  # labels -> target -> kube
            wait_until(lambda: all_sent(engine), 15, "the outbox to drain")
            # The chart the leading hypothesis declares (gpu-fallen-off-bus: the Xid series), from real Prometheus.
            wait_until(lambda: any(f.thread_ts == root.ts and f.name == "chart.png" for f in slack.files), 15,
                       "the chart in the thread")
            chart = next(f for f in slack.files if f.thread_ts == root.ts and f.name == "chart.png")
            assert chart.bytes[:8] == b"\x89PNG\r\n\x1a\n"
            # The root carries the verdict now (a chat.update of the root, the report's own run).
            assert "Verdict: ✔ confirmed: gpu-xid \u203a gpu-fallen-off-bus" in root.text
            assert root.blocks[0]["text"]["text"].startswith(":rotating_light: *[FIRING:1 CRITICAL] GPUXidError* "
                                                             "on node gpu-node-2")

            # A second alert joins the group (same node): the root is edited to show it; no reply per webhook, no
            # new root, no new triage.
            exporter.set(other_gpu, 43)
            wait_until(lambda: "FIRING:2" in root.text, 15, "the root edited to show the joining alert")
            wait_until(lambda: all_sent(engine), 15, "the outbox to drain")
            assert [m.ts for m in roots(slack, "C0GPU")] == [root.ts]
            assert not [m for m in replies(slack, root) if not m.blocks and not m.file_ids]
            assert sum(1 for m in replies(slack, root) if m.blocks) == 1
            with engine.connect() as conn:
                assert conn.scalar(select(func.count()).select_from(TriageRun)) == 1

            # Repeats post nothing: the identical payload again (what repeat_interval or a second Alertmanager
            # sends) adds no outbox item, so Slack sees nothing new.
            with engine.connect() as conn:
                last = conn.execute(select(AlertGroup.last_payload)).scalar_one()
            before = outbox_keys(engine)
            seen = len(slack.messages["C0GPU"])
            with bot.client() as client:
                for _ in range(2):
                    assert client.post("/alertmanager", json=last, headers=bearer(token)).status_code == 200
            assert outbox_keys(engine) == before
            time.sleep(0.5)
            assert len(slack.messages["C0GPU"]) == seen

            # Resolves: the same root message is edited, and no new root appears.
            edits = len(root.edits)
            exporter.set(gpu, 0)
            exporter.set(other_gpu, 0)
            wait_until(lambda: "RESOLVED" in root.text, 20, "chat.update of the root message")
            wait_until(lambda: all_sent(engine), 15, "the outbox to drain after the resolution")
            assert [m.ts for m in roots(slack, "C0GPU")] == [root.ts]
            assert 1 <= len(root.edits) - edits <= 2  # one alert resolving, then the other (or both at once)
            assert {c.params["ts"] for c in slack.calls_to("chat.update")} == {root.ts}
            # One note in the thread for the episode's end, not one per alert.
            assert sum("Resolved" in m.text for m in replies(slack, root)) == 1
            # Nothing leaked into the other channels.
            assert slack.messages["C0OPS"] == [] and slack.messages["C0ALERTS"] == []
            with engine.connect() as conn:
                assert conn.scalar(select(AlertGroup.status)) == "resolved"
                # One triage for the whole episode: not again for the joining alert, the repeats or the resolution.
                assert conn.scalar(select(func.count()).select_from(TriageRun)) == 1


def test_alertmanager_with_basic_auth_routes_by_labels(tmp_path: Path, slack: SlackStandIn, sqlite_url: str) -> None:
    """The other scheme Alertmanager can send, and routing on a label other than the name (regex match)."""
    values = bot_values(slack_api_url=slack.api_url, database_url=sqlite_url, routes=ROUTES, permissions={})
    with bot_in_thread(settings_from(values)) as bot, \
            start_alertmanager(tmp_path, f"{bot.url}/alertmanager", WEBHOOK_TOKEN, auth="basic",
                               group_by=["alertname", "namespace"]) as am:
        am.post_alerts([{"labels": {"alertname": "KubePodOOMKilled", "namespace": "ml-train", "pod": "trainer-1",
                                    "severity": "warning"},
                         "annotations": {"summary": "trainer-1 OOMKilled"}}])
        wait_until(lambda: len(roots(slack, "C0ALERTS")) == 1, 15, "the root message in C0ALERTS")
        assert "KubePodOOMKilled" in roots(slack, "C0ALERTS")[0].text
        assert bot.ctx.metrics.webhook_rejected.labels("auth")._value.get() == 0
        with bot.ctx.engine.connect() as conn:
            group_key, body = conn.execute(select(AlertGroup.group_key, AlertGroup.last_payload)).one()
        assert group_key == body["groupKey"] and body["externalURL"] == am.url


# --------------------------------------------------------------------------------------------------------------
# /alertmanager over HTTP
# --------------------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def module_slack() -> Iterator[SlackStandIn]:
    with SlackStandIn(channels=CHANNELS, burst=50) as standin:
        yield standin


@pytest.fixture(scope="module")
def bot(tmp_path_factory: pytest.TempPathFactory, module_slack: SlackStandIn) -> Iterator[RunningBot]:
    """One bot on a SQLite file for the HTTP tests below; they only add groups of their own."""
    url = f"sqlite:///{tmp_path_factory.mktemp('bot') / 'triagebot.sqlite'}"
    # These tests add dozens of groups in a minute: no storm roll-ups here (test_alert_storms.py has them).
    values = bot_values(slack_api_url=module_slack.api_url, database_url=url, routes=ROUTES, permissions={},
                        webhook_max_bytes=64 * 1024, storm_groups=0)
    with bot_in_thread(settings_from(values)) as running:
        yield running


def count_alerts(engine: Engine) -> int:
    with engine.connect() as conn:
        return int(conn.scalar(select(func.count()).select_from(Alert)) or 0)


@pytest.mark.parametrize("headers", [
    {}, bearer("wrong-token-0123456789"), {"Authorization": f"Bearer {WEBHOOK_TOKEN}x"},
    basic("wrong-password"), basic(WEBHOOK_TOKEN[:-1]), {"Authorization": "Basic !!!not-base64"},
    {"Authorization": f"Token {WEBHOOK_TOKEN}"}, {"Authorization": WEBHOOK_TOKEN},
], ids=["none", "bearer-wrong", "bearer-longer", "basic-wrong", "basic-prefix", "basic-garbage", "other-scheme",
        "bare-token"])
def test_webhook_without_the_token_is_401(bot: RunningBot, headers: dict[str, str]) -> None:
    before = count_alerts(bot.ctx.engine)
    with bot.client() as client:
        response = client.post("/alertmanager", json=payload(), headers=headers)
    assert response.status_code == 401
    assert response.json()["error"] == "unauthorised" and "Bearer" in response.json()["expected"]
    assert count_alerts(bot.ctx.engine) == before


@pytest.mark.parametrize("headers", [bearer(), basic(), basic(WEBHOOK_TOKEN, user="")], ids=["bearer", "basic",
                                                                                              "basic-no-user"])
def test_webhook_with_the_token_is_200(bot: RunningBot, headers: dict[str, str]) -> None:
    with bot.client() as client:
        response = client.post("/alertmanager", json=payload(), headers=headers)
    assert response.status_code == 200, response.text
    assert response.json() == {"status": "stored", "alerts": 1}


def test_a_body_over_the_limit_is_413(bot: RunningBot) -> None:
    big = payload()
    big["alerts"][0]["annotations"]["description"] = "x" * (64 * 1024)
    before = count_alerts(bot.ctx.engine)
    with bot.client() as client:
        declared = client.post("/alertmanager", json=big, headers=bearer())
        # Without Content-Length (chunked) the limit is enforced while reading.
        chunked = client.post("/alertmanager", content=iter([json.dumps(big).encode()]),
                              headers={**bearer(), "Content-Type": "application/json"})
    for response in (declared, chunked):
        assert response.status_code == 413
        assert response.json()["error"] == "payload too large" and "65536" in response.json()["expected"]
    assert "content-length" not in chunked.request.headers
    assert count_alerts(bot.ctx.engine) == before


def _without_alertname() -> dict[str, Any]:
    body = payload()
    del body["alerts"][0]["labels"]["alertname"]
    return body


@pytest.mark.parametrize(("body", "mentions"), [
    (b"this is not json", "not JSON"),
    (b"\xff\xfe", "not JSON"),
    (json.dumps(payload(version="3")).encode(), "version"),
    (json.dumps(_without_alertname()).encode(), "alertname"),
    (json.dumps({k: v for k, v in payload().items() if k != "groupKey"}).encode(), "groupKey"),
    (json.dumps({**payload(), "alerts": []}).encode(), "alerts"),
    (json.dumps({**payload(), "status": "pending"}).encode(), "status"),
    (b"[1, 2]", "body"),
], ids=["text", "binary", "version-3", "no-alertname", "no-groupKey", "no-alerts", "bad-status", "list"])
def test_a_bad_payload_is_400_with_a_json_error(bot: RunningBot, body: bytes, mentions: str) -> None:
    before = count_alerts(bot.ctx.engine)
    with bot.client() as client:
        response = client.post("/alertmanager", content=body,
                               headers={**bearer(), "Content-Type": "application/json"})
    assert response.status_code == 400
    assert response.headers["content-type"].startswith("application/json")
    error = response.json()
    assert mentions in error["error"], error
    assert "version 4" in error["expected"]
    assert count_alerts(bot.ctx.engine) == before


def test_routing_by_labels_with_a_default(bot: RunningBot, module_slack: SlackStandIn) -> None:
    sent = {"GPUFellOffTheBus": "C0GPU", "TrainerStuck": "C0ALERTS", "CheckoutSlow": "C0OPS"}
    with bot.client() as client:
        for alertname in sent:
            labels = {"namespace": "ml-train"} if alertname == "TrainerStuck" else {}
            body = payload(alertname, labels=labels, group=f"route:{alertname}")
            assert client.post("/alertmanager", json=body, headers=bearer()).status_code == 200
    def posted(alertname: str, channel: str) -> bool:
        return any(alertname in m.text for m in module_slack.top_level(channel))

    for alertname, channel in sent.items():
        wait_until(functools.partial(posted, alertname, channel), 10, f"{alertname} in {channel}")
        others = [c for c in CHANNELS if c != channel]
        assert not any(alertname in m.text for c in others for m in module_slack.messages[c])


def test_healthz_readyz_and_metrics(bot: RunningBot) -> None:
    with bot.client() as client:
        client.post("/alertmanager", json=payload(), headers=bearer())
        client.post("/alertmanager", json=payload())  # refused: counted under reason="auth"
        health = client.get("/healthz").json()
        assert health["status"] == "ok" and health["alive"] is True and health["slack"] == "ok"
        assert health["database"]["up"] is True
        ready = client.get("/readyz")
        metrics = client.get("/metrics")
    assert ready.status_code == 200 and ready.json() == {"ready": True, "slack": "ok"}
    assert metrics.status_code == 200 and metrics.headers["content-type"].startswith("text/plain")
    exposed = metrics.text
    for name in ("triagebot_alerts_received_total", "triagebot_webhook_rejected_total", "triagebot_outbox_depth",
                 "triagebot_triages_total", "triagebot_slack_errors_total"):
        assert f"# TYPE {name.removesuffix('_total')}" in exposed, name
    assert 'triagebot_webhook_rejected_total{reason="auth"}' in exposed
    firing = [line for line in exposed.splitlines() if line.startswith('triagebot_alerts_received_total{status="fir')]
    assert firing and float(firing[0].split()[-1]) >= 1


def test_unrouted_alerts_are_stored_and_audited_but_not_posted(slack: SlackStandIn, sqlite_url: str) -> None:
    values = bot_values(slack_api_url=slack.api_url, database_url=sqlite_url, routes=ROUTES, default_channel=None)
    with bot_in_thread(settings_from(values)) as running, running.client() as client:
        assert client.post("/alertmanager", json=payload("CheckoutSlow"), headers=bearer()).status_code == 200
        with running.ctx.engine.connect() as conn:
            assert conn.scalar(select(AuditEntry.action)) == "alert.unrouted"
            assert conn.scalar(select(func.count()).select_from(OutboxItem)) == 0
            assert conn.scalar(select(func.count()).select_from(Alert)) == 1


# --------------------------------------------------------------------------------------------------------------
# Stored before the 200; readiness follows the database
# --------------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_the_payload_is_committed_before_the_200(backend: str, request: pytest.FixtureRequest,
                                                 slack: SlackStandIn) -> None:
    url: str = request.getfixturevalue("sqlite_url" if backend == "sqlite" else "postgres_url")
    values = bot_values(slack_api_url=slack.api_url, database_url=url, routes=ROUTES)
    observer = make_engine(url)  # its own connections: it only sees what the bot committed
    try:
        with bot_in_thread(settings_from(values)) as running, running.client() as client:
            for n in range(5):
                body = payload(group=f"committed:{n}", fingerprint=f"fp{n}")
                assert client.post("/alertmanager", json=body, headers=bearer()).status_code == 200
                with observer.connect() as conn:
                    stored = conn.execute(select(Alert.fingerprint).where(Alert.group_key == f"committed:{n}")).all()
                    keys = conn.execute(select(OutboxItem.idempotency_key)
                                        .where(OutboxItem.idempotency_key.like("alert:%:root"))).all()
                assert [row.fingerprint for row in stored] == [f"fp{n}"]
                assert len(keys) == n + 1  # its root post is queued in the same transaction
    finally:
        observer.dispose()


def test_readyz_is_503_when_the_database_is_unreachable(postgres_server: PgServer, slack: SlackStandIn) -> None:
    name = f"t_ready_{uuid.uuid4().hex[:8]}"
    url = postgres_server.create_database(name)
    values = bot_values(slack_api_url=slack.api_url, database_url=url)
    with bot_in_thread(settings_from(values)) as running, running.client() as client:
        assert client.get("/readyz").status_code == 200
        postgres_server.drop_database(name)  # WITH (FORCE): the bot's pooled connections are cut too
        ready = client.get("/readyz")
        assert ready.status_code == 503
        assert ready.json()["ready"] is False and ready.json()["reason"].startswith("database:")
        assert client.get("/healthz").status_code == 200  # alive, just not ready
        # Not stored means not acknowledged: Alertmanager retries on a 5xx.
        assert client.post("/alertmanager", json=payload(), headers=bearer()).status_code >= 500


# --------------------------------------------------------------------------------------------------------------
# `triagebot serve` refuses to start without its settings
# --------------------------------------------------------------------------------------------------------------

GOOD_ENV = {"SLACK_BOT_TOKEN": "xoxb-1-2-3", "SLACK_SIGNING_SECRET": "s3cret", "TRIAGEBOT_WEBHOOK_TOKEN": WEBHOOK_TOKEN}


@pytest.mark.parametrize(("env", "named"), [
    ({}, "SLACK_BOT_TOKEN"),
    ({**GOOD_ENV, "SLACK_BOT_TOKEN": "xoxp-user-token"}, "SLACK_BOT_TOKEN"),
    ({k: v for k, v in GOOD_ENV.items() if k != "SLACK_SIGNING_SECRET"}, "SLACK_SIGNING_SECRET"),
    ({k: v for k, v in GOOD_ENV.items() if k != "TRIAGEBOT_WEBHOOK_TOKEN"}, "TRIAGEBOT_WEBHOOK_TOKEN"),
    ({**GOOD_ENV, "TRIAGEBOT_WEBHOOK_TOKEN": "short"}, "TRIAGEBOT_WEBHOOK_TOKEN"),
    ({**GOOD_ENV, "TRIAGEBOT_WEBHOOK_MAX_BYTES": "lots"}, "TRIAGEBOT_WEBHOOK_MAX_BYTES"),
    ({**GOOD_ENV, "TRIAGEBOT_ROUTES": "not json"}, "TRIAGEBOT_ROUTES"),
    ({**GOOD_ENV, "TRIAGEBOT_ROUTES": '[{"match": {"a": "~("}, "channel": "C1"}]'}, "TRIAGEBOT_ROUTES"),
    ({**GOOD_ENV, "TRIAGEBOT_CONFIG": "/nonexistent/triagebot.yaml"}, "TRIAGEBOT_CONFIG"),
], ids=["nothing", "user-token", "no-signing-secret", "no-webhook-token", "short-webhook-token", "bad-int",
        "routes-not-json", "route-bad-regex", "config-file-missing"])
def test_serve_without_a_needed_setting_exits_2_naming_it(tmp_path: Path, env: dict[str, str], named: str) -> None:
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("TRIAGEBOT_", "SLACK_"))}
    # A state dir of its own: a start-up that got too far must not touch the developer's database.
    clean.update(env, TRIAGEBOT_STATE_DIR=str(tmp_path), HOME=str(tmp_path))
    done = subprocess.run([sys.executable, "-m", "bot.cli", "serve", "--host", "127.0.0.1", "--port", "0"],
                          cwd=ROOT, env=clean, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 2, (done.returncode, done.stderr[-2000:])
    assert named in done.stderr, done.stderr
    assert done.stderr.startswith("triagebot: error:") and "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


def test_a_resolved_payload_for_an_unknown_group_posts_once_and_updates_nothing(bot: RunningBot,
                                                                               module_slack: SlackStandIn) -> None:
    """The bot was down while the group fired: the resolution alone makes one (resolved) root, no update."""
    body = payload("CheckoutDown", status="resolved", group="late:CheckoutDown")
    updates = len(module_slack.calls_to("chat.update"))
    with bot.client() as client:
        for _ in range(2):
            assert client.post("/alertmanager", json=copy.deepcopy(body), headers=bearer()).status_code == 200
    wait_until(lambda: any("CheckoutDown" in m.text for m in module_slack.top_level("C0OPS")), 10, "the root")
    wait_until(lambda: all_sent(bot.ctx.engine), 10, "the outbox to drain")
    posted = [m for m in module_slack.messages["C0OPS"] if "CheckoutDown" in m.text]
    assert len(posted) == 1 and "RESOLVED" in posted[0].text
    assert len(module_slack.calls_to("chat.update")) == updates


def test_a_form_post_is_400(bot: RunningBot) -> None:
    with bot.client() as client:
        refused = client.post("/alertmanager", data={"a": "b"}, headers=bearer())
    assert refused.status_code == 400 and refused.json()["error"].startswith("body is not JSON: ")
