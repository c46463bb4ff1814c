"""The resources the Kubernetes stand-in serves, and the discovery documents describing them.

Each resource carries what the real API server knows about it: group/version, kind, scope, short names,
subresources, and which field-selector labels its field-label conversion accepts (with the exact error text
the real conversion function returns for any other label).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

# The version /version reports; kubectl's version dispatcher picks its bundled minor from it.
SERVER_VERSION: dict[str, str] = {
    "major": "1",
    "minor": "31",
    "gitVersion": "v1.31.4",
    "gitCommit": "a78aa47129b8539636eb86a9d00e31b2720fe06b",
    "gitTreeState": "clean",
    "buildDate": "2024-12-10T11:36:11Z",
    "goVersion": "go1.22.9",
    "compiler": "gc",
    "platform": "linux/amd64",
}

_RW = ("create", "delete", "deletecollection", "get", "list", "patch", "update", "watch")
_STATUS_VERBS = ("get", "patch", "update")

# A field label maps to a path into the stored (core-shaped) object and how Go prints the value.
FieldPath = tuple[str, ...]


@dataclass(frozen=True)
class FieldLabel:
    path: FieldPath
    kind: str = "str"  # "str", "bool" (Go prints false for a missing bool), "int" (0 when missing)


def _labels(**extra: FieldPath | FieldLabel) -> dict[str, FieldLabel]:
    out = {"metadata.name": FieldLabel(("metadata", "name")),
           "metadata.namespace": FieldLabel(("metadata", "namespace"))}
    for name, spec in extra.items():
        out[name.replace("__", ".")] = spec if isinstance(spec, FieldLabel) else FieldLabel(spec)
    return out


def _core_error(label: str) -> str:
    return f"field label not supported: {label}"


def _default_error(label: str) -> str:
    # runtime.DefaultMetaV1FieldSelectorConversion, used by every kind without its own conversion (CRDs too).
    return f'"{label}" is not a known field selector: only "metadata.name", "metadata.namespace"'


def _job_error(label: str) -> str:
    return f'field label "{label}" not supported for batchv1.Job'


_DEFAULT_LABELS = _labels()

_POD_LABELS = {
    **_labels(),
    "spec.nodeName": FieldLabel(("spec", "nodeName")),
    "spec.host": FieldLabel(("spec", "nodeName")),  # old clients; the server maps it to spec.nodeName
    "spec.restartPolicy": FieldLabel(("spec", "restartPolicy")),
    "spec.schedulerName": FieldLabel(("spec", "schedulerName")),
    "spec.serviceAccountName": FieldLabel(("spec", "serviceAccountName")),
    "spec.hostNetwork": FieldLabel(("spec", "hostNetwork"), "bool"),
    "status.phase": FieldLabel(("status", "phase")),
    "status.podIP": FieldLabel(("status", "podIP")),
    "status.podIPs": FieldLabel(("status", "podIP")),
    "status.nominatedNodeName": FieldLabel(("status", "nominatedNodeName")),
}

_EVENT_LABELS = {
    **_labels(),
    "involvedObject.kind": FieldLabel(("involvedObject", "kind")),
    "involvedObject.namespace": FieldLabel(("involvedObject", "namespace")),
    "involvedObject.name": FieldLabel(("involvedObject", "name")),
    "involvedObject.uid": FieldLabel(("involvedObject", "uid")),
    "involvedObject.apiVersion": FieldLabel(("involvedObject", "apiVersion")),
    "involvedObject.resourceVersion": FieldLabel(("involvedObject", "resourceVersion")),
    "involvedObject.fieldPath": FieldLabel(("involvedObject", "fieldPath")),
    "reason": FieldLabel(("reason",)),
    "reportingComponent": FieldLabel(("reportingComponent",)),
    "source": FieldLabel(("source", "component")),
    "type": FieldLabel(("type",)),
}

# events.k8s.io/v1 is a second view of the same stored events; its labels are renamed core labels.
_EVENTS_V1_LABELS = {
    "metadata.name": _EVENT_LABELS["metadata.name"],
    "metadata.namespace": _EVENT_LABELS["metadata.namespace"],
    "reason": _EVENT_LABELS["reason"],
    "type": _EVENT_LABELS["type"],
    "reportingController": _EVENT_LABELS["reportingComponent"],
    **{f"regarding.{k}": _EVENT_LABELS[f"involvedObject.{k}"]
       for k in ("kind", "namespace", "name", "uid", "apiVersion", "resourceVersion", "fieldPath")},
}

_NODE_LABELS = {"metadata.name": FieldLabel(("metadata", "name")),
                "spec.unschedulable": FieldLabel(("spec", "unschedulable"), "bool")}
_NAMESPACE_LABELS = {"metadata.name": FieldLabel(("metadata", "name")), "status.phase": FieldLabel(("status", "phase"))}
_SERVICE_LABELS = _labels(spec__clusterIP=("spec", "clusterIP"), spec__type=("spec", "type"))
_SECRET_LABELS = _labels(type=("type",))
_JOB_LABELS = _labels(status__successful=FieldLabel(("status", "succeeded"), "int"))


@dataclass(frozen=True)
class Resource:
    group: str
    version: str
    plural: str
    kind: str
    namespaced: bool
    short_names: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    subresources: tuple[str, ...] = ()
    field_labels: dict[str, FieldLabel] = field(default_factory=lambda: _DEFAULT_LABELS)
    field_error: Callable[[str], str] = _default_error
    custom: bool = False  # a CRD: list items keep apiVersion/kind, like unstructured lists do
    store: tuple[str, str] | None = None  # share storage with another resource (events.k8s.io events)
    forbidden: bool = False  # RBAC denies every verb (triagebot's role has no secrets access)

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def qualified(self) -> str:
        """How errors name the resource: "pods", "deployments.apps"."""
        return f"{self.plural}.{self.group}" if self.group else self.plural

    @property
    def store_key(self) -> tuple[str, str]:
        return self.store or (self.group, self.plural)

    @property
    def singular(self) -> str:
        return self.kind.lower()


def _core(plural: str, kind: str, namespaced: bool = True, **kw: Any) -> Resource:
    kw.setdefault("field_error", _core_error)
    return Resource("", "v1", plural, kind, namespaced, **kw)


def _crd(group: str, version: str, plural: str, kind: str, namespaced: bool = True, **kw: Any) -> Resource:
    return Resource(group, version, plural, kind, namespaced, custom=True, **kw)


_ALL = ("all",)

RESOURCES: tuple[Resource, ...] = (
    _core("pods", "Pod", short_names=("po",), categories=_ALL,
          subresources=("log", "status", "exec", "attach", "portforward", "proxy", "eviction", "binding",
                        "ephemeralcontainers", "resize"),
          field_labels=_POD_LABELS),
    _core("nodes", "Node", False, short_names=("no",), subresources=("proxy", "status"), field_labels=_NODE_LABELS),
    _core("namespaces", "Namespace", False, short_names=("ns",), subresources=("status", "finalize"),
          field_labels=_NAMESPACE_LABELS),
    _core("events", "Event", short_names=("ev",), field_labels=_EVENT_LABELS),
    _core("services", "Service", short_names=("svc",), categories=_ALL, subresources=("status", "proxy"),
          field_labels=_SERVICE_LABELS),
    _core("endpoints", "Endpoints", short_names=("ep",), field_error=_default_error),
    _core("resourcequotas", "ResourceQuota", short_names=("quota",), subresources=("status",),
          field_error=_default_error),
    _core("limitranges", "LimitRange", short_names=("limits",), field_error=_default_error),
    _core("configmaps", "ConfigMap", short_names=("cm",), field_error=_default_error),
    _core("secrets", "Secret", field_labels=_SECRET_LABELS, forbidden=True),
    _core("serviceaccounts", "ServiceAccount", short_names=("sa",), field_error=_default_error),
    _core("persistentvolumeclaims", "PersistentVolumeClaim", short_names=("pvc",), subresources=("status",),
          field_error=_default_error),
    _core("persistentvolumes", "PersistentVolume", False, short_names=("pv",), subresources=("status",),
          field_error=_default_error),
    Resource("apps", "v1", "deployments", "Deployment", True, ("deploy",), _ALL, ("status", "scale")),
    Resource("apps", "v1", "statefulsets", "StatefulSet", True, ("sts",), _ALL, ("status", "scale")),
    Resource("apps", "v1", "replicasets", "ReplicaSet", True, ("rs",), _ALL, ("status", "scale")),
    Resource("apps", "v1", "daemonsets", "DaemonSet", True, ("ds",), _ALL, ("status",)),
    Resource("apps", "v1", "controllerrevisions", "ControllerRevision", True),
    Resource("batch", "v1", "jobs", "Job", True, (), _ALL, ("status",), _JOB_LABELS, _job_error),
    Resource("batch", "v1", "cronjobs", "CronJob", True, ("cj",), _ALL, ("status",)),
    Resource("networking.k8s.io", "v1", "networkpolicies", "NetworkPolicy", True, ("netpol",)),
    Resource("networking.k8s.io", "v1", "ingresses", "Ingress", True, ("ing",), (), ("status",)),
    Resource("autoscaling", "v2", "horizontalpodautoscalers", "HorizontalPodAutoscaler", True, ("hpa",), _ALL,
             ("status",)),
    Resource("events.k8s.io", "v1", "events", "Event", True, ("ev",), field_labels=_EVENTS_V1_LABELS,
             field_error=_core_error, store=("", "events")),
    Resource("policy", "v1", "poddisruptionbudgets", "PodDisruptionBudget", True, ("pdb",), (), ("status",)),
    Resource("coordination.k8s.io", "v1", "leases", "Lease", True),
    _crd("scheduling.volcano.sh", "v1beta1", "podgroups", "PodGroup", short_names=("pg", "podgroup-v1beta1"),
         subresources=("status",)),
    _crd("scheduling.volcano.sh", "v1beta1", "queues", "Queue", False, short_names=("q", "queue-v1beta1"),
         subresources=("status",)),
    _crd("batch.volcano.sh", "v1alpha1", "jobs", "Job", short_names=("vcjob", "vj"), subresources=("status",)),
    _crd("kubeflow.org", "v1", "pytorchjobs", "PyTorchJob", subresources=("status",)),
    _crd("kubeflow.org", "v1", "tfjobs", "TFJob", subresources=("status",)),
    _crd("kubeflow.org", "v1", "mpijobs", "MPIJob", subresources=("status",)),
    _crd("kubeflow.org", "v1", "xgboostjobs", "XGBoostJob", subresources=("status",)),
    _crd("kubeflow.org", "v1", "paddlejobs", "PaddleJob", subresources=("status",)),
    _crd("jobset.x-k8s.io", "v1alpha2", "jobsets", "JobSet", subresources=("status",)),
    _crd("leaderworkerset.x-k8s.io", "v1", "leaderworkersets", "LeaderWorkerSet", short_names=("lws",),
         subresources=("status", "scale")),
    _crd("kueue.x-k8s.io", "v1beta1", "workloads", "Workload", short_names=("wl",), subresources=("status",)),
    _crd("kueue.x-k8s.io", "v1beta1", "localqueues", "LocalQueue", short_names=("queue", "queues", "lq"),
         subresources=("status",)),
    _crd("kueue.x-k8s.io", "v1beta1", "clusterqueues", "ClusterQueue", False, short_names=("cq",),
         subresources=("status",)),
    _crd("kueue.x-k8s.io", "v1beta1", "resourceflavors", "ResourceFlavor", False,
         short_names=("flavor", "flavors", "rf")),
)

# Group order matters to kubectl: a bare "jobs" resolves to the first group that serves it.
GROUP_ORDER: tuple[str, ...] = tuple(dict.fromkeys(r.group for r in RESOURCES if r.group))

_BY_PATH = {(r.group, r.version, r.plural): r for r in RESOURCES}
_BY_KIND = {(r.group, r.kind): r for r in RESOURCES if r.store is None}


def resource_at(group: str, version: str, plural: str) -> Resource | None:
    return _BY_PATH.get((group, version, plural))


def resource_for_object(api_version: str, kind: str) -> Resource:
    """The resource an object is stored under; events.k8s.io events are stored as core events."""
    group, _, version = api_version.rpartition("/")
    if (group, version, kind) == ("events.k8s.io", "v1", "Event"):
        return _BY_KIND[("", "Event")]
    res = _BY_KIND.get((group, kind))
    if res is None:
        raise ValueError(f"the stand-in does not serve {kind} in {api_version or '(no apiVersion)'}")
    if res.version != version:
        raise ValueError(f"the stand-in serves {kind} as {res.api_version}, not {api_version}")
    return res


def group_versions() -> dict[str, str]:
    return {g: next(r.version for r in RESOURCES if r.group == g) for g in GROUP_ORDER}


# --- discovery documents --------------------------------------------------------------------------------------------


def _resource_entries(res: Resource) -> list[dict[str, Any]]:
    main: dict[str, Any] = {"name": res.plural, "singularName": res.singular, "namespaced": res.namespaced,
                            "kind": res.kind, "verbs": list(_RW)}
    if res.short_names:
        main["shortNames"] = list(res.short_names)
    if res.categories:
        main["categories"] = list(res.categories)
    out = [main]
    for sub in res.subresources:
        out.append({"name": f"{res.plural}/{sub}", "singularName": "", "namespaced": res.namespaced,
                    "kind": _subresource_kind(res, sub), "verbs": list(_subresource_verbs(sub))})
    return out


def _subresource_kind(res: Resource, sub: str) -> str:
    return {"log": "Pod", "proxy": "NodeProxyOptions" if res.kind == "Node" else f"{res.kind}ProxyOptions",
            "scale": "Scale", "eviction": "Eviction", "binding": "Binding", "exec": "PodExecOptions",
            "attach": "PodAttachOptions", "portforward": "PodPortForwardOptions"}.get(sub, res.kind)


def _subresource_verbs(sub: str) -> tuple[str, ...]:
    if sub == "log":
        return ("get",)
    if sub == "proxy":
        return ("create", "delete", "get", "patch", "update")
    if sub in ("eviction", "binding"):
        return ("create",)
    if sub in ("exec", "attach", "portforward"):
        return ("create", "get")
    return _STATUS_VERBS


def resource_list(group: str, version: str) -> dict[str, Any] | None:
    entries = [e for r in RESOURCES if (r.group, r.version) == (group, version) for e in _resource_entries(r)]
    if not entries:
        return None
    gv = f"{group}/{version}" if group else version
    return {"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": gv, "resources": entries}


def _group_doc(group: str, version: str) -> dict[str, Any]:
    gv = {"groupVersion": f"{group}/{version}", "version": version}
    return {"name": group, "versions": [gv], "preferredVersion": gv}


def group_list() -> dict[str, Any]:
    return {"kind": "APIGroupList", "apiVersion": "v1",
            "groups": [_group_doc(g, v) for g, v in group_versions().items()]}


def api_group(group: str) -> dict[str, Any] | None:
    version = group_versions().get(group)
    if version is None:
        return None
    return {"kind": "APIGroup", "apiVersion": "v1", **_group_doc(group, version)}


def api_versions(server_address: str) -> dict[str, Any]:
    return {"kind": "APIVersions", "versions": ["v1"],
            "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": server_address}]}


def dumps(doc: Any) -> bytes:
    """Compact JSON, the way the API server writes it."""
    return json.dumps(doc, separators=(",", ":"), ensure_ascii=False).encode()
