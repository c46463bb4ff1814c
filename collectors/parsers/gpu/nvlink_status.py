"""`nvidia-smi nvlink -s` (`--status`) text into the inactive-link count NVML's JSON gives (fix round f7).

nvidia-smi is closed source; its wordings here are the ones NVIDIA's driver 418-580 nvidia-smi prints, as pasted in
Azure/azhpc-diagnostics#73 (V100) and leptonai/gpud#1085 (B200), and as gpud's NVLink check quotes NVML's
message in its source comments (leptonai/gpud, the NVLink component that shipped with #1085 in v0.8.0):

- a heading per GPU, the `nvidia-smi -L` line: `GPU 3: Tesla V100-SXM2-32GB (UUID: GPU-…)`;
- one line per link under it: `\t Link 0: 25.781 GB/s` when up, `\t Link 3: <inactive>` when down;
- NVML's `NVML: Unable to retrieve NVLink information as all links are inActive` in place of the links when no
  link of that GPU is up.

`nvidia-smi nvlink -e` (`--errorcounters`, round 16) prints, under the same heading (the UUID left out by some builds,
NVIDIA/srt-slurm#307 on GB300), three counters per link since the driver loaded: `\t Link 0: Replay Errors: 0`,
`Recovery Errors` and `CRC Errors`. Their sum over one GPU's links is NVML's data-link error count
(gpu.nvlink_errors); the worst GPU's is kept.

A link down while its neighbours on the same GPU are up is a fault (the nvlink-error hypothesis). A GPU with every
link down is one only where the board always wires NVLink: an SXM/HGX part (V100-SXM2, A100-SXM4, H100/H200 SXM,
B100/B200/B300): a PCIe card without a bridge, or a lone GH200, prints the same line and is healthy (gpud counts
it so only on operator request for that reason), so those are not read. How many links such a GPU lost is not
printed: it counts as 1, a lower bound.
"""

from __future__ import annotations

from typing import Any

import re2

from collectors.parsers.sink import FactSink

# google-re2 ships no type hints.
_GPU: Any = re2.compile(r"^GPU\s+(\d+):\s+(.+?)\s+\(UUID:[^)]*\)\s*$")
_LINK: Any = re2.compile(r"^\s+Link\s+(\d+):\s+(?:(<inactive>)|[\d.]+\s+[GM]B/s)\s*$")
# `nvidia-smi nvlink -e`: a heading with or without its UUID, then one counter a line.
_ERRORS_GPU: Any = re2.compile(r"^GPU\s+\d+:\s+\S")
_ERROR_COUNT: Any = re2.compile(r"^\s+Link\s+\d+:\s+(?:Replay|Recovery|CRC)\s+Errors:\s+(\d{1,12})\s*$")
_ALL_INACTIVE: Any = re2.compile(r"(?i)^\s*NVML:\s+Unable to retrieve NVLink information as all links are inactive")
# Parts sold only on NVLink boards (SXM modules and the HGX/DGX B-series); a lone GH200 has no GPU to link to.
_ALWAYS_LINKED: Any = re2.compile(r"(?i)\bSXM|\b(?:NVIDIA\s+)?G?B(?:100|200|300)\b|\bH(?:100|200)\s+80GB\s+HBM3\b")


def read_nvlink_status(sink: FactSink, lines: list[str]) -> None:
    """Emit gpu.nvlink_inactive_links: the most links down on one GPU whose other links are up, or that lost all."""
    worst: tuple[int, int] | None = None  # (inactive links, line) of the worst GPU
    heading: tuple[int, str] | None = None  # (line, GPU name) of the GPU whose links follow
    inactive: list[int] = []
    active = 0

    def close() -> None:
        nonlocal worst
        if inactive and active and (worst is None or len(inactive) > worst[0]):
            worst = (len(inactive), inactive[0])

    for number, line in enumerate(lines, start=1):
        if (gpu := _GPU.match(line)) is not None:
            close()
            heading, inactive, active = (number, gpu.group(2)), [], 0
        elif heading is not None and (link := _LINK.match(line)) is not None:
            if link.group(2):
                inactive.append(number)
            else:
                active += 1
        elif (heading is not None and worst is None and _ALL_INACTIVE.match(line)
              and _ALWAYS_LINKED.search(heading[1])):
            worst = (1, number)
    close()
    if worst is not None:
        sink.add("gpu.nvlink_inactive_links", worst[0], worst[1])


def read_nvlink_errors(sink: FactSink, lines: list[str]) -> None:
    """Emit gpu.nvlink_errors: the most replay, recovery and CRC errors counted over one GPU's links."""
    worst: tuple[int, int, int] | None = None  # (errors, first line, last line) of the worst GPU
    count, first, last = 0, 0, 0

    def close() -> None:
        nonlocal worst
        if first and (worst is None or count > worst[0]):
            worst = (count, first, last)

    for number, line in enumerate(lines, start=1):
        if _ERRORS_GPU.match(line):
            close()
            count, first, last = 0, 0, 0
        elif (found := _ERROR_COUNT.match(line)) is not None:
            count += int(found.group(1))
            first, last = first or number, number
    close()
    if worst is not None:
        sink.add("gpu.nvlink_errors", worst[0], worst[1], worst[2])

