"""Container logs (current and previous) and kubelet journals through the node log API, bounded in lines and
bytes. Which pods and nodes are worth a log call is decided here too: troubled ones first."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol

from collectors.detect import detect_kind
from collectors.k8s_values import as_dict, as_str
from collectors.live.k8s_calls import Failure, KubeCalls
from collectors.live.k8s_util import kubectl, meta, name_of, node_of, restarts, statuses, triage_order, troubled
from collectors.models import ArtifactKind

LOG_POD_CAP = 10  # pods whose container logs are read
KUBELET_NODE_CAP = 5  # nodes whose kubelet journal is read


@dataclass(frozen=True)
class Limits:
    tail_lines: int
    limit_bytes: int
    kubelet_logs: bool = True  # read the kubelet's journal through nodes/proxy (the kubelet_logs setting)


class Out(Protocol):
    """Where answers go: the collection's call scheduling and its artifacts and missing entries."""

    def fetch(self, thunk: Callable[[], Any], then: Callable[[int, Any], None]) -> None: ...

    def missing(self, slot: int, what: str, reason: str) -> None: ...

    def artifact(self, slot: int, kind: ArtifactKind, parts: tuple[str, ...], ext: str, subject: str,
                 command: str, content: str) -> None: ...


# ---- container logs --------------------------------------------------------------------------------------


def read_container_logs(out: Out, calls: KubeCalls, pods: list[dict[str, Any]], namespace: str,
                        limits: Limits, covered: frozenset[tuple[str, str]] = frozenset()) -> None:
    """Logs of the most troubled scheduled pods: every container that has run, and the previous instance
    of every container that restarted (where the crash is). `covered` (pod, container) pairs already have
    their current log in the all-ranks artifact (k8s_ranks)."""
    scheduled = [p for p in triage_order(pods) if node_of(p) and (statuses(p) or statuses(p, init=True))]
    for pod in scheduled[:LOG_POD_CAP]:
        ns = as_str(meta(pod).get("namespace")) or namespace
        for status in statuses(pod):
            _container(out, calls, ns, name_of(pod), status, limits, covered)
        for status in statuses(pod, init=True):
            if troubled({"status": {"phase": "Running", "initContainerStatuses": [status]}}):
                _container(out, calls, ns, name_of(pod), status, limits, covered)  # finished ones say nothing


def _container(out: Out, calls: KubeCalls, ns: str, pod: str, status: dict[str, Any], limits: Limits,
               covered: frozenset[tuple[str, str]]) -> None:
    container = as_str(status.get("name"))
    state = as_dict(status.get("state"))
    current = (pod, container) not in covered
    if current and ("running" in state or "terminated" in state or restarts(status) > 0):
        _log(out, calls, ns, pod, container, False, limits)
    if restarts(status) > 0 or "terminated" in as_dict(status.get("lastState")):
        _log(out, calls, ns, pod, container, True, limits)


def _log(out: Out, calls: KubeCalls, ns: str, pod: str, container: str, previous: bool, limits: Limits) -> None:
    command = kubectl("logs", "-n", ns, pod, "-c", container, f"--tail={limits.tail_lines}",
                      f"--limit-bytes={limits.limit_bytes}", *(["--previous"] if previous else []))
    subject = f"pod/{ns}/{pod}"

    def then(slot: int, result: str | Failure) -> None:
        if isinstance(result, Failure):
            if result.status != 400:  # 400: no previous instance, or not started yet: nothing to read
                what = f"logs {subject} -c {container}" + (" --previous" if previous else "")
                out.missing(slot, what, result.reason)
            return
        if result.strip():
            # A training pod's log is read as NCCL output when that is what it mostly is.
            kind = ArtifactKind.NCCL_LOG if detect_kind(result) is ArtifactKind.NCCL_LOG else ArtifactKind.CONTAINER_LOG
            parts = ("logs", ns, pod, container, "previous" if previous else "")
            out.artifact(slot, kind, parts, ".log", subject, command, result)

    out.fetch(lambda: calls.pod_log(pod, ns, container, previous=previous, tail_lines=limits.tail_lines,
                                    limit_bytes=limits.limit_bytes), then)


# ---- kubelet journals ----------------------------------------------------------------------------------


def kubelet_nodes(pods: list[dict[str, Any]]) -> list[str]:
    """Nodes where pods are in trouble, or, if none is, the first pods' nodes."""
    ordered = triage_order(pods)
    chosen = [p for p in ordered if troubled(p) and node_of(p)] or [p for p in ordered if node_of(p)][:2]
    return list(dict.fromkeys(node_of(p) for p in chosen))[:KUBELET_NODE_CAP]


def read_kubelet_log(out: Out, calls: KubeCalls, node: str, since: datetime, limits: Limits) -> None:
    """`/api/v1/nodes/NODE/proxy/logs/?query=kubelet`: the kubelet's journal since the window began."""
    query = [("query", "kubelet"), ("sinceTime", since.strftime("%Y-%m-%dT%H:%M:%SZ")),
             ("tailLines", str(limits.tail_lines))]
    path = f"/api/v1/nodes/{node}/proxy/logs/?" + "&".join(f"{k}={v}" for k, v in query)
    subject = f"node/{node}"

    def then(slot: int, result: str | Failure) -> None:
        if isinstance(result, Failure):
            out.missing(slot, f"kubelet-log {subject}", _node_log_reason(result))
        elif _is_directory_listing(result):
            out.missing(slot, f"kubelet-log {subject}", "node log API not served (NodeLogQuery feature gate off?): "
                                                        "the kubelet answered with its /var/log directory listing")
        elif result.strip():
            out.artifact(slot, ArtifactKind.KUBELET_LOG, ("kubelet", node), ".log", subject,
                         kubectl("get", "--raw", path), result)

    out.fetch(lambda: calls.node_log(node, query, limits.limit_bytes), then)


def _node_log_reason(failure: Failure) -> str:
    if failure.status == 404:
        return f"node log API not served (NodeLogQuery feature gate off?): {failure.reason}"
    if failure.status == 403 and "nodes/proxy" not in failure.reason:
        # Forbidden without the API server's usual message: still say what reading node logs needs.
        return (f"{failure.reason} (reading node logs needs get on nodes/proxy, which the kubelet-logs component "
                "grants; or set kubelet_logs: false)")
    return failure.reason


def _is_directory_listing(text: str) -> bool:
    """Without NodeLogQuery the kubelet ignores ?query= and lists /var/log as HTML."""
    head = text.lstrip()[:200].lower()
    return head.startswith(("<pre>", "<!doctype html", "<html"))
