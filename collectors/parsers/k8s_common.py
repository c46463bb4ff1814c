"""Helpers shared by the Kubernetes parsers: quantities, the describe layout, events and their meaning.

Everything here is pure and tolerant: malformed values give None or an empty result, never an exception.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from collectors.k8s_values import (
    as_int,
)
from collectors.models import Artifact
from collectors.parsers.k8s_messages import missing_refs, pull_seconds, sandbox_errors, volume_errors
from collectors.parsers.sink import FactSink

_RDMA_RESOURCE = re.compile(r"^(?:rdma/|mellanox\.com/|nvidia\.com/(?:hostdev|rdma)|openshift\.io/mlnx)", re.I)


def is_rdma_resource(name: str) -> bool:
    return _RDMA_RESOURCE.match(name) is not None


# ---- emitting ----------------------------------------------------------------------------------------


class DedupSink(FactSink):
    """A FactSink that drops exact repeats (same name, subject and value): a thousand identical events give
    one fact, cited to the first of them."""

    def __init__(self, artifact: Artifact, lines: list[str] | None = None) -> None:
        super().__init__(artifact, lines)
        self._seen: set[tuple[str, str, str]] = set()

    def add(self, name: str, value: object, start: int, end: int | None = None, subject: str | None = None,
            text: str | None = None) -> None:
        key = self._key(name, value, subject)
        if key in self._seen:
            return
        self._seen.add(key)
        super().add(name, value, start, end, subject, text)

    def has(self, name: str, value: object, subject: str | None = None) -> bool:
        """Whether this exact fact was already emitted, so a caller can skip finding its lines."""
        return self._key(name, value, subject) in self._seen

    def _key(self, name: str, value: object, subject: str | None) -> tuple[str, str, str]:
        return name, self.artifact.subject if subject is None else subject, repr(value)


def subject_of(kind: str, name: str, namespace: str = "") -> str:
    """`pod/shop/checkout-1`, `node/gpu-node-2`: the form artifacts use for their subject."""
    kind = kind.lower()
    return f"{kind}/{namespace}/{name}" if namespace else f"{kind}/{name}"


# ---- the `kubectl describe` layout -------------------------------------------------------------------

# "Key:   value" or "Key:" at any indent. Keys start with a letter and never hold ": ", so toleration and
# taint lines ("nvidia.com/gpu:NoSchedule op=Exists") stay values.
_DESCRIBE_KEY = re.compile(r"([A-Za-z][\w .()/\-]*?):(?:[ \t]+(.*))?")


@dataclass
class DNode:
    """One line of describe output and the more-indented lines under it."""

    line: int  # 1-based
    indent: int
    key: str  # "" for a line that is not `Key: value`
    value: str
    text: str
    children: list[DNode] = field(default_factory=list)

    def child(self, key: str) -> DNode | None:
        return next((c for c in self.children if c.key == key), None)


def describe_tree(lines: list[str], start: int, end: int) -> list[DNode]:
    """The indentation tree of lines[start:end] (0-based); roots are the least-indented lines."""
    roots: list[DNode] = []
    stack: list[DNode] = []
    for i in range(start, min(end, len(lines))):
        raw = lines[i].rstrip()
        body = raw.lstrip(" \t")
        if not body:
            continue
        indent = len(raw) - len(body)
        m = _DESCRIBE_KEY.fullmatch(body)
        key, value = (m.group(1).strip(), (m.group(2) or "").strip()) if m else ("", body)
        node = DNode(i + 1, indent, key, value, body)
        while stack and stack[-1].indent >= indent:
            stack.pop()
        (stack[-1].children if stack else roots).append(node)
        stack.append(node)
    return roots


def find_root(roots: list[DNode], key: str) -> DNode | None:
    return next((r for r in roots if r.key == key), None)


def node_values(node: DNode) -> list[tuple[str, int]]:
    """A multi-line describe value (Labels, Taints, Tolerations): the first value plus continuation lines."""
    out = [(node.value, node.line)] if node.value else []
    out += [(c.text, c.line) for c in node.children]
    return [(v, n) for v, n in out if v and v != "<none>"]


def block_starts(lines: list[str], marker: re.Pattern[str]) -> list[int]:
    """0-based starts of concatenated describe blocks: `Name:` lines at the indent of the first one."""
    starts: list[int] = []
    base: int | None = None
    for i, line in enumerate(lines):
        m = marker.match(line)
        if m is None:
            continue
        indent = len(m.group(1))
        if base is None:
            base = indent
        if indent == base:
            starts.append(i)
    return starts


# ---- events ------------------------------------------------------------------------------------------


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

    def span(self) -> tuple[int, int]:
        if self.locate is not None:
            self.start, self.end = self.locate()
            self.locate = None
        return self.start, self.end


# New describe rows: "  Warning  FailedScheduling  2m (x3 over 12m)  default-scheduler  0/20 nodes ...".
_DESCRIBE_ROW = re.compile(
    r"\s*(Normal|Warning)\s+([A-Za-z][\w\-]*)\s+"
    r"(<unknown>|<invalid>|\S+(?:\s+\(x\d+\s+over\s+\S+\))?)\s+"
    r"(\S+(?:,\s+\S+)?)(?:\s+(.*))?")
# Old describe rows put Type and Reason after the counts: "1m  1m  1  default-scheduler    Normal  Scheduled  msg".
_OLD_DESCRIBE_ROW = re.compile(r".*?\s(Normal|Warning)\s+([A-Z][\w\-]*)(?:\s+(.*))?")
_DESCRIBE_HEADER = re.compile(r"\s*(?:Type\s+Reason\s+Age\s+From\s+Message|FirstSeen\s+LastSeen\s+Count\s+From)")
_TOP_LEVEL_KEY = re.compile(r"[A-Z][A-Za-z \-]*:(?:\s|$)")


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
        if indent <= top_indent and _TOP_LEVEL_KEY.match(stripped):
            break  # the next describe section
        row = describe_row(line, i + 1) or _old_describe_row(line, i + 1)
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
    m = _DESCRIBE_ROW.fullmatch(line)
    if m is None:
        return None
    return EventRecord(m.group(1), m.group(2), (m.group(5) or "").strip(), number, number, source_kind(m.group(4)))


def _old_describe_row(line: str, number: int) -> EventRecord | None:
    m = _OLD_DESCRIBE_ROW.fullmatch(line)
    if m is None:
        return None
    return EventRecord(m.group(1), m.group(2), (m.group(3) or "").strip(), number, number)


def source_kind(source: str) -> str:
    """The object kind a describe `From` column implies: node-problem-detector reports about nodes."""
    return "node" if source.startswith("kernel-monitor") else ""


# ---- what events mean --------------------------------------------------------------------------------

_NODES_TOTAL = re.compile(r"\b\d+/(\d+) nodes (?:are|is) available")
_INSUFFICIENT = re.compile(r"[Ii]nsufficient ([\w.\-/]+)")
_BRACED_TAINT = re.compile(r"taints? \{([^}]*)\}")
_BARE_TAINT = re.compile(r"untolerated taint|taints?\b[^.,;]{0,60}?didn'?t tolerate", re.I)
_SYSTEM_TAINTS = {
    "node.kubernetes.io/memory-pressure": "node-pressure",
    "node.kubernetes.io/disk-pressure": "node-pressure",
    "node.kubernetes.io/pid-pressure": "node-pressure",
    "node.kubernetes.io/unschedulable": "unschedulable-node",
    "node.kubernetes.io/not-ready": "node-not-ready",
    "node.kubernetes.io/unreachable": "node-not-ready",
    "node.kubernetes.io/network-unavailable": "node-not-ready",
}
_SCHEDULING_PATTERNS: list[tuple[re.Pattern[str], str]] = [
    # Before 1.8 the scheduler named its predicates: "1 PodToleratesNodeTaints, 3 MatchNodeSelector".
    (re.compile(r"didn'?t match (?:Pod's )?node (?:affinity|selector)|MatchNodeSelector", re.I), "node-affinity"),
    (re.compile(r"PodToleratesNodeTaints|TaintToleration"), "untolerated-taint"),
    (re.compile(r"\bNodeUnschedulable\b"), "unschedulable-node"),
    (re.compile(r"CheckNode(?:Memory|Disk|PID)Pressure|NodeUnder(?:Memory|Disk|PID)Pressure"), "node-pressure"),
    (re.compile(r"\bNodeNotReady\b|CheckNodeCondition"), "node-not-ready"),
    (re.compile(r"PodFitsHostPorts"), "host-port"),
    (re.compile(r"NoVolumeZoneConflict|VolumeNodeAffinityConflict"), "volume-node-affinity"),
    (re.compile(r"Max\w*VolumeCount"), "volume-limit"),
    (re.compile(r"didn'?t match pod (?:anti-)?affinity|didn'?t satisfy existing pods anti-affinity"
                r"|MatchInterPodAffinity", re.I), "pod-affinity"),
    (re.compile(r"topology spread constraints", re.I), "topology-spread"),
    (re.compile(r"unbound (?:immediate )?PersistentVolumeClaims|persistentvolumeclaim \"[^\"]*\" not found"
                r"|PersistentVolumeClaim is not bound", re.I), "unbound-pvc"),
    (re.compile(r"volume node affinity conflict", re.I), "volume-node-affinity"),
    (re.compile(r"exceed max volume count", re.I), "volume-limit"),
    (re.compile(r"Too many pods", re.I), "too-many-pods"),
    (re.compile(r"(?:were|was|is) unschedulable", re.I), "unschedulable-node"),
    (re.compile(r"had condition: \[(?:Memory|Disk|PID)Pressure\]|had (?:memory|disk|pid) pressure", re.I),
     "node-pressure"),
    (re.compile(r"(?:were|was) not ready|had condition: \[(?:Ready|NotReady)\]", re.I), "node-not-ready"),
    (re.compile(r"didn'?t have free ports", re.I), "host-port"),
    (re.compile(r"exceeded quota|insufficient (?:unused )?quota", re.I), "quota-exceeded"),
    (re.compile(r"Preemption is not helpful|No preemption victims found|No victims found", re.I),
     "preemption-not-helpful"),
]


def scheduling_reasons(message: str) -> list[str]:
    """Normalised reasons in a FailedScheduling message, in the order the message gives them."""
    return list(_scheduling_reasons(message))


@lru_cache(maxsize=4096)
def _scheduling_reasons(message: str) -> tuple[str, ...]:
    # Cached: a busy cluster repeats the same scheduler message thousands of times.
    found: list[tuple[int, str]] = []
    for m in _INSUFFICIENT.finditer(message):
        found.append((m.start(), _insufficient(m.group(1).rstrip("."))))
    for m in _BRACED_TAINT.finditer(message):
        # A system taint names the node's state as well; it is still a taint the pod does not tolerate.
        key = m.group(1).split(":", 1)[0].split("=", 1)[0].strip()
        if key in _SYSTEM_TAINTS:
            found.append((m.start(), _SYSTEM_TAINTS[key]))
        found.append((m.start(), "untolerated-taint"))
    residue = _BRACED_TAINT.sub(lambda m: " " * len(m.group(0)), message)
    for m in _BARE_TAINT.finditer(residue):
        found.append((m.start(), "untolerated-taint"))
    for rx, reason in _SCHEDULING_PATTERNS:
        if hit := rx.search(message):
            found.append((hit.start(), reason))
    return tuple(dict.fromkeys(reason for _, reason in sorted(found)))


def _insufficient(resource: str) -> str:
    if resource == "cpu":
        return "insufficient-cpu"
    if resource == "memory":
        return "insufficient-memory"
    if resource == "pods":
        return "too-many-pods"
    # GPU counts, not GPU memory or shares sold by scheduler extenders (aliyun.com/gpu-mem).
    if resource.lower().endswith("/gpu") or "/mig-" in resource or resource.endswith("gpu-count"):
        return "insufficient-gpu"
    return "insufficient-other"


def nodes_total(message: str) -> int | None:
    m = _NODES_TOTAL.search(message)
    if m:
        return int(m.group(1))
    return 0 if "no nodes available to schedule pods" in message else None


_PULL_MESSAGE = re.compile(
    r"pull(?:ing)? image|ErrImagePull|ImagePullBackOff|ErrImageNeverPull|InvalidImageName|PullImage|image pull",
    re.I)
_PULL_KINDS: list[tuple[str, re.Pattern[str]]] = [
    ("rate-limited", re.compile(r"toomanyrequests|too many requests|rate limit", re.I)),
    ("no-space", re.compile(r"no space left on device", re.I)),
    ("not-found", re.compile(r"not found|manifest unknown|NotFound|name unknown", re.I)),
    # "pull access denied, repository does not exist or may require authorization": the registry will not say
    # which. Under docker.io/library/ every repository is public, so there it can only mean "does not exist".
    ("not-found", re.compile(r"docker\.io/library/[^\s\"']+\"?: pull access denied, repository does not exist|"
                             r"pull access denied for [^\s,/]+, repository does not exist")),
    ("denied-or-missing", re.compile(r"repository does not exist or may require (?:authorization|'docker login')")),
    # A malformed reference never reaches a registry: the image-not-found hypothesis covers it.
    ("not-found", re.compile(r"invalid reference format|couldn't parse image (?:name|reference)")),
    ("unauthorized", re.compile(r"unauthori[sz]ed|authentication required|denied|403 Forbidden", re.I)),
    ("timeout", re.compile(r"i/o timeout|deadline exceeded|handshake timeout|timed out|Client\.Timeout", re.I)),
    ("tls", re.compile(r"x509|certificate", re.I)),
]
_IMAGE_NAME = re.compile(r"""[Ii]mage\s*(?:=\s*)?\\*["']([^"'\\\s]+)\\*["']""")


def is_pull_message(text: str) -> bool:
    return _PULL_MESSAGE.search(text) is not None


def pull_error_kind(text: str) -> str:
    """not-found, unauthorized, denied-or-missing, timeout, rate-limited, no-space, tls or other."""
    for kind, rx in _PULL_KINDS:
        if rx.search(text):
            return kind
    return "other"


def image_name(text: str) -> str:
    m = _IMAGE_NAME.search(text)
    return m.group(1) if m else ""


@dataclass
class _Pull:
    kind: str
    image: str
    start: int
    end: int
    subject: str | None


class PullErrors:
    """Image pull failures: a specific cause outranks the generic `Back-off pulling image` noise."""

    @staticmethod
    def _distinct(pulls: list[_Pull]) -> list[_Pull]:
        """One report per cause and image; the kubelet logs each failure twice, once without the pod."""
        best: dict[tuple[str, str], _Pull] = {}
        for p in pulls:
            key = (p.kind, p.image)
            if key not in best or (best[key].subject is None and p.subject is not None):
                best[key] = p
        return list(best.values())

    def __init__(self) -> None:
        self._seen: list[_Pull] = []
        self._messages: set[tuple[str, str | None]] = set()

    def note(self, text: str, subject: str | None, span: Callable[[], tuple[int, int]]) -> None:
        if (text, subject) in self._messages:
            return  # the same failure repeats every back-off period; the first report is the citation
        self._messages.add((text, subject))
        self._seen.append(_Pull(pull_error_kind(text), image_name(text), *span(), subject))

    def flush(self, sink: FactSink) -> None:
        specific = self._distinct([p for p in self._seen if p.kind != "other"])
        for p in specific or self._seen[:1]:
            sink.add("image.pull_error", p.kind, p.start, p.end, p.subject)
            if p.image:
                sink.add("image.name", p.image, p.start, p.end, p.subject)
        if not specific:
            named = next((p for p in self._seen if p.image), None)
            if named is not None:
                sink.add("image.name", named.image, named.start, named.end, named.subject)


_LOW_ON = re.compile(r"low on resource: ([\w.\-]+)")
_HAD_CONDITION = re.compile(r"had condition: \[(\w+)\]")
_CONDITION_RESOURCE = {"MemoryPressure": "memory", "DiskPressure": "ephemeral-storage", "PIDPressure": "pids"}


def eviction_resource(message: str) -> str:
    """The resource a kubelet eviction message names, or ""."""
    if m := _LOW_ON.search(message):
        return m.group(1).rstrip(".")
    if m := _HAD_CONDITION.search(message):
        return _CONDITION_RESOURCE.get(m.group(1), "")
    if "ephemeral" in message and ("storage" in message or "EmptyDir" in message):
        return "ephemeral-storage"
    if "EmptyDir volume" in message:
        return "ephemeral-storage"
    return ""


def eviction_condition(message: str) -> str:
    """The node condition an eviction or admission message names (`had condition: [DiskPressure]`), or ""."""
    m = _HAD_CONDITION.search(message)
    return m.group(1) if m and m.group(1) in _CONDITION_RESOURCE else ""


_RESOURCE_CONDITION = {"memory": "MemoryPressure", "pids": "PIDPressure"}


def pressure_condition(resource: str) -> str:
    """MemoryPressure for memory, DiskPressure for any filesystem signal, PIDPressure for pids."""
    if resource in _RESOURCE_CONDITION:
        return _RESOURCE_CONDITION[resource]
    if any(s in resource for s in ("storage", "nodefs", "imagefs", "containerfs", "inodes")):
        return "DiskPressure"
    return ""


_KILLED_PROCESS = re.compile(r"Kill(?:ed)? process \d+ \(([^)]*)\)|victim process: ([^,\s]+)|ProcessName:([^\s,}]+)")


def oom_facts(sink: FactSink, text: str, start: int, end: int, subject: str | None) -> None:
    """kernel.oom_* from an OOM report relayed by node-problem-detector or the kubelet."""
    sink.add("kernel.oom_kill", True, start, end, subject)
    if "Memory cgroup out of memory" in text or "CONSTRAINT_MEMCG" in text:
        sink.add("kernel.oom_memcg", True, start, end, subject)
    elif re.search(r"(?:^|\s)Out of memory: Kill|CONSTRAINT_NONE", text):
        sink.add("kernel.oom_global", True, start, end, subject)
    victims = [name for groups in _KILLED_PROCESS.findall(text) for name in groups if name]
    if victims:
        sink.add("kernel.oom_victims", list(dict.fromkeys(victims)), start, end, subject)


_PROBE_FAILED = re.compile(r"\b(Liveness|Readiness|Startup) probe (?:failed|errored)", re.I)
_LIVENESS_KILL = re.compile(r"failed liveness probe, will be restarted", re.I)
_QUOTA_LIMITED = re.compile(r"limited: ([^\s]+)")
_PVC_DELETING = re.compile(r"persistentvolumeclaim \"[^\"]+\" is being deleted", re.I)
_RECLAIM = re.compile(r"reclaim (\S+)")
_NODE_CONDITION_EVENTS = {
    "NodeHasInsufficientMemory": "MemoryPressure",
    "NodeHasDiskPressure": "DiskPressure",
    "NodeHasInsufficientPID": "PIDPressure",
    "NodeNotReady": "NotReady",
}


class EventFacts:
    """Turns event records into facts; one instance per artifact so repeats and pull errors are pooled."""

    def __init__(self, sink: DedupSink, subject: str | None = None, record_reasons: bool = True) -> None:
        self.sink = sink
        self.subject = subject  # for events.reasons: the artifact's (or describe block's) subject
        # False when the records are inferred from a bare message: the message is evidence, a reason we named is not.
        self.record_reasons = record_reasons
        self.pulls = PullErrors()
        self._reasons: set[str] = set()
        # FailedScheduling per object, withdrawn when a later Scheduled event shows the pod was placed after all.
        self._unscheduled: dict[str | None, EventRecord] = {}
        # Image pulls per object: started and not finished yet, and finished.
        self.pulls_open: dict[str | None, EventRecord] = {}
        self.pulls_done: dict[str | None, EventRecord] = {}
        # A repeat of an event already read says nothing new (its first row is the citation), so a 200,000-row
        # table of one message costs one read. Only the events whose order matters are read every time.
        self._fed: set[tuple[str, str, str | None]] = set()

    def none_seen(self, line: int) -> None:
        """An events table was read and was empty (`Events: <none>`)."""
        self.sink.add("events.reasons", [], line, subject=self.subject)

    def feed(self, ev: EventRecord, subject: str | None = None) -> None:
        if ev.reason == "Scheduled":
            self._fed.clear()  # a FailedScheduling after the pod was placed counts again
        elif ev.reason not in _ORDERED_REASONS:
            key = (ev.reason, ev.message, subject)
            if key in self._fed:
                return
            self._fed.add(key)
        if self.record_reasons and ev.reason and ev.reason not in self._reasons:
            self._reasons.add(ev.reason)
            self.sink.add("events.reasons", [ev.reason], *ev.span(), self.subject)
        handler = _EVENT_HANDLERS.get(ev.reason)
        if ev.reason == "Scheduled":
            self._unscheduled.pop(subject, None)
        elif handler is not None:
            handler(self, ev, subject)
        elif ev.reason in _NODE_CONDITION_EVENTS:
            self.add("node.conditions", [_NODE_CONDITION_EVENTS[ev.reason]], ev, subject)
        elif ev.reason in _PULL_REASONS or (ev.reason in ("Failed", "BackOff") and is_pull_message(ev.message)):
            self.pulls.note(ev.message, subject, ev.span)
        elif ev.reason == "Failed":
            _config_failed(self, ev, subject)
        elif ev.reason == "BackOff" and "restarting failed container" in ev.message:
            self.add("container.restart_backoff", True, ev, subject)

    def unscheduled(self, ev: EventRecord, subject: str | None) -> None:
        """A FailedScheduling event; it counts unless a later Scheduled event for the object follows."""
        self._unscheduled.setdefault(subject, ev)

    def finish(self) -> None:
        self.pulls.flush(self.sink)
        for subject, ev in self.pulls_open.items():
            self.add("image.pulling", True, ev, subject)
        if not self.pulls_open:
            for subject, ev in self.pulls_done.items():
                self.add("image.pulling", False, ev, subject)
        for subject, ev in self._unscheduled.items():
            self.add("scheduling.failed", True, ev, subject)

    def add(self, name: str, value: object, ev: EventRecord, subject: str | None) -> None:
        if not self.sink.has(name, value, subject):
            self.sink.add(name, value, *ev.span(), subject)


_ORDERED_REASONS = {"Pulling", "Pulled"}
_PULL_REASONS = {"ErrImagePull", "ImagePullBackOff", "ErrImageNeverPull", "InspectFailed", "InvalidImageName"}


def _failed_scheduling(facts: EventFacts, ev: EventRecord, subject: str | None) -> None:
    facts.unscheduled(ev, subject)
    if _PVC_DELETING.search(ev.message):
        facts.add("pvc.terminating", True, ev, subject)
    if ev.message:
        facts.add("scheduling.message", ev.message, ev, subject)
    total = nodes_total(ev.message)
    if total is not None:
        facts.add("scheduling.nodes_total", total, ev, subject)
    reasons = scheduling_reasons(ev.message)
    if reasons:
        facts.add("scheduling.reasons", reasons, ev, subject)


def _failed_create(facts: EventFacts, ev: EventRecord, subject: str | None) -> None:
    if "exceeded quota" not in ev.message:
        return
    facts.add("quota.exceeded", True, ev, subject)
    facts.add("scheduling.reasons", ["quota-exceeded"], ev, subject)
    if m := _QUOTA_LIMITED.search(ev.message):
        names = [part.split("=", 1)[0] for part in m.group(1).rstrip(".").split(",") if "=" in part]
        if names:
            facts.add("quota.resources_at_limit", list(dict.fromkeys(names)), ev, subject)


def _kueue_pending(facts: EventFacts, ev: EventRecord, subject: str | None) -> None:
    if re.search(r"insufficient (?:unused )?quota|exceeded quota", ev.message):
        facts.add("quota.exceeded", True, ev, subject)
        facts.add("scheduling.reasons", ["quota-exceeded"], ev, subject)


def _evicted(facts: EventFacts, ev: EventRecord, subject: str | None) -> None:
    facts.add("eviction.seen", True, ev, subject)
    resource = eviction_resource(ev.message)
    if resource:
        facts.add("eviction.resource", resource, ev, subject)
    if condition := eviction_condition(ev.message):
        facts.add("node.conditions", [condition], ev, subject)


def _preempted(facts: EventFacts, ev: EventRecord, subject: str | None) -> None:
    facts.add("scheduling.preempted", True, ev, subject)


def _unhealthy(facts: EventFacts, ev: EventRecord, subject: str | None) -> None:
    if m := _PROBE_FAILED.search(ev.message):
        facts.add("probe.failures", [m.group(1).lower()], ev, subject)


def _killing(facts: EventFacts, ev: EventRecord, subject: str | None) -> None:
    if _LIVENESS_KILL.search(ev.message):
        facts.add("container.liveness_killed", True, ev, subject)


def _mount_failed(facts: EventFacts, ev: EventRecord, subject: str | None) -> None:
    facts.add("volume.mount_failed", True, ev, subject)
    if errors := volume_errors(ev.message):
        facts.add("volume.errors", errors, ev, subject)
    if refs := missing_refs(ev.message):
        facts.add("pod.missing_refs", refs, ev, subject)
    if _PVC_DELETING.search(ev.message):
        facts.add("pvc.terminating", True, ev, subject)


def _sandbox_failed(facts: EventFacts, ev: EventRecord, subject: str | None) -> None:
    if errors := sandbox_errors(ev.message):
        facts.add("sandbox.errors", errors, ev, subject)


def _pulling(facts: EventFacts, ev: EventRecord, subject: str | None) -> None:
    facts.pulls_open.setdefault(subject, ev)


def _pulled(facts: EventFacts, ev: EventRecord, subject: str | None) -> None:
    facts.pulls_open.pop(subject, None)
    facts.pulls_done.setdefault(subject, ev)
    if (seconds := pull_seconds(ev.message)) is not None:
        facts.add("image.pull_seconds", seconds, ev, subject)


def _config_failed(facts: EventFacts, ev: EventRecord, subject: str | None) -> None:
    """`Error: secret "x" not found` (reason Failed): the container cannot be created without it."""
    if refs := missing_refs(ev.message):
        facts.add("pod.missing_refs", refs, ev, subject)


def _scaled(facts: EventFacts, ev: EventRecord, subject: str | None) -> None:
    facts.add("rollout.recent", True, ev, subject)


def _created(facts: EventFacts, ev: EventRecord, subject: str | None) -> None:
    # A ReplicaSet creating pods is a rollout or a scale-up; a Job creating pods is just the job running.
    if ev.kind == "replicaset":
        facts.add("rollout.recent", True, ev, subject)


def _oom(facts: EventFacts, ev: EventRecord, subject: str | None) -> None:
    oom_facts(facts.sink, ev.message, *ev.span(), subject)


def _threshold_met(facts: EventFacts, ev: EventRecord, subject: str | None) -> None:
    m = _RECLAIM.search(ev.message)
    if m:
        facts.add("eviction.reclaiming", True, ev, subject)
    condition = pressure_condition(m.group(1)) if m else ""
    if condition:
        facts.add("node.conditions", [condition], ev, subject)


def _not_schedulable(facts: EventFacts, ev: EventRecord, subject: str | None) -> None:
    facts.add("node.unschedulable", True, ev, subject)


_EVENT_HANDLERS = {
    "FailedScheduling": _failed_scheduling,
    "FailedCreate": _failed_create,
    "Pending": _kueue_pending,
    "Evicted": _evicted,
    "Preempted": _preempted,
    "Preempting": _preempted,
    "Unhealthy": _unhealthy,
    "Killing": _killing,
    "FailedMount": _mount_failed,
    "FailedAttachVolume": _mount_failed,
    "FailedMapVolume": _mount_failed,
    "FailedCreatePodSandBox": _sandbox_failed,
    "NetworkNotReady": _sandbox_failed,
    "Pulling": _pulling,
    "Pulled": _pulled,
    "ScalingReplicaSet": _scaled,
    "SuccessfulCreate": _created,
    "OOMKilling": _oom,
    "SystemOOM": _oom,
    "EvictionThresholdMet": _threshold_met,
    "NodeNotSchedulable": _not_schedulable,
}


def block_events(sink: DedupSink, lines: list[str], node: DNode | None, end: int, subject: str | None) -> None:
    """Facts from the `Events:` section of one describe block (node is that section's heading line)."""
    if node is None:
        return
    facts = EventFacts(sink, subject)
    if node.value == "<none>":
        facts.none_seen(node.line)
        return
    for ev in describe_events(lines, node.line, end, node.indent):
        facts.feed(ev, subject)
    facts.finish()


# ---- pods, containers and nodes ----------------------------------------------------------------------

RENDEZVOUS_VARS = ("MASTER_ADDR", "MASTER_PORT", "WORLD_SIZE", "RANK")


@dataclass
class EnvVar:
    value: str | None  # None when it comes from a reference (valueFrom, downward API)
    line: int


class DistEnv:
    """Rendezvous variables across every rank in one artifact, so duplicate ranks stay visible."""

    def __init__(self) -> None:
        self.ranks: list[tuple[int, int]] = []
        self.world_sizes: list[tuple[int, int]] = []
        self.master_addrs: list[tuple[str, int]] = []

    def pod(self, sink: FactSink, env: dict[str, EnvVar], env_from: bool, subject: str | None) -> None:
        """Record one pod's env; NCCL settings and missing variables are per pod."""
        self._collect(env)
        for var, fact in (("NCCL_SOCKET_IFNAME", "nccl.socket_ifname"), ("NCCL_IB_HCA", "nccl.ib_hca")):
            item = env.get(var)
            if item is not None and item.value:
                sink.add(fact, item.value, item.line, subject=subject)
        present = [v for v in RENDEZVOUS_VARS if v in env]
        # A pod with none of them is not a rank; envFrom may supply the rest, so absence is unknown then.
        # RANK and WORLD_SIZE are often set per process by the launcher (torchrun), so only the
        # rendezvous address counts as missing from a pod spec.
        if present and not env_from:
            missing = [v for v in ("MASTER_ADDR", "MASTER_PORT") if v not in env]
            sink.add("dist.env_missing", missing, min(env[v].line for v in present), subject=subject)

    def _collect(self, env: dict[str, EnvVar]) -> None:
        rank = env.get("RANK")
        if rank is not None and (value := as_int(rank.value)) is not None:
            self.ranks.append((value, rank.line))
        size = env.get("WORLD_SIZE")
        if size is not None and (value := as_int(size.value)) is not None:
            self.world_sizes.append((value, size.line))
        addr = env.get("MASTER_ADDR")
        if addr is not None and addr.value:
            self.master_addrs.append((addr.value, addr.line))

    def flush(self, sink: FactSink) -> None:
        _emit_spread(sink, "dist.ranks", self.ranks, keep_duplicates=True)
        _emit_spread(sink, "dist.world_sizes", self.world_sizes)
        _emit_spread(sink, "dist.master_addrs", self.master_addrs)


def _emit_spread(sink: FactSink, name: str, values: list[tuple[Any, int]], keep_duplicates: bool = False) -> None:
    if not values:
        return
    items = [v for v, _ in values]
    if not keep_duplicates:
        items = list(dict.fromkeys(items))
    lines = [n for _, n in values]
    sink.add(name, items, min(lines), max(lines))


def gpu_sharing(labels: dict[str, str]) -> str:
    """exclusive, time-slicing, mps or mig from GPU feature discovery labels; "" when they say nothing."""
    strategy = labels.get("nvidia.com/gpu.sharing-strategy", "").lower()
    if strategy in ("time-slicing", "mps"):
        return strategy
    # GPU feature discovery sets mig.strategy on every MIG-capable node, MIG on or off; MIG is really
    # in use when the product name says so, a MIG config is applied, or MIG resources are advertised.
    mig_capable = labels.get("nvidia.com/mig.strategy", "").lower() in ("single", "mixed")
    mig_config = labels.get("nvidia.com/mig.config", "").lower()
    if mig_capable and ("-MIG-" in labels.get("nvidia.com/gpu.product", "")
                        or mig_config not in ("", "all-disabled")
                        or any(key.startswith("nvidia.com/mig-") for key in labels)):
        return "mig"
    replicas = as_int(labels.get("nvidia.com/gpu.replicas"))
    if replicas is not None and replicas > 1:
        return "time-slicing"
    if strategy == "none" or replicas == 1 or mig_capable:
        return "exclusive"
    return ""


def has_gpu_labels(labels: dict[str, str]) -> bool:
    return any(k in labels for k in ("nvidia.com/gpu.present", "nvidia.com/gpu.product", "nvidia.com/gpu.count",
                                     "feature.node.kubernetes.io/pci-10de.present"))


def node_condition(kind: str, status: str) -> str:
    """The abnormal-condition name for one node condition row, or ""."""
    if kind in ("MemoryPressure", "DiskPressure", "PIDPressure", "NetworkUnavailable") and status == "True":
        return kind
    if kind == "Ready" and status in ("False", "Unknown"):
        return "NotReady"
    return ""


@dataclass
class NodeGpus:
    """nvidia.com/gpu counts of one node with the lines that show them (0 = not seen)."""

    capacity: int | None = None
    capacity_line: int = 0
    allocatable: int | None = None
    allocatable_line: int = 0
    allocated: int | None = None  # summed requests of non-terminated pods; None when not shown
    allocated_line: int = 0

    def emit(self, sink: FactSink, subject: str) -> None:
        if self.capacity is not None:
            sink.add("gpu.capacity_total", self.capacity, self.capacity_line, subject=subject)
        if self.allocatable is not None:
            sink.add("gpu.allocatable_total", self.allocatable, self.allocatable_line, subject=subject)
        if self.capacity is not None and self.allocatable is not None:
            lines = sorted((self.capacity_line, self.allocatable_line))
            sink.add("gpu.unhealthy_count", max(self.capacity - self.allocatable, 0), lines[0], lines[1],
                     subject=subject)
        if self.allocatable is not None and self.allocated is not None:
            # Cited to the allocated row: allocatable is cited above, and a span joining the two would
            # cover the whole pod table in between.
            free = max(self.allocatable - self.allocated, 0)
            sink.add("gpu.free_total", free, self.allocated_line, subject=subject)
            sink.add("gpu.max_free_per_node", free, self.allocated_line, subject=subject)


def toleration_text(key: str, operator: str, value: str, effect: str) -> str:
    """`key=value:Effect` (Equal) or `key:Effect` (Exists); `*` stands for an empty key, which tolerates all."""
    text = key or "*"
    if operator != "Exists" and value:
        text += f"={value}"
    return f"{text}:{effect}" if effect else text


def unique(values: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(v for v in values if v))
