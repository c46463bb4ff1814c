"""The gpu-underutilized playbook: which bottleneck keeps the GPU from working, judged from facts."""

from __future__ import annotations

from typing import Any

import pytest

from tests.unit.playbooks.table import fires, judge, rendered_cleanly

PLAYBOOK = "gpu-underutilized"


def test_missing_evidence_is_never_ruled_out() -> None:
    finding = judge(PLAYBOOK, {"gpu.sm_active_ratio": 0.2})
    by_id = {h.id: h for h in finding.hypotheses}
    assert {h.status for h in finding.hypotheses} == {"unknown"}
    assert "cpu.busy_ratio" in by_id["input-pipeline-starved"].needs
    assert "gpu.pcie_rx_saturation" in by_id["host-to-device-copies"].needs


def test_confirmation_cites_cpu_and_gpu_and_renders_checks() -> None:
    finding = judge(PLAYBOOK, {"gpu.util_percent": 20.0, "cpu.busy_ratio": 0.97})
    top = finding.hypotheses[0]
    assert top.id == "input-pipeline-starved"
    assert {e.fact for e in top.evidence} >= {"cpu.busy_ratio", "gpu.util_percent"}
    assert "kubectl exec -n ml trainer-0 -- nvidia-smi dmon -s u -c 10" in top.next_checks
    assert rendered_cleanly(finding)


@pytest.mark.parametrize(("facts", "expected"), [
    ({"alert.symptoms": ["gpu-underutilized"]}, True),
    ({"gpu.sm_active_ratio": 0.2}, True),
    ({"gpu.gr_engine_active_ratio": 0.1}, True),
    ({"gpu.util_percent": 20.0, "cpu.busy_ratio": 0.9}, True),
    ({"gpu.util_percent": 20.0}, False),  # a low reading alone, e.g. after an Xid, is not this symptom
    ({"gpu.sm_active_ratio": 0.9}, False),
    ({"cpu.busy_ratio": 0.99}, False),
    # the GPUs a job's processes run on, from nvidia-smi's Processes joined to its GPU rows
    ({"gpu.job_util_percent": 12.0, "gpu.util_percent": 97.0}, True),
    ({"gpu.job_util_percent": 85.0, "gpu.util_percent": 85.0}, False),
    # every GPU low and one holds a tenth of its memory: a process holds it and does not compute
    ({"gpu.util_percent": 0.0, "gpu.fb_used_ratio": 0.41}, True),
    ({"gpu.util_percent": 0.0, "gpu.fb_used_ratio": 0.01}, False),  # an idle GPU nobody holds
    ({"gpu.util_percent": 0.0, "gpu.fb_used_ratio": 0.41, "xid.codes": [43]}, False),  # a GPU stalled by an Xid
    ({"gpu.util_percent": 65.0, "gpu.fb_used_ratio": 0.41}, False),
    # the training loop's own step timings and loader warning
    ({"train.data_wait_ratio": 0.9}, True),
    ({"train.data_wait_ratio": 0.1}, False),
    ({"train.loader_few_workers": True}, True),
    # CUDA could not start in the application: it runs without its GPU, unless a lost GPU or an Xid says why
    ({"cuda.unavailable": True}, True),
    ({"gpu.job_util_avg_percent": 33.0}, True),  # a Slurm job's GPUs averaged (jobstats)
    ({"gpu.job_util_avg_percent": 80.0}, False),
    ({"cuda.unavailable": True, "gpu.fallen_off_bus": True}, False),
    ({"cuda.unavailable": True, "xid.codes": [79]}, False),
    # Lightning found a CUDA GPU and trains on the CPU (frameworks.yaml lightning-gpu-available-unused)
    ({"train.gpu_left_unused": True}, True),
], ids=["alert", "sm-active", "gr-engine", "util-with-cpu", "util-alone", "busy-gpu", "cpu-only", "job-idle",
        "job-busy", "held-idle", "unheld-idle", "held-after-xid", "held-busy",
        "data-wait", "short-data-wait", "few-workers",
        "cuda-unavailable", "cuda-unavailable-gpu-lost", "cuda-unavailable-xid",
        "job-avg-low", "job-avg-busy", "gpu-left-unused"])
def test_trigger(facts: dict[str, Any], expected: bool) -> None:
    assert fires(PLAYBOOK, facts) is expected


def test_a_framework_leaving_its_gpu_unused_makes_not_using_gpu_likely() -> None:
    by_id = {h.id: h for h in judge(PLAYBOOK, {"train.gpu_left_unused": True}).hypotheses}
    assert by_id["not-using-gpu"].status == "likely"
    assert by_id["input-pipeline-starved"].status == "unknown"


@pytest.mark.parametrize(("facts", "status"), [
    # A batch job's own GPUs (jobstats' and reportseff's means over the GPUs Slurm gave it): no memory, no work.
    ({"gpu.job_util_avg_percent": 0.0, "gpu.fb_used_ratio": 0.0}, "likely"),
    # The same job's GPUs idle but holding memory: a process is on them, only waiting.
    ({"gpu.job_util_avg_percent": 0.0, "gpu.fb_used_ratio": 0.4}, "ruled-out"),
    # Memory held at a low average utilisation: a job on its GPUs, starved or small.
    ({"gpu.job_util_avg_percent": 29.4, "gpu.fb_used_ratio": 0.998}, "ruled-out"),
    # A low average with no memory figure says nothing of whether anything runs on them.
    ({"gpu.job_util_avg_percent": 2.0}, "unknown"),
])
def test_a_batch_job_s_idle_empty_gpus_are_not_used(facts: dict[str, Any], status: str) -> None:
    by_id = {h.id: h for h in judge(PLAYBOOK, facts).hypotheses}
    assert by_id["not-using-gpu"].status == status


@pytest.mark.parametrize(("facts", "status"), [
    # Round 20: an nvidia-smi table with no process rows, its busiest GPU holding memory at 95 % beside GPUs that
    # hold none at 0 % (gpu.table_util_gap_percent): GPUs given to the job, one or more not used at all.
    ({"gpu.util_percent": 95.0, "gpu.fb_used_ratio": 0.699, "gpu.table_util_gap_percent": 95.0}, "likely"),
    # Every GPU busy and holding memory (no GPU idle beside it, so no gap): the job is on its GPUs.
    ({"gpu.util_percent": 95.0, "gpu.fb_used_ratio": 0.699}, "ruled-out"),
    # The same gap beside an Xid: the idle GPU is one the driver lost (gpu-xid's), not one left unused.
    ({"gpu.util_percent": 60.0, "gpu.fb_used_ratio": 0.4, "gpu.table_util_gap_percent": 60.0, "xid.codes": [79]},
     "unknown"),
])
def test_an_idle_gpu_holding_nothing_beside_a_busy_one_is_a_gpu_not_used(facts: dict[str, Any],
                                                                       status: str) -> None:
    by_id = {h.id: h for h in judge(PLAYBOOK, facts).hypotheses}
    assert by_id["not-using-gpu"].status == status
