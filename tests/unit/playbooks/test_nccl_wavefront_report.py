"""Issue 18 end to end: multi-rank logs and kernel logs in, the straggler and its node at the top of the report.

The logs are composed from real line formats (tests/unit/parsers/rank_logs.py cites each); the kernel lines copy
the syslog shape of a real Xid 79 report.
"""

from __future__ import annotations

import pytest

from collectors.models import Artifact, ArtifactKind
from playbooks.pipeline import analyse
from playbooks.report import Report
from tests.unit.parsers.rank_logs import Job, all_waiting, mid_run_straggler

_XID_79 = ("Sep  1 05:09:58 {host} kernel: NVRM: Xid (PCI:0000:3b:00): 79, pid=40111, name=python, "
           "GPU has fallen off the bus.")
_INIT_TIME = ["rank-not-running", "master-unresolvable", "rendezvous-env", "wrong-interface", "network-blocked"]


def _report(job: Job, kernel: str | None = None, kernel_subject: str = "") -> Report:
    artifacts = [Artifact(id="ranks", kind=ArtifactKind.CONTAINER_LOG, content=job.text())]
    if kernel is not None:
        artifacts.append(Artifact(id="dmesg", kind=ArtifactKind.KERNEL_LOG, content=kernel, subject=kernel_subject))
    return analyse(artifacts)


def _statuses(report: Report) -> dict[str, str]:
    finding = next(f for f in report.findings if f.playbook == "nccl-hang")
    return {h.id: h.status for h in finding.hypotheses}


def _leader(report: Report) -> str:
    finding = report.findings[0]
    return next(h.id for h in finding.hypotheses if h.status in ("confirmed", "likely"))


@pytest.mark.parametrize(("ranks", "straggler", "node"), [(2, 1, "gpu-node-0"), (8, 6, "gpu-node-0"),
                                                          (64, 21, "gpu-node-2")])
def test_the_straggler_and_its_node_lead(ranks: int, straggler: int, node: str) -> None:
    report = _report(mid_run_straggler(ranks, straggler))
    assert report.facts["nccl.suspect_ranks"] == [straggler]
    assert report.facts["nccl.suspect_hosts"] == [node]
    assert _leader(report) == "straggler-rank"
    lead = report.findings[0].hypotheses[0]
    assert f"Rank {straggler} on {node}" in lead.claim
    assert "enqueued collective #20418" in lead.falsified_by
    # Thousands of completed collectives: every rank was up and connected; the report rules init causes out.
    assert all(_statuses(report)[h] == "ruled-out" for h in _INIT_TIME)


def test_xid_79_on_the_stragglers_node_confirms_gpu_hardware() -> None:
    report = _report(mid_run_straggler(16, 11), _XID_79.format(host="gpu-node-1"))
    assert _statuses(report)["gpu-hardware"] == "confirmed"
    assert _leader(report) == "gpu-hardware"


def test_xid_79_in_the_stragglers_own_node_log_confirms_gpu_hardware() -> None:
    """A node's kernel log read from the cluster names its node by subject, not by a line prefix."""
    kernel = "[12345.678901] NVRM: Xid (PCI:0000:3b:00): 79, pid=40111, name=python, GPU has fallen off the bus."
    report = _report(mid_run_straggler(16, 11), kernel, kernel_subject="node/gpu-node-1")
    assert _statuses(report)["gpu-hardware"] == "confirmed"


def test_xid_79_on_another_node_does_not_confirm_it() -> None:
    report = _report(mid_run_straggler(16, 11), _XID_79.format(host="gpu-node-0"))
    assert _statuses(report)["gpu-hardware"] == "likely"
    # The gpu-xid finding still reports that node's lost GPU; within the hang, the straggler comes first.
    hang = next(f for f in report.findings if f.playbook == "nccl-hang")
    assert hang.hypotheses[0].id == "straggler-rank"


@pytest.mark.parametrize("ranks", [2, 8, 64])
def test_no_straggler_blames_no_rank(ranks: int) -> None:
    report = _report(all_waiting(ranks))
    assert report.facts["nccl.suspect_ranks"] == []
    assert _statuses(report)["straggler-rank"] == "unknown"
    assert _leader(report) == "fabric-fault"


def test_an_init_hang_keeps_the_init_time_causes_open() -> None:
    job = Job(8).init([r for r in range(8) if r != 5], complete=False)
    for r in range(8):
        if r != 5:
            job.timed_out(r, 1, completed=0, op="BROADCAST")
    report = _report(job)
    # Every rank that printed waits on the first collective: the silent one is the suspect.
    assert report.facts["nccl.silent_ranks"] == [5]
    assert report.facts["nccl.suspect_ranks"] == [5]
    statuses = _statuses(report)
    assert statuses["rank-not-running"] != "ruled-out" and statuses["wrong-interface"] != "ruled-out"
    assert statuses["straggler-rank"] == "confirmed"
