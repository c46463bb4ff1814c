"""Recurrence: which earlier incidents a new one shares something with, and the patterns that have a meaning.

Pure: the new incident and stored incident summaries in, links and patterns out. The store query is
bot/memory/recent.py; the words are bot/render/memory/recurrence.py.

A link is one thing the new incident shares with earlier ones: the same GPU, image, workload or node, or the same
verdict in the same namespace. A namespace alone, or a verdict alone, links nothing: a busy namespace or a common
cause (an OOM kill) would tie every incident to every other one and say nothing. A pattern is a recurrence with a
next check of its own: one GPU with hardware Xids again (cordon its node, collect an RMA bundle), one image crash-
looping in several namespaces (the rollout that brought it), one node among the suspects of most of a job's NCCL
hangs (that node). The bot only suggests these commands; it never runs them.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Literal

from bot.memory.keys import Gpu, IncidentKeys

WINDOW = timedelta(days=7)
# Incidents opened within this of the new one are the same burst (one outage, several alerts), which the alert
# grouping and the storm roll-up already show: they make no link. Patterns still count them: a bad image crash-
# looping in three namespaces within minutes is exactly the rollout to look at.
BURST = timedelta(hours=1)
MAX_ECHOES = 2

LinkKind = Literal["gpu", "image", "workload", "node", "verdict"]
PatternKind = Literal["gpu-hardware-xids", "image-crash-loop", "nccl-hang-node"]
# The most specific first: a link to a GPU says more than one to its node.
_ORDER: tuple[LinkKind, ...] = ("gpu", "image", "workload", "node", "verdict")


@dataclass(frozen=True)
class Seen:
    """One stored incident as recurrence reads it: when, what it was called, its keys, and where its thread is."""

    incident_id: int
    at: datetime
    title: str
    keys: IncidentKeys
    channel: str | None = None
    thread_ts: str | None = None


@dataclass(frozen=True)
class Echo:
    """Something that came back in the linked incidents: "Xid 79 on GPU 1", twice."""

    what: str
    times: int


@dataclass(frozen=True)
class Link:
    kind: LinkKind
    key: str
    subject: str  # how people say it: "node-a", "GPU 1 on node-a", "oom-killed/limit-too-low in ml"
    earlier: tuple[Seen, ...]  # newest first
    echoes: tuple[Echo, ...]

    @property
    def count(self) -> int:
        """Incidents sharing it, this one included: this is the count-th."""
        return len(self.earlier) + 1


@dataclass(frozen=True)
class Pattern:
    kind: PatternKind
    subject: str
    claim: str
    incidents: tuple[int, ...]  # the earlier incidents it rests on, newest first
    next_checks: tuple[str, ...]


@dataclass(frozen=True)
class Recurrence:
    window: timedelta
    links: tuple[Link, ...] = ()
    patterns: tuple[Pattern, ...] = ()

    @property
    def days(self) -> int:
        return max(1, round(self.window.total_seconds() / 86400))

    def __bool__(self) -> bool:
        return bool(self.links or self.patterns)

    def to_json(self) -> dict[str, Any]:
        """The `recurrence` section of the report JSON (docs/report-json.md)."""
        return {
            "window_days": self.days,
            "links": [{"kind": ln.kind, "subject": ln.subject, "count": ln.count,
                       "echoes": [{"what": e.what, "times": e.times} for e in ln.echoes],
                       "earlier": [_seen_json(s) for s in ln.earlier]} for ln in self.links],
            "patterns": [{"kind": p.kind, "subject": p.subject, "claim": p.claim, "incidents": list(p.incidents),
                          "next_checks": list(p.next_checks)} for p in self.patterns],
        }


    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Recurrence:
        """The note's content back from `to_json`, as the poster re-renders it with Slack's permalinks: what the
        words say (the earlier incidents' keys are not kept, and rendering reads none)."""
        links = tuple(Link(kind=ln["kind"], key="", subject=ln["subject"],
                           earlier=tuple(_seen_from(s) for s in ln["earlier"]),
                           echoes=tuple(Echo(e["what"], int(e["times"])) for e in ln["echoes"]))
                      for ln in data.get("links", []))
        patterns = tuple(Pattern(kind=p["kind"], subject=p["subject"], claim=p["claim"],
                                 incidents=tuple(p["incidents"]), next_checks=tuple(p["next_checks"]))
                         for p in data.get("patterns", []))
        return cls(window=timedelta(days=int(data.get("window_days", 7))), links=links, patterns=patterns)


def _seen_json(seen: Seen) -> dict[str, Any]:
    return {"incident": seen.incident_id, "title": seen.title, "at": seen.at.isoformat(),
            "channel": seen.channel, "thread_ts": seen.thread_ts}


def _seen_from(data: dict[str, Any]) -> Seen:
    return Seen(incident_id=int(data["incident"]), at=datetime.fromisoformat(data["at"]), title=data["title"],
                keys=IncidentKeys(), channel=data.get("channel"), thread_ts=data.get("thread_ts"))


def link_keys(keys: IncidentKeys) -> dict[str, tuple[LinkKind, str]]:
    """Every key an incident can be linked by, with its kind and how people say it."""
    out: dict[str, tuple[LinkKind, str]] = {}
    for gpu in keys.gpus:
        out[f"gpu:{gpu.key}"] = ("gpu", gpu.label)
    for image in sorted(keys.images):
        out[f"image:{image}"] = ("image", image)
    if keys.workload:
        out[f"workload:{keys.workload}"] = ("workload", keys.workload)
    for node in sorted(keys.nodes):
        out[f"node:{node}"] = ("node", node)
    if keys.leader and keys.namespace:
        out[f"verdict:{keys.namespace}|{keys.leader}"] = ("verdict", f"{keys.leader} in {keys.namespace}")
    return out


def _gpu_words(gpu: Gpu, kind: LinkKind, subject: str) -> str:
    """How an echo names a GPU: not at all in the GPU's own link, by its name alone in its node's link, else with
    its node ("GPU 1" is on every node)."""
    if kind == "gpu" and gpu.label == subject:
        return ""
    return f" on {gpu.name}" if kind == "node" and gpu.node == subject else f" on {gpu.label}"


def _said(keys: IncidentKeys, kind: LinkKind, subject: str) -> set[str]:
    """What an incident showed, as the phrases echoes count: each hardware Xid on each GPU, and the verdict."""
    phrases: set[str] = set()
    for code in keys.hardware_xids:
        phrases.update({f"Xid {code}{_gpu_words(gpu, kind, subject)}" for gpu in keys.gpus} or {f"Xid {code}"})
    if keys.leader:
        phrases.add(keys.leader)
    return phrases


def _echoes(incidents: list[IncidentKeys], kind: LinkKind, subject: str) -> tuple[Echo, ...]:
    counts = Counter(phrase for keys in incidents for phrase in _said(keys, kind, subject))
    # Hardware first (the rarer, the more telling), then the most repeated.
    ranked = sorted((Echo(what, n) for what, n in counts.items() if n >= 2),
                    key=lambda e: (not e.what.startswith("Xid "), -e.times, e.what))
    return tuple(ranked[:MAX_ECHOES])


def _within(new: Seen, history: Iterable[Seen], window: timedelta) -> list[Seen]:
    earlier = [s for s in history if s.incident_id != new.incident_id and new.at - window <= s.at <= new.at]
    return sorted(earlier, key=lambda s: (s.at, s.incident_id), reverse=True)


def _links(new: Seen, earlier: list[Seen]) -> tuple[Link, ...]:
    keys_of = {s.incident_id: link_keys(s.keys) for s in earlier}
    found: list[Link] = []
    for key, (kind, subject) in link_keys(new.keys).items():
        shared = tuple(s for s in earlier if key in keys_of[s.incident_id])
        if shared:
            found.append(Link(kind=kind, key=key, subject=subject, earlier=shared,
                              echoes=_echoes([new.keys, *(s.keys for s in shared)], kind, subject)))
    found.sort(key=lambda ln: (_ORDER.index(ln.kind), -ln.count, ln.subject))
    kept: list[Link] = []
    for link in found:
        ids = {s.incident_id for s in link.earlier}
        # The same incidents already said under a more specific key (the GPU before its node) are not said twice.
        if not any(ids <= {s.incident_id for s in k.earlier} for k in kept):
            kept.append(link)
    return tuple(kept)


def _gpu_patterns(new: Seen, earlier: list[Seen], days: int) -> list[Pattern]:
    if not new.keys.hardware_xids:
        return []
    out: list[Pattern] = []
    for gpu in new.keys.gpus:
        again = [s for s in earlier if s.keys.hardware_xids and gpu.key in {g.key for g in s.keys.gpus}]
        if not again:
            continue
        codes = sorted(set(new.keys.hardware_xids).union(*(s.keys.hardware_xids for s in again)))
        node = gpu.node or next((g.node for s in again for g in s.keys.gpus if g.key == gpu.key and g.node), None)
        checks = ([f"kubectl cordon {node}"] if node else []) + [
            f"RMA evidence bundle for {gpu.label}: `nvidia-bug-report.sh` and `nvidia-smi -q` (serial, UUID, "
            f"remapped rows) on {node or 'its node'}, with the Xid lines of incident{'s' if len(again) > 1 else ''} "
            + ", ".join(f"#{s.incident_id}" for s in again)]
        out.append(Pattern(
            kind="gpu-hardware-xids", subject=gpu.label,
            claim=f"{gpu.label} reported hardware Xid {', '.join(map(str, codes))} in {len(again) + 1} incidents "
                  f"in {days} days: the board, not the workload",
            incidents=tuple(s.incident_id for s in again), next_checks=tuple(checks)))
    return out


def _rollout_check(workload: str) -> str | None:
    namespace, _, rest = workload.partition("/")
    return f"kubectl rollout history {rest} -n {namespace}" if "/" in rest else None


def _image_patterns(new: Seen, earlier: list[Seen], days: int) -> list[Pattern]:
    if not new.keys.crash_looping:
        return []
    out: list[Pattern] = []
    for image in sorted(new.keys.images):
        again = [s for s in earlier if s.keys.crash_looping and image in s.keys.images]
        namespaces = {k.namespace for k in [new.keys, *(s.keys for s in again)] if k.namespace}
        if len(namespaces) < 2:
            continue
        workloads = dict.fromkeys(k.workload for k in [new.keys, *(s.keys for s in again)] if k.workload)
        checks = [c for w in workloads if w is not None and (c := _rollout_check(w)) is not None]
        checks.append(
            "kubectl get pods -A -o jsonpath='{range .items[*]}{.metadata.namespace}/{.metadata.name} "
            "{.status.containerStatuses[*].imageID}{\"\\n\"}{end}' | grep -F " + image
            if image.startswith("sha256:") else f"kubectl get deployments,statefulsets,daemonsets -A -o wide | "
                                                f"grep -F {image}")
        out.append(Pattern(
            kind="image-crash-loop", subject=image,
            claim=f"{image} crash-looped in {len(namespaces)} namespaces ({', '.join(sorted(namespaces))}) in "
                  f"{days} days: the image, or the rollout that brought it, not one namespace's config",
            incidents=tuple(s.incident_id for s in again), next_checks=tuple(checks)))
    return out


def _nccl_patterns(new: Seen, earlier: list[Seen], days: int) -> list[Pattern]:
    if not (new.keys.nccl_hang and new.keys.workload and new.keys.suspect_nodes):
        return []
    again = [s for s in earlier if s.keys.nccl_hang and s.keys.workload == new.keys.workload]
    hangs = [new.keys, *(s.keys for s in again)]
    out: list[Pattern] = []
    for node in sorted(new.keys.suspect_nodes):
        with_node = [s for s in again if node in s.keys.suspect_nodes]
        seen_in = len(with_node) + 1
        if seen_in >= 2 and 2 * seen_in > len(hangs):  # most of the job's hangs, and more than once
            out.append(Pattern(
                kind="nccl-hang-node", subject=node,
                claim=f"{node} was among the suspect ranks' hosts in {seen_in} of {len(hangs)} NCCL hangs of "
                      f"{new.keys.workload} in {days} days",
                incidents=tuple(s.incident_id for s in with_node),
                next_checks=(f"kubectl describe node {node}",
                             f"kubectl get pods -A -o wide --field-selector spec.nodeName={node}",
                             f"kubectl cordon {node}")))
    return out


def recall(new: Seen, history: Iterable[Seen], window: timedelta = WINDOW) -> Recurrence:
    """What the new incident shares with the incidents of the `window` before it (links: those older than a
    `BURST`), and the patterns among them."""
    earlier = _within(new, history, window)
    days = max(1, round(window.total_seconds() / 86400))
    patterns = _gpu_patterns(new, earlier, days) + _image_patterns(new, earlier, days) + \
        _nccl_patterns(new, earlier, days)
    # One GPU may be keyed by its UUID and by its bus id: one pattern each time it is the same finding.
    unique = list({(p.kind, p.subject, p.incidents): p for p in patterns}.values())
    before = [s for s in earlier if s.at <= new.at - BURST]
    return Recurrence(window=window, links=_links(new, before), patterns=tuple(unique))
