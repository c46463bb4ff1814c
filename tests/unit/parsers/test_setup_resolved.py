"""A pod's failure before its first container (FailedMount, a missing Secret, a sandbox error) followed by the
kubelet's Started event for the same pod: the kubelet starts no container before every volume is mounted and the
sandbox is up (kubernetes/kubernetes pkg/kubelet/kubelet.go SyncPod, WaitForAttachAndMount), so the wait was over
(pod.setup_resolved, collectors/parsers/kubernetes/k8s_event_facts.py)."""

from __future__ import annotations

from collectors.models import Artifact, ArtifactKind
from collectors.parsers.kubernetes import events

_HEADER = ("Events:\n"
           "  Type     Reason       Age                From               Message\n"
           "  ----     ------       ----               ----               -------\n")


def _facts(rows: str) -> dict[str, object]:
    result = events.parse(Artifact(id="e", kind=ArtifactKind.EVENTS, content=_HEADER + rows))
    return {f.name: f.value for f in result.facts}


# kubernetes-sigs/kubebuilder#1023 (https://github.com/kubernetes-sigs/kubebuilder/issues/1023): the rows to the
# Pulled one verbatim ("seems the pod can function correctly after a while"); the Created and Started rows after it
# are composed in the same layout, as the thread's excerpt ends there.
_KUBEBUILDER = (
    "  Normal   Scheduled    12s                default-scheduler  Successfully assigned flink-operator-system/"
    "flink-operator-controller-manager-5449b569fc-xk5f6 to minikube\n"
    "  Warning  FailedMount  11s (x2 over 11s)  kubelet, minikube  MountVolume.SetUp failed for volume \"cert\" : "
    "secret \"webhook-server-cert\" not found\n"
    "  Normal   Pulled       7s                 kubelet, minikube  Container image "
    "\"gcr.io/kubebuilder/kube-rbac-proxy:v0.4.0\" already present on machine\n")


def test_a_container_started_after_the_mount_failure_resolves_it() -> None:
    rows = _KUBEBUILDER + (
        "  Normal   Created      7s                 kubelet, minikube  Created container kube-rbac-proxy\n"
        "  Normal   Started      6s                 kubelet, minikube  Started container kube-rbac-proxy\n")
    facts = _facts(rows)
    assert facts["pod.missing_refs"] == ["secret/webhook-server-cert"]
    assert facts["pod.setup_resolved"] is True


def test_no_started_event_leaves_the_mount_failure_standing() -> None:
    # DEVmachine-fr/cert-manager-alidns-webhook#32 (https://github.com/DEVmachine-fr/cert-manager-alidns-webhook/
    # issues/32): the pod never got further.
    rows = ("  Normal   Scheduled    44s                default-scheduler  Successfully assigned cert-manager/"
            "alidns-webhook-79f76779c7-8chd8 to k3s-02\n"
            "  Warning  FailedMount  11s (x7 over 43s)  kubelet            MountVolume.SetUp failed for volume "
            "\"certs\" : secret \"alidns-webhook-webhook-tls\" not found\n")
    facts = _facts(rows)
    assert facts["volume.mount_failed"] is True
    assert "pod.setup_resolved" not in facts
    assert "pod.setup_resolved" not in _facts(_KUBEBUILDER)  # pulled, not started


def test_a_failure_after_the_start_holds_again() -> None:
    # Composed: an init container started, then the mount failed again later by age (a restart's remount).
    rows = ("  Normal   Started      5m                 kubelet            Started container init\n"
            "  Warning  FailedMount  30s (x4 over 4m)   kubelet            MountVolume.SetUp failed for volume "
            "\"data\" : secret \"db-creds\" not found\n")
    assert "pod.setup_resolved" not in _facts(rows)
