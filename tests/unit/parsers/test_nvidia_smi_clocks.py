"""`nvidia-smi -q`'s Clocks and Max Clocks sections give the SM clock's share of its maximum (gpu.sm_clock_ratio)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from collectors.models import Artifact, ArtifactKind, ParseResult
from collectors.parsers.gpu import nvidia_smi
from collectors.parsers.registry import SNIFFERS

# https://github.com/RainbowMiner/RainbowMiner/issues/36 (a GTX 1080 under load, `nvidia-smi -q -d CLOCK`), cut
# at whole lines after the SM clock samples.
RAINBOWMINER_36 = r"""C:\Program Files\NVIDIA Corporation\NVSMI>nvidia-smi.exe -q -d CLOCK

==============NVSMI LOG==============

Timestamp                           : Thu Aug 23 23:30:42 2018
Driver Version                      : 398.82

Attached GPUs                       : 6
GPU 00000000:01:00.0
    Clocks
        Graphics                    : 1835 MHz
        SM                          : 1835 MHz
        Memory                      : 5508 MHz
        Video                       : 1556 MHz
    Applications Clocks
        Graphics                    : N/A
        Memory                      : N/A
    Default Applications Clocks
        Graphics                    : N/A
        Memory                      : N/A
    Max Clocks
        Graphics                    : 1974 MHz
        SM                          : 1974 MHz
        Memory                      : 5505 MHz
        Video                       : 1620 MHz
    Max Customer Boost Clocks
        Graphics                    : N/A
    SM Clock Samples
        Duration                    : 5.63 sec
        Number of Samples           : 100
        Max                         : 1923 MHz
        Min                         : 1695 MHz
        Avg                         : 1852 MHz
"""

# https://github.com/NVIDIA/k8s-device-plugin/issues/110 (a GPU held at 1350 of 2100 MHz while idle), the
# fragment of the report the issue quotes, cut at whole lines from its SM clock.
DEVICE_PLUGIN_110 = """        SM                          : 1350 MHz
        Memory                      : 7000 MHz
        Video                       : 1245 MHz
    Applications Clocks
        Graphics                    : 1350 MHz
        Memory                      : 7001 MHz
    Default Applications Clocks
        Graphics                    : 1350 MHz
        Memory                      : 7001 MHz
    Max Clocks
        Graphics                    : 2100 MHz
        SM                          : 2100 MHz
        Memory                      : 7001 MHz
        Video                       : 1950 MHz
"""

# https://github.com/wookayin/gpustat/issues/135 (the Clocks and Max Clocks sections of a report, quoted alone).
GPUSTAT_135 = """    Clocks
        Graphics                          : 2025 MHz
        SM                                : 2025 MHz
        Memory                            : 10251 MHz
        Video                             : 1785 MHz
    Max Clocks
        Graphics                          : 2100 MHz
        SM                                : 2100 MHz
        Memory                            : 10501 MHz
        Video                             : 1950 MHz
"""


def run(text: str) -> ParseResult:
    return nvidia_smi.parse(Artifact(id="a", kind=ArtifactKind.NVIDIA_SMI, content=text))


def ratios(result: ParseResult) -> list[tuple[object, int, int, str | None]]:
    return [(f.value, f.citation.start, f.citation.end, f.subject) for f in result.facts
            if f.name == "gpu.sm_clock_ratio"]


def test_a_loaded_gpu_runs_near_its_maximum_sm_clock() -> None:
    assert SNIFFERS[ArtifactKind.NVIDIA_SMI](RAINBOWMINER_36) >= 80
    assert ratios(run(RAINBOWMINER_36)) == [(0.93, 12, 23, "gpu/00000000:01:00.0")]


def test_sections_quoted_without_their_gpu_line_count_as_one_gpu() -> None:
    assert ratios(run(GPUSTAT_135)) == [(0.964, 3, 8, "")]


def test_no_current_clock_heading_means_no_ratio() -> None:
    # The fragment starts below its `Clocks` heading: the 1350 MHz cannot be told from another section's value.
    assert ratios(run(DEVICE_PLUGIN_110)) == []


@given(st.text(alphabet=st.sampled_from(list("Clocks MaxSM:0123456789 \nHz")), max_size=300))
def test_garbage_never_raises(text: str) -> None:
    for value, _, _, _ in ratios(run(text)):
        assert isinstance(value, float) and 0.0 <= value <= 1.0
