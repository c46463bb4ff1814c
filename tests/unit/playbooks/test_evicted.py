"""The evicted playbook beyond its case table (playbooks/cases/evicted.yaml).

The kubelet's eviction message names the resource, and that decides between the pressure branches;
an OOM kill alone is not an eviction and does not start this playbook; a node pressure condition does.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from collectors.factset import FactSet
from playbooks.report import Finding, Target
from tests.unit.playbooks.table import fires, linted_with_sources

PLAYBOOK = "evicted"
TOP_LEVEL = ["memory-pressure", "disk-pressure", "pid-pressure", "preemption", "node-drain"]
MEMORY_MESSAGE = ("The node was low on resource: memory. Threshold quantity: 100Mi, available: 91260Ki. "
                  "Container prep was using 29431208Ki, request is 4Gi, has larger consumption of memory.")


@pytest.mark.parametrize(("facts", "expected"), [
    ({"eviction.seen": True, "eviction.resource": "memory"}, True),
    ({"pod.status.reason": "Evicted"}, True),
    ({"scheduling.preempted": True}, True),
    ({"alert.symptoms": ["evicted"]}, True),
    ({"container.last_terminated.reason": "OOMKilled", "container.last_terminated.exit_code": 137,
      "kernel.oom_kill": True, "kernel.oom_memcg": True}, False),
    # A pressure condition True is the kubelet's eviction manager finding a threshold met, when it evicts
    # (issue 24; docs/playbooks.md, evicted): it runs the playbook. A NotReady alone does not.
    ({"node.conditions": ["MemoryPressure"]}, True),
    ({"node.conditions": ["NotReady"]}, False),
    ({"eviction.seen": False, "scheduling.preempted": False}, False),
], ids=["eviction", "evicted-status", "preempted", "alert", "oom-kill", "pressure-only", "not-ready-only",
        "explicit-false"])
def test_trigger(facts: dict[str, Any], expected: bool) -> None:
    assert fires(PLAYBOOK, facts) is expected


def test_eviction_and_oom_playbooks_agree(make_facts: Callable[[dict[str, Any]], FactSet],
                                         judge: Callable[..., Finding]) -> None:
    """The same eviction seen through oom-killed: a redirect there, never the container's limit."""
    facts = make_facts({"eviction.seen": True, "eviction.resource": "memory", "pod.status.reason": "Evicted",
                        "container.last_terminated.reason": "Error", "container.last_terminated.exit_code": 137})
    evicted = judge(PLAYBOOK, facts)
    oom = {h.id: h for h in judge("oom-killed", facts).hypotheses}
    assert oom["limit-too-low"].status == "ruled-out"
    assert oom["kubelet-eviction"].status == "confirmed"
    assert evicted.hypotheses[0].id == "memory-pressure"
    assert evicted.hypotheses[0].score > oom["kubelet-eviction"].score


def test_checks_are_rendered_for_the_subject(make_facts: Callable[[dict[str, Any]], FactSet],
                                             judge: Callable[..., Finding]) -> None:
    target = Target(namespace="ml", pod="feature-prep-6c9d7b9f4-kq2xw", node="gpu-node-5")
    finding = judge(PLAYBOOK, make_facts({"eviction.seen": True, "eviction.resource": "memory"}), target)
    memory = finding.hypotheses[0]
    assert memory.id == "memory-pressure"
    assert "kubectl describe node gpu-node-5" in memory.next_checks
    assert any('kube_node_status_condition{node="gpu-node-5",condition="MemoryPressure",status="true"}' in c
               for c in memory.next_checks)
    assert "gpu-node-5" in memory.claim and "feature-prep-6c9d7b9f4-kq2xw" in memory.claim
    for h in finding.hypotheses:
        for text in [h.claim, h.falsified_by, *h.next_checks, *h.mitigations]:
            assert "{{" not in text and "{%" not in text and "<node>" not in text


def test_evidence_is_cited(make_facts: Callable[[dict[str, Any]], FactSet], judge: Callable[..., Finding]) -> None:
    finding = judge(PLAYBOOK, make_facts({"eviction.seen": True, "eviction.resource": "memory",
                                          "pod.status.message": MEMORY_MESSAGE}))
    memory = finding.hypotheses[0]
    assert {e.fact for e in memory.evidence} >= {"eviction.resource", "eviction.seen", "pod.status.message"}


def test_lints_clean_and_every_hypothesis_cites_a_source() -> None:
    compiled = linted_with_sources(PLAYBOOK)
    assert [h.id for h in compiled.spec.hypotheses] == TOP_LEVEL


def test_a_pod_over_its_own_storage_limit_is_no_node_disk_pressure(
        make_facts: Callable[[dict[str, Any]], FactSet], judge: Callable[..., Finding]) -> None:
    # https://github.com/cloud-ark/kubeplus/issues/1389: the kubelet's containerEphemeralStorageMessageFmt.
    limit = {"eviction.seen": True, "eviction.resource": "ephemeral-storage", "eviction.over_limit": True,
             "pod.status.reason": "Evicted",
             "pod.status.message": 'Container consumerui exceeded its local ephemeral storage limit "20Mi".'}
    got = {h.id: h.status for h in judge(PLAYBOOK, make_facts(limit)).hypotheses}
    assert got["disk-pressure"] == "ruled-out"
    # The node running low on ephemeral-storage is disk pressure.
    node = {**limit, "eviction.over_limit": False}
    assert {h.id: h.status for h in judge(PLAYBOOK, make_facts(node)).hypotheses}["disk-pressure"] == "confirmed"
