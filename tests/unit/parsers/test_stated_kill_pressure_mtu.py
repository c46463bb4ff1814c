"""A liveness kill, a node's pressure condition, an MTU mismatch and the max-pods reason said in sentences
(stated.yaml liveness-kill-said, node-pressure, mtu-mismatch-said, scheduling-too-many-pods), and an apostrophe that
opens no quote: real sentences, verbatim from the thread named beside each, and the sentences that must not be read."""

from __future__ import annotations

from typing import Any

import pytest

from tests.unit.parsers.paste_facts import said_facts


@pytest.mark.parametrize(("text", "expected"), [
    # https://github.com/gke-labs/kube-agents/issues/712 (description)
    ("Observed on a real cluster while live-testing #709: on a genuinely cold start (fresh image pull onto a node "
     "that had never seen it), the container was killed by the liveness probe **twice** before it managed to bind "
     ":8888.", {"container.liveness_killed": True, "evidence.symptoms": ["crash-loop"]}),
    # Rule sentence: the probe as the subject.
    ("The liveness probe keeps restarting the model server pod while the weights load.",
     {"container.liveness_killed": True}),
    # https://github.com/rancher/k3os/issues/356 (description)
    ("I think kubernetes is to blame, still trying to track down what is triggering the disk pressure.",
     {"node.conditions": ["DiskPressure"]}),
    # https://github.com/projectcalico/calico/issues/2026 (description)
    ("My k8s nodes all work fine with MTU 9000 (calico MTU set to 8960), but one node is only connected with MTU "
     "1500.", {"net.mtu_mismatch": True, "evidence.symptoms": ["latency"]}),
    # Rule sentence: the mismatch named, as the same description says it after a line that opens with inline code.
    ("So it's clearly the MTU setting issue.", {"net.mtu_mismatch": True}),
    # https://github.com/volcano-sh/volcano/issues/3191 (description)
    ("the pods are scheduled failed due to insufficient pods limit and the pods in the second step with lower "
     "priority could not be preempted.", {"scheduling.reasons": ["too-many-pods"]}),
    # https://github.com/weibeld/terraform-aws-kubeadm/issues/3 (comment): "don't ... doesn't" quotes nothing.
    ("I don't think so, the state is still not ready, and the kubectl describe node doesn't give any clarification",
     {"node.conditions": ["NotReady"]}),
])
def test_a_real_sentence_is_read(text: str, expected: dict[str, Any]) -> None:
    got = said_facts(text)
    for name, value in expected.items():
        assert got.get(name) == value, got


@pytest.mark.parametrize("text", [
    "The container was not killed by the liveness probe, it exited on its own.",  # denied
    "Was the container killed by the liveness probe?",  # asked
    "The liveness probe failed once and the pod recovered.",  # a failing probe, no kill said
    "We reduced memory pressure on the database by adding an index.",  # no node, kubelet or cluster
    "The node has no disk pressure.",  # denied
    "All nodes use MTU 1500, but calico uses MTU 1440 for the IPIP tunnel.",  # an overlay's header room
    "Both nodes use MTU 1500, while the pods also use MTU 1500.",  # the same figure
    "There is no MTU mismatch between the nodes.",  # denied
    "Could this be an MTU issue?",  # asked
    "The pods are pending due to insufficient cpu.",  # another resource
    "The pod is not pending because of too many pods.",  # denied
    # https://github.com/kubernetes/kubeadm/issues/212: a 2017 describe-node condition row, its cells set off by
    # tabs after a space, is a program's table, not a sentence.
    ('  MemoryPressure \tFalse \tTue, 28 Mar 2017 22:17:24 -0700 \tTue, 28 Mar '
     '2017 22:06:40 -0700 \tKubeletHasSufficientMemory \tkubelet has sufficien'
     't memory available'),
    # A long quote is still a program's message: the stated reader leaves it to its reader.
    "The node shows 'node.kubernetes.io/not-ready taint on the node' in its events",
])
def test_denied_asked_or_other_sentences_are_not_read(text: str) -> None:
    got = said_facts(text)
    assert not {"container.liveness_killed", "net.mtu_mismatch"} & got.keys(), got
    assert got.get("node.conditions") in (None, []), got
    assert "too-many-pods" not in (got.get("scheduling.reasons") or []), got
