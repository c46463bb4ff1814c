"""gpustat's one line per GPU: utilisation, memory and temperature of each GPU.

gpustat (wookayin/gpustat, gpustat/core.py GPUStat.print_to, 0.4-1.1) prints, for each GPU,
`[index] name | temperature'C, [fan %, ] utilisation % [(E: n %  D: n %)] [,  draw / limit W] | used / total MB |
processes` (°C since 1.0, 'C before), with `??` for a value NVML did not give. The busiest GPU's utilisation, the
fullest GPU's memory share and the hottest GPU's temperature are read, the same facts the nvidia-smi table gives.
Each process is `[user][:command][/pid](memoryM)` (the user by default, the command with -c, the pid with -p): a
job spread over several GPUs is one owner, and the gap between its busiest and least busy GPU is read, so one GPU
of the job doing far less than the others (DataParallel's replicas, an idle second GPU) is seen.
"""

from __future__ import annotations

from typing import Any

import re2

from collectors.models import Artifact, ParseResult
from collectors.parsers.sink import FactSink

_MAX_LINE = 4096
_MAX_LINES = 20_000
# Our own pattern for the fields above; the GPU name may hold spaces and '|' never appears in it. A line pasted as a
# markdown table row ("| [0]GeForce GTX 1080 Ti  | 27'C,   100 % | ...") opens with the cell's bar.
_ROW: Any = re2.compile(
    r"^\s*(?:\|\s*)?\[(\d{1,3})\]\s*[^|]*?\|\s*(\d+|\?\?)\s*(?:°|')C,\s*(?:(?:\d+|\?\?)\s*%,\s*)?(\d+|\?\?)\s*%"
    r"(?:\s*\([^)]*\))?(?:,\s*[^|]*W)?\s*\|\s*(\d+|\?\?)\s*/\s*(\d+|\?\?)\s*MB\s*\|")
# One process in the last cell: "alice(7997M)", "alice:python/4242(7997M)", "python/52046(11821M)".
_PROCESS: Any = re2.compile(r"([^\s()|]+)\((\d+)M\)")
# A process holding under this share of its GPU's memory is a desktop or a monitoring agent (root(5M)), no job.
_TOKEN_SHARE = 0.01


def read(artifact: Artifact) -> ParseResult:
    lines = artifact.content.split("\n")[:_MAX_LINES]
    sink = FactSink(artifact, lines)
    rows: list[tuple[int, int | None, int | None, float | None]] = []  # line, temp, util, memory share
    jobs: dict[str, list[tuple[int, int]]] = {}  # owner -> (line, utilisation) of each GPU it holds
    for n, line in enumerate(lines, 1):
        if "[" not in line or (m := _ROW.match(line[:_MAX_LINE])) is None:
            continue
        temp, util, used, total = (None if g == "??" else int(g) for g in m.group(2, 3, 4, 5))
        share = used / total if used is not None and total else None
        rows.append((n, temp, util, share))
        if util is not None and total:
            for owner in _owners(line[m.end():_MAX_LINE], total):
                jobs.setdefault(owner, []).append((n, util))
    _highest(sink, rows, 2, "gpu.util_percent", 1.0)
    _highest(sink, rows, 3, "gpu.fb_used_ratio", 1.0)
    _highest(sink, rows, 1, "gpu.temp_c", 1.0)
    _widest_gap(sink, jobs)
    return sink.done()


def _owners(cell: str, total_mb: int) -> set[str]:
    """The owners (user, else command) of the processes in a GPU's last cell that hold a job's share of memory."""
    out: set[str] = set()
    for m in _PROCESS.finditer(cell):
        if int(m.group(2)) >= total_mb * _TOKEN_SHARE:
            out.add(m.group(1).split(":")[0].split("/")[0])
    return out


def _widest_gap(sink: FactSink, jobs: dict[str, list[tuple[int, int]]]) -> None:
    """The largest gap between a job's busiest and least busy GPU, for jobs on two GPUs or more."""
    gaps = [(max(u for _, u in held) - min(u for _, u in held), owner, held)
            for owner, held in jobs.items() if len(held) >= 2]
    if not gaps:
        return
    gap, owner, held = max(gaps, key=lambda g: g[0])
    text = f"{owner}'s GPUs at {', '.join(f'{u}%' for _, u in held)}: {gap} points apart"
    sink.add("gpu.job_util_gap_percent", float(gap), held[0][0], held[-1][0], text=text)


def _highest(sink: FactSink, rows: list[tuple[int, int | None, int | None, float | None]], column: int,
             fact: str, scale: float) -> None:
    known = [(r[0], r[column]) for r in rows if r[column] is not None]
    if known:
        n, value = max(known, key=lambda nv: nv[1] or 0)
        sink.add(fact, round(float(value or 0) * scale, 4), n)
