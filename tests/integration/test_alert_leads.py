"""A live triage an alert started is about the alert (issue #24, point 3): through the Kubernetes API stand-in, a
GPUXidError whose own labels carry err_code="79" leads with gpu-xid, and an OOM-killed pod of another workload on
the same node is shown as "also on this node", never as the verdict."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from bot.render.common import headline, others, verdict_line
from bot.runner.triage import run_triage
from bot.webhook.alert_flow import triggering_alerts
from bot.webhook.payload import AlertmanagerPayload
from collectors.alert_target import target_for
from collectors.live.collect import LiveAccess
from playbooks.pipeline import ALSO_ON_NODE
from tests.standins.kube_api import KubeStandIn

NOW = datetime.now(UTC).replace(microsecond=0)


def _ago(minutes: int) -> str:
    return (NOW - timedelta(minutes=minutes)).strftime("%Y-%m-%dT%H:%M:%SZ")


def cluster() -> list[dict[str, Any]]:
    """gpu-node-2 runs a trainer and, in another namespace, a web pod the kernel OOM-killed an hour ago."""
    node = {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": "gpu-node-2", "labels": {"kubernetes.io/hostname": "gpu-node-2"}},
            "status": {"conditions": [{"type": "Ready", "status": "True"}],
                       "capacity": {"cpu": "32", "memory": "256Gi", "nvidia.com/gpu": "8"},
                       "allocatable": {"cpu": "32", "memory": "250Gi", "nvidia.com/gpu": "8"},
                       "addresses": [{"type": "InternalIP", "address": "10.0.0.2"}]}}

    def pod(namespace: str, name: str, **container: Any) -> dict[str, Any]:
        return {"apiVersion": "v1", "kind": "Pod",
                "metadata": {"name": name, "namespace": namespace, "creationTimestamp": _ago(120)},
                "spec": {"nodeName": "gpu-node-2", "containers": [{"name": "main", "image": "r.example.com/x:1"}]},
                "status": {"phase": "Running", "containerStatuses": [
                    {"name": "main", "ready": True, "restartCount": 1, "image": "r.example.com/x:1",
                     "state": {"running": {"startedAt": _ago(50)}}, **container}]}}

    oom = {"lastState": {"terminated": {"reason": "OOMKilled", "exitCode": 137, "startedAt": _ago(100),
                                        "finishedAt": _ago(51)}}}
    return [node, pod("ml", "trainer-0"), pod("shop", "web-0", **oom)]


def payload(labels: dict[str, str]) -> AlertmanagerPayload:
    return AlertmanagerPayload.model_validate({
        "version": "4", "groupKey": "{}:{alertname=\"GPUXidError\"}", "status": "firing",
        "alerts": [{"status": "firing", "labels": labels,
                    "annotations": {"summary": "XID 79 on gpu-node-2 GPU 1"}}]})


XID_ALERT = {"alertname": "GPUXidError", "Hostname": "gpu-node-2", "err_code": "79", "gpu": "1",
             "severity": "critical"}


def test_the_alerts_own_symptom_leads_and_the_other_workload_is_context() -> None:
    found = target_for(XID_ALERT)
    assert found.scope == "node" and found.symptoms == ["gpu-xid"]
    with KubeStandIn(cluster()) as kube:
        access = LiveAccess(kube=kube.api_client(), call_timeout=5.0, deadline=30.0)
        triage = run_triage(found.target, timedelta(hours=2), access, now=NOW, symptoms=found.symptoms,
                            alert=triggering_alerts(payload(XID_ALERT)))
        # Without the alert, the same cluster reads as the web pod's OOM kill: what the tester saw.
        before = run_triage(found.target, timedelta(hours=2), access, now=NOW, symptoms=found.symptoms)
    report = triage.report
    assert report.facts["xid.codes"] == [79]  # from the alert's own err_code label
    assert "err_code=79" in report.facts["alert.labels"]
    lead = report.leading()
    assert lead is not None and lead[0].playbook == "gpu-xid", verdict_line(report)
    # Likely, not confirmed: the live node still reports all 8 GPUs allocatable.
    assert lead[1].id == "gpu-fallen-off-bus" and lead[1].status in ("confirmed", "likely")
    oom = next(f for f in report.findings if f.playbook == "oom-killed")
    assert oom.aside == ALSO_ON_NODE
    assert any(p == f"oom-killed ({ALSO_ON_NODE})" for p, _ in others(report, lead[1]))
    assert "oom-killed" not in verdict_line(report)
    assert "alert" in [a.id for a in triage.collected.result.artifacts]
    was = before.report.leading()
    assert was is not None and was[0].playbook == "oom-killed"


def test_no_verdict_rather_than_another_workloads_when_the_alert_says_nothing_readable() -> None:
    labels = {k: v for k, v in XID_ALERT.items() if k != "err_code"}  # an Xid alert without its code
    found = target_for(labels)
    with KubeStandIn(cluster()) as kube:
        access = LiveAccess(kube=kube.api_client(), call_timeout=5.0, deadline=30.0)
        report = run_triage(found.target, timedelta(hours=2), access, now=NOW, symptoms=found.symptoms,
                            alert=triggering_alerts(payload(labels))).report
    assert report.leading() is None
    assert "also on this node" in headline(report) and "gpu-xid" in headline(report)
    assert next(f for f in report.findings if f.playbook == "oom-killed").aside == ALSO_ON_NODE
