"""nvidia-smi read per GPU and joined to its processes; dmon beside a CPU-busy line (gpu-underutilized)."""

from __future__ import annotations

import pytest

from collectors.models import Artifact, ArtifactKind
from collectors.parsers.gpu import nvidia_smi
from collectors.parsers.registry import parse_artifact
from collectors.paste import artifacts_from_text
from playbooks.pipeline import analyse
from tests.unit.parsers.test_gpu_tools import SMI

# https://github.com/ARCC-RACE/deepracer-for-dummies/issues/58 (issue description, verbatim): one GPU, one
# python process holding 35 MiB at 0% while training runs.
DEEPRACER_58 = """\
Wed Oct  9 09:39:44 2019
+-----------------------------------------------------------------------------+
| NVIDIA-SMI 418.87.00    Driver Version: 418.87.00    CUDA Version: 10.1     |
|-------------------------------+----------------------+----------------------+
| GPU  Name        Persistence-M| Bus-Id        Disp.A | Volatile Uncorr. ECC |
| Fan  Temp  Perf  Pwr:Usage/Cap|         Memory-Usage | GPU-Util  Compute M. |
|===============================+======================+======================|
|   0  GRID K520           On   | 00000000:00:03.0 Off |                  N/A |
| N/A   30C    P8    17W / 125W |     46MiB /  4037MiB |      0%      Default |
+-------------------------------+----------------------+----------------------+

+-----------------------------------------------------------------------------+
| Processes:                                                       GPU Memory |
|  GPU       PID   Type   Process name                             Usage      |
|=============================================================================|
|    0      8351      C   /usr/bin/python3.6                            35MiB |
+-----------------------------------------------------------------------------+
"""

# Seed 004:1461-1479 (scenario 2, "GPU utilization at 20% during training"): dmon quoted as comments, and the
# CPU side as one line under `top`.
SEED_SCENARIO_2 = """\
```bash
# 1. Check GPU utilization in real-time
kubectl exec -it training-pod-xyz -- nvidia-smi dmon

# Output shows:
#   gpu   pwr  gtemp  mtemp    sm   mem   enc   dec  mclk  pclk
#     0    75     45     -    20    10     0     0  1215  1410
#     1    75     45     -    20    10     0     0  1215  1410
# sm (streaming multiprocessor) at 20% <<<

# 2. Check if CPU is bottleneck
kubectl exec -it training-pod-xyz -- top

# Output shows:
#   CPU: 95% - 98%  <<< CPU bottleneck!
```
"""


def facts(text: str) -> dict[str, object]:
    result = nvidia_smi.parse(Artifact(id="a", kind=ArtifactKind.NVIDIA_SMI, content=text))
    assert not result.problems
    return {f.name: f.value for f in result.facts}


def test_a_job_is_its_processes_gpus() -> None:
    got = facts(SMI)
    # python on GPUs 0 (18%) and 1 (23%), /usr/bin/python3 on GPU 1: both jobs' busiest GPU is at 23%.
    assert got["gpu.job_util_percent"] == 23.0
    assert got["gpu.util_percent"] == 23.0


def test_another_jobs_busy_gpu_does_not_hide_an_idle_one() -> None:
    text = SMI.replace("|     23%      Default |", "|     97%      Default |")
    text = text.replace("48214      C   python    ", "48214      C   serve     ")
    text = text.replace("51022      C   /usr/bin/python3", "51022      C   /usr/bin/serve  ")
    got = facts(text)
    assert got["gpu.util_percent"] == 97.0  # the node's busiest GPU belongs to "serve"
    assert got["gpu.job_util_percent"] == 18.0  # python computes on GPU 0 only


def test_one_job_s_gpus_far_apart_give_the_gap() -> None:
    # python on GPU 0 (18%) and GPU 1: its GPUs 5 points apart, then 72 once GPU 1 is busy.
    assert facts(SMI)["gpu.job_util_gap_percent"] == 5.0
    got = facts(SMI.replace("|     23%      Default |", "|     90%      Default |"))
    assert got["gpu.job_util_gap_percent"] == 72.0
    assert got["gpu.job_util_percent"] == 90.0  # the job's busiest GPU is busy: only the gap shows the idle one


def test_a_gpu_without_a_process_raises_nothing() -> None:
    row = next(line for line in SMI.splitlines(keepends=True) if "48213" in line)
    text = SMI.replace(row, "")
    text = text.replace("|     18%      Default |", "|      0%      Default |")
    assert facts(text)["gpu.job_util_percent"] == 23.0  # GPU 0 idles with nobody on it


def test_no_running_processes_leaves_the_job_unknown() -> None:
    text = SMI.split("| Processes:")[0] + "| Processes:\n|  No running processes found |\n"
    assert "gpu.job_util_percent" not in facts(text)


def test_graphics_clients_are_not_a_job() -> None:
    text = SMI.replace("48213      C   python", "48213      G   Xorg  ")
    assert facts(text)["gpu.job_util_percent"] == 23.0


def test_a_real_paste_of_an_idle_training_gpu_triggers_the_playbook() -> None:
    got = facts(DEEPRACER_58)
    assert got["gpu.job_util_percent"] == 0.0
    report = analyse(artifacts_from_text(DEEPRACER_58, "p"))
    assert "gpu-underutilized" in report.symptoms


def test_seed_dmon_beside_a_cpu_busy_line() -> None:
    arts = artifacts_from_text(SEED_SCENARIO_2, "p")
    got = {f.name: f.value for a in arts for f in parse_artifact(a).facts}
    assert got["gpu.util_percent"] == 20.0
    assert got["cpu.busy_ratio"] == 0.95
    report = analyse(arts)
    finding = next(f for f in report.findings if f.playbook == "gpu-underutilized")
    status = {h.id: h.status for h in finding.hypotheses}
    assert status["input-pipeline-starved"] == "confirmed"


def test_a_cpu_line_without_dmon_samples_is_not_read() -> None:
    assert "cpu.busy_ratio" not in facts("CPU: 95%\n")


# nvidia-smi's default table as it prints it (R450 layout), rendered with sample values: the index row's last cell
# is "Volatile Uncorr. ECC".
def _table(ecc_gpu1: str) -> str:
    return (
        "| GPU  Name        Persistence-M| Bus-Id        Disp.A | Volatile Uncorr. ECC |\n"
        "| Fan  Temp  Perf  Pwr:Usage/Cap|         Memory-Usage | GPU-Util  Compute M. |\n"
        "|===============================+======================+======================|\n"
        "|   0  Tesla V100S-PCI...  Off  | 00000000:00:07.0 Off |                    0 |\n"
        "| N/A   50C    P0   219W / 250W |   4617MiB / 32510MiB |    100%      Default |\n"
        f"|   1  Tesla V100S-PCI...  Off  | 00000000:00:08.0 Off | {ecc_gpu1:>20} |\n"
        "| N/A   41C    P0    37W / 250W |      4MiB / 32510MiB |      0%      Default |\n"
        "+-------------------------------+----------------------+----------------------+\n"
    )


def test_the_volatile_uncorrected_ecc_column_is_read_per_gpu() -> None:
    got = parse_artifact(Artifact(id="s", kind=ArtifactKind.NVIDIA_SMI, content=_table("3"))).facts
    ecc = next(f for f in got if f.name == "gpu.ecc_dbe")
    assert (ecc.value, ecc.citation.start) == (3, 6)  # GPU 1's index row


@pytest.mark.parametrize("cell", ["0", "N/A"])
def test_a_zero_or_absent_ecc_count_is_not_read(cell: str) -> None:
    got = parse_artifact(Artifact(id="s", kind=ArtifactKind.NVIDIA_SMI, content=_table(cell))).facts
    assert "gpu.ecc_dbe" not in {f.name for f in got}
