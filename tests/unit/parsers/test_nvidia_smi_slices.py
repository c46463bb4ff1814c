"""nvidia-smi tables from virtualised GPUs: a memory slice of a larger board says nothing of its GPU-Util."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from collectors.models import Artifact, ArtifactKind
from collectors.parsers.registry import parse_artifact
from tests.unit.parsers.test_nvidia_smi_jobs import DEEPRACER_58  # one GPU with its process row

# https://github.com/NVIDIA/nvidia-docker/issues/759 (description, verbatim, cut after the GPU rows): two Tesla
# M40 24GB boards report 22945 MiB each, 93 % of the named size: real boards, their 78 % read.
M40_759 = """\
+-----------------------------------------------------------------------------+
| NVIDIA-SMI 390.48                 Driver Version: 390.59                    |
|-------------------------------+----------------------+----------------------+
| GPU  Name        Persistence-M| Bus-Id        Disp.A | Volatile Uncorr. ECC |
| Fan  Temp  Perf  Pwr:Usage/Cap|         Memory-Usage | GPU-Util  Compute M. |
|===============================+======================+======================|
|   0  Tesla M40 24GB      On   | 00000000:02:00.0 Off |                    0 |
| N/A   37C    P0   113W / 250W |    814MiB / 22945MiB |     78%      Default |
+-------------------------------+----------------------+----------------------+
|   1  Tesla M40 24GB      On   | 00000000:82:00.0 Off |                    0 |
| N/A   38C    P0   103W / 250W |    558MiB / 22945MiB |     78%      Default |
+-------------------------------+----------------------+----------------------+
"""

# nvidia-smi 535's layout (the header rows every R530+ driver prints), rendered with a board and a memory total.
_LAYOUT_535 = """\
+---------------------------------------------------------------------------------------+
| NVIDIA-SMI 535.104.12             Driver Version: 535.104.12   CUDA Version: 12.2     |
|-----------------------------------------+----------------------+----------------------+
| GPU  Name                 Persistence-M | Bus-Id        Disp.A | Volatile Uncorr. ECC |
| Fan  Temp   Perf          Pwr:Usage/Cap |         Memory-Usage | GPU-Util  Compute M. |
|                                         |                      |               MIG M. |
|=========================================+======================+======================|
|   0  {name:<30} Off | 00000000:00:06.0 Off |                    0 |
| N/A   31C    P0              37W / 250W | {used:>6}MiB / {total:>5}MiB |     {util:>2}%      Default |
|                                         |                      |                  N/A |
+-----------------------------------------+----------------------+----------------------+
"""


def facts(text: str) -> dict[str, object]:
    result = parse_artifact(Artifact(id="s", kind=ArtifactKind.NVIDIA_SMI, content=text))
    return {f.name: f.value for f in result.facts}


def test_real_boards_near_their_named_size_are_read() -> None:
    assert facts(M40_759)["gpu.util_percent"] == 78.0


@pytest.mark.parametrize(("name", "total"), [
    ("Tesla V100-PCIE-16GB", 3000),  # HAMi's nvidia.com/gpumem: 3k slice (HAMi-235)
    ("NVIDIA A100-SXM4-80GB", 20480),
    ("NVIDIA H100 80GB HBM3", 10240),
])
def test_a_memory_slice_of_a_board_gives_no_utilisation(name: str, total: int) -> None:
    got = facts(_LAYOUT_535.format(name=name, used=total - 200, total=total, util=0))
    assert "gpu.util_percent" not in got  # the guest cannot see the board's utilisation
    assert got["gpu.fb_used_ratio"] == pytest.approx(round((total - 200) / total, 4))  # its own memory is still read


@pytest.mark.parametrize(("name", "total"), [
    ("Tesla V100-PCIE-16GB", 16160),
    ("NVIDIA A100-SXM4-40GB", 40960),
    ("NVIDIA H100 80GB HBM3", 81559),
    ("NVIDIA GeForce RTX 4090", 24564),  # no size in the name: nothing to compare
])
def test_whole_boards_keep_their_utilisation(name: str, total: int) -> None:
    assert facts(_LAYOUT_535.format(name=name, used=100, total=total, util=7))["gpu.util_percent"] == 7.0


# https://github.com/peci1/nvidia-htop/issues/9 (comment by jss367, verbatim, cut before the Processes section):
# nvidia-smi inside a container, GPU 0 busy and holding memory, GPU 1 idle and holding 149 of 11178 MiB.
HTOP_9 = """\
+-----------------------------------------------------------------------------+
| NVIDIA-SMI 440.82       Driver Version: 440.82       CUDA Version: 10.2     |
|-------------------------------+----------------------+----------------------+
| GPU  Name        Persistence-M| Bus-Id        Disp.A | Volatile Uncorr. ECC |
| Fan  Temp  Perf  Pwr:Usage/Cap|         Memory-Usage | GPU-Util  Compute M. |
|===============================+======================+======================|
|   0  GeForce GTX 108...  Off  | 00000000:01:00.0 Off |                  N/A |
| 38%   68C    P2    73W / 250W |  10916MiB / 11175MiB |     59%      Default |
+-------------------------------+----------------------+----------------------+
|   1  GeForce GTX 108...  Off  | 00000000:02:00.0 Off |                  N/A |
| 23%   29C    P8     8W / 250W |    149MiB / 11178MiB |      0%      Default |
+-------------------------------+----------------------+----------------------+
"""


def test_a_busy_gpu_beside_one_holding_nothing_is_a_gap() -> None:
    got = facts(HTOP_9)
    assert got["gpu.table_util_gap_percent"] == 59.0
    assert got["gpu.util_percent"] == 59.0


def test_no_gap_between_equally_busy_gpus_or_when_processes_are_listed() -> None:
    assert "gpu.table_util_gap_percent" not in facts(M40_759)
    listed = HTOP_9 + (
        "+-----------------------------------------------------------------------------+\n"
        "| Processes:                                                       GPU Memory |\n"
        "|  GPU       PID   Type   Process name                             Usage      |\n"
        "|=============================================================================|\n"
        "|    0     28290      C   python                                    10900MiB |\n"
        "+-----------------------------------------------------------------------------+\n")
    assert "gpu.table_util_gap_percent" not in facts(listed)  # the job is known: its own GPUs decide


@pytest.mark.parametrize("wrap", [
    lambda line: "> " + line,  # a quote in an issue or a chat
    lambda line: "> > " + line,  # a quote of a quote
    lambda line: "`" + line + "`",  # each line as inline code
    lambda line: "    " + line,  # indented as a code block
], ids=["quote", "nested-quote", "backticks", "indent"])
def test_a_wrapped_table_reads_as_the_bare_one(wrap: Callable[[str], str]) -> None:
    """Every row is read through what the paste wraps it in: GPU rows, process rows, a slice's named size."""
    sliced = _LAYOUT_535.format(name="Tesla V100-PCIE-16GB", used=2800, total=3000, util=0)
    for table in (DEEPRACER_58, HTOP_9, sliced):
        wrapped = "\n".join(wrap(line) for line in table.splitlines())
        assert facts(wrapped) == facts(table)
