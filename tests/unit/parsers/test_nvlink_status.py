"""`nvidia-smi nvlink -s` read for links down (collectors/parsers/gpu/nvlink_status.py, fix round f7), from real
pastes, each with its thread."""

from __future__ import annotations

from collectors.parsers.registry import parse_artifact
from collectors.paste import artifacts_from_text

# https://github.com/Azure/azhpc-diagnostics/issues/73 (V100-SXM2, two of six links down)
TWO_DOWN = """\
nvidia-smi nvlink -s
....
GPU 3: Tesla V100-SXM2-32GB (UUID: ...)
         Link 0: 25.781 GB/s
         Link 1: 25.781 GB/s
         Link 2: 25.781 GB/s
         Link 3: <inactive>
         Link 4: 25.781 GB/s
         Link 5: <inactive>
"""

# https://github.com/leptonai/gpud/issues/1085 (B200, every link down)
B200_ALL_DOWN = """\
GPU 2: NVIDIA B200 (UUID: GPU-xxx)
NVML: Unable to retrieve NVLink information as all links are inActive
"""

# https://github.com/NVIDIA/k8s-test-infra/issues/371 (GB200, every link up; cut after GPU 1's second link)
ALL_UP = """\
nvidia-smi nvlink -s
GPU 0: NVIDIA GB200 (UUID: GPU-d1b93026-6d5b-03bd-3a71-f85b47a61bde)
         Link 0: 53.125 GB/s
         Link 1: 53.125 GB/s
         Link 2: 53.125 GB/s
         Link 17: 53.125 GB/s
GPU 1: NVIDIA GB200 (UUID: GPU-39ac7bce-e3d6-b426-008e-fa47897c72d5)
         Link 0: 53.125 GB/s
         Link 1: 53.125 GB/s
"""

# NVML's line under a PCIe card with no bridge fitted is healthy. Composed: the B200 paste's NVML line (above)
# under an `nvidia-smi -L` heading of a PCIe card, as NVIDIA/NVSentinel#1481 describes such a node.
PCIE_NO_BRIDGE = """\
GPU 0: NVIDIA A100 80GB PCIe (UUID: GPU-d1b93026-6d5b-03bd-3a71-f85b47a61bde)
NVML: Unable to retrieve NVLink information as all links are inActive
"""


def _facts(text: str) -> dict[str, object]:
    out: dict[str, object] = {}
    for artifact in artifacts_from_text(text, "paste.txt"):
        for fact in parse_artifact(artifact).facts:
            out[fact.name] = fact.value
    return out


def test_links_down_beside_links_up_are_counted() -> None:
    assert _facts(TWO_DOWN)["gpu.nvlink_inactive_links"] == 2


def test_all_links_down_on_an_nvlink_only_part_counts() -> None:
    assert _facts(B200_ALL_DOWN)["gpu.nvlink_inactive_links"] == 1


def test_every_link_up_reads_nothing() -> None:
    assert "gpu.nvlink_inactive_links" not in _facts(ALL_UP)


def test_a_pcie_card_without_a_bridge_reads_nothing() -> None:
    assert "gpu.nvlink_inactive_links" not in _facts(PCIE_NO_BRIDGE)


# `nvidia-smi nvlink -e` (round 16). https://github.com/NVIDIA/srt-slurm/pull/307 (description: a GB300 node's counters
# before a run, the heading without its UUID): every counter at 0.
ERRORS_ZERO = """\
$ nvidia-smi nvlink -e
GPU 0: NVIDIA GB300
\t Link 0: Replay Errors: 0
\t Link 0: Recovery Errors: 0
\t Link 0: CRC Errors: 0
"""

# Composed in the same shape (no public paste with counts found): GPU 1's link 3 has replayed and failed CRC checks
# hundreds of times since the driver loaded, its neighbours not at all.
ERRORS_GROWING = """\
GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-d1b93026-6d5b-03bd-3a71-f85b47a61bde)
\t Link 0: Replay Errors: 0
\t Link 0: Recovery Errors: 0
\t Link 0: CRC Errors: 0
GPU 1: NVIDIA H100 80GB HBM3 (UUID: GPU-39ac7bce-e3d6-b426-008e-fa47897c72d5)
\t Link 2: Replay Errors: 0
\t Link 2: Recovery Errors: 0
\t Link 2: CRC Errors: 0
\t Link 3: Replay Errors: 212
\t Link 3: Recovery Errors: 3
\t Link 3: CRC Errors: 187
"""


def test_error_counters_are_summed_per_gpu_and_the_worst_gpu_kept() -> None:
    assert _facts(ERRORS_GROWING)["gpu.nvlink_errors"] == 402


def test_error_counters_at_zero_read_as_zero_and_no_link_down() -> None:
    facts = _facts(ERRORS_ZERO)
    assert facts["gpu.nvlink_errors"] == 0
    assert "gpu.nvlink_inactive_links" not in facts


def test_link_speeds_are_no_error_counts() -> None:
    assert "gpu.nvlink_errors" not in _facts(ALL_UP)
