"""Fix round f9 (issue 24): symptoms said in prose (collectors/catalogs/stated.yaml, the "fix round f9" section): a
workload said to stay Pending, a request said too large for any node, the resource said to have caused evictions,
a node said to have run out of memory. Real sentences verbatim with their threads; the sentences near them that
must not be read (composed ones say so)."""

from __future__ import annotations

import pytest

from tests.unit.parsers.paste_facts import said_facts


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
    got = said_facts(text)
    assert got.get("pod.phase") == "Pending", got
    assert "pending" in got.get("evidence.symptoms", []), got  # type: ignore[operator]


# Each sentence and the one fact it says, with its value.
@pytest.mark.parametrize(("fact", "value", "text"), [
    # https://github.com/selkies-project/docker-selkies-egl-desktop/issues/35 (description, the EDIT line)
    ("scheduling.reasons", ["insufficient-cpu"],
     "EDIT: Fixed! My CPU requirements were too high which made it so that no node satisfied my requirements. Thank "
     "you!"),
    # https://github.com/longhorn/longhorn/issues/6023 (idkSteve's comment of 2023-06-08)
    ("eviction.resource", "disk",
     "I have found that it was the storage space and eviction thresholds causing the pods to be Evicted."),
    # composed in the kubelet's terms (evictionMessage "The node was low on resource: memory"), as people write it
    ("eviction.resource", "memory", "Several pods were evicted due to low memory on the node."),
    # https://github.com/ZettaAI/zetta_utils/issues/524 (description): a node said to run out of memory
    ("node.conditions", ["MemoryPressure"],
     "At 10:01:27 PM CEST `gke-zutils-x3-gpu-n1-highmem-8-t4-non-a60edc7f-7lpz` ran out of memory."),
    ("node.conditions", ["MemoryPressure"], "The worker node ran out of memory during the night."),  # composed
])
def test_a_sentence_saying_it_is_read(fact: str, value: object, text: str) -> None:
    got = said_facts(text)
    assert got.get(fact) == value, got


# Each sentence near one of them, and the fact it must not give.
@pytest.mark.parametrize(("fact", "text"), [
    # pending of no workload, or denied, or asked
    ("pod.phase", "The LoadBalancer service's external IP stays pending."),  # composed: a Service's EXTERNAL-IP, no pod
    ("pod.phase", "The pull request is still pending review."),  # composed: no workload
    ("pod.phase", "The pod did not stay pending for long; it was scheduled in seconds."),  # composed: denied
    ("pod.phase", "Does the pod stay Pending when the node affinity is set?"),  # composed: asked
    # https://github.com/giantswarm/aws-operator/pull/520 (description): what would happen without the change
    ("pod.phase", "Without this change the ic pods in a guest created from local lab stay in `Pending` because any "
                  "node fulfills the cpu requirements."),
    # a request said big outside placement, or denied
    # composed: no placement in the sentence
    ("scheduling.reasons", "The CPU request is too high for this service, so it gets throttled."),
    ("scheduling.reasons", "The CPU request was not too high; the node had room."),  # composed: denied
    # composed: a limit, not a request said too big
    ("scheduling.reasons", "The memory limit is higher than the request on every node."),
    # disk beside evictions without a cause
    # https://github.com/kubernetes/kubernetes/issues/91600 (description): plenty of disk, no cause
    ("eviction.resource", "I checked the disk space of worker nodes. There is still plenty of disk space. But the "
                          "kubelet logs showed the kubelet is still trying to evict pods."),
    # https://github.com/kubernetes/kubernetes/issues/25239 (description): how the kubelet frees disk, in general
    ("eviction.resource", "Kubelet can perform several actions to free up disk space - delete old containers, delete "
                          "unused images, evict pods that use a lot of disk."),
    ("eviction.resource", "The pods were not evicted because of low disk space."),  # composed: denied
    ("eviction.resource", "The pods weren't evicted due to low disk space, they were preempted."),  # composed: denied
])
def test_a_sentence_near_one_is_not_read(fact: str, text: str) -> None:
    assert fact not in said_facts(text)


@pytest.mark.parametrize("text", [
    "The node process ran out of memory while bundling.",  # composed: a Node.js process, no node
    "The container ran out of memory and was OOMKilled.",  # composed: a container
    "The node never ran out of memory.",  # composed: denied
])
def test_a_process_or_container_out_of_memory_is_no_node_pressure(text: str) -> None:
    assert "MemoryPressure" not in (said_facts(text).get("node.conditions") or [])  # type: ignore[operator]
