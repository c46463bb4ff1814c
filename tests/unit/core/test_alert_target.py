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
        ({"alertname": "GPUXidError", "Hostname": "gpu-node-2", "gpu": "1", "instance": "10.0.0.1:9400"},
         "default", "node/gpu-node-2", None, "gpu-node-2", ["gpu-xid"]),
        ({"alertname": "KubeDeploymentReplicasMismatch", "namespace": "shop", "deployment": "checkout"},
         "shop", "deployment/checkout", None, None, ["pending"]),
        ({"alertname": "KubeJobFailed", "namespace": "ml", "job_name": "train-llm"},
         "ml", "job/train-llm", None, None, ["crash-loop"]),
        ({"alertname": "CPUThrottlingHigh", "namespace": "shop", "pod": "web-1", "container": "web"},
         "shop", "pod/web-1", "web-1", None, ["latency"]),
        ({"alertname": "Whatever", "namespace": "Bad NS", "pod": "../etc/passwd"},
         "default", None, None, None, []),
        # node-exporter's own pod and namespace are the scrape's, not the alert's: the node is the target.
        ({"alertname": "NodeFilesystemAlmostOutOfSpace", "instance": "gpu-node-2", "job": "node-exporter",
          "namespace": "monitoring", "pod": "node-exporter-7xk2p", "mountpoint": "/var/lib/kubelet"},
         "default", "node/gpu-node-2", None, "gpu-node-2", ["evicted"]),
        ({"alertname": "KubeHpaMaxedOut", "namespace": "shop", "horizontalpodautoscaler": "checkout",
          "job": "kube-state-metrics"},
         "shop", "checkout", None, None, ["latency"]),
        ({"alertname": "KubeNodePressure", "node": "gpu-node-3", "condition": "DiskPressure",
          "namespace": "monitoring", "pod": "kube-state-metrics-6d8f9c7b5-q2w3e", "job": "kube-state-metrics"},
         "default", "node/gpu-node-3", None, "gpu-node-3", ["evicted"]),
    ],
)
def test_target_for(labels: dict[str, str], namespace: str, service: str | None, pod: str | None,
                    node: str | None, symptoms: list[str]) -> None:
    found = target_for(labels)
    assert (found.target.namespace, found.target.service, found.target.pod, found.target.node) == (
        namespace, service, pod, node)
    assert found.symptoms == symptoms
