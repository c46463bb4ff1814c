"""Server-side printing (`Accept: ...;as=Table;g=meta.k8s.io`) for the kinds people read with `kubectl get`.

Columns and cells follow the API server's printers for pods, nodes, events and deployments, so `kubectl get pods`
against the stand-in shows READY, STATUS and RESTARTS as it does against a cluster. Other kinds return None and
are served as plain lists, which kubectl prints as NAME and AGE.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any, Protocol

from tests.standins.kube_catalog import Resource
from tests.standins.kube_logs import parse_time


class PageLike(Protocol):
    resource_version: str
    continue_token: str


def wants_table(accept: str) -> bool:
    return "as=Table" in accept and "g=meta.k8s.io" in accept


def human_duration(seconds: float) -> str:
    """apimachinery's duration.HumanDuration, as the Age column prints it."""
    s = int(seconds)
    if s < -1:
        return "<invalid>"
    if s < 0:
        return "0s"
    if s < 120:
        return f"{s}s"
    minutes = s // 60
    if minutes < 10:
        return f"{minutes}m" if s % 60 == 0 else f"{minutes}m{s % 60}s"
    if minutes < 180:
        return f"{minutes}m"
    hours = s // 3600
    if hours < 8:
        return f"{hours}h" if minutes % 60 == 0 else f"{hours}h{minutes % 60}m"
    if hours < 48:
        return f"{hours}h"
    if hours < 24 * 8:
        return f"{hours // 24}d" if hours % 24 == 0 else f"{hours // 24}d{hours % 24}h"
    if hours < 24 * 365 * 2:
        return f"{hours // 24}d"
    if hours < 24 * 365 * 8:
        days = (hours // 24) % 365
        return f"{hours // 24 // 365}y" if days == 0 else f"{hours // 24 // 365}y{days}d"
    return f"{hours // 24 // 365}y"


def _since(value: Any, now: datetime) -> str:
    ts = parse_time(value) if isinstance(value, str) else None
    return human_duration((now - ts).total_seconds()) if ts else "<unknown>"


def _col(name: str, priority: int = 0, fmt: str = "", typ: str = "string") -> dict[str, Any]:
    return {"name": name, "type": typ, "format": fmt, "description": "", "priority": priority}


# --- pods -----------------------------------------------------------------------------------------------------------

_POD_COLUMNS = [_col("Name", fmt="name"), _col("Ready"), _col("Status"), _col("Restarts"), _col("Age"),
                _col("IP", 1), _col("Node", 1), _col("Nominated Node", 1), _col("Readiness Gates", 1)]


def _terminated_reason(term: Mapping[str, Any], prefix: str = "") -> str:
    if term.get("reason"):
        return prefix + str(term["reason"])
    if term.get("signal"):
        return f"{prefix}Signal:{term['signal']}"
    return f"{prefix}ExitCode:{term.get('exitCode', 0)}"


def _init_status(pod: Mapping[str, Any]) -> tuple[str | None, int]:
    """The Init:... status while init containers run, and their restarts."""
    spec_inits = (pod.get("spec") or {}).get("initContainers") or []
    restarts = 0
    for i, cs in enumerate((pod.get("status") or {}).get("initContainerStatuses") or []):
        restarts += int(cs.get("restartCount", 0))
        state = cs.get("state") or {}
        term, waiting = state.get("terminated"), state.get("waiting")
        if term is not None and term.get("exitCode", 0) == 0:
            continue
        if term is not None:
            return _terminated_reason(term, "Init:"), restarts
        if waiting and waiting.get("reason") and waiting["reason"] != "PodInitializing":
            return f"Init:{waiting['reason']}", restarts
        return f"Init:{i}/{len(spec_inits)}", restarts
    return None, restarts


def _pod_row(pod: Mapping[str, Any], now: datetime) -> list[Any]:
    meta, spec, status = pod["metadata"], pod.get("spec") or {}, pod.get("status") or {}
    reason = str(status.get("reason") or status.get("phase") or "")
    init_reason, restarts = _init_status(pod)
    statuses = status.get("containerStatuses") or []
    ready, last_restart = 0, ""
    if init_reason is not None:
        reason = init_reason
    else:
        reason, ready, restarts, last_restart = _containers_status(statuses, reason, restarts, status)
    if meta.get("deletionTimestamp"):
        reason = "Unknown" if status.get("reason") == "NodeLost" else "Terminating"
    restarts_cell = f"{restarts} ({_since(last_restart, now)} ago)" if last_restart else str(restarts)
    gates = spec.get("readinessGates") or []
    return [meta["name"], f"{ready}/{len(spec.get('containers') or [])}", reason, restarts_cell,
            _since(meta.get("creationTimestamp"), now), status.get("podIP") or "<none>",
            spec.get("nodeName") or "<none>", status.get("nominatedNodeName") or "<none>",
            _readiness_gates(gates, status)]


def _containers_status(statuses: list[dict[str, Any]], reason: str, restarts: int,
                       status: Mapping[str, Any]) -> tuple[str, int, int, str]:
    ready, has_running, last_restart = 0, False, ""
    for cs in reversed(statuses):
        restarts += int(cs.get("restartCount", 0))
        finished = ((cs.get("lastState") or {}).get("terminated") or {}).get("finishedAt")
        if isinstance(finished, str) and finished > last_restart:
            last_restart = finished
        state = cs.get("state") or {}
        if (state.get("waiting") or {}).get("reason"):
            reason = str(state["waiting"]["reason"])
        elif state.get("terminated") is not None:
            reason = _terminated_reason(state["terminated"])
        elif cs.get("ready") and "running" in state:
            has_running = True
            ready += 1
    if reason == "Completed" and has_running:
        conditions = status.get("conditions") or []
        pod_ready = any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions)
        reason = "Running" if pod_ready else "NotReady"
    return reason, ready, restarts, last_restart


def _readiness_gates(gates: list[dict[str, Any]], status: Mapping[str, Any]) -> str:
    if not gates:
        return "<none>"
    true = {c.get("type") for c in status.get("conditions") or [] if c.get("status") == "True"}
    return f"{sum(1 for g in gates if g.get('conditionType') in true)}/{len(gates)}"


# --- nodes, events, deployments -------------------------------------------------------------------------------------

_NODE_COLUMNS = [_col("Name", fmt="name"), _col("Status"), _col("Roles"), _col("Age"), _col("Version"),
                 _col("Internal-IP", 1), _col("External-IP", 1), _col("OS-Image", 1), _col("Kernel-Version", 1),
                 _col("Container-Runtime", 1)]


def _node_row(node: Mapping[str, Any], now: datetime) -> list[Any]:
    meta, spec, status = node["metadata"], node.get("spec") or {}, node.get("status") or {}
    ready = next((c.get("status") for c in status.get("conditions") or [] if c.get("type") == "Ready"), None)
    state = {"True": "Ready", None: "Unknown"}.get(ready, "NotReady")
    if spec.get("unschedulable"):
        state += ",SchedulingDisabled"
    roles = sorted({k.split("/", 1)[1] for k in meta.get("labels") or {}
                    if k.startswith("node-role.kubernetes.io/") and "/" in k}
                   | {v for k, v in (meta.get("labels") or {}).items() if k == "kubernetes.io/role"})
    addresses = {a.get("type"): a.get("address") for a in status.get("addresses") or []}
    info = status.get("nodeInfo") or {}
    return [meta["name"], state, ",".join(roles) or "<none>", _since(meta.get("creationTimestamp"), now),
            info.get("kubeletVersion", ""), addresses.get("InternalIP") or "<none>",
            addresses.get("ExternalIP") or "<none>", info.get("osImage") or "<unknown>",
            info.get("kernelVersion") or "<unknown>", info.get("containerRuntimeVersion") or "<unknown>"]


_EVENT_COLUMNS = [_col("Last Seen"), _col("Type"), _col("Reason"), _col("Object"), _col("Subobject", 1),
                  _col("Source", 1), _col("Message"), _col("First Seen", 1), _col("Count", 1),
                  _col("Name", 1, "name")]


def _event_row(ev: Mapping[str, Any], now: datetime) -> list[Any]:
    first = _since(ev.get("firstTimestamp") or ev.get("eventTime"), now)
    last = _since(ev["lastTimestamp"], now) if ev.get("lastTimestamp") else first
    count = int(ev.get("count") or 1)
    if ev.get("series"):
        last = _since(ev["series"].get("lastObservedTime"), now)
        count = int(ev["series"].get("count") or count)
    obj = ev.get("involvedObject") or {}
    kind = str(obj.get("kind", "")).lower()
    target = f"{kind}/{obj['name']}" if obj.get("name") else kind
    source = ev.get("source") or {}
    src = str(source.get("component") or ev.get("reportingComponent") or "")
    host = source.get("host") or ev.get("reportingInstance")
    if host:
        src = f"{src}, {host}"
    return [last, ev.get("type", ""), ev.get("reason", ""), target, obj.get("fieldPath", ""), src,
            str(ev.get("message", "")).strip(), first, count, ev["metadata"]["name"]]


_DEPLOYMENT_COLUMNS = [_col("Name", fmt="name"), _col("Ready"), _col("Up-to-date", typ="integer"),
                       _col("Available", typ="integer"), _col("Age"), _col("Containers", 1), _col("Images", 1),
                       _col("Selector", 1)]


def _deployment_row(dep: Mapping[str, Any], now: datetime) -> list[Any]:
    spec, status = dep.get("spec") or {}, dep.get("status") or {}
    containers = ((spec.get("template") or {}).get("spec") or {}).get("containers") or []
    selector = (spec.get("selector") or {}).get("matchLabels") or {}
    return [dep["metadata"]["name"], f"{status.get('readyReplicas', 0)}/{spec.get('replicas', 1)}",
            status.get("updatedReplicas", 0), status.get("availableReplicas", 0),
            _since(dep["metadata"].get("creationTimestamp"), now), ",".join(c.get("name", "") for c in containers),
            ",".join(c.get("image", "") for c in containers),
            ",".join(f"{k}={v}" for k, v in sorted(selector.items())) or "<none>"]


_PRINTERS: dict[tuple[str, str], tuple[list[dict[str, Any]], Callable[[Mapping[str, Any], datetime], list[Any]]]] = {
    ("", "pods"): (_POD_COLUMNS, _pod_row),
    ("", "nodes"): (_NODE_COLUMNS, _node_row),
    ("", "events"): (_EVENT_COLUMNS, _event_row),
    ("apps", "deployments"): (_DEPLOYMENT_COLUMNS, _deployment_row),
}


def table_for(res: Resource, objects: list[dict[str, Any]], page: PageLike, now: datetime,
              include: str = "Metadata") -> dict[str, Any] | None:
    printer = _PRINTERS.get((res.group, res.plural))
    if printer is None:
        return None
    columns, row = printer
    meta: dict[str, Any] = {"resourceVersion": page.resource_version}
    if page.continue_token:
        meta["continue"] = page.continue_token
    return {"kind": "Table", "apiVersion": "meta.k8s.io/v1", "metadata": meta, "columnDefinitions": columns,
            "rows": [_row(obj, row(obj, now), include) for obj in objects]}


def _row(obj: dict[str, Any], cells: list[Any], include: str) -> dict[str, Any]:
    out: dict[str, Any] = {"cells": cells}
    if include == "Object":
        out["object"] = obj
    elif include != "None":
        out["object"] = {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": obj["metadata"]}
    return out
