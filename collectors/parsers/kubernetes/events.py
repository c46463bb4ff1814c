"""Kubernetes events in any shape kubectl prints them, into scheduling, eviction, probe and pull facts.

Reads `kubectl get events` (plain, `-A`, `-o wide`, old KIND/NAME columns), the `Events:` table of a
describe, and JSON/YAML (handed to k8s_objects, which reads Event objects).
"""

from __future__ import annotations

from collectors.k8s_values import age_seconds
from collectors.lazy_regex import LazyPattern
from collectors.models import Artifact, ArtifactKind, ParseResult
from collectors.parsers.contract import Parser
from collectors.parsers.kubernetes import k8s_objects
from collectors.parsers.kubernetes.event_log_lines import event_of, feed_in_time_order, is_event_line
from collectors.parsers.kubernetes.k8s_common import DedupSink, subject_of
from collectors.parsers.kubernetes.k8s_event_facts import EventFacts
from collectors.parsers.kubernetes.k8s_event_rows import (
    EventRecord,
    describe_events,
    describe_row,
    is_describe_events_header,
    row_age,
    typeless_row,
)
from collectors.text import normalise

_COLUMN = LazyPattern(r"\S+(?: \S+)*")
_LOOSE_ROW = LazyPattern(r"(?:^|.*?\s)(Normal|Warning)\s+([A-Za-z][\w\-]*)\s+(?:([a-z][\w.\-]*/\S+)\s+)?(.*)")
_NAMESPACE_FLAG = LazyPattern(r"(?:-n|--namespace)[= ]([a-z0-9][a-z0-9\-]*)")
# JSON or YAML opens with these; a paste's elision marker ("[...]", "[snip]") or a label ("[Error Message]",
# a test runner's "[FAILED]") before the rows it kept does not: a JSON array opens on an object, array or string.
_NOT_ELISION = r"\[(?=\s*[{\[\"\]])"
_STRUCTURED = LazyPattern(rf"\s*(?:\{{|{_NOT_ELISION}|apiVersion:|kind:|items:|---)")
_STRUCTURED_LINE = LazyPattern(rf"(?m)^(?:\{{|{_NOT_ELISION}|apiVersion:|kind:\s*Event)")
_EVENT_KIND = LazyPattern(r"""["']?kind["']?\s*:\s*["']?(?:Event|EventList)\b""")
_DESCRIBE_MARKERS = LazyPattern(r"(?m)^\s*(?:Containers|QoS Class|Capacity|Allocatable|Namespace):")
_ROW_HINT = LazyPattern(r"(?m)^[\s`*>]*(?:\S+\s+){0,2}(?:Normal|Warning)\s+[A-Z][A-Za-z]+\s+\S")


def sniff(text: str) -> int:
    """0-100 confidence that the text is a list of events."""
    head = text[:200_000]
    first = next((ln for ln in head.split("\n", 50) if ln.strip()), "")
    if _STRUCTURED.match(first):
        return 95 if _EVENT_KIND.search(head[:50_000]) else 0
    lines = head.split("\n", 2000)[:2000]
    if any(_get_header(ln) for ln in lines):
        return 95
    if any(is_describe_events_header(ln) for ln in lines):
        return 25 if _DESCRIBE_MARKERS.search(head) else 85
    if _ROW_HINT.search(head) or any("\t{" in ln and typeless_row(ln, 0) is not None for ln in lines):
        return 50
    if any(is_event_line(ln) for ln in lines if "ObjectReference{" in ln):
        return 80
    return 0


def parse(artifact: Artifact) -> ParseResult:
    """Events from tables or describe blocks; JSON and YAML go to the object parser."""
    text = normalise(artifact.content)
    first = next((ln for ln in text.split("\n", 50) if ln.strip()), "")
    if _STRUCTURED.match(first):
        return k8s_objects.parse(artifact)
    lines = text.split("\n")
    headers = _headers(lines)
    if not headers and _STRUCTURED_LINE.search(text):
        return k8s_objects.parse(artifact)  # JSON or YAML after a pasted command line
    sink = DedupSink(artifact, lines)
    _parse_tables(sink, lines, headers, _default_namespace(artifact))
    return sink.done()


def _default_namespace(artifact: Artifact) -> str:
    """The namespace a table without a NAMESPACE column is about: from the command or the subject."""
    if m := _NAMESPACE_FLAG.search(artifact.command):
        return m.group(1)
    parts = artifact.subject.split("/")
    if len(parts) == 3 or (len(parts) == 2 and parts[0] == "namespace"):
        return parts[1]
    return ""


# ---- tables ------------------------------------------------------------------------------------------


class _Columns:
    """Where each column of a `kubectl get events` table starts (tabwriter keeps them aligned)."""

    def __init__(self, starts: list[int], names: list[str]) -> None:
        ends: list[int | None] = [*starts[1:], None]
        self.names = names
        self._spans = dict(zip(names, zip(starts, ends, strict=True), strict=True))

    def cell(self, line: str, name: str) -> str:
        span = self._spans.get(name)
        return "" if span is None else line[span[0]:span[1]].strip()


def _get_header(line: str) -> _Columns | None:
    if "REASON" not in line or ("MESSAGE" not in line and "MSG" not in line) or any(c.islower() for c in line):
        return None
    cols = list(_COLUMN.finditer(line))
    # `-o custom-columns` names its columns as the user chose: REASON and a message column are enough.
    names = ["MESSAGE" if m.group(0) == "MSG" else m.group(0) for m in cols]
    if "REASON" not in names or "MESSAGE" not in names:
        return None
    return _Columns([m.start() for m in cols], names)


def _parse_tables(sink: DedupSink, lines: list[str], headers: list[tuple[int, _Columns | None]],
                  namespace: str) -> None:
    facts = EventFacts(sink)
    for n, (i, cols) in enumerate(headers):
        end = headers[n + 1][0] if n + 1 < len(headers) else len(lines)
        if cols is None:
            indent = len(lines[i]) - len(lines[i].lstrip())
            events = describe_events(lines, i + 1, end, indent - 1)
        else:
            events = _table_rows(lines, i + 1, end, cols, namespace)
        for ev in events:
            facts.feed(ev, _subject(ev))
        if not events:
            facts.none_seen(i + 1)
    if not headers:
        _headerless(facts, lines, namespace)
    facts.finish()


def _headers(lines: list[str]) -> list[tuple[int, _Columns | None]]:
    """0-based header lines with their columns (None for a describe-style header)."""
    found: list[tuple[int, _Columns | None]] = []
    for i, line in enumerate(lines):
        if "REASON" not in line and "Reason" not in line and "FirstSeen" not in line:
            continue  # cheap test first: almost no line is a header
        cols = _get_header(line)
        if cols is not None or is_describe_events_header(line):
            found.append((i, cols))
    return found


def _table_rows(lines: list[str], start: int, end: int, cols: _Columns, namespace: str) -> list[EventRecord]:
    events: list[EventRecord] = []
    for i in range(start, end):
        line = lines[i].rstrip()
        if not line.strip():
            continue
        ev = _sliced_row(line, i + 1, cols, namespace) or _loose_row(line, i + 1, namespace)
        if ev is not None:
            events.append(ev)
        elif events:  # a message that wrapped onto the next line
            events[-1].message = f"{events[-1].message} {line.strip()}"
            events[-1].end = i + 1
    return events


def _sliced_row(line: str, number: int, cols: _Columns, namespace: str) -> EventRecord | None:
    kind_of = cols.cell(line, "TYPE")
    reason = cols.cell(line, "REASON")
    if "TYPE" in cols.names and kind_of not in ("Normal", "Warning"):
        return None
    if not _REASON_CELL.fullmatch(reason):
        return None
    obj = cols.cell(line, "OBJECT")
    # kubectl 1.2-1.13 printed the object in two columns, NAME and KIND (LASTSEEN FIRSTSEEN COUNT NAME KIND ...);
    # from 1.10 NAME is the event's own name, the object's with the recording time in hex after a dot.
    name_cell = _EVENT_SUFFIX.sub("", cols.cell(line, "NAME"))
    kind, _, name = obj.partition("/") if "/" in obj else (cols.cell(line, "KIND"), "", name_cell)
    ns = cols.cell(line, "NAMESPACE") or namespace
    # LAST SEEN since kubectl 1.14, LASTSEEN before it.
    ago = age_seconds(cols.cell(line, "LAST SEEN") or cols.cell(line, "LASTSEEN"))
    return EventRecord(kind_of, reason, cols.cell(line, "MESSAGE"), number, number, kind.lower(), name, ns,
                       ago=ago)


_EVENT_SUFFIX = LazyPattern(r"\.[0-9a-f]{14,16}$")
_REASON_CELL = LazyPattern(r"[A-Za-z][A-Za-z0-9]{1,80}")


def _loose_row(line: str, number: int, namespace: str) -> EventRecord | None:
    """A row whose columns no longer line up with the header (re-indented or squeezed in a chat client)."""
    m = _LOOSE_ROW.fullmatch(line)
    if m is None:
        return None
    kind, _, name = (m.group(3) or "").partition("/")
    return EventRecord(m.group(1), m.group(2), m.group(4).strip(), number, number, kind.lower(), name, namespace,
                       ago=row_age(line))


def _headerless(facts: EventFacts, lines: list[str], namespace: str) -> None:
    """Rows pasted without their header, e.g. one FailedScheduling line copied from a describe.

    A row whose message a terminal wrapped continues on the following lines, up to a blank line or the next row.
    """
    pending: EventRecord | None = None
    logged: list[EventRecord] = []
    for i, line in enumerate(lines):
        ev = None
        if "ObjectReference{" in line and (recorded := event_of(line, i + 1)) is not None:
            logged.append(recorded)  # an event as the recorder logs it (never wrapped), read below in time order
            line = ""
        elif "Normal" in line or "Warning" in line:
            line = _MARKUP.sub("", line)  # a row quoted in Markdown: ``Warning  FailedCreatePodSandBox ...``
            ev = describe_row(line.rstrip(), i + 1) or _loose_row(line.rstrip(), i + 1, namespace)
        elif "\t" in line:
            ev = typeless_row(line.rstrip(), i + 1)  # Kubernetes 1.0/1.1 rows had no type
        if ev is not None or not line.strip() or len(line) > _MAX_WRAPPED:
            if pending is not None:
                facts.feed(pending, _subject(pending))
            pending = ev
        elif pending is not None and pending.end - pending.start < _MAX_CONTINUATION \
                and (not pending.message.rstrip().endswith((".", ".\""))  # a finished sentence is not wrapped
                     or _EVICTION_TAIL.match(line.strip()) is not None):
            pending.message = f"{pending.message} {line.strip()}"
            pending.end = i + 1
    if pending is not None:
        facts.feed(pending, _subject(pending))
    if logged:
        feed_in_time_order(facts, logged)


_MAX_CONTINUATION = 6
# The kubelet's eviction message is several sentences: after "...available: <q>." it appends one "Container <c> was
# using <u>, ..." sentence per container it ranked (pkg/kubelet/eviction/helpers.go evictionMessage, 1.9-1.31), so
# a wrapped line opening so still belongs to the row although the row's text already ends a sentence.
_EVICTION_TAIL = LazyPattern(r"Container \S+ was using ")
# Markdown around a row pasted alone: inline-code backticks, a quote's ">", emphasis stars.
_MARKUP = LazyPattern(r"^\s*(?:>\s*)?[`*]+|[`*]+\s*$")
_MAX_WRAPPED = 4096


def _subject(ev: EventRecord) -> str | None:
    if not ev.name:
        return None
    if ev.kind == "node":
        return subject_of("node", ev.name)
    return subject_of(ev.kind, ev.name, ev.namespace)


PARSER = Parser(kinds=(ArtifactKind.EVENTS,), parse=parse, sniff=sniff, reads_many=True)
