"""The Prometheus plan: the query files' templates (collectors/catalogs/queries.py) scoped to the triage's target.

Each marker becomes label matchers for the target's pods, nodes, GPU nodes or service, escaped here through
collectors/live/promql.py; an entry whose markers the target cannot fill is left out, never asked too widely. The
service's own latency histogram and request counter are found first by a discovery query, and fill <histogram> and
<counter>. Instant queries are evaluated at `window.until`; range queries take a step that keeps each series to a
few hundred points.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from collectors.catalogs.queries import MARKER, PromQuery, QueryCatalog, RangeSeries, bundled, markers_of
from collectors.live.base import Scope, Window
from collectors.live.promql import any_of, duration, equals, escape_regex, matches, range_step, selector

log = logging.getLogger(__name__)

# At most this many range queries per triage, the trend queries every triage makes included. Each returns up to
# TARGET_POINTS (300) points per series, so 20 of them keep a triage's artifacts, and the recording a drill is made
# from, to a few MB, and cost Prometheus about one dashboard refresh. The chart series come in the order the
# picker gives (each triggered playbook's top hypotheses first), so the bound drops pictures of hypotheses deep in
# the trees.
MAX_RANGE_QUERIES = 20
_MAX_DISCOVERED = 50  # metric names read back from discovery; more means the regex matched too much

# What discovery looks for among the service's own metrics: latency histograms and request counters.
_DISCOVER = r".+_(duration|latency).*_bucket|.+_requests?_total|nv_inference_request_success"
_LATENCY_BUCKET = re.compile(r"(duration|latency).*_bucket$")
_REQUEST_COUNTER = re.compile(r"_requests?_total$|^nv_inference_request_success$")
# The parser reads a rate as traffic only when its query names none of these; see prometheus_api._trends.
_NOT_TRAFFIC = re.compile(r"duration|latency|_bucket|_sum\b|bytes|seconds|size", re.IGNORECASE)
_PREFERRED = re.compile(r"request|http|grpc|rpc|server", re.IGNORECASE)
# Plan order: the pods' queries first, then the service's, the nodes', the GPUs', and the cluster's.
_GROUPS = ({"pods", "containers", "histogram", "counter"}, {"service", "endpoint", "scaled", "deployment"},
           {"instance", "node"}, {"gpus"}, {"namespace"})


@dataclass(frozen=True)
class Query:
    """One planned query: `name` is the artifact id stem and names the query in a missing entry."""

    name: str
    promql: str
    subject: str
    step: int = 0  # seconds; 0 means an instant query

    @property
    def is_range(self) -> bool:
        return self.step > 0


# ---- the target's names ----------------------------------------------------------------------------------------


def _workload_name(scope: Scope) -> str | None:
    if scope.service:
        return scope.service
    return scope.workload.rsplit("/", 1)[-1] if scope.workload else None


def _pod_matchers(scope: Scope) -> list[str] | None:
    """namespace and pod matchers for the scope's pods, or its workload's pod-name prefix. A node's scope has no
    namespace: its pods' own namespaces are matched."""
    names = [p.name for p in scope.pods]
    if names and not scope.namespace:
        spaces = sorted({p.namespace for p in scope.pods if p.namespace})
        return [*([any_of("namespace", spaces)] if spaces else []), any_of("pod", names)]
    if names:
        return [equals("namespace", scope.namespace), any_of("pod", names)]
    if not scope.namespace:
        return None
    workload = _workload_name(scope)
    if workload:
        return [equals("namespace", scope.namespace), matches("pod", escape_regex(workload) + "-.*")]
    return None


def _pods_subject(scope: Scope) -> str:
    if len(scope.pods) == 1:
        return f"pod/{scope.pods[0].namespace or scope.namespace}/{scope.pods[0].name}"
    if not scope.namespace:
        return _nodes_subject(_node_names(scope))
    workload = _workload_name(scope)
    return f"service/{scope.namespace}/{workload}" if workload else f"namespace/{scope.namespace}"


def _nodes_subject(nodes: Sequence[str]) -> str:
    return "node/" + ",".join(nodes)


def _node_names(scope: Scope) -> list[str]:
    named = [n.name for n in scope.nodes] + [p.node for p in scope.pods if p.node]
    return sorted(set(named))


def _gpu_node_names(scope: Scope) -> list[str]:
    named = [n.name for n in scope.nodes if n.gpu_capacity > 0]
    named += [p.node for p in scope.pods if p.node and p.gpu_request > 0]
    return sorted(set(named))


def _instance_matcher(scope: Scope, nodes: Sequence[str]) -> str:
    """node_exporter's `instance` is the node name or its address, with or without the port."""
    ips = [n.internal_ip for n in scope.nodes if n.name in nodes and n.internal_ip]
    hosts = "|".join(escape_regex(h) for h in sorted({*nodes, *ips}))
    return matches("instance", f"({hosts})(:[0-9]+)?")


def _scaled_name(scope: Scope) -> str | None:
    """The name an HPA's scaleTargetRef carries: the workload's, else the service's (they usually agree)."""
    return scope.workload.rsplit("/", 1)[-1] if scope.workload else scope.service


def _joined(*matchers: str | None) -> str | None:
    return None if any(m is None for m in matchers) else ",".join(m for m in matchers if m is not None)


# ---- discovery ----------------------------------------------------------------------------------------------------


def discovery_query(scope: Scope) -> Query | None:
    """Which latency histograms and request counters the scope's pods export (one series per name)."""
    pods = _pod_matchers(scope)
    if pods is None:
        return None
    promql = f"group by (__name__) ({selector('', *pods, matches('__name__', _DISCOVER))})"
    return Query("service-metrics", promql, _pods_subject(scope))


def discovered_names(body: dict[str, Any]) -> list[str]:
    """Metric names from a `group by (__name__)` result, bounded."""
    data = body.get("data")
    result = data.get("result") if isinstance(data, dict) else None
    names: set[str] = set()
    for item in result if isinstance(result, list) else []:
        metric = item.get("metric") if isinstance(item, dict) else None
        name = metric.get("__name__") if isinstance(metric, dict) else None
        if isinstance(name, str):
            names.add(name)
    return sorted(names)[:_MAX_DISCOVERED]


def _best(names: Iterable[str]) -> str | None:
    """The most request-like name: preferred words first, then the shortest, then alphabetical."""
    ranked = sorted(names, key=lambda n: (not _PREFERRED.search(n), len(n), n))
    return ranked[0] if ranked else None


# ---- markers ------------------------------------------------------------------------------------------------------


def markers(scope: Scope, window: Window, discovered: Sequence[str] = ()) -> dict[str, str | None]:
    """What each template marker becomes for this target; None where the target has nothing it could name."""
    pods = _pod_matchers(scope)
    nodes, gpu_nodes = _node_names(scope), _gpu_node_names(scope)
    namespace = equals("namespace", scope.namespace) if scope.namespace else None
    service = scope.service
    kind, _, name = (scope.workload or "").partition("/")
    deployment = name if kind == "deployment" and name else None
    scaled = _scaled_name(scope)
    return {
        "pods": ",".join(pods) if pods else None,
        "containers": ",".join([*pods, 'container!=""', 'container!="POD"']) if pods else None,
        "namespace": namespace,
        "service": _joined(namespace, equals("service", service)) if service else None,
        "endpoint": _joined(namespace, equals("endpoint", service)) if service else None,
        "deployment": _joined(namespace, equals("deployment", deployment)) if deployment else None,
        "scaled": _joined(namespace, equals("scaletargetref_name", scaled)) if scaled else None,
        "instance": _instance_matcher(scope, nodes) if nodes else None,
        "node": any_of("node", nodes) if nodes else None,
        "gpus": any_of("Hostname", gpu_nodes) if gpu_nodes else None,
        # No shorter than the step, so no sample falls between two points of a long window.
        "window": duration(max(300, range_step(window.seconds))),
        "span": duration(window.seconds),
        "histogram": _best(n for n in discovered if _LATENCY_BUCKET.search(n)),
        "counter": _best(n for n in discovered if _REQUEST_COUNTER.search(n) and not _NOT_TRAFFIC.search(n)),
    }


def _subject(scope: Scope, used: set[str]) -> str:
    if used & {"pods", "containers"}:
        return _pods_subject(scope)
    if used & {"service", "endpoint", "scaled", "deployment"}:
        return f"service/{scope.namespace}/{_workload_name(scope)}"
    if "gpus" in used:
        return _nodes_subject(_gpu_node_names(scope))
    if used & {"instance", "node"}:
        return _nodes_subject(_node_names(scope))
    return f"namespace/{scope.namespace}" if "namespace" in used else "cluster"


def _filled(name: str, template: str, values: dict[str, str | None]) -> str | None:
    """The template with its markers filled, or None when the target has nothing one of them names."""
    used = markers_of(template)
    unknown = used - values.keys()
    if unknown:
        raise ValueError(f"{name}: unknown template markers {sorted(unknown)}")
    if any(values[m] is None for m in used):
        return None
    return MARKER.sub(lambda m: values[m.group(1)] or "", template)


def _group(template: str) -> int:
    used = markers_of(template)
    return next((i for i, names in enumerate(_GROUPS) if used & names), len(_GROUPS))


# ---- the plan -----------------------------------------------------------------------------------------------------


def series_query(series: RangeSeries, scope: Scope, window: Window,
                 values: dict[str, str | None] | None = None) -> Query | None:
    """The chart series as a range query for the target, or None when the target has nothing it reads."""
    values = values if values is not None else markers(scope, window)
    promql = _filled(series.query, series.promql, values)
    if promql is None:
        return None
    return Query(series.query, promql, _subject(scope, markers_of(series.promql)), range_step(window.seconds))


def planned_query(spec: PromQuery, scope: Scope, window: Window, values: dict[str, str | None],
                  discovered: Sequence[str] = ()) -> Query | None:
    """One query file entry for the target, or None when the target (or discovery) has nothing it reads."""
    if spec.when_exported is not None and spec.when_exported not in discovered:
        return None
    promql = _filled(spec.name, spec.promql, values)
    if promql is None:
        return None
    subject = spec.subject or _subject(scope, markers_of(spec.promql))
    return Query(spec.name, promql, subject, range_step(window.seconds) if spec.range else 0)


def build_plan(scope: Scope, window: Window, discovered: Sequence[str] = (),
               catalog: QueryCatalog | None = None) -> list[Query]:
    """Every first-wave query for the scope: the files' queries, and the series fetched on every triage (their
    trends are evidence too), given the service metric names discovery found; the pods' first, the cluster's last."""
    catalog = catalog or bundled()
    values = markers(scope, window, discovered)
    entries: list[tuple[int, Query | None]] = [
        (_group(q.promql), planned_query(q, scope, window, values, discovered)) for q in catalog.queries]
    entries += [(_group(s.promql), series_query(s, scope, window, values))
                for s in catalog.series.values() if s.always]
    return [q for _, q in sorted(entries, key=lambda e: e[0]) if q is not None]


def chart_queries(scope: Scope, window: Window, series: Sequence[str], planned: Sequence[Query] = (),
                  catalog: QueryCatalog | None = None) -> list[Query]:
    """Range queries for the chart series, in the order given, skipping those already planned and those the target
    has nothing for, until the triage has MAX_RANGE_QUERIES range queries."""
    catalog = catalog or bundled()
    names = {q.name for q in planned}
    room = MAX_RANGE_QUERIES - sum(1 for q in planned if q.is_range)
    values = markers(scope, window)
    out: list[Query] = []
    for key in dict.fromkeys(series):
        entry = catalog.series.get(key)
        if entry is None or entry.query in names:
            continue
        query = series_query(entry, scope, window, values)
        if query is None:
            continue
        if len(out) >= room:
            log.info("chart series %s not fetched: the triage has its %d range queries", key, MAX_RANGE_QUERIES)
            continue
        out.append(query)
        names.add(query.name)
    return out
