"""The nccl-hang playbook beyond its case table (playbooks/cases/nccl-hang.yaml)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.unit.playbooks.table import fires


def test_missing_evidence_is_unknown_never_ruled_out(make_facts, judge) -> None:
    finding = judge("nccl-hang", make_facts({"nccl.waiting_for_join": True}))
    statuses = {h.id: h.status for h in finding.hypotheses}
    assert set(statuses.values()) == {"unknown", "ruled-out"}
    # Only slow-collectives is ruled out, and by evidence that is present (the job never finished init).
    assert [h for h, s in statuses.items() if s == "ruled-out"] == ["slow-collectives"]
    assert finding.hypotheses[0].id == "rank-not-running"


def test_next_checks_render_for_the_subject(make_facts, judge) -> None:
    from playbooks.report import Target

    finding = judge("nccl-hang", make_facts({"nccl.interfaces": ["lo"], "nccl.errors": ["timeout"]}),
                    Target(namespace="ml train", pod="w-0"))
    wrong = next(h for h in finding.hypotheses if h.id == "wrong-interface")
    assert any("-n 'ml train' w-0" in c for c in wrong.next_checks), wrong.next_checks
    assert any("NCCL_DEBUG=INFO" in c for c in wrong.next_checks)
    assert any("NCCL_SOCKET_IFNAME" in m for m in wrong.mitigations)


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ({"nccl.watchdog_timeout": True}, True),
        # A rank that only dumped on a peer's timeout still shows the wave front.
        ({"nccl.wait_seq": 20418, "nccl.waiting_ranks": [1, 2]}, True),
        ({"nccl.waiting_for_join": True}, True),
        ({"nccl.errors": ["timeout"]}, True),
        ({"nccl.ib_errors": ["transport-retry-exceeded"]}, True),
        ({"nccl.shm_errors": ["no-space"]}, True),
        ({"alert.symptoms": ["nccl-hang"]}, True),
        ({"nccl.init_complete": True, "nccl.version": "2.21.5"}, False),
        # "NET/IB : No device found" is normal on a sockets-only cluster; alone it is not a hang.
        ({"nccl.ib_device_missing": True, "nccl.transports": ["Socket"]}, False),
        ({"pod.phase": "Pending", "scheduling.failed": True}, False),
    ],
)
def test_trigger(given: dict[str, Any], expected: bool) -> None:
    assert fires("nccl-hang", given) is expected


# Round 19 (i3): a mesh sidecar's RBAC denial (mesh.rbac_denied) is a blocker of the ranks' traffic as a restricting
# NetworkPolicy is, so it makes network-blocked likely, and the absence of NetworkPolicies no longer rules it out.
@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ({"nccl.waiting_for_join": True, "mesh.rbac_denied": True}, "likely"),
        ({"nccl.waiting_for_join": True, "mesh.rbac_denied": True, "netpol.count": 0}, "likely"),
        ({"nccl.waiting_for_join": True, "netpol.count": 0}, "ruled-out"),
        ({"nccl.waiting_for_join": True}, "unknown"),
        ({"nccl.waiting_for_join": True, "mesh.rbac_denied": True, "nccl.last_completed_seq": 5000}, "ruled-out"),
    ],
)
def test_a_mesh_rbac_denial_makes_network_blocked_likely(make_facts, judge, given: dict[str, Any],
                                                         expected: str) -> None:
    finding = judge("nccl-hang", make_facts(given))
    assert next(h.status for h in finding.hypotheses if h.id == "network-blocked") == expected


def test_a_mesh_rbac_denial_alone_runs_no_hang() -> None:
    assert fires("nccl-hang", {"mesh.rbac_denied": True}) is False
