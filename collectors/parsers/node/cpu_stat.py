"""cgroup `cpu.stat`, v2 (usage_usec, nr_periods, nr_throttled, throttled_usec ...) or v1 (throttled_time).

Several files pasted one after another (a key repeats, or a non-counter line separates them) give one
set of facts each; the vocabulary keeps the largest, which is the most throttled cgroup.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from collectors.lazy_regex import LazyPattern
from collectors.models import Artifact, ArtifactKind, ParseResult
from collectors.parsers.contract import Parser
from collectors.parsers.sink import FactSink
from collectors.text import normalise

# "nr_throttled 12", also with a `grep -H` path in front: "/sys/fs/cgroup/.../cpu.stat:nr_throttled 12".
_COUNTER = LazyPattern(r"^\s*(?:\S*:)?([a-z][a-z_.]*)[ \t]+(\d+)\s*$")

# Keys that only cpu.stat has; used to tell it from other "name value" text.
_KNOWN = frozenset({
    "usage_usec", "user_usec", "system_usec", "core_sched.force_idle_usec", "nr_periods", "nr_throttled",
    "throttled_usec", "throttled_time", "nr_bursts", "burst_usec", "burst_time", "wait_sum",
})


@dataclass
class _Block:
    """One cpu.stat file: counter name -> (value, 1-based line)."""

    counters: dict[str, tuple[int, int]] = field(default_factory=dict)
    start: int = 0
    end: int = 0


# The same two counters as people tabulate them per pod or node: a table whose header names the CFS periods
# and the throttled periods (cpu.stat's nr_periods and nr_throttled; cAdvisor's container_cpu_cfs_periods_total
# and container_cpu_cfs_throttled_periods_total, google/cadvisor metrics/prometheus.go).
_PERIODS_CELL = LazyPattern(r"(?i)^(?:cfs[ _])?periods(?:[ _]total)?$|^nr_periods$|^cpu_cfs_periods")
_THROTTLED_CELL = LazyPattern(r"(?i)^throttled[ _]periods(?:[ _]total)?$|^nr_throttled$|^cpu_cfs_throttled_periods")
_MAX_TABLE_ROWS = 1000


def _cells(line: str) -> list[str]:
    """A markdown row's cells, or a plain row's columns (two spaces or more apart), bold marks taken off."""
    text = line.strip().replace("**", "").replace("`", "")
    parts = text.strip("|").split("|") if text.startswith("|") else re.split(r"\s{2,}|\t", text)
    return [p.strip() for p in parts]


def _table_columns(line: str) -> tuple[int, int] | None:
    cells = _cells(line)
    periods = next((i for i, c in enumerate(cells) if _PERIODS_CELL.search(c)), None)
    throttled = next((i for i, c in enumerate(cells) if _THROTTLED_CELL.search(c)), None)
    return (periods, throttled) if periods is not None and throttled is not None else None


def _table_ratios(lines: list[str]) -> list[tuple[int, int, int, int]]:
    """(periods, throttled, header line, row line) for every row under a header naming both counters."""
    out: list[tuple[int, int, int, int]] = []
    columns: tuple[int, int] | None = None
    header = 0
    for number, line in enumerate(lines, 1):
        if len(out) >= _MAX_TABLE_ROWS:
            break
        if (found := _table_columns(line)) is not None:
            columns, header = found, number
            continue
        if columns is None:
            continue
        cells = _cells(line)
        if set("".join(cells)) <= set("-: "):
            continue  # the markdown rule under the header
        values = [cells[i].replace(",", "") if i < len(cells) else "" for i in columns]
        if not all(v.isdigit() for v in values):
            columns = None  # the table ended
            continue
        out.append((int(values[0]), int(values[1]), header, number))
    return out


def sniff(text: str) -> int:
    """0-100 confidence, proportional to the share of lines that are cpu.stat counters."""
    lines = [ln for ln in normalise(text[:200_000]).split("\n")[:500] if ln.strip()]
    if _table_ratios(lines):
        return 90
    keys = [m.group(1) for ln in lines if (m := _COUNTER.match(ln))]
    known = sum(1 for key in keys if key in _KNOWN)
    if not lines or not {"nr_periods", "nr_throttled", "usage_usec", "throttled_time"} & set(keys):
        return 0
    return round(95 * known / len(lines))


def parse(artifact: Artifact) -> ParseResult:
    """Read CFS period and throttling counters from cpu.stat."""
    lines = normalise(artifact.content).split("\n")
    sink = FactSink(artifact, lines)
    for block in _blocks(lines):
        _emit(sink, block)
    for periods, throttled, header, row in _table_ratios(lines):
        _emit_ratio(sink, (periods, header), (throttled, row))
    return sink.done()


def _blocks(lines: list[str]) -> list[_Block]:
    blocks: list[_Block] = []
    current = _Block()
    for number, line in enumerate(lines, 1):
        m = _COUNTER.match(line)
        if m is None:
            if line.strip() and current.counters:
                blocks.append(current)  # a header or prompt between files ends the one before it
                current = _Block()
            continue
        key = m.group(1)
        if key in current.counters:
            blocks.append(current)
            current = _Block()
        if not current.counters:
            current.start = number
        current.counters[key] = (int(m.group(2)), number)
        current.end = number
    if current.counters:
        blocks.append(current)
    return [b for b in blocks if _KNOWN & b.counters.keys()]


def _emit(sink: FactSink, block: _Block) -> None:
    periods = block.counters.get("nr_periods")
    throttled = block.counters.get("nr_throttled")
    if periods is not None:
        sink.add("cpu.nr_periods", periods[0], periods[1])
    if throttled is not None:
        sink.add("cpu.nr_throttled", throttled[0], throttled[1])
    if periods is not None and throttled is not None:
        _emit_ratio(sink, periods, throttled)
    elif periods is not None or throttled is not None:
        missing = "nr_throttled" if periods is not None else "nr_periods"
        sink.problem(f"lines {block.start}-{block.end}: cpu.stat without {missing}; "
                     "throttled ratio not computed")
    else:
        # cgroup v2 prints only usage counters when the cpu controller is off for the cgroup (no CPU limit).
        sink.problem(f"lines {block.start}-{block.end}: cpu.stat without nr_periods/nr_throttled "
                     "(cpu controller not enabled for this cgroup, or the paste is cut); throttling not read")


def _emit_ratio(sink: FactSink, periods: tuple[int, int], throttled: tuple[int, int]) -> None:
    (n_periods, p_line), (n_throttled, t_line) = periods, throttled
    if n_throttled > n_periods:
        sink.problem(f"line {t_line}: nr_throttled {n_throttled} exceeds nr_periods {n_periods}; "
                     "ratio not computed")
        return
    # No elapsed CFS periods means no quota is enforced, so nothing can have been throttled.
    ratio = 0.0 if n_periods == 0 else round(n_throttled / n_periods, 4)
    sink.add("cpu.throttled_ratio", ratio, min(p_line, t_line), max(p_line, t_line),
             text=f"nr_throttled {n_throttled} / nr_periods {n_periods}")


PARSER = Parser(kinds=(ArtifactKind.CPU_STAT,), parse=parse, sniff=sniff, reads_many=True)
