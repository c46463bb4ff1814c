"""Every kube-prometheus alert that maps to a playbook is triaged on its own subject, whichever way the exporter was
scraped (issue 31, point 6): its labels are built here as Prometheus delivers them, from the labels the rule's
expression keeps (kube-prometheus 4d719f1, collectors/catalogs/alert_labels.yaml `subjects`) and the labels the
scrape adds, under the three ServiceMonitor setups people run:

- kube-prometheus: kube-state-metrics' pod, service, endpoint and namespace dropped (labeldrop);
- the kube-prometheus-stack chart: honorLabels, so the series' own labels win and the exporter's pod stays;
- a plain scrape without honor_labels: the series' own clashing labels renamed exported_*.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from collectors.alert_target import target_for
from collectors.catalogs.alert_labels import catalog, subject_labels
from collectors.catalogs.alert_map import load_rules

ROOT = Path(__file__).resolve().parents[3]
UPSTREAM = yaml.safe_load((ROOT / "collectors" / "catalogs" / "upstream_alerts.yaml").read_text(encoding="utf-8"))

KSM = {"job": "kube-state-metrics", "instance": "10.244.1.7:8080", "namespace": "monitoring",
       "pod": "kube-prometheus-stack-kube-state-metrics-6d5f8b7c9-q2w3e",
       "service": "kube-prometheus-stack-kube-state-metrics", "endpoint": "http", "container": "kube-state-metrics"}
NODE_EXPORTER = {"job": "node-exporter", "namespace": "monitoring",
                 "pod": "kube-prometheus-stack-prometheus-node-exporter-7xk2p",
                 "service": "kube-prometheus-stack-prometheus-node-exporter", "endpoint": "http-metrics",
                 "container": "node-exporter"}
KUBELET = {"job": "kubelet", "instance": "10.0.0.2:10250", "namespace": "kube-system",
           "service": "kube-prometheus-stack-kubelet", "endpoint": "https-metrics", "metrics_path": "/metrics"}
POD = "checkout-6f7c9-x2x4p"

# alert -> (the labels its rule's series keep, with sample values; the scrape; the target expected: namespace,
# service, node). The series labels follow each expression (see alert_labels.yaml's sources).
CASES: dict[str, tuple[dict[str, str], dict[str, str], tuple[str | None, str | None, str | None]]] = {
    "KubeHpaMaxedOut": ({"namespace": "shop", "horizontalpodautoscaler": "checkout"}, KSM,
                        ("shop", "checkout", None)),
    "KubeQuotaAlmostFull": ({"namespace": "ml", "resource": "requests.nvidia.com/gpu", "resourcequota": "gpu"}, KSM,
                            ("ml", "namespace/ml", None)),
    "KubeQuotaFullyUsed": ({"namespace": "ml", "resource": "requests.nvidia.com/gpu", "resourcequota": "gpu"}, KSM,
                           ("ml", "namespace/ml", None)),
    "KubeQuotaExceeded": ({"namespace": "ml", "resource": "requests.cpu", "resourcequota": "cpu"}, KSM,
                          ("ml", "namespace/ml", None)),
    "KubePodCrashLooping": ({"namespace": "shop", "pod": POD, "container": "app", "reason": "CrashLoopBackOff",
                             "uid": "5b1c"}, KSM, ("shop", f"pod/{POD}", None)),
    "KubeContainerWaiting": ({"namespace": "shop", "pod": POD, "container": "app", "reason": "ImagePullBackOff",
                              "uid": "5b1c"}, KSM, ("shop", f"pod/{POD}", None)),
    "KubePodNotReady": ({"namespace": "shop", "pod": POD, "job": "kube-state-metrics"}, KSM,
                        ("shop", f"pod/{POD}", None)),
    "KubeDeploymentReplicasMismatch": ({"namespace": "shop", "deployment": "checkout"}, KSM,
                                       ("shop", "deployment/checkout", None)),
    "KubeStatefulSetReplicasMismatch": ({"namespace": "db", "statefulset": "pg"}, KSM, ("db", "statefulset/pg", None)),
    "KubeJobFailed": ({"namespace": "ml", "job_name": "train-llm"}, KSM, ("ml", "job/train-llm", None)),
    "KubeNodeNotReady": ({"node": "gpu-node-2", "condition": "Ready", "status": "true"}, KSM,
                         (None, "node/gpu-node-2", "gpu-node-2")),
    "KubeNodePressure": ({"node": "gpu-node-2", "condition": "DiskPressure", "status": "true"}, KSM,
                         (None, "node/gpu-node-2", "gpu-node-2")),
    "KubeNodeReadinessFlapping": ({"node": "gpu-node-2"}, KSM, (None, "node/gpu-node-2", "gpu-node-2")),
    "KubeNodeUnreachable": ({"node": "gpu-node-2", "key": "node.kubernetes.io/unreachable", "effect": "NoSchedule"},
                            KSM, (None, "node/gpu-node-2", "gpu-node-2")),
    "KubeletDown": ({}, KSM, (None, None, None)),  # count by (cluster): nothing to triage
    "KubeCPUOvercommit": ({}, KSM, (None, None, None)),
    "KubeMemoryOvercommit": ({}, KSM, (None, None, None)),
    "CPUThrottlingHigh": ({"namespace": "shop", "pod": POD, "container": "app"}, KUBELET, ("shop", f"pod/{POD}", None)),
    "KubeletTooManyPods": ({"instance": "10.0.0.2:10250", "node": "gpu-node-2"}, {},
                           (None, "node/gpu-node-2", "gpu-node-2")),
    "KubeletPlegDurationHigh": ({"instance": "10.0.0.2:10250", "node": "gpu-node-2", "quantile": "0.99"}, {},
                                (None, "node/gpu-node-2", "gpu-node-2")),
    "KubeNodeEviction": ({"instance": "10.0.0.2:10250", "node": "gpu-node-2", "eviction_signal": "nodefs.available"},
                         {}, (None, "node/gpu-node-2", "gpu-node-2")),
    "KubeletInstanceUnreachable": ({"node": "gpu-node-2"}, KUBELET, (None, "node/gpu-node-2", "gpu-node-2")),
    "TargetDown": ({"namespace": "shop", "service": "checkout", "job": "checkout"}, {}, ("shop", "checkout", None)),
}
for _name in ("NodeFilesystemSpaceFillingUp", "NodeFilesystemAlmostOutOfSpace", "NodeFilesystemFilesFillingUp",
              "NodeFilesystemAlmostOutOfFiles"):
    # The chart's node-exporter runs on the host network: its scrape address is the node's InternalIP.
    CASES[_name] = ({"device": "/dev/nvme0n1p1", "mountpoint": "/var/lib/kubelet", "fstype": "ext4"},
                    {**NODE_EXPORTER, "instance": "10.0.0.2:9100"}, (None, "node/10.0.0.2", "10.0.0.2"))
CASES["NodeHighNumberConntrackEntriesUsed"] = ({}, {**NODE_EXPORTER, "instance": "10.0.0.2:9100"},
                                               (None, "node/10.0.0.2", "10.0.0.2"))


def delivered(series: dict[str, str], scrape: dict[str, str], setup: str) -> dict[str, str]:
    """The alert's labels as Prometheus hands them to Alertmanager under `setup`."""
    if setup == "kube-prometheus" and scrape is KSM:
        scrape = {k: v for k, v in scrape.items() if k not in ("pod", "service", "endpoint", "namespace")}
    if setup == "no-honor-labels":
        renamed = {(f"exported_{k}" if k in scrape else k): v for k, v in series.items()}
        return {**renamed, **scrape}
    return {**scrape, **series}


def _mapped_upstream() -> set[str]:
    names = {n for s in UPSTREAM["sources"] if s["id"] == "kube-prometheus" for ns in s["files"].values() for n in ns}
    return {n for n in names if (r := next((r for r in load_rules() if r.matches(n, {})), None)) and r.symptom}


def test_every_mapped_kube_prometheus_alert_has_its_subject_labels_and_a_case_here() -> None:
    listed = {name for entry in catalog().subjects for name in entry.alerts}
    mapped = _mapped_upstream()
    assert mapped - listed == set(), "mapped alerts whose rule's labels alert_labels.yaml does not say"
    assert mapped - set(CASES) == set()
    assert all(entry.source.startswith(("kubernetes-mixin", "node-exporter", "kube-prometheus"))
               for entry in catalog().subjects)


@pytest.mark.parametrize("setup", ["kube-prometheus", "kube-prometheus-stack", "no-honor-labels"])
@pytest.mark.parametrize("alertname", sorted(CASES))
def test_each_mapped_alert_is_triaged_on_its_subject_however_it_was_scraped(alertname: str, setup: str) -> None:
    series, scrape, (namespace, service, node) = CASES[alertname]
    labels: dict[str, Any] = {"alertname": alertname, "severity": "warning",
                              **delivered(series, scrape, setup)}
    target = target_for(labels).target
    assert (target.namespace, target.service, target.node) == (namespace, service, node), labels
    assert "kube-state-metrics" not in str(target.model_dump()) and "node-exporter" not in str(target.model_dump())


def test_the_hpa_alert_of_the_issue_is_triaged_in_its_namespace() -> None:
    """KubeHpaMaxedOut with kube-state-metrics' own pod label (the chart's honorLabels): namespace shop, not default,
    and no pod fact naming the exporter."""
    labels = {"alertname": "KubeHpaMaxedOut", **KSM, "namespace": "shop", "horizontalpodautoscaler": "checkout"}
    target = target_for(labels).target
    assert (target.namespace, target.service, target.pod) == ("shop", "checkout", None)
    assert "pod" not in subject_labels(labels) and subject_labels(labels)["namespace"] == "shop"


def test_an_alert_the_catalog_does_not_know_keeps_every_label() -> None:
    labels = {"alertname": "MyAppDown", "namespace": "shop", "pod": POD, "instance": "10.1.2.3:8080"}
    assert subject_labels(labels) == labels
