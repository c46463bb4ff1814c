"""A node whose kubelet is not heard from, by other names (signals.yaml, the "kubelet is not heard from" block;
describe_node.py for the unreachable taint): the kubelet failing to register its node, microk8s inspect finding the
kubelet not running, and the node lifecycle controller's unreachable taint. Real pastes carry their URL.
"""

from __future__ import annotations

import pytest

from tests.unit.parsers.paste_facts import first_facts, joined_facts

REAL = [
    # https://github.com/kubernetes/kubeadm/issues/1026 (comment by PierrickI3; kubelet 1.11, glog wording)
    'Jul 27 17:22:17 kubernetes kubelet[10401]: E0727 17:22:17.032125   10401 kubelet_node_status.go:103] Unable to '
    'register node "kubernetes" with API server: Post https://192.168.1.19:6443/api/v1/nodes: dial tcp '
    '192.168.1.19:6443: connect: connection refused',
    # https://github.com/syself/cluster-api-provider-hetzner/issues/1731 (description; klog structured wording)
    '   Nov 26 11:36:04 test-control-plane-jd6rq kubelet[3542]: E1126 11:36:04.313942    3542 '
    'kubelet_node_status.go:107] "Unable to register node with API server" err="Post '
    '\\"https://123.123.123.123:6443/api/v1/nodes\\": dial tcp 123.123.123.123:6443: connect: connection refused" '
    'node="test-control-plane-jd6rq"',
    # https://github.com/canonical/microk8s/issues/531 (comment by elf128; microk8s before 1.19)
    " FAIL:  Service snap.microk8s.daemon-kubelet is not running\n"
    "For more details look at: sudo journalctl -u snap.microk8s.daemon-kubelet",
]


@pytest.mark.parametrize("text", REAL)
def test_a_kubelet_that_cannot_post_its_node_says_why_the_node_is_not_ready(text: str) -> None:
    facts = joined_facts(text)
    assert "kubelet-stopped-posting" in facts.get("node.not_ready_reasons", []), facts  # type: ignore[operator]
    assert "node-not-ready" in facts.get("evidence.symptoms", []), facts  # type: ignore[operator]


@pytest.mark.parametrize("text", [
    # https://github.com/canonical/microk8s/issues/3564 (comment by joshbranham): the kubelet runs, others fail.
    "  Service snap.microk8s.daemon-containerd is running\n"
    " FAIL:  Service snap.microk8s.daemon-k8s-dqlite is not running\n"
    "For more details look at: sudo journalctl -u snap.microk8s.daemon-k8s-dqlite\n"
    "  Service snap.microk8s.daemon-kubelite is running",
    # https://github.com/kubernetes/kubeadm/issues/1082 (comment by maheshmahadevan): start-up, before any failure.
    "Aug 30 11:17:55 localhost.localdomain kubelet[2417]: I0830 11:17:55.780478    2417 kubelet_node_status.go:79] "
    "Attempting to register node localhost.localdomain",
    # A pod's tolerations name the same key on every pod (synthetic, as kubectl describe pod prints them).
    "Tolerations:     node.kubernetes.io/unreachable:NoExecute op=Exists for 300s",
    # A question.
    "is the kubelet not running on that node?",
])
def test_no_kubelet_failure_is_read_where_none_is_shown(text: str) -> None:
    facts = joined_facts(text)
    assert "node.not_ready_reasons" not in facts, facts
    assert "node-not-ready" not in facts.get("evidence.symptoms", []), facts  # type: ignore[operator]


DESCRIBE_UNREACHABLE = """\
Name:               gpu-node-7
Roles:              <none>
Taints:             node.kubernetes.io/unreachable:NoExecute
                    node.kubernetes.io/unreachable:NoSchedule
Unschedulable:      false
"""

DESCRIBE_NOT_READY = DESCRIBE_UNREACHABLE.replace("unreachable", "not-ready")


def test_the_unreachable_taint_in_a_node_description_says_the_kubelet_stopped_posting() -> None:
    # Synthetic layout of `kubectl describe node` (k8s.io/kubectl pkg/describe, 1.12-1.31) with sample values.
    facts = first_facts(DESCRIBE_UNREACHABLE)
    assert facts.get("node.not_ready_reasons") == ["kubelet-stopped-posting"], facts


def test_the_not_ready_taint_is_a_kubelet_that_reports_and_gives_no_reason() -> None:
    facts = first_facts(DESCRIBE_NOT_READY)
    assert "node.not_ready_reasons" not in facts, facts
