"""The nccl-hang playbook, engine level: each case states the whole situation as facts.

A case lists the exact status of every hypothesis it cares about; any hypothesis it does not list must not
hold (unknown or ruled-out), so a predicate that starts firing where it should not fails the table.
"""

from __future__ import annotations

from typing import Any

import pytest

from playbooks.engine import triggered
from playbooks.loader import PLAYBOOK_DIR, check_file
from playbooks.report import Finding

FOUR_PODS = ["train-worker-0", "train-worker-1", "train-worker-2", "train-worker-3"]

CASES: list[tuple[str, dict[str, Any], dict[str, str], str]] = [
    (
        # Seed 004 scenario 5: rank 2 Pending, a plain Job (no minAvailable), the other ranks wait to join.
        "three-of-four-ranks-running-no-gang",
        {"pods.names": FOUR_PODS, "pods.pending": ["train-worker-2"], "pods.not_running": ["train-worker-2"],
         "gang.configured": False, "scheduling.failed": True,
         "scheduling.reasons": ["untolerated-taint", "insufficient-gpu", "preemption-not-helpful"],
         "nccl.waiting_for_join": True, "dist.world_sizes": [4], "dist.joined_count": 3},
        {"rank-not-running": "confirmed", "no-gang-scheduling": "confirmed", "rank-unschedulable": "confirmed",
         "wrong-interface": "unknown", "network-blocked": "unknown", "gpu-hardware": "unknown",
         "slow-collectives": "ruled-out"},
        "rank-not-running",
    ),
    (
        # With a gang the partial start should not happen; a pending rank still explains the wait.
        "rank-pending-under-a-gang",
        {"pods.names": FOUR_PODS, "pods.pending": ["train-worker-2"], "gang.configured": True,
         "gang.min_available": 4, "nccl.waiting_for_join": True},
        {"rank-not-running": "likely", "no-gang-scheduling": "ruled-out", "rank-unschedulable": "unknown"},
        "rank-not-running",
    ),
    (
        # Copied NCCL_SOCKET_IFNAME=^docker0 lifts the default exclusion of lo: rank 0 advertises 127.0.0.1.
        "bootstrap-on-loopback",
        {"pods.names": FOUR_PODS, "nccl.socket_ifname": "^docker0", "nccl.interfaces": ["lo"],
         "nccl.errors": ["connection-refused", "timeout"], "dist.master_addrs": ["train-worker-0.train"],
         "dist.world_sizes": [32], "dist.env_missing": []},
        {"wrong-interface": "confirmed", "network-blocked": "likely", "rendezvous-env": "ruled-out",
         "rank-not-running": "unknown"},
        "wrong-interface",
    ),
    (
        "bootstrap-on-docker-bridge",
        {"nccl.interfaces": ["docker0"], "nccl.errors": ["no-route"]},
        # errno 113 alone makes a blocked network likely too; the bridge address is what confirms the interface.
        {"wrong-interface": "confirmed", "network-blocked": "likely"},
        "wrong-interface",
    ),
    (
        # NCCL_SOCKET_IFNAME=eth0 names the management NIC; the ranks share bond0. No route between racks.
        "socket-ifname-on-unshared-network",
        {"nccl.socket_ifname": "eth0", "nccl.interfaces": ["eth0"], "nccl.errors": ["no-route"],
         "dist.master_addrs": ["10.60.2.11"], "dist.world_sizes": [32], "netpol.count": 0},
        {"wrong-interface": "likely", "network-blocked": "ruled-out", "rendezvous-env": "unknown"},
        "wrong-interface",
    ),
    (
        # PyTorchJob env read from every pod: one master, one world size, nothing missing.
        "rendezvous-env-consistent",
        {"dist.master_addrs": ["llm-master-0"], "dist.world_sizes": [4], "dist.ranks": [0, 1, 2, 3],
         "dist.env_missing": [], "nccl.errors": ["timeout"]},
        {"rendezvous-env": "ruled-out", "network-blocked": "likely"},
        "network-blocked",
    ),
    (
        "rendezvous-variable-missing",
        {"dist.master_addrs": ["llm-master-0"], "dist.world_sizes": [4], "dist.env_missing": ["RANK"],
         "nccl.waiting_for_join": True},
        {"rendezvous-env": "confirmed"},
        "rendezvous-env",
    ),
    (
        # No RDMA expected (no HCA configured, no rdma resource): "No device found" is not a fault.
        "no-ib-device-on-a-socket-cluster",
        {"nccl.ib_device_missing": True, "pod.rdma_request": False, "nccl.transports": ["Socket"],
         "nccl.errors": ["timeout"]},
        {"rdma-prereqs": "unknown", "network-blocked": "likely"},
        "network-blocked",
    ),
    (
        "socket-ifname-names-a-missing-interface",
        {"nccl.socket_ifname": "net1", "nccl.errors": ["no-interface"]},
        {"wrong-interface": "confirmed"},
        "wrong-interface",
    ),
    (
        # Default-deny plus an allow for 29500 only: the store works, NCCL's own ports time out.
        "networkpolicy-blocks-nccl-ports",
        {"pods.names": FOUR_PODS, "netpol.count": 2, "netpol.restricts_pods": True,
         "nccl.interfaces": ["eth0"], "nccl.errors": ["timeout"], "nccl.waiting_for_join": True},
        {"network-blocked": "confirmed", "wrong-interface": "unknown", "rank-not-running": "unknown"},
        "network-blocked",
    ),
    (
        "timeouts-with-no-policies-in-namespace",
        {"netpol.count": 0, "nccl.interfaces": ["eth0"], "nccl.errors": ["timeout"]},
        {"network-blocked": "ruled-out", "wrong-interface": "unknown"},
        "rank-not-running",
    ),
    (
        # Xid 79 on one rank's node: everyone else times out in the watchdog. The hung task is an after-effect.
        "xid-79-on-one-rank",
        {"xid.codes": [79], "xid.primary_codes": [79], "gpu.fallen_off_bus": True, "kernel.hung_task": True,
         "nccl.init_complete": True, "nccl.watchdog_timeout": True, "nccl.timeout_op": "ALLREDUCE",
         "nccl.transports": ["IB"]},
        {"gpu-hardware": "confirmed", "stuck-process": "likely", "collective-mismatch": "unknown",
         "rank-not-running": "ruled-out", "wrong-interface": "ruled-out", "rdma-prereqs": "ruled-out",
         "slow-collectives": "ruled-out", "fabric-fault": "unknown", "rendezvous-env": "ruled-out"},
        "gpu-hardware",
    ),
    (
        "application-xid-is-only-likely",
        {"xid.codes": [13], "xid.primary_codes": [13], "nccl.watchdog_timeout": True, "nccl.init_complete": True},
        {"gpu-hardware": "likely", "collective-mismatch": "unknown"},
        "gpu-hardware",
    ),
    (
        "ib-work-completion-errors",
        {"nccl.ib_errors": ["transport-retry-exceeded"], "nccl.transports": ["IB"], "nccl.init_complete": True,
         "nccl.watchdog_timeout": True},
        {"fabric-fault": "confirmed", "collective-mismatch": "unknown", "rdma-prereqs": "ruled-out"},
        "fabric-fault",
    ),
    (
        "hung-task-without-gpu-fault",
        {"kernel.hung_task": True, "nccl.watchdog_timeout": True, "nccl.init_complete": True},
        {"stuck-process": "confirmed", "collective-mismatch": "likely"},
        "stuck-process",
    ),
    (
        "desync-reported",
        {"nccl.collective_mismatch": True, "nccl.watchdog_timeout": True, "nccl.init_complete": True},
        {"collective-mismatch": "confirmed"},
        "collective-mismatch",
    ),
    (
        "watchdog-timeout-with-nothing-else",
        {"nccl.watchdog_timeout": True, "nccl.init_complete": True},
        {"collective-mismatch": "likely", "slow-collectives": "ruled-out", "rank-not-running": "ruled-out"},
        "collective-mismatch",
    ),
    (
        "fewer-gpus-visible-than-requested",
        {"gpu.visible_count": 4, "pod.gpu_request": 8, "nccl.waiting_for_join": True},
        {"gpu-visibility": "confirmed"},
        "gpu-visibility",
    ),
    (
        "duplicate-gpu",
        {"nccl.duplicate_gpu": True, "gpu.visible_count": 8, "pod.gpu_request": 8},
        {"gpu-visibility": "confirmed"},
        "gpu-visibility",
    ),
    (
        "all-gpus-visible",
        {"gpu.visible_count": 8, "pod.gpu_request": 8, "nccl.init_complete": True, "nccl.watchdog_timeout": True},
        {"gpu-visibility": "ruled-out", "collective-mismatch": "likely"},
        "collective-mismatch",
    ),
    (
        "ranks-disagree-on-master",
        {"dist.master_addrs": ["trainer-master-0", "trainer-worker-0"], "dist.world_sizes": [16],
         "nccl.waiting_for_join": True},
        {"rendezvous-env": "confirmed"},
        "rendezvous-env",
    ),
    (
        "duplicate-rank",
        {"dist.ranks": [0, 1, 1, 3], "dist.master_addrs": ["w-0"], "dist.world_sizes": [4],
         "nccl.waiting_for_join": True},
        {"rendezvous-env": "confirmed"},
        "rendezvous-env",
    ),
    (
        "master-name-does-not-resolve",
        {"nccl.errors": ["unresolvable"], "dist.master_addrs": ["trainer-master-0"]},
        {"master-unresolvable": "confirmed"},
        "master-unresolvable",
    ),
    (
        "no-ib-device-although-hca-configured",
        {"nccl.ib_device_missing": True, "nccl.ib_hca": "mlx5", "nccl.transports": ["Socket"],
         "nccl.waiting_for_join": True},
        {"rdma-prereqs": "confirmed", "slow-collectives": "ruled-out"},
        "rdma-prereqs",
    ),
    (
        # Issue 18: rank 5 on gpu-node-0 never enqueued #20418; seven ranks wait on it. No node evidence yet.
        "straggler-named-by-the-wave-front",
        {"nccl.watchdog_timeout": True, "nccl.last_completed_seq": 20417, "nccl.wait_seq": 20418,
         "nccl.waiting_ranks": [0, 1, 2, 3, 4, 6, 7], "nccl.suspect_ranks": [5], "nccl.suspect_hosts": ["gpu-node-0"],
         "nccl.timeout_op": "ALLREDUCE"},
        {"straggler-rank": "confirmed", "collective-mismatch": "likely", "rank-not-running": "ruled-out",
         "master-unresolvable": "ruled-out", "rendezvous-env": "ruled-out", "wrong-interface": "ruled-out",
         "network-blocked": "ruled-out", "slow-collectives": "ruled-out", "fabric-fault": "unknown",
         "gpu-hardware": "unknown"},
        "straggler-rank",
    ),
    (
        # The straggler's own node logged Xid 79: the GPU fault is the cause, the straggler its symptom.
        "xid-79-on-the-stragglers-node",
        {"nccl.watchdog_timeout": True, "nccl.last_completed_seq": 20417, "nccl.wait_seq": 20418,
         "nccl.waiting_ranks": [0, 1, 2, 3, 4, 6, 7], "nccl.suspect_ranks": [5], "nccl.suspect_hosts": ["gpu-node-0"],
         "xid.codes": [79], "xid.primary_codes": [79], "xid.hosts": ["gpu-node-0"]},
        {"gpu-hardware": "confirmed", "straggler-rank": "confirmed", "rank-not-running": "ruled-out",
         "master-unresolvable": "ruled-out", "rendezvous-env": "ruled-out", "wrong-interface": "ruled-out",
         "network-blocked": "ruled-out", "slow-collectives": "ruled-out", "collective-mismatch": "unknown"},
        "gpu-hardware",
    ),
    (
        # An Xid on another node does not explain this straggler: likely at most, and the straggler leads.
        "xid-79-on-another-node",
        {"nccl.watchdog_timeout": True, "nccl.last_completed_seq": 20417, "nccl.wait_seq": 20418,
         "nccl.waiting_ranks": [0, 1, 2, 3, 4, 6, 7], "nccl.suspect_ranks": [5], "nccl.suspect_hosts": ["gpu-node-0"],
         "xid.codes": [79], "xid.primary_codes": [79], "xid.hosts": ["gpu-node-3"]},
        {"gpu-hardware": "likely", "straggler-rank": "confirmed", "collective-mismatch": "unknown"},
        "straggler-rank",
    ),
    (
        # A straggler is known but the kernel log names no host: the Xid cannot be tied to it.
        "xid-79-on-an-unnamed-node",
        {"nccl.watchdog_timeout": True, "nccl.wait_seq": 20418, "nccl.waiting_ranks": [0, 1],
         "nccl.suspect_ranks": [2], "xid.codes": [79], "xid.primary_codes": [79]},
        {"gpu-hardware": "likely", "straggler-rank": "confirmed"},
        "straggler-rank",
    ),
    (
        # Every rank of the job waits on #20418 and none is behind: no rank is blamed; the fabric is looked at.
        "every-rank-waits-on-the-same-collective",
        {"nccl.watchdog_timeout": True, "nccl.last_completed_seq": 20417, "nccl.wait_seq": 20418,
         "nccl.waiting_ranks": [0, 1, 2, 3, 4, 5, 6, 7], "nccl.suspect_ranks": [], "nccl.init_complete": True},
        {"fabric-fault": "likely", "collective-mismatch": "likely", "straggler-rank": "unknown",
         "rank-not-running": "ruled-out", "master-unresolvable": "ruled-out", "rendezvous-env": "ruled-out",
         "wrong-interface": "ruled-out", "network-blocked": "ruled-out", "slow-collectives": "ruled-out"},
        "fabric-fault",
    ),
    (
        # One rank's timeout after 20417 completed collectives: every rank was up, so the init-time causes go.
        "single-rank-timeout-mid-run",
        {"nccl.watchdog_timeout": True, "nccl.last_completed_seq": 20417, "nccl.wait_seq": 20418,
         "nccl.waiting_ranks": [0]},
        {"collective-mismatch": "likely", "rank-not-running": "ruled-out", "master-unresolvable": "ruled-out",
         "rendezvous-env": "ruled-out", "wrong-interface": "ruled-out", "network-blocked": "ruled-out",
         "slow-collectives": "ruled-out", "straggler-rank": "unknown", "fabric-fault": "unknown"},
        "collective-mismatch",
    ),
    (
        # The first collective (lazy NCCL init) hangs: nothing completed, so init-time causes stay open.
        "init-hang-first-collective",
        {"nccl.watchdog_timeout": True, "nccl.last_completed_seq": 0, "nccl.wait_seq": 1,
         "nccl.waiting_ranks": [0, 1, 2, 3, 4, 6, 7], "nccl.silent_ranks": [5], "nccl.init_complete": False,
         "pods.pending": ["train-worker-5"]},
        {"rank-not-running": "likely", "slow-collectives": "ruled-out", "straggler-rank": "unknown",
         "network-blocked": "unknown", "wrong-interface": "unknown", "rendezvous-env": "unknown",
         "master-unresolvable": "unknown", "collective-mismatch": "unknown", "fabric-fault": "unknown"},
        "rank-not-running",
    ),
    (
        "slow-not-hung",
        # IB configured but traffic on sockets: slow, and the missing RDMA path is why.
        {"nccl.init_complete": True, "nccl.transports": ["Socket"], "nccl.ib_hca": "mlx5"},
        {"slow-collectives": "likely", "rdma-prereqs": "likely", "rank-not-running": "ruled-out"},
        "rdma-prereqs",
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
def test_nccl_hang_table(make_facts, judge, given, expected, lead) -> None:
    _check(judge("nccl-hang", make_facts(given)), expected, lead)


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
    ("given", "fires"),
    [
        ({"nccl.watchdog_timeout": True}, True),
        # A rank that only dumped on a peer's timeout still shows the wave front.
        ({"nccl.wait_seq": 20418, "nccl.waiting_ranks": [1, 2]}, True),
        ({"nccl.waiting_for_join": True}, True),
        ({"nccl.errors": ["timeout"]}, True),
        ({"nccl.ib_errors": ["transport-retry-exceeded"]}, True),
        ({"alert.symptoms": ["nccl-hang"]}, True),
        ({"nccl.init_complete": True, "nccl.version": "2.21.5"}, False),
        # "NET/IB : No device found" is normal on a sockets-only cluster; alone it is not a hang.
        ({"nccl.ib_device_missing": True, "nccl.transports": ["Socket"]}, False),
        ({"pod.phase": "Pending", "scheduling.failed": True}, False),
    ],
)
def test_trigger(make_facts, given, fires) -> None:
    compiled, problems = check_file(PLAYBOOK_DIR / "nccl-hang.yaml")
    assert compiled is not None, problems
    assert triggered(compiled, make_facts(given).cel_context()) is fires
