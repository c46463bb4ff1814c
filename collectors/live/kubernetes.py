"""The Kubernetes live source: resolve the target, then read its pods, events, nodes, workload and logs.

Read-only, and bounded everywhere: pods are listed only in the namespace with a label selector (or on one
node), events only per object with involvedObject field selectors, every call has a timeout and 429s are
retried within it, and independent calls run together on a small thread pool. A call that fails becomes a
`missing` entry with its reason; the rest of the evidence is still returned.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from kubernetes import client

from collectors.k8s_values import as_dict, as_list, as_str
from collectors.live.base import NodeRef, Scope, SourceResult, Window, artifact_id
from collectors.live.k8s_cached import CachedCalls
from collectors.live.k8s_calls import Failure, KubeCalls, Runner, bounded_client
from collectors.live.k8s_dumps import read_rank_dumps
from collectors.live.k8s_gpu import candidate_gpu_nodes, describe_node, non_terminated
from collectors.live.k8s_logs import Limits, kubelet_nodes, read_container_logs, read_kubelet_log
from collectors.live.k8s_ranks import RankLimits, read_rank_logs
from collectors.live.k8s_resolve import (
    DEPLOYMENT,
    STATEFULSET,
    Kind,
    Resolved,
    Resolver,
    Workload,
    is_distributed,
)
from collectors.live.k8s_util import (
    dump,
    gpu_capacity,
    internal_ip,
    items_of,
    kubectl,
    labels_of,
    list_doc,
    meta,
    name_of,
    node_of,
    phase,
    rank_env,
    tidy,
    triage_order,
    troubled,
    wants_gpu,
)
from collectors.live.watch_cache import WatchCache
from collectors.models import Artifact, ArtifactKind, Missing, Target

__all__ = ["collect_kubernetes"]

POD_CAP = 500  # full Pod objects kept in the pods artifact (troubled first); every pod still gets a PodRef
EVENT_TROUBLED_CAP = 25  # troubled pods whose events are read
EVENT_HEALTHY_CAP = 5  # healthy pods whose events are read too: a sample, their events are mostly routine
EVENT_NODE_CAP = 10  # nodes (of troubled pods) whose events are read beside the NodeList
# Calls one triage sends at once. The widest wave of a cold triage (events, logs, nodes and quotas once the pods
# are known) is about 40 calls: at 16 it cost three round trips, at 48 one (docs/benchmarks.md, live triage).
# All triages of a process together stay under k8s_calls.PROCESS_IN_FLIGHT.
CALLS_PER_TRIAGE = 48
NODE_CAP = 30  # pods' nodes read as objects (nodes of troubled pods first)
GPU_NODE_CAP = 40  # GPU nodes whose allocation is rendered for a pending GPU pod
EVENT_LIMIT = 500  # events kept per object
_GROUP_KEYS = (  # pod label/annotation -> the PodGroup kind it names
    ("scheduling.k8s.io/group-name", Kind("PodGroup", "scheduling.volcano.sh", "v1beta1", "podgroups")),
    ("scheduling.x-k8s.io/pod-group", Kind("PodGroup", "scheduling.x-k8s.io", "v1alpha1", "podgroups")),
    ("pod-group.scheduling.sigs.k8s.io", Kind("PodGroup", "scheduling.sigs.k8s.io", "v1alpha1", "podgroups")),
)
_KUEUE_WORKLOAD = Kind("Workload", "kueue.x-k8s.io", "v1beta1", "workloads")
_KUEUE_QUEUE = "kueue.x-k8s.io/queue-name"
_LABEL_VALUE = re.compile(r"[a-z0-9]([-a-z0-9_.]{0,61}[a-z0-9])?")  # node names that fit in a label value


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


@dataclass
class _Ordered:
    """Artifacts and missing entries, kept in the order their calls were issued, not the order answers
    arrived, so the same cluster state always gives the same report."""

    artifacts: dict[int, Artifact] = field(default_factory=dict)
    missing: dict[int, list[Missing]] = field(default_factory=dict)
    next_slot: int = 0

    def slot(self) -> int:
        self.next_slot += 1
        return self.next_slot

    def result(self) -> SourceResult:
        return SourceResult(artifacts=[self.artifacts[k] for k in sorted(self.artifacts)],
                            missing=[m for k in sorted(self.missing) for m in self.missing[k]])


class _Collection:
    """One collection run: its calls, its artifacts and what could not be read."""

    def __init__(self, calls: KubeCalls, runner: Runner, target: Target, window: Window, limits: Limits,
                 rank_limits: RankLimits, flight_recorder_dir: str | None = None) -> None:
        self.calls = calls
        self.rank_limits = rank_limits
        self.flight_recorder_dir = flight_recorder_dir
        self.runner = runner
        self.target = target
        self.window = window
        self.limits = limits
        self.ns = target.namespace or "default"
        self.out = _Ordered()
        self.ids: set[str] = set()
        self.nodes: dict[str, dict[str, Any]] = {}  # node objects read, by name, for the Scope

    # ---- output helpers --------------------------------------------------------------------------------

    def artifact(self, slot: int, kind: ArtifactKind, parts: tuple[str, ...], ext: str, subject: str,
                 command: str, content: str) -> None:
        self.out.artifacts[slot] = Artifact(
            id=self._unique(artifact_id("k8s", *parts) + ext), kind=kind, subject=subject, source="kubernetes",
            command=command, captured_at=datetime.now(UTC), content=content)

    def _unique(self, candidate: str) -> str:
        stem, dot, ext = candidate.rpartition(".")
        unique, n = candidate, 1
        while unique in self.ids:
            n += 1
            unique = f"{stem}-{n}{dot}{ext}" if dot else f"{candidate}-{n}"
        self.ids.add(unique)
        return unique

    def missing(self, slot: int, what: str, reason: str) -> None:
        self.out.missing.setdefault(slot, []).append(Missing(source=f"kubernetes:{what}", reason=reason))

    def _since(self) -> datetime:
        return self.window.since.astimezone(UTC)

    def report(self, what: str, failure: Failure) -> None:
        self.missing(self.out.slot(), what, failure.reason)

    def fetch(self, thunk: Callable[[], Any], then: Callable[[int, Any], None]) -> None:
        """Run a call on the pool; its result reaches `then` on this thread with a slot fixed now."""
        slot = self.out.slot()

        def guarded(result: Any) -> None:
            try:
                then(slot, result)
            except Exception as exc:  # a bug in handling one answer must not cost the rest of the evidence
                self.missing(slot, "internal", f"could not use an answer: {type(exc).__name__}: {exc}")

        self.runner.submit(thunk, guarded)

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

    # ---- events ------------------------------------------------------------------------------------------

    def _events(self, kind: str, name: str, namespace: str | None, subject: str,
                into: Callable[[list[dict[str, Any]] | None], None] | None = None) -> None:
        """Events about one object, by involvedObject field selector; node events live in any namespace."""
        selector = f"involvedObject.kind={kind},involvedObject.name={name}"
        calls = self.calls
        if namespace is None:
            command = kubectl("get", "events", "-A", "--field-selector", selector, "-o", "json")

            def thunk() -> Any:
                return calls.get_list(calls.core.list_event_for_all_namespaces, field_selector=selector,
                                      max_items=EVENT_LIMIT)
        else:
            command = kubectl("get", "events", "-n", namespace, "--field-selector", selector, "-o", "json")

            def thunk() -> Any:
                return calls.get_list(calls.core.list_namespaced_event, namespace, field_selector=selector,
                                      max_items=EVENT_LIMIT)

        def then(slot: int, result: dict[str, Any] | Failure) -> None:
            if isinstance(result, Failure):
                self.missing(slot, f"events {subject}", result.reason)
                if into is not None:
                    into(None)
                return
            if into is not None:  # rendered inside a describe instead of as its own artifact
                into(items_of(result))
                return
            doc = list_doc("v1", "Event", items_of(result), as_dict(result.get("metadata")))
            self.artifact(slot, ArtifactKind.EVENTS, ("events", *subject.split("/")), ".json", subject, command,
                          dump(doc))

        self.fetch(thunk, then)

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

    def _event_nodes(self, r: Resolved) -> set[str]:
        """Nodes whose events are worth a call: those of troubled pods, else of the first few pods."""
        ordered = triage_order(r.pods)
        chosen = [node_of(p) for p in ordered if troubled(p) and node_of(p)]
        chosen = chosen or [node_of(p) for p in ordered if node_of(p)][:3]
        return set(list(dict.fromkeys(chosen))[:EVENT_NODE_CAP])

    # ---- workload, service, quotas, policies -------------------------------------------------------------

    def _object_artifact(self, slot: int, obj: dict[str, Any], kind: Kind, command: str) -> None:
        name = name_of(obj)
        self.artifact(slot, ArtifactKind.K8S_OBJECT, (kind.ref, self.ns, name), ".json",
                      f"{kind.ref}/{self.ns}/{name}", command, dump(tidy(obj, kind.api_version, kind.kind)))

    def _objects(self, r: Resolved) -> None:
        if r.kind == "node":
            return
        if r.service is not None:
            self._object_artifact(self.out.slot(), r.service, Kind("Service", "", "v1", "services"),
                                  kubectl("get", "service", "-n", self.ns, name_of(r.service), "-o", "json"))
        if r.workload is not None:
            self._workload(r.workload)
        self._namespace_list("resourcequotas", "ResourceQuota", "resourcequota",
                             lambda: self.calls.get_list(self.calls.core.list_namespaced_resource_quota, self.ns))
        if r.kind == "namespace":
            self._refused_creations()
        self._groups(r)
        if is_distributed(r.workload, r.pods):
            self._namespace_list("networkpolicies", "NetworkPolicy", "networkpolicy",
                                 lambda: self.calls.get_list(self.calls.networking.list_namespaced_network_policy,
                                                             self.ns))
            self._rendezvous_services(r)

    def _workload(self, w: Workload) -> None:
        if w.obj is not None:
            self._object_artifact(self.out.slot(), w.obj, w.kind, w.command(self.ns))
        self._events(w.kind.kind, w.name, self.ns, f"{w.kind.ref}/{self.ns}/{w.name}")
        if w.kind is DEPLOYMENT:
            self._replica_sets(w)
        if w.kind in (DEPLOYMENT, STATEFULSET):
            self._hpa(w)

    def _replica_sets(self, w: Workload) -> None:
        """A Deployment's newest ReplicaSets: their events say when pods could not be created (quota)."""
        selector = w.selector()
        if not selector:
            return

        def then(slot: int, result: dict[str, Any] | Failure) -> None:
            if isinstance(result, Failure):
                self.missing(slot, f"replicasets deployment/{self.ns}/{w.name}", result.reason)
                return
            owned = [rs for rs in items_of(result)
                     if any(as_str(o.get("name")) == w.name for o in map(as_dict, as_list(meta(rs).get(
                         "ownerReferences"))))]
            owned.sort(key=lambda rs: as_str(meta(rs).get("creationTimestamp")), reverse=True)
            for rs in owned[:2]:
                self._events("ReplicaSet", name_of(rs), self.ns, f"replicaset/{self.ns}/{name_of(rs)}")

        self.fetch(lambda: self.calls.get_list(self.calls.apps.list_namespaced_replica_set, self.ns,
                                               label_selector=selector), then)

    def _hpa(self, w: Workload) -> None:
        hpa_kind = Kind("HorizontalPodAutoscaler", "autoscaling", "v2", "horizontalpodautoscalers", short="hpa")

        def then(slot: int, result: dict[str, Any] | Failure) -> None:
            if isinstance(result, Failure):
                self.missing(slot, f"hpa {w.ref}", result.reason)
                return
            for hpa in items_of(result):
                ref = as_dict(as_dict(hpa.get("spec")).get("scaleTargetRef"))
                if as_str(ref.get("kind")) == w.kind.kind and as_str(ref.get("name")) == w.name:
                    self._object_artifact(slot, hpa, hpa_kind,
                                          kubectl("get", "hpa", "-n", self.ns, name_of(hpa), "-o", "json"))

        self.fetch(lambda: self.calls.get_list(self.calls.autoscaling.list_namespaced_horizontal_pod_autoscaler,
                                               self.ns), then)

    def _namespace_list(self, plural: str, kind: str, resource: str, thunk: Callable[[], Any]) -> None:
        """Every object of one kind in the namespace, as `kubectl get KIND -n NS -o json` shows them."""
        api_version = "networking.k8s.io/v1" if kind == "NetworkPolicy" else "v1"

        def then(slot: int, result: dict[str, Any] | Failure) -> None:
            if isinstance(result, Failure):
                self.missing(slot, plural, result.reason)
                return
            doc = list_doc(api_version, kind, items_of(result), as_dict(result.get("metadata")))
            self.artifact(slot, ArtifactKind.K8S_OBJECT, (plural, self.ns), ".json", f"namespace/{self.ns}",
                          kubectl("get", resource, "-n", self.ns, "-o", "json"), dump(doc))

        self.fetch(thunk, then)

    def _refused_creations(self) -> None:
        """The namespace's FailedCreate events: a controller whose pod the API server refused (a ResourceQuota,
        a LimitRange, an admission webhook) leaves no pod behind, only these."""
        selector = "reason=FailedCreate"
        calls, ns = self.calls, self.ns

        def then(slot: int, result: dict[str, Any] | Failure) -> None:
            if isinstance(result, Failure):
                self.missing(slot, f"events namespace/{ns} (FailedCreate)", result.reason)
                return
            doc = list_doc("v1", "Event", items_of(result), as_dict(result.get("metadata")))
            self.artifact(slot, ArtifactKind.EVENTS, ("events", "namespace", ns, "failedcreate"), ".json",
                          f"namespace/{ns}", kubectl("get", "events", "-n", ns, "--field-selector", selector, "-o",
                                                     "json"), dump(doc))

        self.fetch(lambda: calls.get_list(calls.core.list_namespaced_event, ns, field_selector=selector,
                                          max_items=EVENT_LIMIT), then)

    def _groups(self, r: Resolved) -> None:
        """Gang scheduling around the pods: Volcano / coscheduling PodGroups and Kueue Workloads."""
        groups: dict[tuple[Kind, str], None] = {}
        for pod in r.pods:
            tags = labels_of(pod) | {k: as_str(v) for k, v in as_dict(meta(pod).get("annotations")).items()}
            for key, kind in _GROUP_KEYS:
                if tags.get(key):
                    groups[(kind, tags[key])] = None
        for kind, name in groups:
            self._custom_object(kind, name)
            self._events("PodGroup", name, self.ns, f"podgroup/{self.ns}/{name}")
        queued = any(_KUEUE_QUEUE in labels_of(p) for p in r.pods) or (
            r.workload is not None and r.workload.obj is not None and _KUEUE_QUEUE in labels_of(r.workload.obj))
        if queued and r.workload is not None:
            self._kueue_workloads(r.workload)

    def _custom_object(self, kind: Kind, name: str) -> None:
        calls, ns = self.calls, self.ns
        command = kubectl("get", kind.resource, "-n", ns, name, "-o", "json")

        def then(slot: int, result: dict[str, Any] | Failure) -> None:
            if isinstance(result, Failure):
                self.missing(slot, f"{kind.ref} {ns}/{name}", result.reason)
                return
            self._object_artifact(slot, result, kind, command)

        self.fetch(lambda: calls.get(calls.custom.get_namespaced_custom_object, kind.group, kind.version, ns,
                                     kind.plural, name), then)

    def _kueue_workloads(self, w: Workload) -> None:
        k, calls, ns = _KUEUE_WORKLOAD, self.calls, self.ns
        uid = as_str(meta(w.obj or {}).get("uid"))

        def then(slot: int, result: dict[str, Any] | Failure) -> None:
            if isinstance(result, Failure):
                if result.status not in (403, 404):  # Kueue not installed or not readable: nothing to say
                    self.missing(slot, f"kueue workloads {ns}", result.reason)
                return
            for item in items_of(result):
                owners = [as_dict(o) for o in as_list(meta(item).get("ownerReferences"))]
                if any(as_str(o.get("uid")) == uid if uid else
                       (as_str(o.get("kind")), as_str(o.get("name"))) == (w.kind.kind, w.name) for o in owners):
                    self._object_artifact(slot, item, k, kubectl("get", k.resource, "-n", ns, name_of(item),
                                                                 "-o", "json"))

        self.fetch(lambda: calls.get_list(calls.custom.list_namespaced_custom_object, k.group, k.version, ns,
                                          k.plural), then)

    def _rendezvous_services(self, r: Resolved) -> None:
        """The headless Service the ranks find each other through: the pods' subdomain and MASTER_ADDR host."""
        names: dict[str, None] = {}
        for pod in r.pods:
            if sub := as_str(as_dict(pod.get("spec")).get("subdomain")):
                names[sub] = None
            host = rank_env(pod).get("MASTER_ADDR", "").split(".")[0]
            if host and not host[0].isdigit():
                names[host] = None
        if r.service is not None:
            names.pop(name_of(r.service), None)
        service_kind = Kind("Service", "", "v1", "services")
        for name in list(names)[:5]:
            def then(slot: int, result: dict[str, Any] | Failure, name: str = name) -> None:
                if isinstance(result, Failure):
                    self.missing(slot, f"service/{self.ns}/{name}", result.reason +
                                 (" (named by the pods' subdomain or MASTER_ADDR)" if result.status == 404 else ""))
                    return
                self._object_artifact(slot, result, service_kind,
                                      kubectl("get", "service", "-n", self.ns, name, "-o", "json"))

            self.fetch(lambda name=name: self.calls.get(self.calls.core.read_namespaced_service,  # type: ignore[misc]
                                                        name, self.ns), then)

    # ---- nodes -------------------------------------------------------------------------------------------

    def _kubelet_logs(self, nodes: list[str]) -> None:
        if not nodes:
            return
        if not self.limits.kubelet_logs:
            # Said once, so the reader knows the kubelet's side was not looked at, and why.
            self.missing(self.out.slot(), "kubelet-log", "not read: kubelet_logs is off (it needs get on nodes/proxy)")
            return
        for node in nodes:
            read_kubelet_log(self, self.calls, node, self._since(), self.limits)

    def _nodes(self, r: Resolved) -> None:
        if r.node is not None:
            self.nodes[r.name] = r.node
            self._describe(r.node, non_terminated(r.pods), self.out.slot())
            self._kubelet_logs([r.name])
            return
        names = list(dict.fromkeys(node_of(p) for p in triage_order(r.pods) if node_of(p)))
        self._kubelet_logs(kubelet_nodes(r.pods))
        pending_gpu = [p for p in r.pods if phase(p) == "Pending" and not node_of(p) and wants_gpu(p)]
        if pending_gpu:
            self._gpu_allocation(pending_gpu, names, self._event_nodes(r))
            return
        if len(names) > NODE_CAP:
            self.missing(self.out.slot(), "nodes", f"read {NODE_CAP} of the pods' {len(names)} nodes "
                                                   f"(nodes of troubled pods first)")
        self._node_objects(names[:NODE_CAP], self._event_nodes(r))

    def _node_objects(self, names: list[str], event_nodes: set[str]) -> None:
        """The pods' nodes as one NodeList; the events of the nodes that matter beside it.

        One list call by the hostname label fetches them all (the label is the node name nearly everywhere);
        a node it misses (a differing label, a name too long for a label) is read on its own.
        """
        if not names:
            return
        slot = self.out.slot()
        answers: dict[str, dict[str, Any] | Failure] = {}
        calls = self.calls

        def settle(name: str, result: dict[str, Any] | Failure) -> None:
            answers[name] = result
            if len(answers) == len(names):
                self._node_list(slot, [answers[n] for n in names], names)

        def read_one(name: str) -> None:
            self.fetch(lambda: calls.get(calls.core.read_node, name), lambda _slot, result: settle(name, result))

        batch = [n for n in names if _LABEL_VALUE.fullmatch(n)] if len(names) > 1 else []
        for name in names:
            if name not in batch:
                read_one(name)
        if batch:
            selector = f"kubernetes.io/hostname in ({','.join(batch)})"

            def then(_slot: int, result: dict[str, Any] | Failure) -> None:
                listed = {} if isinstance(result, Failure) else {name_of(n): n for n in items_of(result)}
                for name in batch:
                    if name in listed:
                        settle(name, listed[name])
                    else:
                        read_one(name)

            self.fetch(lambda: calls.get_list(calls.core.list_node, label_selector=selector), then)
        for name in names:
            if name in event_nodes:
                self._events("Node", name, None, f"node/{name}")

    def _node_list(self, slot: int, results: Sequence[dict[str, Any] | Failure], names: list[str]) -> None:
        found: list[dict[str, Any]] = []
        for name, result in zip(names, results, strict=True):
            if isinstance(result, Failure):
                self.missing(slot, f"node/{name}", result.reason)
            else:
                self.nodes[name] = result
                found.append(result)
        if found:
            single = f"node/{name_of(found[0])}" if len(found) == 1 else "nodes"
            self.artifact(slot, ArtifactKind.NODE, ("nodes",), ".json", single,
                          kubectl("get", "nodes", *[name_of(n) for n in found], "-o", "json"),
                          dump(list_doc("v1", "Node", found)))

    def _gpu_allocation(self, pending: list[dict[str, Any]], pod_nodes: list[str], event_nodes: set[str]) -> None:
        """For pending GPU pods: every GPU node they could run on, described with its allocation.

        Nodes are listed once (a node list is cluster-scoped by nature; only pods and events must never be
        listed cluster-wide), then each candidate's non-terminated pods are read by spec.nodeName.
        """
        wanted = set(pod_nodes[:NODE_CAP])
        calls = self.calls

        def thunk() -> list[dict[str, Any]] | Failure:
            kept: list[dict[str, Any]] = []
            for page in calls.pages(calls.core.list_node):
                if isinstance(page, Failure):
                    return kept if kept else page
                # Filtered page by page so a 5,000-node cluster never sits in memory whole.
                kept += [n for n in items_of(page) if name_of(n) in wanted or candidate_gpu_nodes([n], pending)]
            return kept

        def then(slot: int, result: list[dict[str, Any]] | Failure) -> None:
            if isinstance(result, Failure):
                self.missing(slot, "nodes", result.reason + " (GPU allocation across nodes is unknown)")
                self._node_objects(pod_nodes[:NODE_CAP], event_nodes)
                return
            gpu_nodes = candidate_gpu_nodes(result, pending)
            described = gpu_nodes[:GPU_NODE_CAP]
            if len(gpu_nodes) > GPU_NODE_CAP:
                self.missing(slot, "gpu-allocation", f"described {GPU_NODE_CAP} of {len(gpu_nodes)} GPU nodes; "
                                                     "free GPU totals are a lower bound")
            for node in described:
                self.nodes[name_of(node)] = node
                self._describe(node, None, self.out.slot())
            done = {name_of(n) for n in described}
            rest = [n for n in result if name_of(n) in wanted and name_of(n) not in done]
            for node in rest:
                self.nodes[name_of(node)] = node
            if rest:
                self._node_list(self.out.slot(), rest, [name_of(n) for n in rest])
                for node in rest:
                    if name_of(node) in event_nodes:
                        self._events("Node", name_of(node), None, f"node/{name_of(node)}")

        self.fetch(thunk, then)

    def _describe(self, node: dict[str, Any], pods: list[dict[str, Any]] | None, slot: int) -> None:
        """`kubectl describe node` for one node: its non-terminated pods (read by spec.nodeName unless
        given) and its events, rendered once both are in."""
        name = name_of(node)
        parts: dict[str, Any] = {}

        def ready() -> None:
            if "pods" not in parts or "events" not in parts:
                return
            if parts["pods"] is None:
                return  # without the pods the allocation is unknown; the failure is reported
            text = describe_node(node, non_terminated(parts["pods"]), parts["events"], datetime.now(UTC))
            self.artifact(slot, ArtifactKind.DESCRIBE_NODE, ("describe", "node", name), ".txt", f"node/{name}",
                          kubectl("describe", "node", name), text)

        def got_pods(result: list[dict[str, Any]] | Failure) -> None:
            if isinstance(result, Failure):
                self.missing(slot, f"pods on node/{name}", result.reason + " (GPU allocation unknown)")
                parts["pods"] = None
            else:
                parts["pods"] = result
            ready()

        def got_events(events: list[dict[str, Any]] | None) -> None:
            parts["events"] = events
            ready()

        if pods is None:
            self.fetch(lambda: self._pods_on_node(name), lambda _slot, result: got_pods(result))
        else:
            parts["pods"] = pods
        self._events("Node", name, None, f"node/{name}", into=got_events)

    def _pods_on_node(self, node: str) -> list[dict[str, Any]] | Failure:
        """The node's non-terminated pods with kubectl describe's own field selector; a server that cannot
        filter on phase gets the plain node selector and is filtered here."""
        core = self.calls.core
        selector = f"spec.nodeName={node},status.phase!=Succeeded,status.phase!=Failed"
        result = self.calls.get_list(core.list_pod_for_all_namespaces, field_selector=selector)
        if isinstance(result, Failure) and result.status == 400:
            result = self.calls.get_list(core.list_pod_for_all_namespaces, field_selector=f"spec.nodeName={node}")
        return result if isinstance(result, Failure) else non_terminated(items_of(result))
