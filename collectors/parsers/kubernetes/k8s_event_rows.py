"""Event rows as kubectl prints them (describe tables of every era) and the record the event parsers share.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass

from collectors.k8s_values import age_seconds
from collectors.lazy_regex import LazyPattern


@dataclass
class EventRecord:
    """One event, from any of the formats kubectl prints or the API returns."""

    type: str
    reason: str
    message: str
    start: int  # 1-based line span
    end: int
    kind: str = ""  # involved object kind, lower-case
    name: str = ""
    namespace: str = ""
    locate: Callable[[], tuple[int, int]] | None = None  # computes start/end on first use
    at: float | None = None  # seconds into the year when the line that logged it has a klog time stamp
    ago: int | None = None  # seconds since it was last seen, from a table's Age or Last Seen column

    def span(self) -> tuple[int, int]:
        if self.locate is not None:
            self.start, self.end = self.locate()
            self.locate = None
        return self.start, self.end


# New describe rows: "  Warning  FailedScheduling  2m (x3 over 12m)  default-scheduler  0/20 nodes ...".
_DESCRIBE_ROW = LazyPattern(
    r"\s*(Normal|Warning)\s+([A-Za-z][\w\-]*)\s+"
    r"(<unknown>|<invalid>|\S+(?:\s+\(x\d+\s+over\s+\S+\))?)\s+"
    r"(\S+(?:,\s+\S+)?)(?:\s+(.*))?")
# A scheduler message's "0/4" where the From column should be: kubectl of 2020 printed some rows without it.
_NOT_A_SOURCE = LazyPattern(r"\d+/\d+")
# Old describe rows put Type and Reason after the counts: "1m  1m  1  default-scheduler    Normal  Scheduled  msg".
_OLD_DESCRIBE_ROW = LazyPattern(r".*?\s(Normal|Warning)\s+([A-Z][\w\-]*)(?:\s+(.*))?")
_DESCRIBE_HEADER = LazyPattern(r"\s*(?:Type\s+Reason\s+Age\s+From\s+Message|FirstSeen\s+LastSeen\s+Count\s+From)")
_TOP_LEVEL_KEY = LazyPattern(r"[A-Z][A-Za-z \-]*:(?:\s|$)")
# A failed mount's message spans lines at column 0: k8s.io/mount-utils (mount_linux.go, MountSensitive, also
# pkg/util/mount before 1.17) formats "mount failed: %v\nMounting command: %s\nMounting arguments: %s\nOutput: %s".
# Those keys continue the message; they are not the next describe section.
_MOUNT_CONTINUATION = LazyPattern(r"(?:Mounting command|Mounting arguments|Output):(?:\s|$)")


def is_describe_events_header(line: str) -> bool:
    return _DESCRIBE_HEADER.match(line) is not None


def describe_events(lines: list[str], start: int, end: int, top_indent: int = 0) -> list[EventRecord]:
    """Rows of a describe `Events:` table in lines[start:end] (0-based); wrapped messages are joined."""
    events: list[EventRecord] = []
    gap = False  # a blank line since the last row: what follows is no longer a wrapped message
    for i in range(start, min(end, len(lines))):
        line = lines[i].rstrip()
        stripped = line.strip()
        if not stripped:
            gap = True
            continue
        if _DESCRIBE_HEADER.match(line) or set(stripped) <= {"-", " ", "\t"}:
            continue
        indent = len(line) - len(line.lstrip())
        if indent <= top_indent and _TOP_LEVEL_KEY.match(stripped) and not (
                events and not gap and _MOUNT_CONTINUATION.match(stripped)):
            break  # the next describe section
        row = describe_row(line, i + 1) or _old_describe_row(line, i + 1) or typeless_row(line, i + 1)
        if row is not None:
            events.append(row)
            gap = False
        elif events and gap:
            break  # prose after the table (a paste's own words), not part of the last message
        elif events:
            last = events[-1]
            last.message = f"{last.message} {stripped}".strip()
            last.end = i + 1
    return events


def describe_row(line: str, number: int) -> EventRecord | None:
    """One row of a current describe Events table, or None."""
    # An event storm repeats the same rows many times: short rows are read once (a bounded cache).
    fields = _kept_fields(line) if len(line) <= _KEPT_LINE else _describe_fields(line)
    if fields is None:
        return None
    return EventRecord(*fields[:3], number, number, fields[3], ago=fields[4])


_KEPT_LINE = 1024
_FRAME = "│|>*` \t"  # a k9s box, a markdown table or quote, a code span around a row


def row_age(line: str) -> int | None:
    """Seconds since the event on this line was last seen, when the line is a describe row (`Warning  Reason  4m36s
    ...`) or a `kubectl get events` row (`4m36s  Warning  Reason ...`), framed or not; else None."""
    core = line[:_KEPT_LINE].strip(_FRAME)
    fields = _describe_fields(core)
    if fields is not None:
        return fields[4]
    first, _, rest = core.partition(" ")
    return age_seconds(first) if rest.lstrip().startswith(("Normal", "Warning")) else None


def _describe_fields(line: str) -> tuple[str, str, str, str, int | None] | None:
    """Type, reason, message, source kind and age (seconds since last seen) of a row."""
    m = _DESCRIBE_ROW.fullmatch(line)
    if m is None:
        return None
    source, message, ago = m.group(4), (m.group(5) or "").strip(), age_seconds(m.group(3))
    if _NOT_A_SOURCE.fullmatch(source):  # no From column: "<unknown>  0/4 nodes are available: ..."
        return m.group(1), m.group(2), f"{source} {message}".strip(), "", ago
    return m.group(1), m.group(2), message, source_kind(source), ago


_kept_fields = functools.lru_cache(maxsize=4096)(_describe_fields)


def _old_describe_row(line: str, number: int) -> EventRecord | None:
    m = _OLD_DESCRIBE_ROW.fullmatch(line)
    if m is None:
        return None
    return EventRecord(m.group(1), m.group(2), (m.group(3) or "").strip(), number, number)


_REASON = LazyPattern(r"[A-Za-z][\w\-]{0,80}")


def typeless_row(line: str, number: int) -> EventRecord | None:
    """A row from before events had a type (Kubernetes 1.0 and 1.1), tab-separated: FirstSeen, LastSeen, Count,
    From, SubobjectPath (often empty), Reason, Message."""
    if "\t" not in line:
        return None
    cells = [c.strip() for c in line.split("\t") if c.strip()]
    # The From column printed the source struct as it was: `{scheduler }`, `{kubelet 127.0.0.1}`.
    if len(cells) < 6 or not cells[2].isdigit() or not cells[3].startswith("{"):
        return None
    rest = cells[4:]
    if len(rest) > 2 and ("{" in rest[0] or rest[0].startswith("spec.")):
        rest = rest[1:]  # the subobject path, e.g. spec.containers{mysql}
    if _REASON.fullmatch(rest[0]) is None:
        return None
    return EventRecord("", rest[0], " ".join(rest[1:]), number, number)


def source_kind(source: str) -> str:
    """The object kind a describe `From` column implies: node-problem-detector reports about nodes."""
    return "node" if source.startswith("kernel-monitor") else ""
