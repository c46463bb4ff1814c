"""kubelet logs (journal, syslog or bare klog lines) into eviction, probe, pull, OOM and node-condition facts.

Both structured logging (`"Probe failed" probeType="Liveness" pod="ml/trainer-0"`, Kubernetes 1.20+) and the
older free-text messages are read. Lines are screened with substring tests before any regex runs.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from collectors.models import Artifact, ArtifactKind, ParseResult
from collectors.parsers.contract import Parser
from collectors.parsers.kubernetes.event_log_lines import event_of, feed_in_time_order
from collectors.parsers.kubernetes.k8s_common import DedupSink, subject_of
from collectors.parsers.kubernetes.k8s_event_facts import EventFacts, PullErrors, oom_facts
from collectors.parsers.kubernetes.k8s_event_rows import EventRecord
from collectors.parsers.kubernetes.messages.k8s_messages import (
    is_pull_message,
    kubelet_starting_only,
    missing_refs,
    mount_blocked,
    node_not_ready_reasons,
    plain_resource,
    pressure_condition,
    sandbox_errors,
    volume_errors,
)
from collectors.sniffers.kubelet import JOURNAL, claims_line, sniff
from collectors.text import normalise

_POD_UID = re.compile(r"""\([0-9a-f]{8}-[0-9a-f]{4}-""")  # "name_namespace(uid)" in older messages
_NODE_KEY = re.compile(r"""\bnode="([^"]+)\"""")
_RESOURCE = re.compile(r"""resourceName="([^"]+)"|(?:attempting to reclaim|evict pod\(s\) to reclaim) ([\w.\-]+)""")
_EVICTED = re.compile(r"pod is evicted successfully|is evicted successfully|\"Evicting pod\"|[Ee]victing pod\b"
                      r"|Eviction manager: evicting")
_PROBE_NEW = re.compile(r"""probeType="(Liveness|Readiness|Startup)\"""")
_PROBE_OLD = re.compile(r"\b(Liveness|Readiness|Startup) probe for .{0,200}? (?:failed|errored)")
_PROBE_SYNC = re.compile(r"""probe="(liveness|readiness|startup)" status="unhealthy\"""")
_OOM = re.compile(r"Got sys oom event|System OOM encountered|was OOM[- ]?killed|\bOOMKilled\b|OOM killed")
# The node status setters' event, as the kubelet logs recording it: `event="<reason>"` (structured, 1.20+) or
# "Recording <reason> event message for node <name>" (kubelet_node_status.go recordNodeStatusEvent, 1.2-1.19).
_NODE_EVENT = re.compile(
    r"""(?:event="|Recording )(NodeHasInsufficientMemory|NodeHasDiskPressure|NodeHasInsufficientPID|NodeNotReady)"""
    r"""(?:"| event message for node\b)""")
_ADMIT_CONDITION = re.compile(r"nodeCondition=\[([^\]]*)\]|node has conditions?: \[([^\]]*)\]")
_SYNC_WAITING = re.compile(r"""for \\?"[^"\\]*\\?" with (CrashLoopBackOff|ImagePullBackOff|ErrImagePull|"""
                           r"""CreateContainerConfigError|RunContainerError|CreateContainerError):""")
_EVENT_CONDITION = {"NodeHasInsufficientMemory": "MemoryPressure", "NodeHasDiskPressure": "DiskPressure",
                    "NodeHasInsufficientPID": "PIDPressure", "NodeNotReady": "NotReady"}
_ERRORISH = ("rror", "ailed", "BackOff", "ErrImage")
_NOT_READY_HINTS = ("PLEG is not healthy", "untime", "NetworkReady=false", "NetworkPluginNotReady",
                    "cni config uninitiali", "KubeletNotReady", "stopped posting")
_HAIRPIN = re.compile(r"""hairpin-mode=\\?"?([\w-]+)""")


def parse(artifact: Artifact) -> ParseResult:
    """Read kubelet lines; anything else in the artifact is skipped."""
    lines = normalise(artifact.content).split("\n")
    sink = DedupSink(artifact, lines)
    scan = _Scan(sink)
    for number, line in enumerate(lines, 1):
        scan.line(line, number)
    scan.finish()
    return sink.done()


@dataclass
class _Scan:
    """State carried between lines: the resource being reclaimed and pods whose liveness probe failed."""

    sink: DedupSink
    pulls: PullErrors = field(default_factory=PullErrors)
    reclaim: tuple[str, int] | None = None
    liveness_failed: dict[str, int] = field(default_factory=dict)  # pod subject ("" unknown) -> line
    last_liveness: tuple[int, str | None] | None = None
    events: list[EventRecord] = field(default_factory=list)

    def line(self, line: str, n: int) -> None:
        if "ObjectReference{" in line and (ev := event_of(line, n)) is not None:
            self.events.append(ev)  # an event the kubelet recorded, read as events are (at finish, in time order)
            return
        if "vict" in line or "reclaim" in line:
            self._eviction(line, n)
        if "robe" in line:
            self._probe(line, n)
        if "Killing container" in line or "will be restarted" in line:
            self._kill(line, n)
        if ("ull" in line or "ErrImage" in line) and any(w in line for w in _ERRORISH):
            self._pull(line, n)
        if "OOM" in line or "oom" in line:
            self._oom(line, n)
        if "admit" in line or "not ready" in line or "event=\"Node" in line or "event message for node" in line:
            self._node(line, n)
        if "Error syncing pod" in line:
            self._sync_error(line, n)
        if any(w in line for w in _NOT_READY_HINTS):
            self._not_ready(line, n)
        if "andbox" in line or "olume" in line:
            self._start_failure(line, n)
        if "hairpin-mode" in line and (m := _HAIRPIN.search(line)):
            self.sink.add("kubelet.hairpin_mode", m.group(1), n, subject=_node_subject(line))

    def finish(self) -> None:
        self.pulls.flush(self.sink)
        if self.events:
            facts = EventFacts(self.sink)
            feed_in_time_order(facts, self.events)
            facts.finish()

    def _eviction(self, line: str, n: int) -> None:
        if "reclaim" in line and (m := _RESOURCE.search(line)):
            resource = m.group(1) or m.group(2)
            if self.reclaim is None or self.reclaim[0] != resource:  # cite where the episode began
                self.reclaim = (resource, n)
            if condition := pressure_condition(resource):
                self.sink.add("node.conditions", [condition], n, subject=_node_subject(line))
            # The manager reclaims (image and container GC first, then evictions) only for the signal whose
            # threshold the node crossed: "attempting to reclaim <r>" and "must evict pod(s) to reclaim <r>" name
            # the resource the node was low on, which is what an eviction at that time was for.
            self.sink.add("eviction.reclaiming", True, n, subject=_node_subject(line))
            self.sink.add("eviction.resource", plain_resource(resource), n, subject=_node_subject(line))
        if ("victed" in line or "victing" in line) and _EVICTED.search(line):
            subject = _pod_subject(line)
            self.sink.add("eviction.seen", True, n, subject=subject)
            if self.reclaim is not None:
                resource, start = self.reclaim
                self.sink.add("eviction.resource", plain_resource(resource), start, n, subject=subject)

    def _probe(self, line: str, n: int) -> None:
        m = _PROBE_NEW.search(line) if "Probe failed" in line or "Probe errored" in line else None
        kind = m.group(1) if m else None
        if kind is None and (old := _PROBE_OLD.search(line)):
            kind = old.group(1)
        if kind is None and (sync := _PROBE_SYNC.search(line)):
            kind = sync.group(1)
        if kind is None:
            return
        subject = _pod_subject(line)
        self.sink.add("probe.failures", [kind.lower()], n, subject=subject)
        if kind.lower() == "liveness":
            self.liveness_failed[subject or ""] = n
            self.last_liveness = (n, subject)

    def _kill(self, line: str, n: int) -> None:
        subject = _pod_subject(line)
        if "failed liveness probe, will be restarted" in line:
            self.sink.add("container.liveness_killed", True, n, subject=subject)
            return
        if "Killing container" not in line:
            return
        # A kill right after the same pod's liveness failures is the probe's doing; other kills
        # (deletes, evictions, rollouts) look the same on their own.
        if subject is not None:
            failed = self.liveness_failed.get(subject)
        elif self.last_liveness is not None:  # old kubelets name only the container ID when killing
            failed, subject = self.last_liveness
        else:
            failed = None
        if failed is not None:
            self.sink.add("container.liveness_killed", True, failed, n, subject=subject)

    def _pull(self, line: str, n: int) -> None:
        if is_pull_message(line):
            self.pulls.note(line.replace('\\"', '"'), _pod_subject(line), lambda: (n, n))

    def _oom(self, line: str, n: int) -> None:
        if _OOM.search(line):
            oom_facts(self.sink, line, n, n, _node_subject(line) if "sys oom" in line else _pod_subject(line))

    def _node(self, line: str, n: int) -> None:
        conditions: list[str] = []
        if "admit" in line and (m := _ADMIT_CONDITION.search(line)):
            conditions += [c.strip("\"' ") for c in re.split(r"[ ,]+", m.group(1) or m.group(2)) if c.strip("\"' ")]
        if ('event="Node' in line or "event message for node" in line) and (m := _NODE_EVENT.search(line)):
            conditions.append(_EVENT_CONDITION[m.group(1)])
        if "Node became not ready" in line and not kubelet_starting_only(line):
            conditions.append("NotReady")
        if conditions:
            self.sink.add("node.conditions", list(dict.fromkeys(conditions)), n, subject=_node_subject(line))

    def _not_ready(self, line: str, n: int) -> None:
        if reasons := node_not_ready_reasons(line):
            self.sink.add("node.not_ready_reasons", reasons, n, subject=_node_subject(line))

    def _start_failure(self, line: str, n: int) -> None:
        """Sandbox and volume set-up failures, as the kubelet logs them before it records the event."""
        text = line.replace('\\"', '"')
        subject = _pod_subject(line)
        if ("CreatePodSandbox" in line or "RunPodSandbox" in line) and (errors := sandbox_errors(text)):
            self.sink.add("sandbox.errors", errors, n, subject=subject)
        if errors := volume_errors(text):
            if mount_blocked(errors):
                self.sink.add("volume.mount_failed", True, n, subject=subject)
            self.sink.add("volume.errors", errors, n, subject=subject)
        if refs := missing_refs(text):
            self.sink.add("pod.missing_refs", refs, n, subject=subject)

    def _sync_error(self, line: str, n: int) -> None:
        if m := _SYNC_WAITING.search(line):
            self.sink.add("container.waiting.reason", m.group(1), n, subject=_pod_subject(line))


def _pod_subject(line: str) -> str | None:
    """`pod="ns/name"` (structured logs) or `name_ns(uid)` (older free text), as pod/ns/name."""
    i = line.find(' pod="')
    if i >= 0:
        ref = line[i + 6:line.find('"', i + 6)]
        ns, _, name = ref.partition("/")
        return subject_of("pod", name, ns) if name and ns else None
    m = _POD_UID.search(line)
    if m is None:
        return None
    start = max(line.rfind(c, 0, m.start()) for c in " \"'") + 1
    name, _, ns = line[start:m.start()].rpartition("_")
    return subject_of("pod", name, ns) if name and ns else None


def _node_subject(line: str) -> str | None:
    if ' node="' in line and (m := _NODE_KEY.search(line)):
        return subject_of("node", m.group(1))
    if m := JOURNAL.match(line):
        return subject_of("node", m.group(1))
    return None


PARSER = Parser(kinds=(ArtifactKind.KUBELET_LOG,), parse=parse, sniff=sniff, claims_line=claims_line)
