"""The node-not-ready playbook: who stopped the node reporting Ready."""

from __future__ import annotations

from typing import Any

import pytest

from tests.unit.playbooks.table import fires, judge, rendered_cleanly

PLAYBOOK = "node-not-ready"


def test_not_ready_alone_names_what_would_settle_it() -> None:
    finding = judge(PLAYBOOK, {"node.conditions": ["NotReady"]})
    assert {h.status for h in finding.hypotheses} == {"unknown"}
    by_id = {h.id: h for h in finding.hypotheses}
    assert "node.not_ready_reasons" in by_id["pleg-unhealthy"].needs
    assert any("spec.nodeName=gpu-node-7" in c for c in by_id["kubelet-stopped-reporting"].next_checks)
    assert rendered_cleanly(finding)


def test_gpu_fault_points_to_the_gpu_xid_playbook() -> None:
    from tests.unit.playbooks.conftest import bundled_playbook

    spec = {h.id: h for h, _ in bundled_playbook(PLAYBOOK).spec.walk()}
    assert spec["gpu-fault"].see == "gpu-xid"


@pytest.mark.parametrize(("facts", "expected"), [
    ({"alert.symptoms": ["node-not-ready"]}, True),
    ({"node.conditions": ["NotReady"]}, True),
    ({"node.not_ready_reasons": ["pleg-unhealthy"]}, True),
    ({"node.conditions": ["MemoryPressure"]}, False),
    ({"node.conditions": []}, False),
    # the NotReady of a node its kubelet is shutting down on purpose; a reason beside it still counts
    ({"node.conditions": ["NotReady"], "node.graceful_shutdown": True}, False),
    ({"node.conditions": ["NotReady"], "node.graceful_shutdown": True,
      "node.not_ready_reasons": ["runtime-down"]}, True),
], ids=["alert", "not-ready", "reason", "pressure-only", "healthy", "planned-shutdown", "shutdown-and-a-fault"])
def test_trigger(facts: dict[str, Any], expected: bool) -> None:
    assert fires(PLAYBOOK, facts) is expected
