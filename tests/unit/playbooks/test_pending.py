"""The pending playbook, engine level: each case states the whole situation as facts.

A case lists the exact status of every hypothesis it cares about; any hypothesis it does not list must not
hold (unknown or ruled-out), so a predicate that starts firing where it should not fails the table.
"""

from __future__ import annotations

from typing import Any

import pytest

from playbooks.engine import triggered
from playbooks.loader import PLAYBOOK_DIR, check_file
from playbooks.report import Finding

# A FailedScheduling with several reasons, as the scheduler prints it for a 20-node cluster:
# "0/20 nodes are available: 1 node(s) had untolerated taint {gpu-unhealthy: true},
#  19 Insufficient nvidia.com/gpu. preemption: 0/20 nodes are available: 20 Preemption is not helpful ..."
MULTI = ["untolerated-taint", "insufficient-gpu", "preemption-not-helpful"]

CASES: list[tuple[str, dict[str, Any], dict[str, str], str]] = [
    (
        "all-gpus-allocated",
        {"pod.phase": "Pending", "scheduling.failed": True,
         "scheduling.reasons": ["insufficient-gpu", "preemption-not-helpful"], "pod.gpu_request": 8,
         "gpu.capacity_total": 80, "gpu.allocatable_total": 80, "gpu.free_total": 0,
         "gpu.max_free_per_node": 0, "gpu.unhealthy_count": 0},
        {"insufficient-gpu": "confirmed", "gpus-held-by-idle-pods": "unknown", "no-autoscaler": "unknown",
         "gpu-not-advertised": "ruled-out", "gpu-fragmentation": "ruled-out", "unhealthy-gpu": "ruled-out",
         "untolerated-taint": "ruled-out", "node-affinity": "ruled-out", "insufficient-cpu": "ruled-out",
         "quota-exceeded": "ruled-out", "gang-scheduling": "unknown"},
        "insufficient-gpu",
    ),
    (
        "all-gpus-allocated-and-idle-holders",
        {"pod.phase": "Pending", "scheduling.failed": True, "scheduling.reasons": ["insufficient-gpu"],
         "pod.gpu_request": 8, "gpu.free_total": 0, "gpu.max_free_per_node": 0, "gpu.util_percent": 0.0,
         "events.reasons": ["FailedScheduling", "NotTriggerScaleUp"]},
        {"insufficient-gpu": "confirmed", "gpus-held-by-idle-pods": "likely", "no-autoscaler": "likely",
         "gpu-fragmentation": "ruled-out"},
        "insufficient-gpu",
    ),
    (
        "autoscaler-is-adding-a-node",
        {"pod.phase": "Pending", "scheduling.failed": True, "scheduling.reasons": ["insufficient-gpu"],
         "pod.gpu_request": 8, "gpu.free_total": 0, "events.reasons": ["FailedScheduling", "TriggeredScaleUp"]},
        {"insufficient-gpu": "confirmed", "no-autoscaler": "ruled-out", "gpus-held-by-idle-pods": "unknown"},
        "insufficient-gpu",
    ),
    (
        # 8 GPUs free across 4 nodes, 2 on each: a 4-GPU pod fits nowhere. Same scheduler text as a shortage.
        "fragmentation",
        {"pod.phase": "Pending", "scheduling.failed": True,
         "scheduling.reasons": ["insufficient-gpu", "preemption-not-helpful"], "pod.gpu_request": 4,
         "gpu.allocatable_total": 32, "gpu.free_total": 8, "gpu.max_free_per_node": 2, "gpu.unhealthy_count": 0},
        {"gpu-fragmentation": "confirmed", "insufficient-gpu": "ruled-out", "unhealthy-gpu": "ruled-out"},
        "gpu-fragmentation",
    ),
    (
        "one-node-has-room-so-neither-shortage-nor-fragmentation",
        {"pod.phase": "Pending", "scheduling.failed": True, "scheduling.reasons": MULTI, "pod.gpu_request": 8,
         "gpu.free_total": 8, "gpu.max_free_per_node": 8},
        {"untolerated-taint": "likely", "insufficient-gpu": "ruled-out", "gpu-fragmentation": "ruled-out"},
        "untolerated-taint",
    ),
    (
        # Scheduler text alone: every reason it names is likely, ranked by prior; nothing is confirmed.
        "multi-reason-message-only",
        {"pod.phase": "Pending", "scheduling.failed": True, "scheduling.reasons": MULTI},
        {"insufficient-gpu": "likely", "untolerated-taint": "likely", "gpu-fragmentation": "unknown",
         "gpus-held-by-idle-pods": "unknown", "no-autoscaler": "unknown", "gpu-not-advertised": "unknown",
         "node-affinity": "ruled-out", "insufficient-cpu": "ruled-out", "insufficient-memory": "ruled-out",
         "unbound-pvc": "ruled-out", "too-many-pods": "ruled-out", "node-pressure": "unknown",
         "quota-exceeded": "ruled-out"},
        "insufficient-gpu",
    ),
    (
        # The same message with the node read: the tainted node is the only one with room.
        "multi-reason-with-health-taint-on-the-free-node",
        {"pod.phase": "Pending", "scheduling.failed": True, "scheduling.reasons": MULTI, "pod.gpu_request": 8,
         "gpu.free_total": 8, "gpu.max_free_per_node": 8, "gpu.unhealthy_count": 0,
         "node.taints": ["gpu-unhealthy=true:NoSchedule"]},
        {"untolerated-taint": "confirmed", "health-taint": "likely", "capacity-taint": "unknown",
         "insufficient-gpu": "ruled-out", "gpu-fragmentation": "ruled-out", "unhealthy-gpu": "ruled-out"},
        "untolerated-taint",
    ),
    (
        "spot-taint-on-the-only-gpu-nodes",
        {"pod.phase": "Pending", "scheduling.failed": True,
         "scheduling.reasons": ["untolerated-taint", "insufficient-gpu", "preemption-not-helpful"],
         "pod.gpu_request": 8, "gpu.free_total": 16, "gpu.max_free_per_node": 8,
         "node.taints": ["spot-instance=true:NoSchedule"]},
        {"untolerated-taint": "confirmed", "capacity-taint": "likely", "health-taint": "unknown",
         "insufficient-gpu": "ruled-out", "gpu-fragmentation": "ruled-out"},
        "untolerated-taint",
    ),
    (
        "cordoned-nodes",
        {"pod.phase": "Pending", "scheduling.failed": True, "scheduling.reasons": ["unschedulable-node"],
         "node.unschedulable": True},
        {"untolerated-taint": "confirmed", "health-taint": "unknown", "capacity-taint": "unknown"},
        "untolerated-taint",
    ),
    (
        "cpu-memory-and-affinity-together",
        {"pod.phase": "Pending", "scheduling.failed": True,
         "scheduling.reasons": ["node-affinity", "insufficient-cpu", "insufficient-memory"]},
        {"node-affinity": "likely", "insufficient-memory": "likely", "insufficient-cpu": "likely",
         "insufficient-gpu": "ruled-out"},
        "node-affinity",
    ),
    (
        "only-cpu-and-memory-short",
        {"pod.phase": "Pending", "scheduling.failed": True,
         "scheduling.reasons": ["insufficient-cpu", "insufficient-memory", "preemption-not-helpful"]},
        {"insufficient-memory": "confirmed", "insufficient-cpu": "confirmed", "node-affinity": "ruled-out"},
        "insufficient-memory",
    ),
    (
        "gpu-model-selector-matches-nothing",
        {"pod.phase": "Pending", "scheduling.failed": True,
         "scheduling.reasons": ["node-affinity", "preemption-not-helpful"]},
        {"node-affinity": "confirmed", "insufficient-gpu": "ruled-out"},
        "node-affinity",
    ),
    (
        "unbound-claim",
        {"pod.phase": "Pending", "scheduling.failed": True, "scheduling.reasons": ["unbound-pvc"]},
        {"unbound-pvc": "confirmed"},
        "unbound-pvc",
    ),
    (
        # {node.kubernetes.io/disk-pressure: } in the message is a pressure taint, not an ordinary one.
        "disk-pressure",
        {"pod.phase": "Pending", "scheduling.failed": True, "scheduling.reasons": ["node-pressure"],
         "node.taints": ["node.kubernetes.io/disk-pressure:NoSchedule"], "node.conditions": ["DiskPressure"]},
        {"node-pressure": "confirmed", "untolerated-taint": "ruled-out"},
        "node-pressure",
    ),
    (
        "pressure-condition-without-scheduler-message",
        {"pod.phase": "Pending", "node.conditions": ["MemoryPressure"]},
        {"node-pressure": "likely"},
        "node-pressure",
    ),
    (
        "not-ready-nodes",
        {"pod.phase": "Pending", "scheduling.failed": True,
         "scheduling.reasons": ["node-not-ready", "insufficient-gpu"]},
        {"insufficient-gpu": "likely", "untolerated-taint": "likely", "health-taint": "likely",
         "capacity-taint": "unknown", "gpus-held-by-idle-pods": "unknown", "no-autoscaler": "unknown",
         "gpu-not-advertised": "unknown", "node-pressure": "ruled-out"},
        "insufficient-gpu",
    ),
    (
        "anti-affinity-spreads-workers-too-thin",
        {"pod.phase": "Pending", "scheduling.failed": True,
         "scheduling.reasons": ["pod-affinity", "preemption-not-helpful"]},
        {"node-affinity": "confirmed", "insufficient-gpu": "ruled-out"},
        "node-affinity",
    ),
    (
        # No pod was created at all: the Job reports FailedCreate ... exceeded quota.
        "quota-exhausted",
        {"quota.exceeded": True, "quota.resources_at_limit": ["requests.nvidia.com/gpu"],
         "events.reasons": ["FailedCreate"], "scheduling.reasons": ["quota-exceeded"]},
        # The scheduler never saw a pod, so its reasons are not evidence against capacity hypotheses.
        {"quota-exceeded": "confirmed", "insufficient-gpu": "unknown", "untolerated-taint": "unknown",
         "node-affinity": "unknown", "gpu-fragmentation": "unknown"},
        "quota-exceeded",
    ),
    (
        "quota-at-limit-without-a-refusal-seen",
        {"pod.phase": "Pending", "quota.resources_at_limit": ["requests.nvidia.com/gpu"]},
        {"quota-exceeded": "likely"},
        "quota-exceeded",
    ),
    (
        # The quota is full (the Pending pod's own request counts in "used"), yet the pod exists and the
        # scheduler is placing it: quota admission already let it through.
        "quota-full-but-pod-was-admitted",
        {"pod.phase": "Pending", "scheduling.failed": True, "scheduling.reasons": ["insufficient-gpu"],
         "quota.exceeded": True, "quota.resources_at_limit": ["requests.nvidia.com/gpu"]},
        {"quota-exceeded": "ruled-out", "insufficient-gpu": "likely", "gpus-held-by-idle-pods": "unknown",
         "no-autoscaler": "unknown", "gpu-not-advertised": "unknown"},
        "insufficient-gpu",
    ),
    (
        "quota-read-and-not-exhausted",
        {"pod.phase": "Pending", "quota.exceeded": False, "quota.resources_at_limit": []},
        {"quota-exceeded": "ruled-out"},
        "insufficient-gpu",
    ),
    (
        # A pod that exists already passed quota admission: FailedScheduling without quota evidence rules it out.
        "pending-pod-passed-quota-admission",
        {"pod.phase": "Pending", "scheduling.failed": True, "scheduling.reasons": ["insufficient-gpu"]},
        {"insufficient-gpu": "likely", "quota-exceeded": "ruled-out", "gpu-fragmentation": "unknown",
         "gpus-held-by-idle-pods": "unknown", "no-autoscaler": "unknown", "gpu-not-advertised": "unknown"},
        "insufficient-gpu",
    ),
    (
        # One GPU marked unhealthy is exactly what the pod is short of: the broken GPU leads.
        "unhealthy-gpu-makes-the-difference",
        {"pod.phase": "Pending", "scheduling.failed": True, "scheduling.reasons": ["insufficient-gpu"],
         "pod.gpu_request": 8, "gpu.capacity_total": 8, "gpu.allocatable_total": 7, "gpu.free_total": 7,
         "gpu.max_free_per_node": 7, "gpu.unhealthy_count": 1},
        {"unhealthy-gpu": "confirmed", "insufficient-gpu": "likely", "gpu-fragmentation": "ruled-out",
         "gpus-held-by-idle-pods": "unknown", "no-autoscaler": "unknown", "gpu-not-advertised": "ruled-out"},
        "unhealthy-gpu",
    ),
    (
        "unhealthy-gpu-but-cluster-full-anyway",
        {"pod.phase": "Pending", "scheduling.failed": True, "scheduling.reasons": ["insufficient-gpu"],
         "pod.gpu_request": 8, "gpu.free_total": 0, "gpu.max_free_per_node": 0, "gpu.unhealthy_count": 1},
        {"insufficient-gpu": "confirmed", "unhealthy-gpu": "likely", "gpu-fragmentation": "ruled-out",
         "gpus-held-by-idle-pods": "unknown", "no-autoscaler": "unknown"},
        "insufficient-gpu",
    ),
    (
        "device-plugin-advertises-nothing",
        {"pod.phase": "Pending", "scheduling.failed": True, "scheduling.reasons": ["insufficient-gpu"],
         "pod.gpu_request": 1, "gpu.capacity_total": 0, "gpu.allocatable_total": 0, "gpu.free_total": 0,
         "gpu.max_free_per_node": 0},
        {"insufficient-gpu": "confirmed", "gpu-not-advertised": "likely", "gpus-held-by-idle-pods": "unknown",
         "no-autoscaler": "unknown", "gpu-fragmentation": "ruled-out"},
        "insufficient-gpu",
    ),
    (
        "gang-not-admitted",
        {"pod.phase": "Pending", "gang.configured": True, "gang.min_available": 4,
         "pods.pending": ["w-0", "w-1", "w-2", "w-3"], "events.reasons": ["Unschedulable"]},
        {"gang-scheduling": "confirmed"},
        "gang-scheduling",
    ),
    (
        "plain-job-is-not-held-by-a-gang",
        {"pod.phase": "Pending", "gang.configured": False, "scheduling.failed": True,
         "scheduling.reasons": ["insufficient-gpu"]},
        {"gang-scheduling": "ruled-out", "insufficient-gpu": "likely", "gpus-held-by-idle-pods": "unknown",
         "no-autoscaler": "unknown", "gpu-not-advertised": "unknown"},
        "insufficient-gpu",
    ),
    (
        "preempted",
        {"pod.phase": "Pending", "scheduling.preempted": True, "pod.priority_class": "best-effort-experiment"},
        {"preempted": "confirmed"},
        "preempted",
    ),
]


def _check(finding: Finding, expected: dict[str, str], lead: str) -> None:
    got = {h.id: h.status for h in finding.hypotheses}
    for hid, status in expected.items():
        assert got.get(hid) == status, (hid, got)
    surprises = {h: s for h, s in got.items() if h not in expected and s in ("confirmed", "likely")}
    assert not surprises, surprises
    leader = next(h for h in finding.hypotheses if h.status != "ruled-out")
    assert leader.id == lead, [(h.id, h.status, h.score) for h in finding.hypotheses]
    if leader.status in ("confirmed", "likely"):
        assert leader.because, "a holding hypothesis must cite the facts behind it"


@pytest.mark.parametrize(("given", "expected", "lead"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_pending_table(make_facts, judge, given, expected, lead) -> None:
    _check(judge("pending", make_facts(given)), expected, lead)


def test_missing_evidence_is_unknown_never_ruled_out(make_facts, judge) -> None:
    finding = judge("pending", make_facts({"pod.phase": "Pending"}))
    assert {h.status for h in finding.hypotheses} == {"unknown"}
    assert finding.hypotheses[0].id == "insufficient-gpu"
    assert all(h.needs for h in finding.hypotheses), "unknown hypotheses must say what evidence they need"


@pytest.mark.parametrize(
    ("given", "fires"),
    [
        ({"pod.phase": "Pending"}, True),
        ({"scheduling.failed": True}, True),
        ({"quota.exceeded": True}, True),
        ({"pods.pending": ["w-2"]}, True),
        ({"alert.symptoms": ["pending"]}, True),
        ({"pod.phase": "Running", "pods.pending": []}, False),
        ({"container.last_terminated.reason": "OOMKilled"}, False),
    ],
)
def test_trigger(make_facts, given, fires) -> None:
    compiled, problems = check_file(PLAYBOOK_DIR / "pending.yaml")
    assert compiled is not None, problems
    assert triggered(compiled, make_facts(given).cel_context()) is fires
