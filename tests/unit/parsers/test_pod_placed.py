"""A Pending pod a node has taken (pods.placed) waits on the kubelet, not the scheduler: the pending playbook runs
for a Pending pod with no node, and not for one bound to a node (an init container crash-looping, a sandbox being
made). Real pastes, cut at whole lines, each with its thread."""

# ruff: noqa: E501  (verbatim pastes keep their long lines)
from __future__ import annotations

import pytest

from collectors.paste import artifacts_from_text
from playbooks.pipeline import triggered_by
from tests.unit.parsers.paste_facts import split_joined_facts

# https://github.com/canonical/microk8s/issues/2763 (turn 3): the GPU operator's driver pod, Status Pending on a
# bound node while its init container restarts.
MICROK8S_2763 = """\
Name:                 nvidia-driver-daemonset-8r8s6
Namespace:            default
Priority:             2000001000
Priority Class Name:  system-node-critical
Node:                 odroid-h2-plus/192.168.0.135
Start Time:           Thu, 23 Dec 2021 03:01:39 +0900
Labels:               app=nvidia-driver-daemonset
                      controller-revision-hash=68c4f8454d
                      pod-template-generation=1
Annotations:          cni.projectcalico.org/podIP: 10.1.218.169/32
                      cni.projectcalico.org/podIPs: 10.1.218.169/32
Status:               Pending
IP:                   10.1.218.169
IPs:
  IP:           10.1.218.169
Controlled By:  DaemonSet/nvidia-driver-daemonset
Init Containers:
  k8s-driver-manager:
    Container ID:  containerd://d4c0623cb9f214b5be6f87e88c013a644bb77fdb489d47fafa8c4e7a0d321be4
    Image:         nvcr.io/nvidia/cloud-native/k8s-driver-manager:v0.2.0
    Image ID:      nvcr.io/nvidia/cloud-native/k8s-driver-manager@sha256:54233ebccbc3d2b388b237031907d58c3719d0e6f3ecb874349c91e8145225d2
    Port:          <none>
    Host Port:     <none>
    Command:
      driver-manager
    Args:
      uninstall_driver
    State:          Running
      Started:      Thu, 23 Dec 2021 03:14:48 +0900
    Last State:     Terminated
      Reason:       Error
      Exit Code:    1
"""

# https://github.com/kubernetes/kubernetes/issues/123213 (description): Node <none>, PodScheduled False.
K8S_123213 = """\
Name:             airflow-statsd-86797c48b9-zdbxp
Namespace:        services
Priority:         0
Service Account:  default
Node:             <none>
Labels:           app-name=airflow-statsd
                  pod-template-hash=86797c48b9
Annotations:      <none>
Status:           Pending
IP:
IPs:              <none>
Controlled By:    ReplicaSet/airflow-statsd-86797c48b9
"""

# https://github.com/k3s-io/k3s/issues/234 (description): pods in ContainerCreating, the default columns.
K3S_234 = """\
NAME                                   READY   STATUS              RESTARTS   AGE
coredns-7748f7f6df-p5sfh               0/1     ContainerCreating   0          4m42s
helm-install-traefik-zts9f             0/1     ContainerCreating   0          4m42s
kubernetes-dashboard-57df4db6b-t6tls   0/1     ContainerCreating   0          4m42s
"""

# https://github.com/MicrosoftDocs/azure-docs/issues/31519 (description): Pending rows, no node column.
AZURE_31519 = """\
NAME                                     READY   STATUS    RESTARTS   AGE
voting-analytics-1-0-57c7fccb44-6t4cr   0/2     Pending   0          29m
voting-storage-1-0-5d8fcc89c4-27zvg     2/2     Running   0          29m
"""



def _runs_pending(text: str) -> bool:
    return "pending" in [p.spec.id for p in triggered_by(artifacts_from_text(text, "paste"))]


# (paste, the facts it gives, None: not given; whether the pending playbook runs)
CASES = [
    pytest.param(MICROK8S_2763, {"pod.phase": "Pending", "pods.placed": ["nvidia-driver-daemonset-8r8s6"]}, False,
                 id="a-pending-pod-bound-to-a-node-is-placed-and-runs-no-pending"),
    pytest.param(K8S_123213, {"pods.pending": ["airflow-statsd-86797c48b9-zdbxp"], "pods.placed": None}, True,
                 id="a-pending-pod-with-no-node-is-not-placed-and-runs-pending"),
    pytest.param(K3S_234, {"pods.placed": ["coredns-7748f7f6df-p5sfh", "helm-install-traefik-zts9f",
                                           "kubernetes-dashboard-57df4db6b-t6tls"]}, False,
                 id="a-containercreating-row-is-placed-by-the-status-only-a-kubelet-sets"),
    pytest.param(AZURE_31519, {"pods.pending": ["voting-analytics-1-0-57c7fccb44-6t4cr"], "pods.placed": None}, True,
                 id="a-pending-row-without-a-node-runs-pending"),
]


@pytest.mark.parametrize(("text", "expected", "runs_pending"), CASES)
def test_a_pod_a_node_took_is_placed_and_runs_no_pending(text: str, expected: dict[str, object],
                                                         runs_pending: bool) -> None:
    facts = split_joined_facts(text)
    assert {name: facts.get(name) for name in expected} == expected
    assert _runs_pending(text) is runs_pending
