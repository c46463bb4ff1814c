"""`kubectl get hpa` tables and `kubectl describe hpa` text into the HPA facts the object parser gives.

The layouts come from kubectl's printers and describers (collectors/catalogs/hpa_layouts.yaml names each one
with its source and the releases that print it). A table row is read from both ends: the name and reference
on the left, the plain-number columns (MINPODS, MAXPODS, REPLICAS, AGE) on the right, and what lies between is
the targets cell, which may hold spaces (`50% / 80%`, `cpu: 85%/80%, memory: 40%/80%`). `-w` prints one row per
change; the last row of each HPA is its state. A describe gives the same numbers in `Key: value` lines, and
its Conditions say why it does not scale: ScalingLimited True (TooManyReplicas) at the ceiling, ScalingActive
False (FailedGetResourceMetric and friends) when it cannot read its metrics.
"""

from __future__ import annotations

import re

from collectors.lazy_regex import LazyPattern
from collectors.models import Artifact, ArtifactKind, ParseResult
from collectors.parsers.contract import Parser
from collectors.parsers.kubernetes.k8s_common import DedupSink, subject_of
from collectors.parsers.kubernetes.k8s_describe_layout import describe_tree, find_root
from collectors.parsers.kubernetes.k8s_event_facts import block_events
from collectors.text import normalise

# A line of a document that quotes output as comments ("#   REFERENCE   TARGETS ...", seed 004:1682-1684).
_COMMENT = LazyPattern(r"^\s*#\s?")
_HEADER = LazyPattern(r"^(?:NAMESPACE\s+)?(?:NAME\s+)?REFERENCE\s+TARGETS?\s+(?:CURRENT\s+)?MINPODS\s+MAXPODS\b")
_TARGET_COLUMNS = {"TARGETS", "TARGET", "CURRENT"}
_UNREAD = ("<unknown>", "<waiting>")

_REFERENCE = LazyPattern(r"^\s*Reference:\s+\S+/\S+")
_MAX = LazyPattern(r"^\s*Max (?:replicas|pods):\s+(\d+)\s*$")
_PODS = LazyPattern(r"^\s*[A-Z]\w* pods:\s+(\d+) current / (\d+) desired")
_METRIC_UNREAD = LazyPattern(r"^\s*(?:resource \w+ on pods|\"[^\"]+\" on|Current CPU utilization:).*<unknown>")
# Conditions as kubectl prints them ("  ScalingLimited  True  TooManyReplicas  the desired ...") or as a
# person retypes them ("ScalingLimited: True").
_CONDITION = LazyPattern(r"^\s*(AbleToScale|ScalingActive|ScalingLimited)(?::\s*|\s+)(True|False|Unknown)\b\s*(\w*)")


def sniff(text: str) -> int:
    """0-100 confidence that the text is `kubectl get hpa` or `kubectl describe hpa` output."""
    lines = [_COMMENT.sub("", line, count=1) for line in text[:50_000].split("\n")]
    if any(_HEADER.match(line.strip()) for line in lines):
        return 95
    described = sum(1 for rx in (_REFERENCE, _MAX, _PODS) if any(rx.match(line) for line in lines))
    conditions = any(_CONDITION.match(line) for line in lines)
    if described >= 2 or (described and conditions):
        return 96  # above a pod description's score: its Name and Namespace lines are the HPA's too
    return 60 if conditions else 0


def parse(artifact: Artifact) -> ParseResult:
    lines = normalise(artifact.content).split("\n")
    sink = DedupSink(artifact, lines)
    bare = [_COMMENT.sub("", line, count=1) for line in lines]
    _tables(sink, bare)
    _describe(sink, bare)
    return sink.done()


def _tables(sink: DedupSink, lines: list[str]) -> None:
    header: list[tuple[str, int]] = []
    last: dict[str, tuple[dict[str, str], int]] = {}  # HPA -> its last row and line
    for n, line in enumerate(lines, 1):
        if _HEADER.match(line.strip()):
            header = [(m.group(0), m.start()) for m in re.finditer(r"\S+", line)]
        elif header and (cells := _by_position(header, line) or _by_tokens([h for h, _ in header], line)):
            last[cells.get("NAME") or cells["REFERENCE"]] = (cells, n)
    for cells, n in last.values():
        # `kubectl get all` names the row horizontalpodautoscaler.autoscaling/<name>
        name = cells.get("NAME", "").rsplit("/", 1)[-1]
        subject = subject_of("horizontalpodautoscaler", name, cells.get("NAMESPACE", "")) if name else None
        _emit_row(sink, cells, n, subject)


def _by_position(header: list[tuple[str, int]], line: str) -> dict[str, str] | None:
    """Cells cut at the header's column starts, as kubectl's tab writer aligns them (the targets cell may hold
    spaces; a row cut short loses only its last cells)."""
    cells: dict[str, str] = {}
    targets: list[str] = []
    for i, (name, start) in enumerate(header):
        if start > 0 and line[start - 1:start].strip():
            return None  # the row is not aligned with the header (`-w` rows, a retyped table)
        cell = line[start:header[i + 1][1] if i + 1 < len(header) else len(line)].strip()
        if name in _TARGET_COLUMNS:
            targets.append(cell)
        else:
            cells[name] = cell
    cells["TARGETS"] = " ".join(t for t in targets if t)
    return cells if _plausible(cells) else None


def _by_tokens(header: list[str], line: str) -> dict[str, str] | None:
    """Cells read from both ends of a row that is not aligned: the targets are what lies between."""
    tokens = line.split()
    middle = [h for h in header if h in _TARGET_COLUMNS]
    left = header[:header.index(middle[0])] if middle else []
    right = header[len(left) + len(middle):]
    if right and right[-1] == "AGE" and tokens and tokens[-1].isdigit():
        right = right[:-1]  # the row was cut before its AGE (an age always carries a unit: 5m, 2d22h)
    if len(tokens) < len(left) + len(right) + 1:
        return None
    cells = dict(zip(left, tokens[:len(left)], strict=True))
    cells.update(zip(right, tokens[len(tokens) - len(right):], strict=True))
    cells["TARGETS"] = " ".join(tokens[len(left):len(tokens) - len(right)])
    return cells if _plausible(cells) else None


def _plausible(cells: dict[str, str]) -> bool:
    replicas = cells.get("REPLICAS", "")
    return ("/" in cells.get("REFERENCE", "") and cells.get("MAXPODS", "").isdigit()
            and (cells.get("MINPODS", "").isdigit() or cells.get("MINPODS") == "<unset>")
            and (replicas == "" or replicas.isdigit()) and bool(cells.get("TARGETS")))


def _emit_row(sink: DedupSink, cells: dict[str, str], n: int, subject: str | None) -> None:
    maximum = int(cells["MAXPODS"])
    sink.add("hpa.max_replicas", maximum, n, subject=subject)
    replicas = cells.get("REPLICAS", "")
    if replicas.isdigit():
        sink.add("hpa.at_max", int(replicas) >= maximum, n, subject=subject)
    if any(u in cells["TARGETS"] for u in _UNREAD):
        sink.add("hpa.metrics_unavailable", True, n, subject=subject)


def _describe(sink: DedupSink, lines: list[str]) -> None:
    if not any(_MAX.match(line) or _PODS.match(line) or _CONDITION.match(line) for line in lines):
        return
    maximum: tuple[int, int] | None = None
    current: tuple[int, int] | None = None
    limited: int | None = None
    for n, line in enumerate(lines, 1):
        if m := _MAX.match(line):
            maximum = (int(m.group(1)), n)
            sink.add("hpa.max_replicas", maximum[0], n)
        elif m := _PODS.match(line):
            current = (int(m.group(1)), n)
        elif m := _CONDITION.match(line):
            kind, status, reason = m.groups()
            if kind == "ScalingLimited" and status == "True" and reason != "TooFewReplicas":
                limited = n
            elif kind == "ScalingActive" and status == "False" and reason != "ScalingDisabled":
                sink.add("hpa.metrics_unavailable", True, n)
        elif _METRIC_UNREAD.match(line):
            sink.add("hpa.metrics_unavailable", True, n)
    if maximum is not None and current is not None and current[0] >= maximum[0]:
        sink.add("hpa.at_max", True, current[1])
    elif limited is not None:
        sink.add("hpa.at_max", True, limited)
    elif maximum is not None and current is not None:
        sink.add("hpa.at_max", False, current[1])
    roots = describe_tree(lines, 0, len(lines))
    block_events(sink, lines, find_root(roots, "Events"), len(lines), None)


PARSER = Parser(kinds=(ArtifactKind.HPA,), parse=parse, sniff=sniff)
