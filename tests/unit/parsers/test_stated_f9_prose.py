"""Fix round f9 (issue 24): symptoms said in prose (collectors/catalogs/stated.yaml, the "fix round f9" section): a
workload said to stay Pending, a request said too large for any node, the resource said to have caused evictions,
a node said to have run out of memory. Real sentences verbatim with their threads; the sentences near them that
must not be read (composed ones say so)."""

from __future__ import annotations

import pytest

from collectors.models import Artifact, ArtifactKind
from collectors.parsers.text.stated import read_stated


def _said(text: str) -> dict[str, object]:
    out: dict[str, object] = {}
    for f in read_stated(Artifact(id="p", kind=ArtifactKind.TEXT, content=text)).facts:
        out[f.name] = f.value
    return out


@pytest.mark.parametrize("text", [
    # https://github.com/vanvalenlab/kiosk-console/issues/238 (description)
    "The `kiosk-autoscaler` successfully scales up the `tf-serving` instance to 1, but `tf-serving` stays Pending "
    "because a GPU node never gets scaled up.",
    # https://github.com/selkies-project/docker-selkies-egl-desktop/issues/35 (description)
    "Whenever I try to set the node affinity, the container gets stuck at the Pending status.",
    # https://github.com/kubernetes/kubernetes/issues/86332 (description)
    "but pod is always in pending ;",
])
def test_a_workload_said_to_stay_pending_is_the_pod_phase(text: str) -> None:
    got = _said(text)
    assert got.get("pod.phase") == "Pending", got
    assert "pending" in got.get("evidence.symptoms", []), got  # type: ignore[operator]


@pytest.mark.parametrize("text", [
    "The LoadBalancer service's external IP stays pending.",  # composed: a Service's EXTERNAL-IP, no pod
    "The pull request is still pending review.",  # composed: no workload
    "The pod did not stay pending for long; it was scheduled in seconds.",  # composed: denied
    "Does the pod stay Pending when the node affinity is set?",  # composed: asked
    # https://github.com/giantswarm/aws-operator/pull/520 (description): what would happen without the change
    "Without this change the ic pods in a guest created from local lab stay in `Pending` because any node fulfills "
    "the cpu requirements.",
])
def test_pending_of_no_workload_or_denied_or_asked_is_not_read(text: str) -> None:
    assert "pod.phase" not in _said(text)


def test_a_cpu_request_said_too_high_for_every_node_is_insufficient_cpu() -> None:
    # https://github.com/selkies-project/docker-selkies-egl-desktop/issues/35 (description, the EDIT line)
    got = _said("EDIT: Fixed! My CPU requirements were too high which made it so that no node satisfied my "
                "requirements. Thank you!")
    assert got.get("scheduling.reasons") == ["insufficient-cpu"], got


@pytest.mark.parametrize("text", [
    "The CPU request is too high for this service, so it gets throttled.",  # composed: no placement in the sentence
    "The CPU request was not too high; the node had room.",  # composed: denied
    "The memory limit is higher than the request on every node.",  # composed: a limit, not a request said too big
])
def test_a_request_said_big_outside_placement_or_denied_is_not_read(text: str) -> None:
    assert "scheduling.reasons" not in _said(text)


def test_the_storage_space_said_to_cause_the_evictions_is_disk() -> None:
    # https://github.com/longhorn/longhorn/issues/6023 (idkSteve's comment of 2023-06-08)
    got = _said("I have found that it was the storage space and eviction thresholds causing the pods to be Evicted.")
    assert got.get("eviction.resource") == "disk", got


@pytest.mark.parametrize("text", [
    # https://github.com/kubernetes/kubernetes/issues/91600 (description): plenty of disk, no cause
    "I checked the disk space of worker nodes. There is still plenty of disk space. But the kubelet logs showed the "
    "kubelet is still trying to evict pods.",
    # https://github.com/kubernetes/kubernetes/issues/25239 (description): how the kubelet frees disk, in general
    "Kubelet can perform several actions to free up disk space - delete old containers, delete unused images, evict "
    "pods that use a lot of disk.",
    "The pods were not evicted because of low disk space.",  # composed: denied
    "The pods weren't evicted due to low disk space, they were preempted.",  # composed: denied
])
def test_disk_beside_evictions_without_a_cause_is_not_read(text: str) -> None:
    assert "eviction.resource" not in _said(text)


def test_memory_said_to_cause_the_evictions_is_memory() -> None:
    # composed in the kubelet's terms (evictionMessage "The node was low on resource: memory"), as people write it
    got = _said("Several pods were evicted due to low memory on the node.")
    assert got.get("eviction.resource") == "memory", got


@pytest.mark.parametrize("text", [
    # https://github.com/ZettaAI/zetta_utils/issues/524 (description)
    "At 10:01:27 PM CEST `gke-zutils-x3-gpu-n1-highmem-8-t4-non-a60edc7f-7lpz` ran out of memory.",
    "The worker node ran out of memory during the night.",  # composed
])
def test_a_node_said_to_run_out_of_memory_is_memory_pressure(text: str) -> None:
    got = _said(text)
    assert got.get("node.conditions") == ["MemoryPressure"], got


@pytest.mark.parametrize("text", [
    "The node process ran out of memory while bundling.",  # composed: a Node.js process, no node
    "The container ran out of memory and was OOMKilled.",  # composed: a container
    "The node never ran out of memory.",  # composed: denied
])
def test_a_process_or_container_out_of_memory_is_no_node_pressure(text: str) -> None:
    assert "MemoryPressure" not in (_said(text).get("node.conditions") or [])  # type: ignore[operator]
