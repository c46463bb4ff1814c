"""The gpu-underutilized playbook: which bottleneck keeps the GPU from working, judged from facts."""

from __future__ import annotations

from typing import Any

import pytest

from tests.unit.playbooks.table import check_case, fires, judge, rendered_cleanly

PLAYBOOK = "gpu-underutilized"
TOP_LEVEL = ["input-pipeline-starved", "io-wait", "host-to-device-copies", "small-batch-or-launch-bound",
             "memory-bound", "tensor-cores-unused", "clocks-or-power-capped", "shared-gpu", "idle-replica",
             "not-using-gpu"]

CASES: list[tuple[str, dict[str, Any], dict[str, str], str]] = [
    ("seed-scenario-2-cpu-bound-dataloader",
     {"gpu.util_percent": 20.0, "gpu.dram_active_ratio": 0.1, "gpu.fb_used_ratio": 0.15, "cpu.busy_ratio": 0.97,
      "cpu.iowait_ratio": 0.002},
     {"input-pipeline-starved": "confirmed", "io-wait": "ruled-out", "memory-bound": "ruled-out",
      "not-using-gpu": "ruled-out"},
     "input-pipeline-starved"),
    ("cfs-throttled-loader",
     {"gpu.sm_active_ratio": 0.18, "cpu.throttled_ratio": 0.62},
     {"input-pipeline-starved": "confirmed"}, "input-pipeline-starved"),
    ("storage-bound",
     {"gpu.util_percent": 25.0, "cpu.busy_ratio": 0.35, "cpu.iowait_ratio": 0.31, "cpu.throttled_ratio": 0.0},
     {"io-wait": "confirmed", "input-pipeline-starved": "ruled-out"}, "io-wait"),
    ("pcie-data-stall",
     {"gpu.sm_active_ratio": 0.22, "gpu.pcie_rx_saturation": 0.93, "gpu.pcie_link_degraded": True,
      "gpu.dram_active_ratio": 0.12, "cpu.busy_ratio": 0.4, "cpu.throttled_ratio": 0.01, "cpu.iowait_ratio": 0.01},
     {"host-to-device-copies": "confirmed", "input-pipeline-starved": "ruled-out", "io-wait": "ruled-out",
      "memory-bound": "ruled-out"},
     "host-to-device-copies"),
    ("degraded-link-alone-is-likely",
     {"gpu.sm_active_ratio": 0.3, "gpu.pcie_link_degraded": True},
     {"host-to-device-copies": "likely"}, "host-to-device-copies"),
    ("memory-bound-kernels",
     {"gpu.sm_active_ratio": 0.75, "gpu.dram_active_ratio": 0.82, "gpu.tensor_active_ratio": 0.35},
     {"memory-bound": "confirmed", "tensor-cores-unused": "ruled-out", "small-batch-or-launch-bound": "ruled-out"},
     "memory-bound"),
    ("fp32-no-tensor-cores",
     {"gpu.sm_active_ratio": 0.85, "gpu.dram_active_ratio": 0.25, "gpu.tensor_active_ratio": 0.0},
     {"tensor-cores-unused": "confirmed", "memory-bound": "ruled-out", "small-batch-or-launch-bound": "ruled-out"},
     "tensor-cores-unused"),
    ("power-capped",
     {"gpu.util_percent": 35.0, "gpu.throttle_reasons": ["power"], "cpu.busy_ratio": 0.3, "gpu.fb_used_ratio": 0.6},
     {"clocks-or-power-capped": "confirmed", "not-using-gpu": "ruled-out"}, "clocks-or-power-capped"),
    ("time-sliced-gpu",
     {"gpu.sm_active_ratio": 0.3, "node.gpu_sharing": "time-slicing", "gpu.throttle_reasons": []},
     {"shared-gpu": "likely", "clocks-or-power-capped": "ruled-out"}, "shared-gpu"),
    ("idle-replica-behind-router",
     {"gpu.util_percent": 0.0, "traffic.idle_pods": ["triton-2"], "gpu.fb_used_ratio": 0.4},
     {"idle-replica": "confirmed", "not-using-gpu": "ruled-out"}, "idle-replica"),
    ("nothing-on-the-gpu",
     {"gpu.util_percent": 0.0, "gpu.fb_used_ratio": 0.0, "pod.gpu_request": 1, "gpu.sm_active_ratio": 0.0,
      "cpu.busy_ratio": 0.2, "cpu.throttled_ratio": 0.0, "cpu.iowait_ratio": 0.0, "gpu.dram_active_ratio": 0.0},
     {"not-using-gpu": "likely", "input-pipeline-starved": "ruled-out", "io-wait": "ruled-out",
      "memory-bound": "ruled-out", "small-batch-or-launch-bound": "likely"},
     "small-batch-or-launch-bound"),
]


@pytest.mark.parametrize(("facts", "expected", "lead"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_statuses_and_leader(facts: dict[str, Any], expected: dict[str, str], lead: str) -> None:
    check_case(PLAYBOOK, TOP_LEVEL, facts, expected, lead)


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
], ids=["alert", "sm-active", "gr-engine", "util-with-cpu", "util-alone", "busy-gpu", "cpu-only"])
def test_trigger(facts: dict[str, Any], expected: bool) -> None:
    assert fires(PLAYBOOK, facts) is expected
