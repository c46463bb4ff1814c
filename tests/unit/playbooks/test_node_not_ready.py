"""The node-not-ready playbook: who stopped the node reporting Ready."""

from __future__ import annotations

from typing import Any

import pytest

from tests.unit.playbooks.table import check_case, fires, judge, rendered_cleanly

PLAYBOOK = "node-not-ready"
TOP_LEVEL = ["kubelet-stopped-reporting", "pleg-unhealthy", "runtime-down", "network-unavailable",
             "resource-pressure", "gpu-fault"]

CASES: list[tuple[str, dict[str, Any], dict[str, str], str]] = [
    ("status-unknown",
     {"node.conditions": ["NotReady"], "node.not_ready_reasons": ["kubelet-stopped-posting"],
      "node.taints": ["node.kubernetes.io/unreachable:NoExecute"]},
     {"kubelet-stopped-reporting": "confirmed"}, "kubelet-stopped-reporting"),
    ("pleg", {"node.conditions": ["NotReady"], "node.not_ready_reasons": ["pleg-unhealthy"]},
     {"pleg-unhealthy": "confirmed"}, "pleg-unhealthy"),
    ("containerd-down", {"node.not_ready_reasons": ["runtime-down"]}, {"runtime-down": "confirmed"}, "runtime-down"),
    ("pleg-behind-a-dead-runtime-is-only-likely", {"node.not_ready_reasons": ["pleg-unhealthy", "runtime-down"]},
     {"runtime-down": "confirmed", "pleg-unhealthy": "likely"}, "runtime-down"),
    ("cni-uninitialised", {"node.conditions": ["NotReady"], "node.not_ready_reasons": ["network-not-ready"]},
     {"network-unavailable": "confirmed"}, "network-unavailable"),
    ("kubelet-oom-killed",
     {"node.conditions": ["NotReady", "MemoryPressure"], "kernel.oom_victims": ["python", "kubelet"]},
     {"resource-pressure": "confirmed"}, "resource-pressure"),
    ("pressure-alone-is-likely", {"node.conditions": ["NotReady", "DiskPressure"]},
     {"resource-pressure": "likely"}, "resource-pressure"),
    ("gpu-off-the-bus", {"node.conditions": ["NotReady"], "gpu.fallen_off_bus": True, "xid.primary_codes": [79]},
     {"gpu-fault": "confirmed"}, "gpu-fault"),
]


@pytest.mark.parametrize(("facts", "expected", "lead"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_statuses_and_leader(facts: dict[str, Any], expected: dict[str, str], lead: str) -> None:
    check_case(PLAYBOOK, TOP_LEVEL, facts, expected, lead)


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
], ids=["alert", "not-ready", "reason", "pressure-only", "healthy"])
def test_trigger(facts: dict[str, Any], expected: bool) -> None:
    assert fires(PLAYBOOK, facts) is expected
