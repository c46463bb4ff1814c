"""gpustat's one line per GPU: utilisation, memory and temperature of each GPU.

gpustat (wookayin/gpustat, gpustat/core.py GPUStat.print_to, 0.4-1.1) prints, for each GPU,
`[index] name | temperature'C, [fan %, ] utilisation % [(E: n %  D: n %)] [,  draw / limit W] | used / total MB |
processes` (°C since 1.0, 'C before), with `??` for a value NVML did not give. The busiest GPU's utilisation, the
fullest GPU's memory share and the hottest GPU's temperature are read, the same facts the nvidia-smi table gives.
"""

from __future__ import annotations

from typing import Any

import re2

from collectors.models import Artifact, ParseResult
from collectors.parsers.sink import FactSink

_MAX_LINE = 4096
_MAX_LINES = 20_000
# Our own pattern for the fields above; the GPU name may hold spaces and '|' never appears in it.
_ROW: Any = re2.compile(
    r"^\s*\[(\d{1,3})\]\s+[^|]*?\|\s*(\d+|\?\?)\s*(?:°|')C,\s*(?:(?:\d+|\?\?)\s*%,\s*)?(\d+|\?\?)\s*%"
    r"(?:\s*\([^)]*\))?(?:,\s*[^|]*W)?\s*\|\s*(\d+|\?\?)\s*/\s*(\d+|\?\?)\s*MB\s*\|")


def read(artifact: Artifact) -> ParseResult:
    lines = artifact.content.split("\n")[:_MAX_LINES]
    sink = FactSink(artifact, lines)
    rows: list[tuple[int, int | None, int | None, float | None]] = []  # line, temp, util, memory share
    for n, line in enumerate(lines, 1):
        if "[" not in line or (m := _ROW.match(line[:_MAX_LINE])) is None:
            continue
        temp, util, used, total = (None if g == "??" else int(g) for g in m.group(2, 3, 4, 5))
        share = used / total if used is not None and total else None
        rows.append((n, temp, util, share))
    _highest(sink, rows, 2, "gpu.util_percent", 1.0)
    _highest(sink, rows, 3, "gpu.fb_used_ratio", 1.0)
    _highest(sink, rows, 1, "gpu.temp_c", 1.0)
    return sink.done()


def _highest(sink: FactSink, rows: list[tuple[int, int | None, int | None, float | None]], column: int,
             fact: str, scale: float) -> None:
    known = [(r[0], r[column]) for r in rows if r[column] is not None]
    if known:
        n, value = max(known, key=lambda nv: nv[1] or 0)
        sink.add(fact, round(float(value or 0) * scale, 4), n)
