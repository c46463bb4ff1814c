"""The Kubernetes live source: resolve the target, then read its pods, events, nodes, workload and logs.

Read-only, and bounded everywhere: pods are listed only in the namespace with a label selector (or on one
node), events only per object with involvedObject field selectors, every call has a timeout and 429s are
retried within it, and independent calls run together on a small thread pool. A call that fails becomes a
`missing` entry with its reason; the rest of the evidence is still returned.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any

from kubernetes import client

from collectors.k8s_values import as_str
from collectors.live.base import NodeRef, Scope, SourceResult, Window
from collectors.live.k8s_cached import CachedCalls
from collectors.live.k8s_calls import KubeCalls, Runner, bounded_client
from collectors.live.k8s_dumps import read_rank_dumps
from collectors.live.k8s_kinds import is_distributed
from collectors.live.k8s_logs import Limits, read_container_logs
from collectors.live.k8s_nodes import NodeReads
from collectors.live.k8s_objects import ObjectReads
from collectors.live.k8s_ranks import RankLimits, read_rank_logs
from collectors.live.k8s_resolve import Resolved, Resolver
from collectors.live.k8s_util import (
    dump,
    gpu_capacity,
    internal_ip,
    list_doc,
    meta,
    name_of,
    tidy,
    triage_order,
    troubled,
)
from collectors.live.watch_cache import WatchCache
from collectors.models import ArtifactKind, Target

__all__ = ["collect_kubernetes"]

POD_CAP = 500  # full Pod objects kept in the pods artifact (troubled first); every pod still gets a PodRef
EVENT_TROUBLED_CAP = 25  # troubled pods whose events are read
EVENT_HEALTHY_CAP = 5  # healthy pods whose events are read too: a sample, their events are mostly routine
# Calls one triage sends at once. The widest wave of a cold triage (events, logs, nodes and quotas once the pods
# are known) is about 40 calls: at 16 it cost three round trips, at 48 one (docs/benchmarks.md, live triage).
# All triages of a process together stay under k8s_calls.PROCESS_IN_FLIGHT.
CALLS_PER_TRIAGE = 48


def collect_kubernetes(api: client.ApiClient, target: Target, window: Window, *, call_timeout: float = 5.0,
                       log_tail_lines: int = 2000, log_limit_bytes: int = 512_000,
                       max_workers: int = CALLS_PER_TRIAGE, rank_limits: RankLimits | None = None,
                       flight_recorder_dir: str | None = None, kubelet_logs: bool = True,
                       cache: WatchCache | None = None) -> tuple[Scope, SourceResult]:
    """Resolve the target to its pods and nodes and read the evidence around them.

    With a watch cache, the objects it holds are read from it and only the rest (logs, the node log API,
    custom resources) from the API. Raises TargetNotFound (naming near matches) when nothing of that name
    exists; every other failure is a `missing` entry in the result. `flight_recorder_dir` (a folder under the
    nodes' /var/log) turns on reading a training job's Flight Recorder dumps (collectors/live/k8s_dumps.py).
    """
    bounded = bounded_client(api, max_workers)
    calls = CachedCalls(bounded, call_timeout, cache) if cache is not None else KubeCalls(bounded, call_timeout)
    try:
        with ThreadPoolExecutor(max_workers=max(1, max_workers), thread_name_prefix="triage-k8s") as pool:
            run = _Collection(calls, Runner(pool), target, window,
                              Limits(log_tail_lines, log_limit_bytes, kubelet_logs), rank_limits or RankLimits(),
                              flight_recorder_dir)
            scope, result = run.collect()
            if isinstance(calls, CachedCalls):
                result.cache_age = calls.age()
            return scope, result
    finally:
        closable: Any = bounded  # the generated client is untyped
        closable.close()


class _Collection(ObjectReads, NodeReads):
    """One collection run: resolve the target, then read its pods, their events, the objects and nodes around
    them, and the logs."""

    # ---- the run -----------------------------------------------------------------------------------------

    def collect(self) -> tuple[Scope, SourceResult]:
        resolver = Resolver(self.calls, self.runner, self.ns, self.report, POD_CAP, self.rank_limits.cap)
        r = resolver.resolve(self.target)
        self._pods_artifact(r)
        self._objects(r)
        self._events_of_pods(r)
        self._nodes(r)
        covered: frozenset[tuple[str, str]] = frozenset()
        if r.kind != "node" and is_distributed(r.workload, r.pods):
            covered = read_rank_logs(self, self.calls, r.refs, self.ns, r.selector, r.subject, self.rank_limits)
            if self.flight_recorder_dir:
                read_rank_dumps(self, self.calls, r.refs, self.ns, r.subject, self.flight_recorder_dir)
        read_container_logs(self, self.calls, r.pods, self.ns, self.limits, covered)
        self.runner.drain()
        return self._scope(r), self.out.result()

    def _scope(self, r: Resolved) -> Scope:
        names = list(dict.fromkeys(ref.node for ref in r.refs if ref.node))
        if r.node is not None:
            names.insert(0, r.name)
        nodes = [NodeRef(name=n, internal_ip=internal_ip(self.nodes[n]) if n in self.nodes else None,
                         gpu_capacity=gpu_capacity(self.nodes[n]) if n in self.nodes else 0)
                 for n in dict.fromkeys(names)]
        # A node is cluster-scoped, whatever namespace the request came with (`/triage node/x` defaults one).
        return Scope(namespace=self.ns if r.kind != "node" else "",
                     service=r.name if r.kind == "service" else None,
                     workload=r.workload.ref if r.workload else None, pods=r.refs, nodes=nodes)

    # ---- pods --------------------------------------------------------------------------------------------

    def _pods_artifact(self, r: Resolved) -> None:
        if not r.pods_command:
            return  # the pods could not be listed at all; the failure is already reported
        slot = self.out.slot()
        if r.single_pod and r.pods:
            content = dump(tidy(r.pods[0], "v1", "Pod"))
            parts: tuple[str, ...] = ("pod", self.ns, name_of(r.pods[0]))
            subject = f"pod/{self.ns}/{name_of(r.pods[0])}"
        else:
            content = dump(list_doc("v1", "Pod", r.pods))
            parts = ("pods", "node", r.name) if r.kind == "node" else ("pods", self.ns, r.name)
            subject = r.subject
        self.artifact(slot, ArtifactKind.POD, parts, ".json", subject, r.pods_command, content)
        if r.total > len(r.pods):
            self.missing(slot, "pods", f"{r.total} pods matched; the artifact keeps {len(r.pods)} of them "
                                       f"(troubled pods first)")

    # ---- events of the pods ------------------------------------------------------------------------------

    def _events_of_pods(self, r: Resolved) -> None:
        ordered = triage_order(r.pods)
        chosen = [p for p in ordered if troubled(p)][:EVENT_TROUBLED_CAP]
        chosen += [p for p in ordered if not troubled(p)][:EVENT_HEALTHY_CAP]
        for pod in chosen:
            ns = as_str(meta(pod).get("namespace")) or self.ns
            self._events("Pod", name_of(pod), ns, f"pod/{ns}/{name_of(pod)}")
        if r.total > len(chosen):
            self.missing(self.out.slot(), "events", f"read for {len(chosen)} of {r.total} pods (troubled pods "
                                                    f"first, then a few healthy ones)")
