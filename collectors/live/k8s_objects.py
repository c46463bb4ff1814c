"""The Kubernetes objects around a target (workload, service, quotas, policies, groups), read in one collection run.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from collectors.k8s_values import as_dict, as_list, as_str
from collectors.live.k8s_calls import Failure
from collectors.live.k8s_kinds import DEPLOYMENT, STATEFULSET, Kind, Workload, is_distributed
from collectors.live.k8s_resolve import Resolved
from collectors.live.k8s_run import EVENT_LIMIT, CollectionBase
from collectors.live.k8s_util import dump, items_of, kubectl, labels_of, list_doc, meta, name_of, rank_env, tidy
from collectors.models import ArtifactKind

_GROUP_KEYS = (  # pod label/annotation -> the PodGroup kind it names
    ("scheduling.k8s.io/group-name", Kind("PodGroup", "scheduling.volcano.sh", "v1beta1", "podgroups")),
    ("scheduling.x-k8s.io/pod-group", Kind("PodGroup", "scheduling.x-k8s.io", "v1alpha1", "podgroups")),
    ("pod-group.scheduling.sigs.k8s.io", Kind("PodGroup", "scheduling.sigs.k8s.io", "v1alpha1", "podgroups")),
)
_KUEUE_WORKLOAD = Kind("Workload", "kueue.x-k8s.io", "v1beta1", "workloads")
_KUEUE_QUEUE = "kueue.x-k8s.io/queue-name"


class ObjectReads(CollectionBase):
    """The objects around the target: its workload and HPA, the service, quotas, scheduling groups, Kueue
    workloads, and a distributed job's network policies and rendezvous services."""

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
