"""`kubectl get pods` tables: default, `-A`, `-o wide` and custom columns, in any kubectl era.

The STATUS column is what kubectl prints for a pod: a phase, a container's waiting or terminated reason
(CrashLoopBackOff, OOMKilled, ImagePullBackOff), or the pod's own reason (Evicted). RESTARTS may carry the
time of the last one: `4 (57s ago)`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from collectors.lazy_regex import LazyPattern
from collectors.models import Artifact, ArtifactKind, ParseResult
from collectors.parsers.contract import Parser
from collectors.parsers.kubernetes import node_spread
from collectors.parsers.kubernetes.k8s_common import DedupSink, subject_of
from collectors.text import normalise

_COLUMN = LazyPattern(r"\S+(?: \S+)*")
_READY = LazyPattern(r"^\d+/\d+$")
_AGO = LazyPattern(r"(\d+) (\([^)]{1,40}\))")  # "4 (57s ago)": one cell, though it has a space
_RESTARTS = LazyPattern(r"^(\d+)(?: \([^)]{1,40}\))?$")
_WAITING = {"CrashLoopBackOff", "ImagePullBackOff", "ErrImagePull", "ContainerCreating", "CreateContainerConfigError",
            "CreateContainerError", "InvalidImageName", "ErrImageNeverPull", "RunContainerError", "PodInitializing"}
_TERMINATED = {"OOMKilled", "Error", "Completed", "ContainerCannotRun", "DeadlineExceeded", "StartError"}
_HEALTHY = {"Running", "Completed", "Succeeded"}
_BROKEN = (_WAITING - {"ContainerCreating", "PodInitializing"}) | (_TERMINATED - {"Completed"}) | {"Evicted", "Pending"}
_MAX_ROWS = 20_000


@dataclass
class _Row:
    number: int
    name: str
    namespace: str
    status: str
    restarts: int | None
    node: str
    ip: str = ""
    settled: bool = False  # every container ready, and no restart in the last minutes


# `kubectl get pvc` and `get pv` (kubernetes pkg/printers/internalversion/printers.go, the claim and volume column
# definitions, 1.10-1.34) print NAME and STATUS too, their STATUS a binding phase (Pending, Bound): not pods.
_VOLUME_COLUMNS = frozenset({"CAPACITY", "STORAGECLASS", "VOLUME", "CLAIM"})


def _is_header(line: str) -> bool:
    words = line.split()
    return "NAME" in words and "STATUS" in words and line.upper() == line and "VERSION" not in words \
        and ("READY" in words or "RESTARTS" in words or "AGE" in words) and not _VOLUME_COLUMNS.intersection(words)


def sniff(text: str) -> int:
    """0-100 confidence that the text holds a `kubectl get pods` table."""
    for line in normalise(text[:200_000]).split("\n", 2000)[:2000]:
        if "NAME" in line and "STATUS" in line and _is_header(line):
            return 90 if "READY" in line or "RESTARTS" in line else 70
    return 0


def parse(artifact: Artifact) -> ParseResult:
    """Facts from every pod row under a `kubectl get pods` header."""
    lines = normalise(artifact.content).split("\n")
    sink = DedupSink(artifact, lines)
    rows = _rows(lines)
    _emit(sink, rows)
    return sink.done()


def _rows(lines: list[str]) -> list[_Row]:
    rows: list[_Row] = []
    header: list[tuple[str, int]] | None = None
    for i, line in enumerate(lines):
        if len(rows) >= _MAX_ROWS:
            break
        if not line.strip():
            continue
        if "NAME" in line and _is_header(line):
            header = [(m.group(0), m.start()) for m in _COLUMN.finditer(line)]
            continue
        if header is not None:
            row = _row(line, i + 1, header)
            if row is None:
                header = None  # the table ended
            else:
                rows.append(row)
    return rows


def _row(line: str, number: int, header: list[tuple[str, int]]) -> _Row | None:
    names = [name for name, _ in header]
    cells = _cells_by_position(line, header)
    if cells is None or not _plausible(cells):
        cells = _cells_by_order(line, names)
    if cells is None or not _plausible(cells):
        return None
    restarts = _RESTARTS.match(cells.get("RESTARTS", ""))
    return _Row(number, cells["NAME"], cells.get("NAMESPACE", ""), cells["STATUS"],
                int(restarts.group(1)) if restarts else None, cells.get("NODE", ""), cells.get("IP", ""),
                _all_ready(cells.get("READY", "")) and not _RECENT.search(cells.get("RESTARTS", "")))


# kubectl 1.22+ prints the last restart's age beside the count ("4 (57s ago)", printers.go printPod): one within the
# last ten minutes is a container still restarting, whatever READY says between two crashes.
_RECENT = LazyPattern(r"\((?:\d+s|[0-9]m(?:\d+s)?) ago\)")


def _all_ready(cell: str) -> bool:
    ready, _, total = cell.partition("/")
    return ready.isdigit() and total.isdigit() and int(total) > 0 and ready == total


def _cells_by_position(line: str, header: list[tuple[str, int]]) -> dict[str, str] | None:
    """Cells sliced at the header's column starts (tabwriter keeps them aligned)."""
    cells: dict[str, str] = {}
    for n, (name, start) in enumerate(header):
        end = header[n + 1][1] if n + 1 < len(header) else None
        if start > 0 and start <= len(line) and line[start - 1] not in " \t":
            return None  # the row does not line up with the header
        cells[name] = line[start:end].strip()
    return cells


def _cells_by_order(line: str, names: list[str]) -> dict[str, str] | None:
    """Cells by whitespace when a chat client squeezed the columns; RESTARTS may hold `4 (57s ago)`."""
    tokens = _AGO.sub(lambda m: f"{m.group(1)}\x00{m.group(2)}", line.strip()).split()
    if len(tokens) < len(names) - 2:  # NOMINATED NODE / READINESS GATES may be one word short each
        return None
    cells = {name: token.replace("\x00", " ") for name, token in zip(names, tokens, strict=False)}
    return cells


def _plausible(cells: dict[str, str]) -> bool:
    name, status = cells.get("NAME", ""), cells.get("STATUS", "")
    # Init:0/1 (init containers done of all) is a status too.
    if not name or not status or " " in name or not re.fullmatch(r"[A-Za-z][\w:/-]*", status):
        return False
    ready = cells.get("READY")
    return ready is None or _READY.match(ready) is not None


def _emit(sink: DedupSink, rows: list[_Row]) -> None:
    if not rows:
        return
    abnormal = [r for r in rows if r.status not in _HEALTHY]
    for r in rows:
        subject = subject_of("pod", r.name, r.namespace)
        sink.add("pods.names", [r.name], r.number, subject=subject)
        if r.status not in _HEALTHY:
            sink.add("pods.not_running", [r.name], r.number, subject=subject)
        if r.status == "Pending" or _starting_without_ip(r):
            sink.add("pods.pending", [r.name], r.number, subject=subject)
        if _placed(r):
            sink.add("pods.placed", [r.name], r.number, subject=subject)
    # A table of one pod, or its first broken pod, is what the paste is about: one that shows an error before one
    # that is only on its way (Init:0/1, ContainerCreating, Terminating).
    broken = [r for r in abnormal if r.status.removeprefix("Init:") in _BROKEN]
    candidates = broken or abnormal or (rows if len(rows) == 1 else [])
    focus = candidates[0] if candidates else None
    for r in ([focus] if focus else []) + [r for r in abnormal if r is not focus]:
        _pod_facts(sink, r, main=r is focus)
    # `-o wide` names each pod's node: do the failing ones share one?
    node_spread.emit(sink, [node_spread.Placement(r.name, r.node, r.status not in _HEALTHY or bool(r.restarts),
                                                  r.number) for r in rows])
    # The most restarts of a pod that is not healthy (of any pod when all are): a Running pod's past restarts
    # beside a hung one are not the hung one's crash loop.
    restarts = [r for r in (abnormal or rows) if r.restarts is not None]
    if restarts:
        top = max(restarts, key=lambda r: r.restarts or 0)
        sink.add("container.restart_count", top.restarts, top.number,
                 subject=subject_of("pod", top.name, top.namespace))
        if all(r.status == "Running" and r.settled for r in rows):
            # Past restarts of pods that all run ready now: a table of the recovered state, not a crash loop.
            sink.add("pods.all_ready", True, top.number, subject=subject_of("pod", top.name, top.namespace))


# STATUS values kubectl prints for a pod whose containers have not started yet (printPod: the waiting reason of a
# container never run, or Init:n/m): its phase is still Pending. An IP of <none> in `-o wide` says the sandbox has
# no network yet, so the pod never ran; a pod restarting its sandbox keeps its phase and shows its old IP.
_NOT_STARTED = {"ContainerCreating", "PodInitializing"}


def _starting_without_ip(r: _Row) -> bool:
    return r.ip == "<none>" and (r.status in _NOT_STARTED or r.status.startswith("Init:"))


def _placed(r: _Row) -> bool:
    """A node took the pod: `-o wide` names it, or STATUS is a reason only the kubelet of a node sets.

    kubectl's printPod shows the phase (Pending) until the kubelet reports a container's waiting reason or an
    init container's progress (Init:n/m, Init:CrashLoopBackOff); the scheduler never sets those.
    """
    status = r.status.removeprefix("Init:")
    return (bool(r.node) and r.node != "<none>") or r.status.startswith("Init:") or status in _WAITING


def _pod_facts(sink: DedupSink, r: _Row, main: bool) -> None:
    subject = subject_of("pod", r.name, r.namespace)
    if main:
        sink.add("pod.name", r.name, r.number, subject=subject)
        if r.namespace:
            sink.add("pod.namespace", r.namespace, r.number, subject=subject)
        if r.node and r.node != "<none>":
            sink.add("pod.node", r.node, r.number, subject=subject)
    status = r.status.removeprefix("Init:")
    if status in _WAITING:
        sink.add("container.waiting.reason", status, r.number, subject=subject)
        if status == "CrashLoopBackOff":
            # The kubelet's waiting reason while it holds back the next restart of a container that failed.
            sink.add("container.restart_backoff", True, r.number, subject=subject)
    elif status in _TERMINATED:
        sink.add("container.last_terminated.reason", status, r.number, subject=subject)
    elif status == "Evicted":
        # Only the kubelet's eviction manager leaves a pod with reason Evicted (an API eviction deletes it).
        sink.add("pod.status.reason", "Evicted", r.number, subject=subject)
        sink.add("eviction.seen", True, r.number, subject=subject)
    elif status == "Pending":
        sink.add("pod.phase", "Pending", r.number, subject=subject)


PARSER = Parser(kinds=(ArtifactKind.POD_TABLE,), parse=parse, sniff=sniff, reads_many=True)
