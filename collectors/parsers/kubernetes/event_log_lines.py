"""Events as the event recorder logs them: `Event(v1.ObjectReference{Kind:"Pod", Namespace:"ns", Name:"web-0",
...}): type: 'Normal' reason: 'Pulling' pulling image "x"`.

Every component that records events through client-go's broadcaster (the kubelet, the scheduler, the controllers,
the cluster autoscaler) also logs each one this way (k8s.io/client-go tools/record/event.go StartLogging, "Event(%#v):
type: '%v' reason: '%v' %v", 1.3-1.31; pkg/client/record/event.go in the kubernetes tree before client-go, without
`type:` before 1.3). The object reference is Go's %#v of it, so its fields are written Kind:"Pod", Name:"..." in any
release (a FieldPath's quoted value holds braces: spec.containers{app}); the package before it is api (before
1.6) or v1. A klog/glog prefix gives the time it was logged.
"""

from __future__ import annotations

from collectors.lazy_regex import LazyPattern
from collectors.parsers.kubernetes.k8s_common import subject_of
from collectors.parsers.kubernetes.k8s_event_facts import EventFacts
from collectors.parsers.kubernetes.k8s_event_rows import EventRecord

_LINE = LazyPattern(
    r"Event\(\w{1,20}\.ObjectReference\{(?P<ref>[^{}\"]{0,200}(?:\"[^\"]{0,600}\"[^{}\"]{0,200}){0,12})\}\): "
    r"(?:type: '(?P<type>\w{1,20})' )?"
    r"reason: '(?P<reason>[A-Za-z]\w{0,80})' ?(?P<message>.*)")
_FIELD = LazyPattern(r'\b(Kind|Namespace|Name):"([^"]{0,253})"')
# glog/klog's header: severity, MMDD, time with microseconds, thread id, file:line (k8s.io/klog, every release).
_KLOG_TIME = LazyPattern(r"[IWEF](\d\d)(\d\d) (\d\d):(\d\d):(\d\d(?:\.\d{1,9})?)\s+\d+ [\w.-]+:\d+\] ")
_DAYS_BEFORE_MONTH = (0, 0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334)


def is_event_line(line: str) -> bool:
    """Whether the line is an event as the recorder logs it (a cheap test first)."""
    return "ObjectReference{" in line and "reason: '" in line and _LINE.search(line[:5000]) is not None


def event_of(line: str, number: int) -> EventRecord | None:
    """The event one logged line records, with the time of the line when klog stamped it."""
    if "ObjectReference{" not in line:
        return None
    m = _LINE.search(line[:20_000])
    if m is None:
        return None
    ref = dict(_FIELD.findall(m.group("ref")))
    ev = EventRecord(m.group("type") or "", m.group("reason"), m.group("message").strip(), number, number,
                     ref.get("Kind", "").lower(), ref.get("Name", ""), ref.get("Namespace", ""))
    if (t := _KLOG_TIME.search(line, 0, m.start() + 1)) is not None:
        month, day, hour, minute = (int(t.group(i)) for i in range(1, 5))
        if 1 <= month <= 12:
            # klog writes no year: seconds into a year are enough to time two events of one pull (a pull across
            # new year's eve is read as not timed, since the Pulled time comes out earlier).
            days = _DAYS_BEFORE_MONTH[month] + day - 1
            ev.at = ((days * 24 + hour) * 60 + minute) * 60 + float(t.group(5))
    return ev


def feed_in_time_order(facts: EventFacts, events: list[EventRecord]) -> None:
    """Feed logged events in the order they happened: a person pastes the line that matters first (the Pulled
    line, then the Pulling line found above it), and a pull is timed from its start to its end. Lines without a
    time stamp keep their place in the paste."""
    timed = iter(sorted((ev for ev in events if ev.at is not None), key=lambda ev: ev.at or 0.0))
    for ev in [next(timed) if ev.at is not None else ev for ev in events]:
        facts.feed(ev, _subject(ev))


def _subject(ev: EventRecord) -> str | None:
    if not ev.name:
        return None
    return subject_of("node", ev.name) if ev.kind == "node" else subject_of(ev.kind, ev.name, ev.namespace)
