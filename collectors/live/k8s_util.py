"""Small pure helpers over Kubernetes objects as decoded JSON: selectors, resources, pod triage order, output."""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Iterable
from decimal import Decimal
from typing import Any

from collectors.k8s_values import GPU_RESOURCE, as_dict, as_int, as_list, as_str, quantity

MIG_PREFIX = "nvidia.com/mig-"
_NAME = re.compile(r"[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?")
# Env vars a distributed job's ranks rendezvous with; any of them marks a pod as a rank.
RANK_ENV = ("RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT")


def valid_name(name: str) -> bool:
    """A DNS-1123 subdomain, which every object name checked here must be."""
    return _NAME.fullmatch(name) is not None


def meta(obj: dict[str, Any]) -> dict[str, Any]:
    return as_dict(obj.get("metadata"))


def name_of(obj: dict[str, Any]) -> str:
    return as_str(meta(obj).get("name"))


def labels_of(obj: dict[str, Any]) -> dict[str, str]:
    return {k: as_str(v) for k, v in as_dict(meta(obj).get("labels")).items()}


def items_of(doc: dict[str, Any]) -> list[dict[str, Any]]:
    return [i for i in as_list(doc.get("items")) if isinstance(i, dict)]


# ---- selectors ---------------------------------------------------------------------------------------


def selector_string(selector: dict[str, Any]) -> str:
    """A LabelSelector (matchLabels + matchExpressions) or a Service's plain map, as `-l` syntax."""
    plain = selector if "matchLabels" not in selector and "matchExpressions" not in selector else {}
    match = as_dict(selector.get("matchLabels")) | plain
    parts = [f"{k}={as_str(v)}" for k, v in sorted(match.items()) if isinstance(v, str | int)]
    for expr in map(as_dict, as_list(selector.get("matchExpressions"))):
        key, op = as_str(expr.get("key")), as_str(expr.get("operator"))
        values = ",".join(sorted(as_str(v) for v in as_list(expr.get("values"))))
        if op == "In":
            parts.append(f"{key} in ({values})")
        elif op == "NotIn":
            parts.append(f"{key} notin ({values})")
        elif op == "Exists":
            parts.append(key)
        elif op == "DoesNotExist":
            parts.append(f"!{key}")
    return ",".join(parts)


def selects(selector: dict[str, str], labels: dict[str, str]) -> bool:
    """Whether a Service-style equality selector picks an object with these labels."""
    return bool(selector) and all(labels.get(k) == v for k, v in selector.items())


# ---- resources ---------------------------------------------------------------------------------------


def _containers(spec: dict[str, Any], key: str) -> list[dict[str, Any]]:
    return [c for c in as_list(spec.get(key)) if isinstance(c, dict)]


def _amounts(container: dict[str, Any], part: str) -> dict[str, Decimal]:
    resources = as_dict(container.get("resources"))
    raw = as_dict(resources.get(part))
    if part == "requests":
        # A request left out defaults to the limit (the API server does this on admission; a manifest may not).
        raw = as_dict(resources.get("limits")) | raw
    out: dict[str, Decimal] = {}
    for name, value in raw.items():
        if (q := quantity(value)) is not None:
            out[name] = q
    return out


def pod_resources(pod: dict[str, Any], part: str) -> dict[str, Decimal]:
    """What the scheduler counts for a pod: the containers' sum, or an init container's larger need, plus
    overhead (the same rule `kubectl describe node` uses for its Allocated resources table)."""
    spec = as_dict(pod.get("spec"))
    total: dict[str, Decimal] = {}
    for c in _containers(spec, "containers"):
        for name, q in _amounts(c, part).items():
            total[name] = total.get(name, Decimal(0)) + q
    for c in _containers(spec, "initContainers"):
        for name, q in _amounts(c, part).items():
            total[name] = max(total.get(name, Decimal(0)), q)
    for name, value in as_dict(spec.get("overhead")).items():
        if (extra := quantity(value)) is not None:
            total[name] = total.get(name, Decimal(0)) + extra
    return total


def gpu_request(pod: dict[str, Any]) -> int:
    return int(pod_resources(pod, "requests").get(GPU_RESOURCE, Decimal(0)))


def wants_gpu(pod: dict[str, Any]) -> bool:
    """Asks for whole GPUs or MIG slices."""
    return any(k == GPU_RESOURCE or k.startswith(MIG_PREFIX) for k, q in pod_resources(pod, "requests").items()
               if q > 0)


def gpu_capacity(node: dict[str, Any], part: str = "capacity") -> int:
    raw = as_dict(as_dict(node.get("status")).get(part)).get(GPU_RESOURCE)
    q = quantity(raw)
    return int(q) if q is not None else 0


def is_gpu_node(node: dict[str, Any]) -> bool:
    capacity = as_dict(as_dict(node.get("status")).get("capacity"))
    if any((k == GPU_RESOURCE or k.startswith(MIG_PREFIX)) and (quantity(v) or 0) > 0 for k, v in capacity.items()):
        return True
    return labels_of(node).get("nvidia.com/gpu.present") == "true"


def internal_ip(node: dict[str, Any]) -> str | None:
    for address in map(as_dict, as_list(as_dict(node.get("status")).get("addresses"))):
        if address.get("type") == "InternalIP" and as_str(address.get("address")):
            return as_str(address.get("address"))
    return None


# ---- pods: state and triage order --------------------------------------------------------------------


def phase(pod: dict[str, Any]) -> str:
    return as_str(as_dict(pod.get("status")).get("phase"))


def node_of(pod: dict[str, Any]) -> str:
    return as_str(as_dict(pod.get("spec")).get("nodeName"))


def statuses(pod: dict[str, Any], init: bool = False) -> list[dict[str, Any]]:
    key = "initContainerStatuses" if init else "containerStatuses"
    return [s for s in as_list(as_dict(pod.get("status")).get(key)) if isinstance(s, dict)]


def restarts(status: dict[str, Any]) -> int:
    return as_int(status.get("restartCount")) or 0


def _container_trouble(status: dict[str, Any]) -> bool:
    state = as_dict(status.get("state"))
    terminated = as_dict(state.get("terminated")) or as_dict(as_dict(status.get("lastState")).get("terminated"))
    failed = bool(terminated) and (as_int(terminated.get("exitCode")) or 0) != 0
    return "waiting" in state or restarts(status) > 0 or failed


def troubled(pod: dict[str, Any]) -> bool:
    """Not running cleanly: pending, failed or evicted, or a container waiting, restarting or failed."""
    if phase(pod) not in ("Running", "Succeeded"):
        return True
    return any(_container_trouble(s) for s in statuses(pod) + statuses(pod, init=True))


def rank_of(pod: dict[str, Any]) -> int | None:
    """The pod's rank in a distributed job: the RANK env the operator set, else an index label."""
    if (rank := as_int(rank_env(pod).get("RANK"))) is not None:
        return rank
    labels = labels_of(pod)
    for key in RANK_LABELS:
        if (value := as_int(labels.get(key))) is not None:
            return value
    return None


# Labels that give a pod's index within its job, in the order they are trusted; the same keys Kueue's
# topology-aware scheduling reads for rank ordering (Indexed Job, JobSet, Kubeflow training operator,
# LeaderWorkerSet, StatefulSet), plus Volcano's task index and a plain `rank` label for hand-made pods.
RANK_LABELS = ("batch.kubernetes.io/job-completion-index", "training.kubeflow.org/replica-index",
               "leaderworkerset.sigs.k8s.io/worker-index", "apps.kubernetes.io/pod-index",
               "volcano.sh/task-index", "rank")
# Labels that number the group a pod's index counts within: a JobSet's child Job, an LWS replica.
GROUP_LABELS = ("jobset.sigs.k8s.io/job-global-index", "jobset.sigs.k8s.io/job-index",
                "leaderworkerset.sigs.k8s.io/group-index")


def rank_label(pod: dict[str, Any]) -> bool:
    """Whether the pod carries one of the rank labels (a hand-made multi-rank job has nothing else)."""
    labels = labels_of(pod)
    return any(key in labels for key in RANK_LABELS)


def rank_order(pod: dict[str, Any]) -> tuple[int, int, int, str]:
    """Launcher or master first, then group, then index within it, then name: the order ranks are listed."""
    labels = labels_of(pod)
    role = labels.get("training.kubeflow.org/replica-type", "").lower()
    first = 0 if role in ("launcher", "master", "chief") else 1
    group = next((v for key in GROUP_LABELS if (v := as_int(labels.get(key))) is not None), 0)
    rank = rank_of(pod)
    return first, group, rank if rank is not None else 1 << 30, name_of(pod)


def log_container(pod: dict[str, Any]) -> str:
    """The container `kubectl logs` reads by default: the default-container annotation, else the first."""
    spec = as_dict(pod.get("spec"))
    names = [as_str(c.get("name")) for c in _containers(spec, "containers")]
    chosen = as_str(as_dict(meta(pod).get("annotations")).get("kubectl.kubernetes.io/default-container"))
    return chosen if chosen in names else (names[0] if names else "")


def rank_env(pod: dict[str, Any]) -> dict[str, str]:
    """Literal env values of the first container that sets any rendezvous or NCCL variable."""
    for c in _containers(as_dict(pod.get("spec")), "containers"):
        env = {as_str(e.get("name")): as_str(e.get("value")) for e in map(as_dict, as_list(c.get("env")))
               if "valueFrom" not in e}
        if any(k in env for k in RANK_ENV) or any(k.startswith("NCCL_") for k in env):
            return env
    return {}


def triage_order(pods: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """Troubled pods first (pending, failing, restarting), then by rank, then by name."""
    def key(pod: dict[str, Any]) -> tuple[int, int, str]:
        rank = rank_of(pod)
        return (0 if troubled(pod) else 1, rank if rank is not None else 1 << 30, name_of(pod))
    return sorted(pods, key=key)


# ---- output ------------------------------------------------------------------------------------------


_LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"


def trim(obj: dict[str, Any]) -> dict[str, Any]:
    """Without what no parser reads and what doubles an object's size: managedFields and the last-applied
    annotation (a copy of the spec as JSON text). The watch cache keeps objects trimmed the same way."""
    metadata = meta(obj)
    metadata.pop("managedFields", None)
    annotations = metadata.get("annotations")
    if isinstance(annotations, dict) and _LAST_APPLIED in annotations:
        del annotations[_LAST_APPLIED]
        if not annotations:
            del metadata["annotations"]
    return obj


def tidy(obj: dict[str, Any], api_version: str, kind: str) -> dict[str, Any]:
    """An object as `kubectl get -o json` prints it (kind and apiVersion set), trimmed."""
    obj.setdefault("apiVersion", api_version)
    obj.setdefault("kind", kind)
    return trim(obj)


def list_doc(api_version: str, kind: str, items: list[dict[str, Any]],
             metadata: dict[str, Any] | None = None) -> dict[str, Any]:
    """A `<Kind>List` whose items carry their own kind, as the API returns it and kubectl prints it."""
    return {"apiVersion": api_version, "kind": f"{kind}List",
            "items": [tidy(i, api_version, kind) for i in items],
            "metadata": {k: v for k, v in (metadata or {}).items() if k == "resourceVersion"}}


def dump(obj: object) -> str:
    """Pretty JSON with sorted keys, like kubectl's `-o json`, so parsers can cite lines."""
    return json.dumps(obj, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def kubectl(*args: str) -> str:
    """A kubectl command line a person can paste into a shell."""
    return shlex.join(["kubectl", *args])
