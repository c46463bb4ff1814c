"""Running the live sources for one target within a deadline.

Kubernetes runs first because it resolves the target into pods and nodes; Prometheus and the node agents
then run in parallel over that scope. A source that fails or overruns the deadline becomes a `missing`
entry; only a target that does not exist stops the triage. Every artifact is redacted before it is
returned, so nothing downstream (a report, a recording, Slack) can see a secret.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass
from typing import Any

from collectors.live.agent import collect_agent
from collectors.live.base import NodeRef, Scope, SourceResult, TargetNotFound, Window
from collectors.live.kubernetes import collect_kubernetes
from collectors.live.prometheus import ChartPicker, collect_prometheus
from collectors.live.watch_cache import WatchCache
from collectors.models import Artifact, Missing, Target
from collectors.redact import redact

_CHART_MARGIN = 1.0  # seconds the chart wave leaves the Prometheus source to hand its result back


@dataclass(frozen=True)
class LiveAccess:
    """How to reach each backend; a None backend is reported missing, not an error."""

    kube: Any | None  # kubernetes.client.ApiClient
    prometheus_url: str | None = None
    prometheus_headers: dict[str, str] | None = None
    agent_url: Callable[[NodeRef], str | None] | None = None
    agent_token: str | None = None
    call_timeout: float = 5.0
    deadline: float = 20.0
    flight_recorder_dir: str | None = None  # under the nodes' /var/log, where jobs write their dumps
    cache: WatchCache | None = None  # serve's watch cache: objects it holds are not asked of the API
    kubelet_logs: bool = True  # read kubelet journals through nodes/proxy


@dataclass
class Collected:
    scope: Scope
    result: SourceResult


def collect_live(target: Target, window: Window, access: LiveAccess, charts: ChartPicker | None = None) -> Collected:
    """Every artifact the live sources can give for the target; raises TargetNotFound.

    `charts` names the chart series to fetch from Prometheus once the Kubernetes and Prometheus evidence is in
    (collectors/live/prometheus.py); it sees the artifacts of both.
    """
    started = time.monotonic()
    result = SourceResult()
    scope = initial_scope(target)
    pool = ThreadPoolExecutor(max_workers=3, thread_name_prefix="triage-source")
    try:
        if access.kube is None:
            result.missing.append(Missing(source="kubernetes", reason="no cluster access configured"))
        else:
            future = pool.submit(collect_kubernetes, access.kube, target, window, call_timeout=access.call_timeout,
                                 flight_recorder_dir=access.flight_recorder_dir, kubelet_logs=access.kubelet_logs,
                                 cache=access.cache)
            outcome = _wait(future, "kubernetes", started, access.deadline, result)
            if outcome is not None:
                scope, found = outcome
                result.extend(found)
                result.cache_age = found.cache_age
        later: dict[str, Future[SourceResult]] = {}
        if access.prometheus_url:
            # The chart wave ends a little before the deadline, so a slow picture never costs the evidence.
            later["prometheus"] = pool.submit(collect_prometheus, access.prometheus_url, scope, window,
                                              timeout=access.call_timeout, headers=access.prometheus_headers,
                                              charts=_with_cluster_evidence(charts, list(result.artifacts)),
                                              finish_by=started + access.deadline - _CHART_MARGIN)
        else:
            result.missing.append(Missing(source="prometheus", reason="no Prometheus URL configured"))
        if access.agent_url is not None and access.agent_token and scope.nodes:
            later["agent"] = pool.submit(collect_agent, access.agent_url, access.agent_token, scope, window,
                                         timeout=access.call_timeout)
        elif scope.nodes:
            result.missing.append(Missing(source="agent", reason="no node agent token configured"))
        for name, pending in later.items():
            found_later = _wait(pending, name, started, access.deadline, result)
            if found_later is not None:
                result.extend(found_later)
    finally:
        # Threads that overran the deadline finish in the background; their results are dropped.
        pool.shutdown(wait=False, cancel_futures=True)
    result.artifacts = [redact(a) for a in result.artifacts]
    return Collected(scope=scope, result=result)


def _with_cluster_evidence(charts: ChartPicker | None, cluster: list[Artifact]) -> ChartPicker | None:
    """The picker, shown the Kubernetes artifacts beside Prometheus' own (pod states decide most verdicts)."""
    if charts is None:
        return None
    return lambda found: charts([*cluster, *found])


def initial_scope(target: Target) -> Scope:
    """The scope before (or without) Kubernetes: a Service's name and namespace; a node or a namespace target
    names no Service, and a node no namespace."""
    kind, slash, name = (target.service or "").partition("/")
    if (slash and kind == "node") or (not target.service and target.node):
        return Scope(namespace="")
    if slash and kind == "namespace":
        return Scope(namespace=target.namespace or name)
    return Scope(namespace=target.namespace or "default", service=target.service)


def _wait(future: Future[Any], name: str, started: float, deadline: float, result: SourceResult) -> Any:
    remaining = max(0.0, deadline - (time.monotonic() - started))
    try:
        return future.result(timeout=remaining)
    except FutureTimeout:
        result.missing.append(Missing(source=name, reason=f"deadline of {deadline:g}s exceeded"))
    except TargetNotFound:
        raise
    except Exception as err:
        result.missing.append(Missing(source=name, reason=f"failed: {type(err).__name__}: {err}"))
    return None
