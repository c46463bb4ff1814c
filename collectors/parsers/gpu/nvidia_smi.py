"""`nvidia-smi` (the default table), `nvidia-smi dmon` and `nvidia-smi -q` text into GPU facts.

This is what on-call pastes first when a GPU looks idle (seed 004:1461-1475). The table gives each GPU's
utilisation, memory and temperature and the processes on it (read per GPU and joined to the processes by
collectors/parsers/gpu/nvidia_smi_table.py); dmon gives samples over time, averaged per GPU so one busy second does
not hide a mostly idle GPU, and a CPU-busy line written beside them is read as the CPU side. The `-q` report's
memory-error sections are read by collectors/parsers/gpu/nvidia_smi_query.py.
"""

from __future__ import annotations

import re
from collections import defaultdict
from statistics import fmean

from collectors.models import Artifact, ArtifactKind, ParseResult
from collectors.parsers.contract import Parser
from collectors.parsers.gpu.gpu_ids import read_ids
from collectors.parsers.gpu.nvidia_smi_query import read_query
from collectors.parsers.gpu.nvidia_smi_table import emit, read_table
from collectors.parsers.gpu.nvlink_status import read_nvlink_errors, read_nvlink_status
from collectors.parsers.sink import FactSink
from collectors.sniffers.nvidia_smi import sniff
from collectors.text import normalise

_DMON_HEADER = re.compile(r"^#\s*gpu\s+(.*)$")
# A how-to or a chat message often puts the CPU side next to dmon in a line of its own: "CPU: 95% - 98%"
# (seed 004:1475), "CPU usage: 97%". A range is read at its low end. top's own "%Cpu(s):" is the top parser's.
_CPU_BUSY = re.compile(r"^#?\s*CPU(?:\s+(?:usage|util(?:i[sz]ation)?|busy|load))?\s*:\s*(\d{1,3}(?:\.\d+)?)\s*%"
                       r"(?:\s*(?:-|to)\s*\d{1,3}(?:\.\d+)?\s*%)?", re.IGNORECASE)


def parse(artifact: Artifact) -> ParseResult:
    lines = normalise(artifact.content).split("\n")
    sink = FactSink(artifact, lines)
    emit(sink, read_table(lines))
    if _dmon(sink, lines):
        _cpu_busy(sink, lines)
    read_query(sink, lines)
    read_ids(sink, lines)
    read_nvlink_status(sink, lines)
    read_nvlink_errors(sink, lines)
    return sink.done()


def _dmon(sink: FactSink, lines: list[str]) -> bool:
    """Mean sm and mem per GPU over the samples; the busiest GPU's mean is reported. True when samples were read.

    A document that quotes dmon as comments ("#     0    75     45 ...", seed 004:1466-1468) keeps its rows:
    dmon's own second header row ("# Idx  W  C ...") has no GPU index, so it is still skipped.
    """
    columns: list[str] = []
    samples: dict[str, dict[str, list[tuple[float, int]]]] = defaultdict(lambda: defaultdict(list))
    for n, line in enumerate(lines, 1):
        if h := _DMON_HEADER.match(line.strip()):
            columns = ["gpu", *h.group(1).split()]
            continue
        cells = line.strip().lstrip("#").split()
        if not columns or len(cells) != len(columns) or not cells[0].isdigit():
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
    return bool(samples)


def _cpu_busy(sink: FactSink, lines: list[str]) -> None:
    """A CPU-busy line beside dmon samples: the other half of the starved-input-pipeline pattern."""
    for n, line in enumerate(lines, 1):
        if m := _CPU_BUSY.match(line.strip()):
            value = float(m.group(1))
            if value <= 100:
                sink.add("cpu.busy_ratio", round(value / 100, 4), n)
                return


PARSER = Parser(kinds=(ArtifactKind.NVIDIA_SMI,), parse=parse, sniff=sniff, reads_many=True)
