"""What an alert is about, through real Alertmanager into the bot and a live triage of the Kubernetes stand-in:
node alerts are triaged as their node (cluster-scoped, found from `node`, `Hostname` or the scrape's `instance`),
and kube-prometheus' quota alerts, which name only a namespace, as that namespace and its ResourceQuotas.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from pydantic import SecretStr
from sqlalchemy import func, select

from bot.config import Settings
from bot.context import BotContext, build_context
from bot.policy import Permissions
from bot.server import create_app
from bot.store.models import TriageRun
from collectors.live.collect import LiveAccess
from tests.e2e.test_alertmanager_e2e import all_sent, wait_until
from tests.harness.alertmanager import start_alertmanager
from tests.harness.bot_server import serve_app
from tests.harness.shop import ago
from tests.harness.slack_bot import message_text
from tests.standins.kube_api import KubeStandIn
from tests.standins.slack_api import Message, SlackStandIn

TOKEN = "t" * 24
WAIT = 60.0  # Alertmanager's group_wait, four live triages and their paced posts on a loaded machine
NODE_EXPORTER = {"job": "node-exporter", "namespace": "monitoring", "mountpoint": "/var/lib/kubelet",
                 "device": "/dev/nvme0n1p1", "fstype": "ext4", "severity": "warning"}


def _pod(namespace: str, name: str, **status: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": namespace, "creationTimestamp": ago(60)},
            "spec": {"nodeName": "gpu-node-2", "containers": [{"name": "main", "image": "registry.example.com/x:1"}]},
            "status": {"phase": "Running", **status}}


def cluster() -> list[dict[str, Any]]:
    """gpu-node-2 (InternalIP 10.0.0.2) runs pods of two namespaces, one of them evicted for its disk; ml's GPU
    quota is used up (a Job could not create its pod) and shop's CPU quota is 95% used."""
    return [
        {"apiVersion": "v1", "kind": "Node",
         "metadata": {"name": "gpu-node-2", "labels": {"kubernetes.io/hostname": "gpu-node-2"}},
         "status": {"conditions": [{"type": "Ready", "status": "True"},
                                   {"type": "DiskPressure", "status": "True", "reason": "KubeletHasDiskPressure"}],
                    "capacity": {"cpu": "32", "memory": "256Gi", "nvidia.com/gpu": "8"},
                    "allocatable": {"cpu": "32", "memory": "250Gi", "nvidia.com/gpu": "8"},
                    "addresses": [{"type": "InternalIP", "address": "10.0.0.2"},
                                  {"type": "Hostname", "address": "gpu-node-2"}]}},
        _pod("ml", "trainer-0"),
        _pod("shop", "web-0"),
        {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "shop"},
         "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "web"}}},
         "status": {"replicas": 1, "availableReplicas": 1}},
        _pod("ml", "loader-1", phase="Failed", reason="Evicted",
             message="The node was low on resource: ephemeral-storage. Threshold quantity: 10Gi, available: 2Gi."),
        {"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": "gpu-quota", "namespace": "ml"},
         "spec": {"hard": {"requests.nvidia.com/gpu": "8"}},
         "status": {"hard": {"requests.nvidia.com/gpu": "8"}, "used": {"requests.nvidia.com/gpu": "8"}}},
        {"apiVersion": "v1", "kind": "Event", "metadata": {"name": "train-llm.1", "namespace": "ml"},
         "involvedObject": {"kind": "Job", "namespace": "ml", "name": "train-llm"}, "reason": "FailedCreate",
         "type": "Warning", "count": 3, "firstTimestamp": ago(20), "lastTimestamp": ago(2),
         "message": 'Error creating: pods "train-llm-x7k2p" is forbidden: exceeded quota: gpu-quota, requested: '
                    "requests.nvidia.com/gpu=2, used: requests.nvidia.com/gpu=8, limited: requests.nvidia.com/gpu=8",
         "source": {"component": "job-controller"}},
        {"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": "cpu-quota", "namespace": "shop"},
         "spec": {"hard": {"requests.cpu": "10"}},
         "status": {"hard": {"requests.cpu": "10"}, "used": {"requests.cpu": "9500m"}}},
    ]


@dataclass
class Fired:
    runs: dict[str, dict[str, Any]]  # alert -> the report of its triage
    reports: dict[str, Message]  # alert -> the report as posted in its thread
    roots: dict[str, Message]


ALERTS: dict[str, dict[str, str]] = {
    "disk": {"alertname": "NodeFilesystemAlmostOutOfSpace", "instance": "10.0.0.2:9100",
             "pod": "node-exporter-a1b2c", **NODE_EXPORTER},
    "unmapped": {"alertname": "NodeFilesystemSpaceFillingUp", "instance": "10.0.0.9:9100",
                 "pod": "node-exporter-z9y8x", **NODE_EXPORTER},
    "full": {"alertname": "KubeQuotaFullyUsed", "namespace": "ml", "resource": "requests.nvidia.com/gpu",
             "resourcequota": "gpu-quota", "job": "kube-state-metrics", "severity": "info"},
    "almost": {"alertname": "KubeQuotaAlmostFull", "namespace": "shop", "resource": "requests.cpu",
               "resourcequota": "cpu-quota", "job": "kube-state-metrics", "severity": "info"},
    # As the kube-prometheus-stack chart delivers it (honorLabels): kube-state-metrics' own pod rides along.
    "hpa": {"alertname": "KubeHpaMaxedOut", "namespace": "shop", "horizontalpodautoscaler": "web",
            "pod": "kube-prometheus-stack-kube-state-metrics-6d5f8b7c9-q2w3e", "container": "kube-state-metrics",
            "service": "kube-prometheus-stack-kube-state-metrics", "endpoint": "http", "instance": "10.244.1.7:8080",
            "job": "kube-state-metrics", "severity": "warning"},
}


@pytest.fixture(scope="module")
def fired(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Fired]:
    tmp = tmp_path_factory.mktemp("alert-targets")
    with SlackStandIn(channels=("C0OPS",), burst=20) as slack, KubeStandIn(cluster()) as kube:
        settings = Settings(slack_bot_token=SecretStr(slack.token), slack_api_url=slack.api_url,
                            database_url=f"sqlite:///{tmp / 'bot.sqlite'}", webhook_token=SecretStr(TOKEN),
                            default_channel="C0OPS", permissions=Permissions(channels={"C0OPS": ["*"]}),
                            storm_groups=0)
        ctx = build_context(settings)
        api = kube.api_client()
        ctx.jobs.access = lambda: LiveAccess(kube=api, call_timeout=5.0, deadline=30.0)
        try:
            with serve_app(create_app(ctx)) as url, \
                    start_alertmanager(tmp, f"{url}/alertmanager", TOKEN,
                                       group_by=("alertname", "instance", "namespace")) as am:
                am.post_alerts([{"labels": labels, "annotations": {"summary": f"{key} summary"}}
                                for key, labels in ALERTS.items()])

                def triaged() -> bool:
                    with ctx.engine.connect() as conn:
                        runs = conn.scalar(select(func.count()).select_from(TriageRun)) or 0
                    return runs >= len(ALERTS) and all_sent(ctx.engine)

                wait_until(triaged, WAIT, "a triage of each alert, posted", interval=0.2)
                yield collect(slack, ctx)
        finally:
            ctx.close()


def _about(key: str, target: dict[str, Any]) -> bool:
    """Whether a triage's target is the one alert `key` names."""
    labels = ALERTS[key]
    if labels["alertname"] == "KubeHpaMaxedOut":
        return bool(target.get("service") == labels["horizontalpodautoscaler"])
    if "instance" in labels:
        return bool(target.get("instance") == labels["instance"])
    return bool(target.get("service") == f"namespace/{labels['namespace']}")


def collect(slack: SlackStandIn, ctx: BotContext) -> Fired:
    with ctx.engine.connect() as conn:
        reports = [r for (r,) in conn.execute(select(TriageRun.report)) if r]
    out = Fired(runs={}, reports={}, roots={})
    for key, labels in ALERTS.items():
        marker = (labels["instance"].split(":")[0] if labels.get("job") == "node-exporter"
                  else f"namespace {labels['namespace']}")
        out.roots[key] = next(m for m in slack.top_level("C0OPS")
                              if labels["alertname"] in m.text and marker in message_text(m))
        out.reports[key] = next(m for m in slack.thread("C0OPS", out.roots[key].ts)
                                if m.ts != out.roots[key].ts and m.blocks)
        found = [r for r in reports if _about(key, r["target"])]
        assert len(found) == 1, (key, [r["target"] for r in reports])
        out.runs[key] = found[0]
    return out


def leader(report: dict[str, Any]) -> tuple[str, str, str]:
    finding = report["findings"][0]
    lead = finding["hypotheses"][0]
    return finding["playbook"], lead["id"], lead["status"]


def test_a_node_named_by_its_scrape_address_is_triaged_as_that_node(fired: Fired) -> None:
    report = fired.runs["disk"]
    # The instance 10.0.0.2:9100 is gpu-node-2's InternalIP: the triage is about that node, in no namespace.
    assert report["target"]["node"] == "gpu-node-2" and report["target"].get("namespace") is None
    pods = next(a for a in report["artifacts"] if a["id"].startswith("k8s-pods-node-gpu-node-2"))
    assert pods["subject"] == "node/gpu-node-2"
    assert report["facts"]["pod.status.reason"] == "Evicted"  # ml's pod, on that node: found across namespaces
    assert not [m for m in report["missing"] if "default" in m["reason"] or "default" in m["source"]]
    assert leader(report)[:2] == ("evicted", "disk-pressure"), leader(report)
    shown = message_text(fired.reports["disk"])
    assert "node gpu-node-2" in shown and "namespace default" not in shown


def test_an_instance_that_matches_no_node_is_said_in_the_report_and_on_the_root(fired: Fired) -> None:
    report = fired.runs["unmapped"]
    said = [m for m in report["missing"] if "10.0.0.9" in m["reason"]]
    assert said and said[0]["source"] == "kubernetes:instance/10.0.0.9", report["missing"]
    assert said[0]["reason"].startswith("instance 10.0.0.9 is no node's address: none of the 1 nodes has it")
    assert "10.0.0.9" in message_text(fired.reports["unmapped"])
    root = message_text(fired.roots["unmapped"])
    # Issue 31, point 6: the root says why there is no verdict, as "not found" does, not "nothing recognised".
    assert "*No verdict:* instance 10.0.0.9 is no node's address" in root, root
    assert "Nothing in this evidence was recognised" not in root and "Not triaged" not in root


def test_an_hpa_alert_carrying_kube_state_metrics_own_pod_is_triaged_in_its_namespace(fired: Fired) -> None:
    report = fired.runs["hpa"]
    assert report["target"]["namespace"] == "shop" and report["target"]["service"] == "web", report["target"]
    assert "kube-state-metrics" not in str(report["target"])
    root = message_text(fired.roots["hpa"])
    assert "namespace shop" in root and "namespace default" not in root, root


def test_a_quota_alert_is_triaged_as_its_namespace_with_the_quota_used_against_hard(fired: Fired) -> None:
    report = fired.runs["full"]
    assert report["target"]["namespace"] == "ml" and report["target"]["service"] == "namespace/ml"
    assert leader(report) == ("pending", "quota-exceeded", "confirmed"), leader(report)
    assert report["facts"]["quota.usage"] == ["requests.nvidia.com/gpu: 8 of 8 (100%) in resourcequota/ml/gpu-quota"]
    shown = message_text(fired.reports["full"])
    assert "requests.nvidia.com/gpu: 8 of 8 (100%)" in shown and "namespace ml" in shown
    assert "Not triaged" not in message_text(fired.roots["full"])


def test_a_quota_almost_full_says_how_full(fired: Fired) -> None:
    report = fired.runs["almost"]
    assert leader(report) == ("pending", "quota-nearly-full", "likely"), leader(report)
    assert report["facts"]["quota.used_ratio"] == 0.95
    assert "requests.cpu: 9500m of 10 (95%)" in message_text(fired.reports["almost"])

