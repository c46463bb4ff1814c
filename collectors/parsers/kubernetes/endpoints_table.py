"""`kubectl get endpoints` tables: which Services have no ready address behind them.

kubectl prints NAME, ENDPOINTS and AGE (NAMESPACE first with -A), as kubernetes/kubernetes
pkg/printers/internalversion/printers.go (printEndpoints, formatEndpoints; 1.11-1.31, the same function in
pkg/kubectl/resource_printer.go from 1.0) builds them: ENDPOINTS lists the ready addresses only (subsets'
`addresses`, never `notReadyAddresses`) as ip:port (a bare ip for a port-less headless Service, 1.19+) joined by
commas, at most three and then " + N more...", `<none>` when the Endpoints have no subsets, and an empty cell when
subsets hold only not-ready addresses. kubectl 1.0 printed NAME and ENDPOINTS alone (pkg/kubectl/resource_printer.go
endpointColumns; AGE came in 1.1): under that header a row has no AGE cell. People often grep the rows for a name,
losing the header: a block after a typed `kubectl get ep` is read as such (collectors/detect.py).
"""

from __future__ import annotations

from dataclasses import dataclass

from collectors.lazy_regex import LazyPattern
from collectors.models import Artifact, ArtifactKind, ParseResult
from collectors.parsers.contract import Parser
from collectors.parsers.kubernetes.k8s_common import DedupSink, subject_of
from collectors.text import normalise

_NAME = LazyPattern(r"[a-z0-9]([a-z0-9.-]{0,251}[a-z0-9])?")
_ADDRESS = r"(?:\[[0-9A-Fa-f:]+\]:\d+|[0-9A-Fa-f.:]+)"
# The ENDPOINTS cell and the AGE after it; "+ N more..." is one cell with spaces.
_ENDPOINTS = LazyPattern(rf"(<none>|{_ADDRESS}(?:,{_ADDRESS})*)(?: \+ (\d+) more\.\.\.)?\s+(\S+)")
_ENDPOINTS_AGELESS = LazyPattern(rf"(<none>|{_ADDRESS}(?:,{_ADDRESS})*)(?: \+ (\d+) more\.\.\.)?")
_AGE = LazyPattern(r"(?:\d+[smhdy])+|<unknown>|<invalid>")
_MAX_ROWS = 20_000


@dataclass
class _Row:
    number: int
    namespace: str
    name: str
    ready: int


def _is_header(line: str) -> bool:
    words = line.split()
    return words[:2] == ["NAME", "ENDPOINTS"] or words[:3] == ["NAMESPACE", "NAME", "ENDPOINTS"]


def _row(line: str, number: int, namespaced: bool, headed: bool = False, aged: bool = True) -> _Row | None:
    """One row, or None when the line is not an endpoints row."""
    cells = line.split(None, 2 if namespaced else 1)
    if len(cells) < (3 if namespaced else 2):
        return None
    namespace, name, rest = (cells[0], cells[1], cells[2]) if namespaced else ("", cells[0], cells[1])
    if not _NAME.fullmatch(name):
        return None
    if headed and aged and _AGE.fullmatch(rest.strip()):
        return _Row(number, namespace, name, 0)  # an empty cell under a header: only not-ready addresses
    m = (_ENDPOINTS if aged else _ENDPOINTS_AGELESS).fullmatch(rest.strip())
    if m is None:
        return None
    listed = 0 if m.group(1) == "<none>" else m.group(1).count(",") + 1
    return _Row(number, namespace, name, listed + int(m.group(2) or 0))


def sniff(text: str) -> int:
    """0-100 confidence that the text holds a `kubectl get endpoints` table (rows alone: only after the command)."""
    lines = normalise(text[:200_000]).split("\n", 2000)[:2000]
    for n, line in enumerate(lines):
        if _is_header(line):
            row = next((r for r in lines[n + 1:n + 3] if r.strip()), "")
            aged = "AGE" in line.split()
            return 90 if _row(row, 0, line.split()[0] == "NAMESPACE", aged=aged) is not None else 40
    rows = [ln for ln in lines if ln.strip()]
    # Below the detection threshold on its own: a NetworkPolicy row ("deny-all  <none>  5m") looks the same.
    return 20 if rows and all(_row(r, 0, False) or _row(r, 0, True) for r in rows[:5]) else 0


def parse(artifact: Artifact) -> ParseResult:
    """Facts from the rows: the first Service with no ready address is the one the paste is about."""
    lines = normalise(artifact.content).split("\n")
    sink = DedupSink(artifact, lines)
    _emit(sink, _rows(lines))
    return sink.done()


def _rows(lines: list[str]) -> list[_Row]:
    rows: list[_Row] = []
    namespaced: bool | None = None  # None: no header seen, rows are tried both ways
    aged = True  # kubectl 1.0's header has no AGE column
    for n, line in enumerate(lines, 1):
        if len(rows) >= _MAX_ROWS:
            break
        if _is_header(line):
            namespaced = line.split()[0] == "NAMESPACE"
            aged = "AGE" in line.split()
            continue
        if namespaced is None:
            row = _row(line, n, False) or _row(line, n, True)
        else:
            row = _row(line, n, namespaced, headed=True, aged=aged)
        if row is not None:
            rows.append(row)
    return rows


def _emit(sink: DedupSink, rows: list[_Row]) -> None:
    # endpoints.ready sums over what it is read from: only one Service's count is given, the first empty one's,
    # or the count of a table of one Service. Several Services with addresses say nothing about one of them.
    empty = [r for r in rows if r.ready == 0]
    focus = empty[0] if empty else (rows[0] if len(rows) == 1 else None)
    if focus is not None:
        sink.add("endpoints.ready", focus.ready, focus.number,
                 subject=subject_of("service", focus.name, focus.namespace))


PARSER = Parser(kinds=(ArtifactKind.ENDPOINTS_TABLE,), parse=parse, sniff=sniff, reads_many=True)
