"""`kubectl get nodes` tables (default and `-o wide`, with or without the ROLES column of kubectl 1.8 and later).

STATUS is the node's Ready condition as kubectl prints it (Ready, NotReady, Unknown), with `SchedulingDisabled`
after a comma for a cordoned node.
"""

from __future__ import annotations

from collectors.lazy_regex import LazyPattern
from collectors.models import Artifact, ArtifactKind, ParseResult
from collectors.parsers.contract import Parser
from collectors.parsers.kubernetes.k8s_common import DedupSink, subject_of
from collectors.text import normalise

_NAME = LazyPattern(r"[a-z0-9]([a-z0-9.-]{0,251}[a-z0-9])?")
# A node name the person hid before pasting: "(node-1-ip)", "<node2>", "[redacted]", "xxx-xxx", "***". kubectl
# never prints these characters in a name (names are DNS subdomains), so a bracketed or starred cell in the NAME
# column is a redaction, and the row is still a node row.
_REDACTED = LazyPattern(r"[(<\[{][^\s()<>\[\]{}]{1,60}[)>\]}]"
                        r"|[*xX]{3,}[A-Za-z0-9.*-]{0,60}|[A-Za-z0-9.-]{0,60}[*xX]{3,}")
# kubectl 1.6-1.7 appended the node's role (its `kubernetes.io/role` label, or a `node-role.kubernetes.io/` key) to
# STATUS after SchedulingDisabled: "Ready,master", "NotReady,agent", "Ready,SchedulingDisabled,master"
# (pkg/printers/internalversion/printers.go, printNode and findNodeRole, 1.6-1.7; ROLES became a column in 1.8).
_STATUS = LazyPattern(r"(Ready|NotReady|Unknown)(,SchedulingDisabled)?(?:,[a-z0-9](?:[a-z0-9._-]{0,61}[a-z0-9])?)?")
_MAX_ROWS = 20_000
# A row a person cut out of the paste and marked so ("...", "........", "…"): the table goes on after it.
_ELIDED = LazyPattern(r"\s*(?:\.{3,}|…+)\s*")


# kubectl's node columns by era (kubernetes/kubernetes pkg/kubectl/resource_printer.go, later
# pkg/printers/internalversion/printers.go): NAME STATUS AGE (+ EXTERNAL-IP with -o wide) in 1.2-1.5, VERSION added
# in 1.6, ROLES in 1.8. `kubectl get namespaces` also prints NAME STATUS AGE: its rows (Active, Terminating) are
# not node rows, so the first row decides (see sniff).
_OLD_HEADERS = (["NAME", "STATUS", "AGE"], ["NAME", "STATUS", "AGE", "EXTERNAL-IP"])
# Before 1.2 the labels were a column between NAME and STATUS: NAME LABELS STATUS (1.0), + AGE (1.1)
# (pkg/kubectl/resource_printer.go nodeColumns); `--show-labels` moved them to the end in 1.2.
_LABELLED_HEADERS = (["NAME", "LABELS", "STATUS"], ["NAME", "LABELS", "STATUS", "AGE"])
# A paste quoted in markdown ("> ", "> > "): the table's lines behind the quote marks.
_QUOTE = LazyPattern(r"^(?:[ \t]*>)+[ \t]?")
# The command the rows were printed by, when the header was left out of the paste: `kubectl get nodes`, an alias
# (`k`, `kc`) or `get no`, as the last words of a prompt line.
_COMMAND = LazyPattern(r"(?:^|\s)(?:kubectl|k|kc|oc)\s+get\s+(?:nodes?|no)\s*$")


def _is_header(line: str) -> bool:
    words = line.split()
    if words in _OLD_HEADERS or words in _LABELLED_HEADERS:
        return True
    return words[:2] == ["NAME", "STATUS"] and "VERSION" in words and "READY" not in words


def _opens_table(line: str) -> bool:
    return _is_header(line) or _COMMAND.search(line) is not None


def _lines(text: str) -> list[str]:
    return [_QUOTE.sub("", line) if ">" in line else line for line in normalise(text).split("\n")]


def _labelled(line: str) -> bool:
    return line.split() in _LABELLED_HEADERS


def sniff(text: str) -> int:
    """0-100 confidence that the text holds a `kubectl get nodes` table."""
    lines = _lines(text[:200_000])[:2000]
    for n, line in enumerate(lines):
        if _opens_table(line):
            row = next((r for r in lines[n + 1:n + 3] if r.strip()), "")
            if _row(row, _labelled(line)) is not None:
                return 90
            if _is_header(line) and "VERSION" in line:
                return 40
    return 0


def parse(artifact: Artifact) -> ParseResult:
    """Facts from every node row under a `kubectl get nodes` header: which nodes are NotReady or cordoned."""
    lines = _lines(artifact.content)
    sink = DedupSink(artifact, lines)
    _emit(sink, _rows(lines))
    return sink.done()


def _row(line: str, labelled: bool = False) -> tuple[str, str, bool] | None:
    """(name, Ready condition, cordoned) of one row, or None when the line is not a node row."""
    cells = line.split()
    if labelled and len(cells) >= 3:
        del cells[1]  # the LABELS cell of kubectl 1.0-1.1: comma-joined labels or <none>, one cell
        cells.append("")  # STATUS may end the row (1.0 printed no AGE)
    if len(cells) < 3 or not (m := _STATUS.fullmatch(cells[1])):
        return None
    if not (_NAME.fullmatch(cells[0]) or _REDACTED.fullmatch(cells[0])):
        return None
    return cells[0], m.group(1), m.group(2) is not None


def _rows(lines: list[str]) -> list[tuple[int, str, str, bool]]:
    rows: list[tuple[int, str, str, bool]] = []
    in_table = labelled = False
    for n, line in enumerate(lines, 1):
        if len(rows) >= _MAX_ROWS:
            break
        if _opens_table(line):
            in_table, labelled = True, _labelled(line)
            continue
        if in_table and _ELIDED.fullmatch(line):
            continue
        if in_table:
            row = _row(line, labelled)
            if row is None:
                in_table = False  # the table ended
            else:
                rows.append((n, *row))
    return rows


def _latest(rows: list[tuple[int, str, str, bool]]) -> list[tuple[int, str, str, bool]]:
    """Each node's last row. A node listed again further down (`kubectl get nodes` run twice, `-w`) is shown in its
    later state: NotReady at 0s and Ready at 15s is a kubelet that was still registering, not a NotReady node.
    Rows whose name was hidden are kept apart: two hidden names may be two nodes."""
    last: dict[str, tuple[int, str, str, bool]] = {}
    for row in rows:
        last[row[1] if _NAME.fullmatch(row[1]) else f"{row[1]}\0{row[0]}"] = row
    return sorted(last.values())


def _emit(sink: DedupSink, rows: list[tuple[int, str, str, bool]]) -> None:
    rows = _latest(rows)
    for n, name, ready, cordoned in rows:
        subject = subject_of("node", name)
        if ready != "Ready":
            sink.add("node.conditions", ["NotReady"], n, subject=subject)
        if cordoned:
            sink.add("node.unschedulable", True, n, subject=subject)
    # The first node that is not Ready is the one the paste is about; a table of one node is about that node.
    troubled = [r for r in rows if r[2] != "Ready"]
    focus = troubled[0] if troubled else (rows[0] if len(rows) == 1 else None)
    if focus is not None:
        sink.add("node.name", focus[1], focus[0], subject=subject_of("node", focus[1]))
        if not troubled:
            sink.add("node.conditions", [], focus[0], subject=subject_of("node", focus[1]))


PARSER = Parser(kinds=(ArtifactKind.NODE_TABLE,), parse=parse, sniff=sniff, reads_many=True)
