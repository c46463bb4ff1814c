"""The pending playbook beyond its case table (playbooks/cases/pending.yaml)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.unit.playbooks.table import fires


def test_missing_evidence_is_unknown_never_ruled_out(make_facts, judge) -> None:
    finding = judge("pending", make_facts({"pod.phase": "Pending"}))
    assert {h.status for h in finding.hypotheses} == {"unknown"}
    assert finding.hypotheses[0].id == "insufficient-gpu"
    assert all(h.needs for h in finding.hypotheses), "unknown hypotheses must say what evidence they need"


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ({"pod.phase": "Pending"}, True),
        ({"scheduling.failed": True}, True),
        # The pod was placed after its FailedScheduling: a transient wait, not a pending pod.
        ({"scheduling.failed": True, "scheduling.resolved": True}, False),
        ({"scheduling.failed": True, "scheduling.resolved": True, "pod.phase": "Pending"}, True),
        ({"quota.exceeded": True}, True),
        ({"pods.pending": ["w-2"]}, True),
        ({"alert.symptoms": ["pending"]}, True),
        ({"pod.phase": "Running", "pods.pending": []}, False),
        ({"container.last_terminated.reason": "OOMKilled"}, False),
        # A node with GPUs that offers none: every GPU pod sent there pends.
        ({"gpu.capacity_total": 16, "gpu.allocatable_total": 0, "gpu.unhealthy_count": 16}, True),
        # One GPU of eight unhealthy on a node is a gpu-xid matter until a pod is seen waiting.
        ({"gpu.capacity_total": 8, "gpu.allocatable_total": 7, "gpu.unhealthy_count": 1}, False),
    ],
)
def test_trigger(given: dict[str, Any], expected: bool) -> None:
    assert fires("pending", given) is expected
