"""Alert labels map to a triage target and a playbook; alert labels are untrusted input."""

from __future__ import annotations

import pytest

from collectors.alert_target import target_for


@pytest.mark.parametrize(
    ("labels", "namespace", "service", "pod", "node", "symptoms"),
    [
        ({"alertname": "KubePodCrashLooping", "namespace": "shop", "pod": "checkout-7d9f-x2",
          "service": "kube-prometheus-stack-kube-state-metrics", "job": "kube-state-metrics"},
         "shop", "pod/checkout-7d9f-x2", "checkout-7d9f-x2", None, ["crash-loop"]),
        # Node-scoped alerts are about a node, which belongs to no namespace.
        ({"alertname": "GPUXidError", "Hostname": "gpu-node-2", "gpu": "1", "instance": "10.0.0.1:9400"},
         None, "node/gpu-node-2", None, "gpu-node-2", ["gpu-xid"]),
        ({"alertname": "KubeDeploymentReplicasMismatch", "namespace": "shop", "deployment": "checkout"},
         "shop", "deployment/checkout", None, None, ["pending"]),
        ({"alertname": "KubeJobFailed", "namespace": "ml", "job_name": "train-llm"},
         "ml", "job/train-llm", None, None, ["crash-loop"]),
        ({"alertname": "CPUThrottlingHigh", "namespace": "shop", "pod": "web-1", "container": "web"},
         "shop", "pod/web-1", "web-1", None, ["latency"]),
        ({"alertname": "Whatever", "namespace": "Bad NS", "pod": "../etc/passwd"},
         None, None, None, None, []),
        # node-exporter's own pod and namespace are the scrape's, not the alert's: the node is the target.
        ({"alertname": "NodeFilesystemAlmostOutOfSpace", "instance": "gpu-node-2", "job": "node-exporter",
          "namespace": "monitoring", "pod": "node-exporter-7xk2p", "mountpoint": "/var/lib/kubelet"},
         None, "node/gpu-node-2", None, "gpu-node-2", ["evicted"]),
        ({"alertname": "KubeHpaMaxedOut", "namespace": "shop", "horizontalpodautoscaler": "checkout",
          "job": "kube-state-metrics"},
         "shop", "checkout", None, None, ["latency"]),
        ({"alertname": "KubeNodePressure", "node": "gpu-node-3", "condition": "DiskPressure",
          "namespace": "monitoring", "pod": "kube-state-metrics-6d8f9c7b5-q2w3e", "job": "kube-state-metrics"},
         None, "node/gpu-node-3", None, "gpu-node-3", ["evicted"]),
        ({"alertname": "KubeNodeNotReady", "node": "gpu-node-4", "job": "kube-state-metrics", "condition": "Ready"},
         None, "node/gpu-node-4", None, "gpu-node-4", ["node-not-ready"]),
        # A workload's instance is the scrape (here kube-state-metrics), not its node.
        ({"alertname": "KubePodCrashLooping", "namespace": "ml", "pod": "trainer-0", "instance": "10.1.2.3:8080"},
         "ml", "pod/trainer-0", "trainer-0", None, ["crash-loop"]),
        # A workload alert that also names its node stays in its namespace.
        ({"alertname": "KubePodCrashLooping", "namespace": "ml", "pod": "trainer-0", "node": "gpu-node-2"},
         "ml", "pod/trainer-0", "trainer-0", "gpu-node-2", ["crash-loop"]),
    ],
)
def test_target_for(labels: dict[str, str], namespace: str | None, service: str | None, pod: str | None,
                    node: str | None, symptoms: list[str]) -> None:
    found = target_for(labels)
    assert (found.target.namespace, found.target.service, found.target.pod, found.target.node) == (
        namespace, service, pod, node)
    assert found.symptoms == symptoms


@pytest.mark.parametrize(
    ("labels", "node", "instance"),
    [
        # `node` first, then dcgm-exporter's `Hostname`, then the scrape's `instance`.
        ({"alertname": "NodeFilesystemSpaceFillingUp", "node": "gpu-node-1", "Hostname": "h", "instance": "i:9100"},
         "gpu-node-1", None),
        ({"alertname": "DCGMXidErrors", "Hostname": "gpu-node-2", "instance": "10.0.0.2:9400"}, "gpu-node-2", None),
        # An instance is a scrape address: its host (port stripped) is looked up among the nodes' names and
        # addresses when the triage runs (collectors/live/k8s_resolve.py), so an IP is kept too.
        ({"alertname": "NodeFilesystemAlmostOutOfSpace", "instance": "10.0.0.2:9100", "job": "node-exporter"},
         "10.0.0.2", "10.0.0.2:9100"),
        ({"alertname": "NodeFilesystemAlmostOutOfSpace", "instance": "ip-10-0-0-2.ec2.internal:9100"},
         "ip-10-0-0-2.ec2.internal", "ip-10-0-0-2.ec2.internal:9100"),
        ({"alertname": "NodeFilesystemAlmostOutOfSpace", "instance": "[fd00::2]:9100"}, None, None),
        ({"alertname": "NodeFilesystemAlmostOutOfSpace", "instance": "localhost:9100"}, None, None),
    ],
)
def test_a_node_is_taken_from_node_then_hostname_then_instance(labels: dict[str, str], node: str | None,
                                                                instance: str | None) -> None:
    found = target_for(labels)
    assert (found.target.node, found.target.instance, found.target.namespace) == (node, instance, None)
    assert found.target.service == (f"node/{node}" if node else None)
    assert found.scope == ("node" if node else None)


@pytest.mark.parametrize("alertname", ["KubeQuotaAlmostFull", "KubeQuotaFullyUsed", "KubeQuotaExceeded"])
def test_quota_alerts_target_their_namespace(alertname: str) -> None:
    """kube-prometheus' quota alerts carry only the namespace, the resource and the ResourceQuota's name."""
    found = target_for({"alertname": alertname, "namespace": "ml", "resource": "requests.nvidia.com/gpu",
                        "resourcequota": "gpu-quota", "job": "kube-state-metrics", "severity": "warning"})
    assert found.scope == "namespace" and found.symptoms == ["pending"]
    assert (found.target.namespace, found.target.service, found.target.pod, found.target.node) == (
        "ml", "namespace/ml", None, None)


def test_a_namespace_alert_that_names_a_workload_targets_the_workload() -> None:
    found = target_for({"alertname": "KubeQuotaExceeded", "namespace": "ml", "deployment": "trainer"})
    assert (found.scope, found.target.service) == ("workload", "deployment/trainer")


def test_only_namespace_scoped_alerts_target_a_bare_namespace() -> None:
    found = target_for({"alertname": "KubePersistentVolumeFillingUp", "namespace": "ml",
                        "persistentvolumeclaim": "data"})
    assert (found.scope, found.target.service) == (None, None)
