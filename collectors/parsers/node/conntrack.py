"""Conntrack counters: `conntrack -S`, /proc/net/stat/nf_conntrack, and nf_conntrack_count / _max values.

`conntrack.drops` is emitted whenever counters were read, including 0: zero drops is what rules
conntrack exhaustion out. A paste holding two snapshots (cpu=0 appears again) gives one fact per
snapshot; the vocabulary keeps the largest, which for these monotonic counters is the latest.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from collectors.lazy_regex import LazyPattern
from collectors.models import Artifact, ArtifactKind, ParseResult
from collectors.parsers.contract import Parser
from collectors.parsers.sink import FactSink
from collectors.text import normalise

_DROP_COUNTERS = ("drop", "early_drop", "insert_failed")

_CPU_LINE = LazyPattern(r"(?:^|\s)cpu=(\d+)\s")
_COUNTER = LazyPattern(r"\b([a-z_]+)=(\d+)\b")
_HEX_ROW = LazyPattern(r"^\s*[0-9a-fA-F]{8}(?:\s+[0-9a-fA-F]{8})+\s*$")
# "net.netfilter.nf_conntrack_count = 262000", "/proc/sys/net/netfilter/nf_conntrack_max:262144",
# "nf_conntrack_count: 262000"; nf_conntrack_expect_max and friends do not match.
_LIMIT_VALUE = LazyPattern(r"nf_conntrack_(count|max)\b['\"]?(?:\s*[=:]\s*|\s+)(\d+)\s*$")
# A command or label whose value is printed on the next line: `cat .../nf_conntrack_count`, `conntrack -C`.
_LIMIT_KEY = LazyPattern(r"nf_conntrack_(count|max)\b|\bconntrack\s+(?:-C|--count)\b")
_BARE_INT = LazyPattern(r"^\s*(\d+)\s*$")
_TOOL_BANNER = LazyPattern(r"^conntrack v\d")
_SYSCTL = LazyPattern(r"nf_conntrack_\w+\s*=\s*\d+\s*$")  # other conntrack sysctls pasted alongside


@dataclass
class _Snapshot:
    """Per-CPU counters read in one `conntrack -S` run or one /proc/net/stat/nf_conntrack table."""

    start: int
    end: int
    drops: int = 0
    cpus: set[int] = field(default_factory=set)
    read: bool = False  # at least one drop counter was present


@dataclass
class _Scan:
    snapshots: list[_Snapshot] = field(default_factory=list)
    current: _Snapshot | None = None
    header: list[str] | None = None  # column names of a /proc/net/stat/nf_conntrack table
    limits: dict[str, tuple[int, int]] = field(default_factory=dict)  # "count"/"max" -> (value, line)
    pending: str | None = None
    headerless: int | None = None  # first hex row seen with no header above it
    problems: list[str] = field(default_factory=list)


def sniff(text: str) -> int:
    """0-100 confidence, proportional to the share of lines that are conntrack counters."""
    lines = [ln for ln in normalise(text[:200_000]).split("\n")[:500] if ln.strip()]
    if not lines:
        return 0
    known = 0
    in_table = False
    for line in lines:
        if _is_proc_header(line):
            in_table, known = True, known + 1
        elif (in_table and _HEX_ROW.match(line)) or _is_counter_line(line):
            known += 1
        else:
            in_table = False
    return round(95 * known / len(lines))


# Older conntrack-tools print `conntrack -S` as one counter per line: "insert_failed\t\t0".
_VERTICAL = LazyPattern(r"^\s*(entries|searched|found|new|invalid|ignore|delete|delete_list|insert|insert_failed|drop|"
                        r"early_drop|error|icmp_error|expect_new|expect_create|expect_delete|search_restart)\s+(\d+)\s*$")


def _is_counter_line(line: str) -> bool:
    if _is_cpu_line(line) or _VERTICAL.match(line) is not None:
        return True
    return any(rx.search(line) for rx in (_LIMIT_VALUE, _TOOL_BANNER, _SYSCTL))


def parse(artifact: Artifact) -> ParseResult:
    """Read drop counters and table usage from conntrack statistics."""
    lines = normalise(artifact.content).split("\n")
    sink = FactSink(artifact, lines)
    scan = _scan(lines)
    _emit(sink, scan)
    return sink.done()


# ---- scanning ----------------------------------------------------------------------------------------


def _scan(lines: list[str]) -> _Scan:
    scan = _Scan()
    vertical: dict[str, int] = {}
    vertical_lines: list[int] = []
    for number, line in enumerate(lines, 1):
        if (m := _VERTICAL.match(line)) is not None and not _is_proc_header(line):
            vertical[m.group(1)] = int(m.group(2))
            vertical_lines.append(number)
            continue
        if vertical:
            _read_vertical(scan, vertical, vertical_lines)
            vertical, vertical_lines = {}, []
        if not line.strip():
            continue
        _take_pending(scan, line, number)
        if _is_proc_header(line):
            _close(scan)
            scan.header = line.split()
        elif scan.header is not None and _HEX_ROW.match(line):
            _read_proc_row(scan, line, number)
        elif _is_cpu_line(line):
            if scan.header is not None:  # a /proc table just ended: its rows are not this run's CPUs
                scan.header = None
                _close(scan)
            _read_cpu_line(scan, line, number)
        else:
            scan.header = None
            _read_limit(scan, line, number)
            if _HEX_ROW.match(line) and scan.headerless is None:
                scan.headerless = number
    if vertical:
        _read_vertical(scan, vertical, vertical_lines)
    _close(scan)
    if scan.headerless is not None:
        scan.problems.append(f"line {scan.headerless}: /proc/net/stat/nf_conntrack rows without their header "
                             "line; cannot tell which column is which")
    return scan


def _read_vertical(scan: _Scan, counters: dict[str, int], numbers: list[int]) -> None:
    """One run of the one-counter-per-line format: the table's totals, like a single CPU line."""
    if not any(key in counters for key in _DROP_COUNTERS):
        return
    _close(scan)
    snap = _snapshot_for(scan, 0, numbers[0])
    snap.end = numbers[-1]
    _add_drops(scan, snap, counters, numbers[-1])
    _close(scan)


def _is_cpu_line(line: str) -> bool:
    return "cpu=" in line and _CPU_LINE.search(line) is not None and "=" in line.split("cpu=", 1)[1]


def _is_proc_header(line: str) -> bool:
    words = line.split()
    return bool(words) and words[0] == "entries" and "drop" in words and "insert_failed" in words


def _snapshot_for(scan: _Scan, cpu: int, number: int) -> _Snapshot:
    """The open snapshot, or a new one when this CPU was already counted (a second run was pasted)."""
    if scan.current is None or cpu in scan.current.cpus:
        _close(scan)
        scan.current = _Snapshot(start=number, end=number)
    scan.current.cpus.add(cpu)
    scan.current.end = number
    return scan.current


def _close(scan: _Scan) -> None:
    if scan.current is not None:
        scan.snapshots.append(scan.current)
        scan.current = None


def _read_cpu_line(scan: _Scan, line: str, number: int) -> None:
    m = _CPU_LINE.search(line)
    if m is None:
        return
    counters = {key: int(value) for key, value in _COUNTER.findall(line)}
    snap = _snapshot_for(scan, int(m.group(1)), number)
    _add_drops(scan, snap, counters, number)


def _read_proc_row(scan: _Scan, line: str, number: int) -> None:
    header = scan.header or []
    values = [int(word, 16) for word in line.split()]
    counters = dict(zip(header, values, strict=False))
    # Rows carry no CPU number; they come in CPU order, so the row index within the table stands in.
    row = len(scan.current.cpus) if scan.current is not None else 0
    snap = _snapshot_for(scan, row, number)
    _add_drops(scan, snap, counters, number)
    if "entries" in counters:
        # Every row repeats the table-wide entry count; it is nf_conntrack_count.
        scan.limits.setdefault("count", (counters["entries"], number))


def _add_drops(scan: _Scan, snap: _Snapshot, counters: dict[str, int], number: int) -> None:
    present = [counters[key] for key in _DROP_COUNTERS if key in counters]
    if not present:
        scan.problems.append(f"line {number}: conntrack counters without drop, early_drop or insert_failed")
        return
    snap.read = True
    snap.drops += sum(present)


def _read_limit(scan: _Scan, line: str, number: int) -> None:
    # The first value printed wins: net.netfilter.nf_conntrack_max and net.nf_conntrack_max repeat it.
    if m := _LIMIT_VALUE.search(line):
        scan.limits.setdefault(m.group(1), (int(m.group(2)), number))
    elif k := _LIMIT_KEY.search(line):
        scan.pending = k.group(1) or "count"  # `conntrack -C` prints the entry count


def _take_pending(scan: _Scan, line: str, number: int) -> None:
    """Give a value printed alone on the line after its command (`cat .../nf_conntrack_max`) to that key."""
    if scan.pending is None:
        return
    if m := _BARE_INT.match(line):
        scan.limits.setdefault(scan.pending, (int(m.group(1)), number))
    scan.pending = None


# ---- emitting ----------------------------------------------------------------------------------------


def _emit(sink: FactSink, scan: _Scan) -> None:
    for problem in scan.problems:
        sink.problem(problem)
    for snap in scan.snapshots:
        if snap.read:
            sink.add("conntrack.drops", snap.drops, snap.start, snap.end)
    _emit_usage(sink, scan)


def _emit_usage(sink: FactSink, scan: _Scan) -> None:
    if "count" not in scan.limits or "max" not in scan.limits:
        return
    (count, count_line), (limit, limit_line) = scan.limits["count"], scan.limits["max"]
    if limit <= 0:
        sink.problem(f"line {limit_line}: nf_conntrack_max is {limit}; cannot compute table usage")
        return
    start, end = min(count_line, limit_line), max(count_line, limit_line)
    sink.add("conntrack.usage_ratio", round(count / limit, 4), start, end,
             text=f"nf_conntrack_count {count} / nf_conntrack_max {limit}")


PARSER = Parser(kinds=(ArtifactKind.CONNTRACK_STATS,), parse=parse, sniff=sniff, reads_many=True)
