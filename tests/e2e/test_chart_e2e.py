"""Charts that belong to the verdict (issue #13, point 8), end to end: a /triage signed as Slack sends it, live
triage against the Kubernetes stand-in and a real Prometheus (Debian's, backfilled with an hour of history), and
the report's chart in the Slack stand-in's thread.

The pod was evicted for memory, so the leader is evicted/memory-pressure: not one of the three hypotheses that
declared a chart before every hypothesis did. Its chart is the node's available memory, a share of its total,
with the rule's line at 10% and the incident shaded from the first sample under it. The PNG carries what it
plots in its text chunks, so the test reads the chart's series and line from the upload itself.
"""

from __future__ import annotations

import io
import json
import time
from collections.abc import Iterator
from typing import Any

import pytest
from PIL import Image
from pydantic import SecretStr
from sqlalchemy import select

from bot.config import Settings
from bot.context import build_context
from bot.policy import Permissions
from bot.render.slack_triage import hypothesis_label
from bot.store.models import TriageRun
from collectors.live.collect import LiveAccess
from tests.e2e.test_slack_app import SECRET, SLOW_POSTS, Bot
from tests.harness.bot_server import serve_bot
from tests.harness.openmetrics import History, ramp
from tests.harness.prometheus import PromServer
from tests.harness.shop import ago
from tests.standins.kube_api import KubeStandIn

GiB = 2**30
CHANNEL = "C0CHART"
POD, NODE, NODE_IP = "etl-worker-0", "node-b", "10.0.0.8"
SERIES = "prom-node-memory-available-ratio-range.json"


def evicted_objects() -> list[dict[str, Any]]:
    """A Burstable pod the kubelet evicted for memory, on a node under MemoryPressure."""
    message = ("The node was low on resource: memory. Threshold quantity: 100Mi, available: 81920Ki. Container "
               "worker was using 5662310Ki, request is 1Gi, has larger consumption of memory.")
    return [
        {"apiVersion": "v1", "kind": "Pod",
         "metadata": {"name": POD, "namespace": "batch", "labels": {"app": "etl"}, "creationTimestamp": ago(90)},
         "spec": {"nodeName": NODE, "containers": [
             {"name": "worker", "image": "registry.example.com/batch/etl:4.2",
              "resources": {"requests": {"memory": "1Gi"}, "limits": {"memory": "8Gi"}}}]},
         "status": {"phase": "Failed", "reason": "Evicted", "message": message, "qosClass": "Burstable",
                    "containerStatuses": [{"name": "worker", "ready": False, "restartCount": 0,
                                           "image": "registry.example.com/batch/etl:4.2", "imageID": "",
                                           "state": {"terminated": {"reason": "Error", "exitCode": 137,
                                                                    "startedAt": ago(80), "finishedAt": ago(6)}}}]}},
        {"apiVersion": "v1", "kind": "Event", "metadata": {"name": f"{POD}.1", "namespace": "batch"},
         "involvedObject": {"kind": "Pod", "namespace": "batch", "name": POD},
         "reason": "Evicted", "type": "Warning", "message": message, "count": 1,
         "firstTimestamp": ago(6), "lastTimestamp": ago(6), "source": {"component": "kubelet", "host": NODE}},
        {"apiVersion": "v1", "kind": "Node",
         "metadata": {"name": NODE, "labels": {"kubernetes.io/hostname": NODE}},
         "status": {"capacity": {"cpu": "16", "memory": "32Gi"}, "allocatable": {"cpu": "16", "memory": "31Gi"},
                    "addresses": [{"type": "InternalIP", "address": NODE_IP}],
                    "conditions": [{"type": "Ready", "status": "True"},
                                   {"type": "MemoryPressure", "status": "True",
                                    "reason": "KubeletHasInsufficientMemory", "lastTransitionTime": ago(8)}]}},
    ]


@pytest.fixture(scope="module")
def history() -> History:
    """An hour of node_exporter memory: the evicted pod's node runs down from 40% to 4% available; another node
    sits at 2% all hour, out of scope (its series must not reach the chart)."""
    h = History(end=int(time.time()) // 30 * 30, span=3600, step=30)
    node = {"instance": f"{NODE_IP}:9100", "job": "node-exporter"}
    h.gauge("node_memory_MemAvailable_bytes", node, ramp(0.40 * 32 * GiB, 0.04 * 32 * GiB, 3000))
    h.gauge("node_memory_MemTotal_bytes", node, 32 * GiB)
    other = {"instance": "10.0.0.99:9100", "job": "node-exporter"}
    h.gauge("node_memory_MemAvailable_bytes", other, 0.02 * 32 * GiB)
    h.gauge("node_memory_MemTotal_bytes", other, 32 * GiB)
    return h


@pytest.fixture(scope="module")
def bot(tmp_path_factory: pytest.TempPathFactory, prom: PromServer) -> Iterator[Bot]:
    from tests.standins.slack_api import SlackStandIn

    tmp = tmp_path_factory.mktemp("chart-e2e")
    with SlackStandIn(channels=(CHANNEL,), users={"U0ALICE": "alice"}, burst=50) as slack, \
            KubeStandIn(evicted_objects()) as kube:
        settings = Settings(
            slack_bot_token=SecretStr(slack.token), slack_signing_secret=SecretStr(SECRET),
            slack_api_url=slack.api_url, database_url=f"sqlite:///{tmp / 'bot.sqlite'}",
            webhook_token=SecretStr("w" * 24), drills_dir=tmp / "drills", default_since="1h",
            permissions=Permissions(channels={CHANNEL: ["batch"]}))
        ctx = build_context(settings)
        api = kube.api_client()
        # Kubernetes from the stand-in, metrics from the real Prometheus; no node agent (reported missing).
        ctx.jobs.access = lambda: LiveAccess(kube=api, prometheus_url=prom.url, call_timeout=5.0, deadline=20.0)
        with serve_bot(ctx) as (url, http):
            yield Bot(url=url, slack=slack, ctx=ctx, http=http, drills=tmp / "drills")


def test_a_live_triage_uploads_the_leaders_declared_series_with_its_line(bot: Bot) -> None:
    assert bot.slash(f"pod/{POD} batch 1h", CHANNEL).status_code == 200
    bot.slack.wait_for(lambda: bool(bot.roots(CHANNEL)) and bool(bot.reports(CHANNEL, bot.roots(CHANNEL)[0])),
                       timeout=SLOW_POSTS)
    root = bot.roots(CHANNEL)[0]
    report = bot.reports(CHANNEL, root)[0]
    assert hypothesis_label("evicted", "memory-pressure") in json.dumps(report.blocks, ensure_ascii=False)

    bot.slack.wait_for(lambda: any(f.thread_ts == root.ts and f.name == "chart.png" for f in bot.slack.files),
                       timeout=SLOW_POSTS)
    chart = next(f for f in bot.slack.files if f.thread_ts == root.ts and f.name == "chart.png")
    assert chart.bytes[:8] == b"\x89PNG\r\n\x1a\n"
    text = Image.open(io.BytesIO(chart.bytes)).text  # type: ignore[attr-defined]
    assert text["Title"] == "Memory available on the node, share of its total"
    assert text["Source"] == f"node_memory_MemAvailable_bytes via {SERIES}"
    assert text["Description"] == "unit=ratio; threshold=0.1 (below: likely: under 10% of memory available)"

    # The series behind it, as the run stored it: the evicted pod's node only, fetched from Prometheus as a range
    # query over the hour, falling through the line.
    with bot.ctx.factory() as session:
        run = session.scalars(select(TriageRun)).one()
        artifacts = {a["id"]: a for a in run.artifacts}
        leader = run.report["findings"][0]["hypotheses"]
    assert SERIES in artifacts, sorted(artifacts)
    body = json.loads(artifacts[SERIES]["content"])
    assert [s["metric"] for s in body["data"]["result"]] == [{"instance": f"{NODE_IP}:9100"}]
    values = [float(v) for _, v in body["data"]["result"][0]["values"]]
    assert len(values) >= 100 and values[0] == pytest.approx(0.40, abs=0.02) and min(values) < 0.1
    assert "node_memory_MemAvailable_bytes" in artifacts[SERIES]["command"]
    memory = next(h for h in leader if h["id"] == "memory-pressure")
    assert memory["status"] == "confirmed" and memory["chart"]["threshold"] == 0.1
    # Bounded: the chart series came in the same triage, within its range-query budget.
    ranged = [a for a in run.artifacts if a["id"].startswith("prom-") and '"matrix"' in a["content"]]
    assert 1 <= len(ranged) <= 20
