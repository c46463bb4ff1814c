"""A benchmark tabulated by CPU limit: the experiment that settles CFS throttling, as a table.

People who suspect the CPU limit run the same load at several limits and paste one row per limit ("CPU limit |
Throughput | p50 latency | p99 latency": 500m, 1000m, 2000m). The CFS quota behind a limit is the limit's share of
each 100 ms period (kernel Documentation/scheduler/sched-bwc.rst, cpu.cfs_quota_us over cpu.cfs_period_us; the
kubelet sets it from the limit, pkg/kubelet/cm/helpers_linux.go MilliCPUToQuota): when the latency at the lowest
limit is well above the latency at the highest, the quota was slowing the requests. That is `cpu.limit_slowed`,
which collectors/catalogs/signals.yaml (cpu-limit-removed-latency-fell) reads when the same experiment is told in
a sentence. A table whose latency does not fall with a higher limit gives nothing.

Added in fix round f8 (issue #24). Pure, linear in the text: each line is split once.
"""

from __future__ import annotations

import re

from collectors.models import Artifact, ParseResult
from collectors.parsers.sink import FactSink

_MAX_LINE = 1024
_MAX_ROWS = 32
# The latency at the lowest limit must be this much above the highest limit's: run-to-run noise is not the quota.
_SLOWED = 1.25

_HEADER_LIMIT = re.compile(r"(?i)^\s*(?:cpu[ _-]?limits?|limits?\.cpu|cpu)\s*(?:\([^)]*\))?\s*$")
# The latency column, in order of preference: a tail percentile, then a middle one, then a bare "latency".
_LATENCY_COLUMNS = (re.compile(r"(?i)\bp99(?:\.\d+)?\b.*\blatency\b|\blatency\b.*\bp99\b"),
                    re.compile(r"(?i)\bp9[05]\b.*\blatency\b|\blatency\b.*\bp9[05]\b"),
                    re.compile(r"(?i)\b(?:p50|median|avg|average|mean)\b.*\blatency\b|\blatency\b.*\b(?:p50|avg|mean)\b"),
                    re.compile(r"(?i)^\s*latency\b"))
_CPU = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(m)?\s*(?:cores?|cpus?|vcpus?)?\s*$", re.IGNORECASE)
_TIME = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(ms|s|us|µs|sec|secs|seconds)?\s*$", re.IGNORECASE)
_RULE = re.compile(r"^[\s|:+-]*-{3,}[\s|:+-]*$")
_TO_SECONDS = {"ms": 1e-3, "s": 1.0, "sec": 1.0, "secs": 1.0, "seconds": 1.0, "us": 1e-6, "µs": 1e-6}


def _cells(line: str) -> list[str]:
    if "|" in line:
        return [c.strip() for c in line.strip().strip("|").split("|")]
    return [c.strip() for c in re.split(r"\t+|\s{2,}", line.strip())]


def _millicores(cell: str) -> float | None:
    m = _CPU.match(cell)
    if m is None:
        return None
    return float(m.group(1)) * (1.0 if m.group(2) else 1000.0)


def _seconds(cell: str, header_unit: str | None) -> float | None:
    m = _TIME.match(cell)
    if m is None:
        return None
    unit = (m.group(2) or header_unit or "").lower()
    if unit not in _TO_SECONDS:
        return None  # a bare number under a header that names no unit: no reading
    return float(m.group(1)) * _TO_SECONDS[unit]


def _latency_column(header: list[str]) -> int | None:
    for pattern in _LATENCY_COLUMNS:
        for index, cell in enumerate(header):
            if pattern.search(cell):
                return index
    return None


def read(artifact: Artifact) -> ParseResult:
    """`cpu.limit_slowed` from each table whose first column is the CPU limit and whose latency falls as it rises."""
    lines = artifact.content.split("\n")
    sink = FactSink(artifact, lines)
    for index, line in enumerate(lines):
        if "limit" not in line.lower() and "cpu" not in line.lower():
            continue
        header = _cells(line[:_MAX_LINE])
        if len(header) < 2 or not _HEADER_LIMIT.match(header[0]):
            continue
        column = _latency_column(header)
        if column is None:
            continue
        unit = re.search(r"(?i)\((ms|s|us|µs)\)", header[column])
        rows: list[tuple[float, float, int]] = []
        for at in range(index + 1, min(len(lines), index + 2 + _MAX_ROWS)):
            text = lines[at][:_MAX_LINE]
            if _RULE.match(text):
                continue
            cells = _cells(text)
            if len(cells) != len(header):
                break
            cpu = _millicores(cells[0])
            seconds = _seconds(cells[column], unit.group(1) if unit else None)
            if cpu is None or seconds is None:
                break
            rows.append((cpu, seconds, at + 1))
        if len(rows) < 2:
            continue
        lowest, highest = min(rows), max(rows)
        if lowest[0] < highest[0] and lowest[1] >= _SLOWED * highest[1]:
            sink.add("cpu.limit_slowed", True, index + 1, max(r[2] for r in rows),
                     text=" / ".join(lines[i].strip() for i in (index, lowest[2] - 1, highest[2] - 1)))
    return sink.done()
