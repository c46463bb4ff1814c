"""`nvidia-smi` (the default table), `nvidia-smi dmon` and `nvidia-smi -q` text into GPU facts.

This is what on-call pastes first when a GPU looks idle (seed 004:1461-1475). The table gives each GPU's
utilisation, memory and temperature and the processes on it; dmon gives samples over time, averaged per
GPU so one busy second does not hide a mostly idle GPU. Inside a container nvidia-smi cannot see other
PID namespaces, so "No running processes found" is not read as zero processes. The `-q` report's memory-error
sections are read by collectors/parsers/nvidia_smi_query.py.
"""

from __future__ import annotations

import re
from collections import defaultdict
from statistics import fmean

from collectors.models import Artifact, ArtifactKind, ParseResult
from collectors.parsers.contract import Parser
from collectors.parsers.nvidia_smi_query import SECTIONS, read_query
from collectors.parsers.sink import FactSink
from collectors.text import normalise

# "| N/A   34C    P0   91W / 400W |  12034MiB / 81920MiB |     18%      Default |"
_STATS = re.compile(r"\|\s*(?:\d+%|N/A)\s+(\d+)C\s+P\d+\s+(?:\d+W|N/A)\s*/\s*(?:\d+W|N/A)\s*\|"
                    r"\s*(\d+)MiB\s*/\s*(\d+)MiB\s*\|\s*(?:(\d+)%|N/A)")
# "|    0   N/A  N/A     48213      C   python      12024MiB |" (older drivers have no GI/CI columns)
_PROCESS = re.compile(r"^\|\s+(\d+)\s+(?:\S+\s+\S+\s+)?\d+\s+(?:C|G|C\+G|M|M\+C)\s+\S.*?\s(?:\d+MiB|N/A)\s*\|$")
_DMON_HEADER = re.compile(r"^#\s*gpu\s+(.*)$")


def sniff(text: str) -> int:
    """0-100 confidence that the text is nvidia-smi or nvidia-smi dmon output."""
    head = text[:50_000]
    if "NVIDIA-SMI" in head and "Driver Version" in head:
        return 95
    if re.search(r"(?m)^#\s*gpu\s+.*\bsm\b", head):
        return 90
    if SECTIONS.search(head) and re.search(r"(?m)^\s+(?:Pending|(?:DRAM |SRAM )?(?:Unc|C)orrectable(?: Error)?)\s+: ",
                                           head):
        return 85
    return 40 if _STATS.search(head) else 0


def parse(artifact: Artifact) -> ParseResult:
    lines = normalise(artifact.content).split("\n")
    sink = FactSink(artifact, lines)
    try:
        _table(sink, lines)
        _dmon(sink, lines)
        read_query(sink, lines)
    except Exception as exc:  # a parser must never take the triage down with it
        sink.problem(f"internal: nvidia-smi parser failed: {type(exc).__name__}: {exc}")
    return sink.done()


def _table(sink: FactSink, lines: list[str]) -> None:
    best_util: tuple[int, int] | None = None
    best_fb: tuple[float, int] | None = None
    best_temp: tuple[int, int] | None = None
    processes: dict[str, list[int]] = defaultdict(list)
    in_processes = False
    for n, line in enumerate(lines, 1):
        if "Processes:" in line:
            in_processes = True
        if in_processes and (p := _PROCESS.match(line.strip())):
            processes[p.group(1)].append(n)
            continue
        m = _STATS.search(line)
        if m is None:
            continue
        temp, used, total = int(m.group(1)), int(m.group(2)), int(m.group(3))
        if best_temp is None or temp > best_temp[0]:
            best_temp = (temp, n)
        if total > 0 and (best_fb is None or used / total > best_fb[0]):
            best_fb = (used / total, n)
        if m.group(4) is not None and (best_util is None or int(m.group(4)) > best_util[0]):
            best_util = (int(m.group(4)), n)
    if best_util:
        sink.add("gpu.util_percent", float(best_util[0]), best_util[1])
    if best_fb:
        sink.add("gpu.fb_used_ratio", round(best_fb[0], 4), best_fb[1])
    if best_temp:
        sink.add("gpu.temp_c", float(best_temp[0]), best_temp[1])
    if processes:
        rows = max(processes.values(), key=len)
        sink.add("gpu.process_count", len(rows), rows[0], rows[-1])


def _dmon(sink: FactSink, lines: list[str]) -> None:
    """Mean sm and mem per GPU over the samples; the busiest GPU's mean is reported."""
    columns: list[str] = []
    samples: dict[str, dict[str, list[tuple[float, int]]]] = defaultdict(lambda: defaultdict(list))
    for n, line in enumerate(lines, 1):
        if h := _DMON_HEADER.match(line.strip()):
            columns = ["gpu", *h.group(1).split()]
            continue
        cells = line.split()
        if not columns or line.lstrip().startswith("#") or len(cells) != len(columns) or not cells[0].isdigit():
            continue
        for name in ("sm", "mem"):
            if name in columns and (cell := cells[columns.index(name)]).isdigit():
                samples[cells[0]][name].append((float(cell), n))
    for name, fact, scale in (("sm", "gpu.util_percent", 1.0), ("mem", "gpu.dram_active_ratio", 0.01)):
        means = [(fmean(v for v, _ in rows), rows) for per_gpu in samples.values() if (rows := per_gpu[name])]
        if not means:
            continue
        mean, rows = max(means, key=lambda item: item[0])
        text = f"nvidia-smi dmon {name}: mean {mean:.1f}% over {len(rows)} samples"
        sink.add(fact, round(mean * scale, 4), rows[0][1], rows[-1][1], text=text)


PARSER = Parser(kinds=(ArtifactKind.NVIDIA_SMI,), parse=parse, sniff=sniff, reads_many=True)
