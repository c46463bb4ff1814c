"""nvidia-smi, nvidia-smi dmon and top: the pastes on-call reaches for when a GPU looks idle."""

from __future__ import annotations

from pathlib import Path

import pytest

from collectors.models import Artifact, ArtifactKind, ParseResult
from collectors.parsers.gpu import nvidia_smi
from collectors.parsers.node import top
from collectors.parsers.registry import SNIFFERS

SMI = """\
+-----------------------------------------------------------------------------------------+
| NVIDIA-SMI 550.54.15              Driver Version: 550.54.15      CUDA Version: 12.4     |
|-----------------------------------------+------------------------+----------------------+
| GPU  Name                 Persistence-M | Bus-Id          Disp.A | Volatile Uncorr. ECC |
| Fan  Temp   Perf          Pwr:Usage/Cap |           Memory-Usage | GPU-Util  Compute M. |
|=========================================+========================+======================|
|   0  NVIDIA A100-SXM4-80GB          On  |   00000000:07:00.0 Off |                    0 |
| N/A   34C    P0             91W /  400W |   12034MiB /  81920MiB |     18%      Default |
+-----------------------------------------+------------------------+----------------------+
|   1  NVIDIA A100-SXM4-80GB          On  |   00000000:0F:00.0 Off |                    0 |
| N/A   39C    P0             88W /  400W |   40960MiB /  81920MiB |     23%      Default |
+-----------------------------------------+------------------------+----------------------+

+-----------------------------------------------------------------------------------------+
| Processes:                                                                              |
|  GPU   GI   CI        PID   Type   Process name                              GPU Memory |
|        ID   ID                                                               Usage      |
|=========================================================================================|
|    0   N/A  N/A     48213      C   python                                      12024MiB |
|    1   N/A  N/A     48214      C   python                                      20480MiB |
|    1   N/A  N/A     51022      C   /usr/bin/python3                            20470MiB |
+-----------------------------------------------------------------------------------------+
"""

DMON = """\
# gpu   pwr  gtemp  mtemp    sm   mem   enc   dec  mclk  pclk
# Idx     W      C      C     %     %     %     %   MHz   MHz
    0    75     45      -    20    10     0     0  1215  1410
    1    75     45      -    60    30     0     0  1215  1410
    0    76     45      -    22    12     0     0  1215  1410
    1    74     45      -     -     -     0     0  1215  1410
"""


def run(parser_kind: ArtifactKind, text: str) -> ParseResult:
    parse = nvidia_smi.parse if parser_kind == ArtifactKind.NVIDIA_SMI else top.parse
    return parse(Artifact(id="a", kind=parser_kind, content=text))


def facts(result: ParseResult) -> dict[str, tuple[object, int, int]]:
    return {f.name: (f.value, f.citation.start, f.citation.end) for f in result.facts}


def test_table_reads_the_busiest_gpu_and_the_most_processes_on_one() -> None:
    got = facts(run(ArtifactKind.NVIDIA_SMI, SMI))
    assert got["gpu.util_percent"] == (23.0, 11, 11)
    assert got["gpu.fb_used_ratio"] == (0.5, 11, 11)
    assert got["gpu.temp_c"] == (39.0, 11, 11)
    assert got["gpu.process_count"] == (2, 20, 21)


def test_no_processes_found_is_not_read_as_zero() -> None:
    text = SMI.split("| Processes:")[0] + "| Processes:\n|  No running processes found |\n"
    assert "gpu.process_count" not in facts(run(ArtifactKind.NVIDIA_SMI, text))


def test_dmon_averages_each_gpu_and_skips_dashes() -> None:
    got = facts(run(ArtifactKind.NVIDIA_SMI, DMON))
    assert got["gpu.util_percent"] == (60.0, 4, 4)  # GPU 1: one readable sample of 60
    assert got["gpu.dram_active_ratio"] == (0.3, 4, 4)


def test_dmon_rows_without_their_header_are_not_guessed() -> None:
    body = "\n".join(DMON.splitlines()[2:])
    assert run(ArtifactKind.NVIDIA_SMI, body).facts == []


def test_top_reads_the_last_frame() -> None:
    text = ("top - 09:40:16 up 1 day\n%Cpu(s): 20.0 us,  5.0 sy,  0.0 ni, 75.0 id,  0.0 wa,  0.0 hi,  0.0 si\n"
            "top - 09:40:21 up 1 day\n%Cpu(s): 60.1 us,  2.0 sy,  0.0 ni,  7.9 id, 30.0 wa,  0.0 hi,  0.0 si\n")
    got = facts(run(ArtifactKind.TOP, text))
    assert got == {"cpu.busy_ratio": (0.921, 4, 4), "cpu.iowait_ratio": (0.3, 4, 4)}


def test_old_top_format_and_a_line_without_idle() -> None:
    assert facts(run(ArtifactKind.TOP, "Cpu(s): 96.1%us,  1.9%sy,  0.0%ni,  2.0%id,  0.0%wa\n"))["cpu.busy_ratio"] \
        == (0.98, 1, 1)
    result = run(ArtifactKind.TOP, "%Cpu(s): 96.1 us\n")
    assert result.facts == [] and result.problems


def test_sniffers_tell_the_tools_apart() -> None:
    assert SNIFFERS[ArtifactKind.NVIDIA_SMI](SMI) >= 90
    assert SNIFFERS[ArtifactKind.NVIDIA_SMI](DMON) >= 90
    assert SNIFFERS[ArtifactKind.TOP]("top - 1\n%Cpu(s): 1.0 us, 99.0 id\n") >= 90
    assert SNIFFERS[ArtifactKind.TOP](SMI) == 0
    assert SNIFFERS[ArtifactKind.NVIDIA_SMI]("%Cpu(s): 1.0 us, 99.0 id\n") == 0


# nvidia-smi -q, from the real-world cases (each folder's case.yaml names its source).
REALWORLD = Path(__file__).resolve().parents[2] / "realworld" / "gpu-xid"
QUERY_CASES = [
    # https://github.com/leptonai/gpud/pull/80: a fragment, no GPU line; four rows remapped for uncorrectable
    # errors, waiting for a reset.
    ("gpud-pr-80-remapped-rows-pending-reset", {"gpu.row_remap_failed": (True, 4, 5, "")}),
    # stas00/ml-engineering, compute/accelerator/nvidia/debug.md: an A100 after Xid 63; one row remapped for
    # correctable errors, pending, which is routine; 177 corrected DRAM errors, none uncorrectable.
    ("ml-engineering-nvidia-smi-q-row-remap-pending-correctable",
     {"gpu.ecc_dbe": (0, 13, 15, "gpu/00000000:10:1C.0"), "gpu.ecc_sbe": (177, 12, 14, "gpu/00000000:10:1C.0"),
      "gpu.row_remap_failed": (False, 28, 28, "gpu/00000000:10:1C.0")}),
]


@pytest.mark.parametrize(("case", "expected"), QUERY_CASES)
def test_query_report_memory_errors(case: str, expected: dict[str, tuple[object, int, int, str]]) -> None:
    text = (REALWORLD / case / "evidence.txt").read_text(encoding="utf-8")
    assert SNIFFERS[ArtifactKind.NVIDIA_SMI](text) >= 80
    result = run(ArtifactKind.NVIDIA_SMI, text)
    assert {f.name: (f.value, f.citation.start, f.citation.end, f.subject) for f in result.facts} == expected
