"""What events mean: facts from event records, pooled per artifact (repeats, pull errors, scheduling).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from collectors.lazy_regex import LazyPattern
from collectors.parsers.kubernetes.k8s_common import DedupSink
from collectors.parsers.kubernetes.k8s_describe_layout import DNode
from collectors.parsers.kubernetes.k8s_event_rows import (
    EventRecord,
    describe_events,
)
from collectors.parsers.kubernetes.messages.k8s_messages import (
    entrypoint_failed,
    eviction_condition,
    eviction_over_limit,
    eviction_over_request,
    eviction_resource,
    image_name,
    is_pull_message,
    library_repository,
    missing_refs,
    mount_blocked,
    plain_resource,
    pressure_condition,
    pull_error_kind,
    pull_seconds,
    sandbox_errors,
    volume_errors,
)
from collectors.parsers.kubernetes.messages.k8s_scheduling import scheduling_facts
from collectors.parsers.sink import FactSink


@dataclass
class _Pull:
    kind: str
    image: str
    start: int
    end: int
    subject: str | None
    library: bool = False


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
        kind = pull_error_kind(text)
        library = kind == "denied-or-missing" and library_repository(text)
        self._seen.append(_Pull(kind, image_name(text), *span(), subject, library))

    def flush(self, sink: FactSink) -> None:
        specific = self._distinct([p for p in self._seen if p.kind != "other"])
        for p in specific or self._seen[:1]:
            sink.add("image.pull_error", p.kind, p.start, p.end, p.subject)
            if p.library:
                sink.add("image.library_repository", True, p.start, p.end, p.subject)
            if p.image:
                sink.add("image.name", p.image, p.start, p.end, p.subject)
        if not specific:
            named = next((p for p in self._seen if p.image), None)
            if named is not None:
                sink.add("image.name", named.image, named.start, named.end, named.subject)




_KILLED_PROCESS = LazyPattern(r"Kill(?:ed)? process \d+ \(([^)]*)\)|victim process: ([^,\s]+)|ProcessName:([^\s,}]+)")


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


_PROBE_FAILED = LazyPattern(r"\b(Liveness|Readiness|Startup) probe (?:failed|errored)", re.I)
# 1.14+ "Container x failed liveness probe, will be restarted"; before, "...:Container failed liveness probe..
# Container will be killed and recreated."
_LIVENESS_KILL = LazyPattern(r"failed liveness probe, will be restarted|Container failed liveness probe\.", re.I)
_QUOTA_LIMITED = LazyPattern(r"limited: ([^\s]+)")
# Every refusal of the ResourceQuota admission plugin (staging/src/k8s.io/apiserver/pkg/admission/plugin/
# resourcequota/controller.go, plugin/pkg/admission/resourcequota before 1.10): the quota is full ("exceeded
# quota"), the pod leaves out a resource the quota tracks ("failed quota: <q>: must specify ..."; "Failed quota"
# in 1.2-1.3), the quota's usage is not computed yet ("status unknown for quota"), or no quota covers a resource
# or scope the apiserver limits by configuration ("insufficient quota to consume / to match these scopes").
_QUOTA_REFUSED = LazyPattern(r"exceeded quota: |[Ff]ailed quota: |status unknown for quota: "
                             r"|insufficient quota to (?:consume|match these scopes)")
# The pod evaluator's Constraints (pkg/quota/v1/evaluator/core/pods.go): "must specify R1,R2" (1.2 to 1.2x),
# per container "must specify R1 for: c1,c2; R2 for: c1" in later releases.
_QUOTA_MUST_SPECIFY = LazyPattern(r"[Ff]ailed quota: [^:\s]+: must specify (.+)")
_QUOTA_RESOURCE = LazyPattern(r"^[a-z][a-z0-9./-]*$")
_PVC_DELETING = LazyPattern(r"persistentvolumeclaim \"[^\"]+\" is being deleted", re.I)
# "reclaim memory" (the event, klog before 1.21) or `reclaim" resourceName="memory"` (structured klog, 1.21 on)
_RECLAIM = LazyPattern(r"reclaim\"?\s+(?:resourceName=\")?([\w.\-]+)")
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
        # FailedScheduling per object, and the objects a later Scheduled event shows were placed after all.
        self._unscheduled: dict[str | None, EventRecord] = {}
        self._placed: dict[str | None, EventRecord] = {}
        self._failed_last: dict[str | None, EventRecord] = {}  # the latest failure per object, by age where known
        # A pod's failures before its first container (volume mount, missing object, sandbox), the latest per object,
        # and the objects whose container the kubelet started after the latest of them.
        self._setup_failed: dict[str | None, EventRecord] = {}
        self._started: dict[str | None, EventRecord] = {}
        # Image pulls per object: started and not finished yet, and finished.
        self.pulls_open: dict[str | None, EventRecord] = {}
        self.pulls_done: dict[str | None, EventRecord] = {}
        # A repeat of an event already read says nothing new (its first row is the citation), so a 200,000-row
        # table of one message costs one read. Only the events whose order matters are read every time.
        self._fed: set[tuple[str, str, str | None]] = set()
        # ScalingReplicaSet per workload: a replica set scaled down to 0, and whether one was scaled up (a rollout).
        self.scaled_to_zero: dict[str | None, EventRecord] = {}
        self.scaled_up: set[str | None] = set()

    def none_seen(self, line: int) -> None:
        """An events table was read and was empty (`Events: <none>`)."""
        self.sink.add("events.reasons", [], line, subject=self.subject)

    def feed(self, ev: EventRecord, subject: str | None = None, stated: bool = False) -> None:
        """One event; `stated` when a bare line names its reason itself (a component's log of the event it sent)."""
        written = ev.reason
        # Kubernetes before 1.2 wrote reasons in lowerCamelCase (failedScheduling); events.reasons keeps the text.
        reason = written[:1].upper() + written[1:]
        # Before the repeat check: a line that states its reason counts even when a signal already read its message.
        if (self.record_reasons or stated) and written and written not in self._reasons:
            self._reasons.add(written)
            self.sink.add("events.reasons", [written], *ev.span(), self.subject)
        if reason == "Scheduled":
            self._fed.clear()  # a FailedScheduling after the pod was placed counts again
        elif reason not in _ORDERED_REASONS:
            key = (reason, ev.message, subject)
            if key in self._fed:
                return
            self._fed.add(key)
        handler = _EVENT_HANDLERS.get(reason)
        if reason == "Scheduled":
            if subject in self._unscheduled and not _before(ev, self._failed_last[subject]):
                self._placed[subject] = ev
        elif reason == "Started":
            if subject in self._setup_failed and not _before(ev, self._setup_failed[subject]):
                self._started[subject] = ev
        elif handler is not None:
            handler(self, ev, subject)
        elif reason in _NODE_CONDITION_EVENTS:
            self.add("node.conditions", [_NODE_CONDITION_EVENTS[reason]], ev, subject)
        elif reason in _PULL_REASONS or (reason in ("Failed", "BackOff") and is_pull_message(ev.message)):
            self.pulls.note(ev.message, subject, ev.span)
        elif reason == "Failed":
            _config_failed(self, ev, subject)
        elif reason == "BackOff" and "restarting failed container" in ev.message:
            self.add("container.restart_backoff", True, ev, subject)

    def unscheduled(self, ev: EventRecord, subject: str | None) -> None:
        """A FailedScheduling event; a later Scheduled event for the object resolves it."""
        self._unscheduled.setdefault(subject, ev)
        last = self._failed_last.get(subject)
        if last is None or not _before(ev, last):
            self._failed_last[subject] = ev
        placed = self._placed.get(subject)
        if placed is not None and not _before(ev, placed):
            del self._placed[subject]  # failing again after it was placed: the failure holds again

    def setup_failed(self, ev: EventRecord, subject: str | None) -> None:
        """A failure before the pod's first container; a later Started event for the object resolves it."""
        last = self._setup_failed.get(subject)
        if last is None or not _before(ev, last):
            self._setup_failed[subject] = ev
        started = self._started.get(subject)
        if started is not None and not _before(ev, started):
            del self._started[subject]  # failing again after a container started: the failure holds again

    def finish(self) -> None:
        self.pulls.flush(self.sink)
        for subject, ev in self.pulls_open.items():
            self.add("image.pulling", True, ev, subject)
        if not self.pulls_open:
            for subject, ev in self.pulls_done.items():
                self.add("image.pulling", False, ev, subject)
        for subject, ev in self._unscheduled.items():
            self.add("scheduling.failed", True, ev, subject)
        # Every pod that failed to schedule was placed afterwards: the wait is over (a claim bound, a node joined).
        # Cited from the first failure to the last placement, so a reader that read any line between for
        # scheduling facts keeps the say (signals.without_repeats).
        if self._unscheduled and self._placed.keys() >= self._unscheduled.keys():
            start = min(ev.span()[0] for ev in self._unscheduled.values())
            end = max(ev.span()[1] for ev in self._placed.values())
            if not self.sink.has("scheduling.resolved", True, None):
                self.sink.add("scheduling.resolved", True, start, end, None)
        # Every object whose volumes, referenced objects or sandbox failed started a container afterwards: the
        # kubelet starts none before every volume is mounted and the sandbox is up (pkg/kubelet/kubelet.go SyncPod,
        # WaitForAttachAndMount), so the wait before it was over.
        if self._setup_failed and self._started.keys() >= self._setup_failed.keys():
            start = min(ev.span()[0] for ev in self._setup_failed.values())
            end = max(ev.span()[1] for ev in self._started.values())
            if not self.sink.has("pod.setup_resolved", True, None):
                self.sink.add("pod.setup_resolved", True, start, end, None)
        for subject, ev in self.scaled_to_zero.items():
            self.add("rollout.recent" if subject in self.scaled_up else "rollout.scaled_to_zero", True, ev, subject)

    def add(self, name: str, value: object, ev: EventRecord, subject: str | None) -> None:
        if not self.sink.has(name, value, subject):
            self.sink.add(name, value, *ev.span(), subject)


def _before(ev: EventRecord, other: EventRecord) -> bool:
    """`ev` was last seen before `other`, by their ages; without both ages, the paste's order decides (a later row
    is later), so this is False. A table is printed in any order (k9s, --sort-by, a paste put together by hand)."""
    return ev.ago is not None and other.ago is not None and ev.ago > other.ago


_ORDERED_REASONS = {"Pulling", "Pulled"}
_PULL_REASONS = {"ErrImagePull", "ImagePullBackOff", "ErrImageNeverPull", "InspectFailed", "InvalidImageName"}


def _failed_scheduling(facts: EventFacts, ev: EventRecord, subject: str | None) -> None:
    facts.unscheduled(ev, subject)
    if _PVC_DELETING.search(ev.message):
        facts.add("pvc.terminating", True, ev, subject)
    if ev.message:
        facts.add("scheduling.message", ev.message, ev, subject)
    for name, value in scheduling_facts(ev.message):
        facts.add(name, value, ev, subject)


def _not_triggered(facts: EventFacts, ev: EventRecord, subject: str | None) -> None:
    """The cluster-autoscaler's NotTriggerScaleUp: it looks only at pods the scheduler left unschedulable, so the
    pod waits. Its reasons are counted in node groups and say why no node was added, not why the nodes refused
    the pod, so they are not read as the scheduler's."""
    facts.unscheduled(ev, subject)


def _failed_create(facts: EventFacts, ev: EventRecord, subject: str | None) -> None:
    if not _QUOTA_REFUSED.search(ev.message):
        return
    facts.add("quota.exceeded", True, ev, subject)
    facts.add("scheduling.reasons", ["quota-exceeded"], ev, subject)
    if unspecified := _unspecified_resources(ev.message):
        facts.add("quota.unspecified_resources", unspecified, ev, subject)
    if m := _QUOTA_LIMITED.search(ev.message):
        names = [part.split("=", 1)[0] for part in m.group(1).rstrip(".").split(",") if "=" in part]
        if names:
            facts.add("quota.resources_at_limit", list(dict.fromkeys(names)), ev, subject)


def _unspecified_resources(message: str) -> list[str]:
    """The resources a "must specify" refusal names, in either of its forms (the container names dropped)."""
    m = _QUOTA_MUST_SPECIFY.search(message)
    if not m:
        return []
    names = [name.strip().rstrip(".") for part in m.group(1).split(";")
             for name in part.split(" for:")[0].split(",")]
    return list(dict.fromkeys(n for n in names if _QUOTA_RESOURCE.match(n)))


def _kueue_pending(facts: EventFacts, ev: EventRecord, subject: str | None) -> None:
    if re.search(r"insufficient (?:unused )?quota|exceeded quota", ev.message):
        facts.add("quota.exceeded", True, ev, subject)
        facts.add("scheduling.reasons", ["quota-exceeded"], ev, subject)


def _evicted(facts: EventFacts, ev: EventRecord, subject: str | None) -> None:
    if _DRAIN_EVICTED.match(ev.message):
        facts.add("node.draining", True, ev, subject)  # Karpenter's own event: an API eviction, not the kubelet's
        return
    facts.add("eviction.seen", True, ev, subject)
    resource = eviction_resource(ev.message)
    if resource:
        facts.add("eviction.resource", resource, ev, subject)
    if eviction_over_limit(ev.message):
        facts.add("eviction.over_limit", True, ev, subject)
    if eviction_over_request(ev.message):
        facts.add("eviction.over_request", True, ev, subject)
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
    facts.setup_failed(ev, subject)
    errors = volume_errors(ev.message)
    if mount_blocked(errors):
        facts.add("volume.mount_failed", True, ev, subject)
    if errors:
        facts.add("volume.errors", errors, ev, subject)
    if refs := missing_refs(ev.message):
        facts.add("pod.missing_refs", refs, ev, subject)
    if _PVC_DELETING.search(ev.message):
        facts.add("pvc.terminating", True, ev, subject)


def _sandbox_failed(facts: EventFacts, ev: EventRecord, subject: str | None) -> None:
    facts.setup_failed(ev, subject)
    if errors := sandbox_errors(ev.message):
        facts.add("sandbox.errors", errors, ev, subject)


def _pulling(facts: EventFacts, ev: EventRecord, subject: str | None) -> None:
    facts.pulls_open.setdefault(subject, ev)


def _pulled(facts: EventFacts, ev: EventRecord, subject: str | None) -> None:
    opened = facts.pulls_open.pop(subject, None)
    facts.pulls_done.setdefault(subject, ev)
    seconds = pull_seconds(ev.message)
    # Kubelets before 1.19 wrote no duration in Pulled ("Successfully pulled image"); when both events were logged
    # with their times (the event recorder's log lines), the pull took the time between them.
    if seconds is None and opened is not None and opened.at is not None and ev.at is not None and ev.at >= opened.at:
        seconds = round(ev.at - opened.at, 3)
    if seconds is not None:
        facts.add("image.pull_seconds", seconds, ev, subject)


def _config_failed(facts: EventFacts, ev: EventRecord, subject: str | None) -> None:
    """`Error: secret "x" not found` (reason Failed): the container cannot be created without it. Or it was
    created and its entrypoint cannot run: missing, not executable, built for another CPU."""
    if refs := missing_refs(ev.message):
        facts.setup_failed(ev, subject)
        facts.add("pod.missing_refs", refs, ev, subject)
    elif entrypoint_failed(ev.message):
        facts.add("app.errors", ["entrypoint"], ev, subject)


# The deployment controller's ScalingReplicaSet message (kubernetes pkg/controller/deployment/sync.go,
# scaleReplicaSet): "Scaled up|down replica set NAME to N" in older releases, "... to N from M" since about 1.26,
# and "... from M to N" (argo-rollouts and later releases): the three orders are read alike.
_SCALED = LazyPattern(r"\bScaled (up|down) replica set \S{1,253} (?:from \d{1,9} )?to (\d{1,9})(?: from \d{1,9})?\b")


def _scaled(facts: EventFacts, ev: EventRecord, subject: str | None) -> None:
    """A replica set scaled up is a rollout or a scale-up; one scaled down to 0 is a rollout only beside a
    scale-up (the old set emptied for the new one): alone, the workload was scaled to zero (finish())."""
    m = _SCALED.search(ev.message)
    if m and m.group(1) == "down" and int(m.group(2)) == 0:
        facts.scaled_to_zero.setdefault(subject, ev)
        return
    if m and m.group(1) == "up":
        facts.scaled_up.add(subject)
    facts.add("rollout.recent", True, ev, subject)


def _created(facts: EventFacts, ev: EventRecord, subject: str | None) -> None:
    # A ReplicaSet creating pods is a rollout or a scale-up; a Job creating pods is just the job running.
    if ev.kind == "replicaset":
        facts.add("rollout.recent", True, ev, subject)


def _oom(facts: EventFacts, ev: EventRecord, subject: str | None) -> None:
    oom_facts(facts.sink, ev.message, *ev.span(), subject)


def _system_oom(facts: EventFacts, ev: EventRecord, subject: str | None) -> None:
    # The kubelet's OOM watcher (pkg/kubelet/oom/oom_watcher_linux.go) records SystemOOM for a kill cAdvisor places
    # in the root cgroup ("/"): a node-wide OOM, but not proof of one, as older cAdvisors fell back to "/" on
    # kernels they could not parse (kubernetes#100483), so it is its own fact and not kernel.oom_global.
    oom_facts(facts.sink, ev.message, *ev.span(), subject)
    facts.sink.add("kernel.system_oom_event", True, *ev.span(), subject)


def _threshold_met(facts: EventFacts, ev: EventRecord, subject: str | None) -> None:
    m = _RECLAIM.search(ev.message)
    if m:
        facts.add("eviction.reclaiming", True, ev, subject)
        # the resource whose eviction threshold the node crossed (eviction_manager.go logs it as it reclaims)
        facts.add("eviction.resource", plain_resource(m.group(1)), ev, subject)
    condition = pressure_condition(m.group(1)) if m else ""
    if condition:
        facts.add("node.conditions", [condition], ev, subject)


def _not_schedulable(facts: EventFacts, ev: EventRecord, subject: str | None) -> None:
    facts.add("node.unschedulable", True, ev, subject)


# Drains that evict through the API, as their controllers word their events (collectors/catalogs/signals.yaml
# names the same sources for the bare lines):
# - Karpenter's terminator, reason Evicted: "Evicted pod" (kubernetes-sigs/karpenter pkg/controllers/node/termination/
#   terminator/events/events.go, to v1.1) or "Evicted pod: <why>" (v1.2 on). The kubelet's Evicted messages never
#   start so ("The node was low on resource", "Pod ephemeral local storage ...").
_DRAIN_EVICTED = LazyPattern(r"Evicted pod\b")
# - the cluster autoscaler's scale-down, reason ScaleDown: on each pod "deleting pod for node scale down", on the
#   node "marked the node as toBeDeleted/unschedulable" (kubernetes/autoscaler cluster-autoscaler/core/scaledown/
#   actuation/drain.go and actuator.go, 1.20-1.31; core/scale_down.go before);
_SCALE_DOWN = LazyPattern(r"deleting pod for node scale down|marked the node as toBeDeleted/unschedulable")
# - Karpenter's disruption, reason DisruptionTerminating: "Disrupting Node: <Reason>/<Decision>" and "Disrupting
#   NodeClaim: ..." (pkg/controllers/disruption/events/events.go, v0.32 on); reason FailedDraining: "Failed to drain
#   node, N pods are waiting to be evicted" (terminator/events/events.go): the drain runs, a budget holds it.
_DISRUPTING = LazyPattern(r"Disrupting (?:Node|NodeClaim): \w|Failed to drain node\b")


def _drain_event(pattern: LazyPattern) -> Callable[[EventFacts, EventRecord, str | None], None]:
    def handler(facts: EventFacts, ev: EventRecord, subject: str | None) -> None:
        if pattern.search(ev.message):
            facts.add("node.draining", True, ev, subject)
    return handler


_EVENT_HANDLERS = {
    "FailedScheduling": _failed_scheduling,
    "NotTriggerScaleUp": _not_triggered,
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
    "SystemOOM": _system_oom,
    "EvictionThresholdMet": _threshold_met,
    "NodeNotSchedulable": _not_schedulable,
    "ScaleDown": _drain_event(_SCALE_DOWN),
    "DisruptionTerminating": _drain_event(_DISRUPTING),
    "FailedDraining": _drain_event(_DISRUPTING),
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
