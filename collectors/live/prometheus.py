"""Prometheus: the metrics engineers check first, as the exact API responses, over the triage scope.

The plan covers cAdvisor and kube-state-metrics for the scope's pods, node_exporter for their nodes,
dcgm-exporter for the nodes of GPU pods, CoreDNS cluster-wide, and the service's own latency histogram
and request counter when it exports them. Every query is one the Prometheus API parser recognises by its
PromQL (artifact.command), so each artifact turns into facts without knowing who collected it.

Instant queries are evaluated at `window.until`, passed explicitly, so a replay or a backfilled TSDB
answers the same as at capture time. A query that fails becomes a `missing` entry naming it; a
Prometheus that cannot be reached at all becomes one entry, found by a single probe before the plan runs.
"""

from __future__ import annotations

import json
import logging
import re
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor, wait
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import requests
from prometheus_api_client import PrometheusConnect
from prometheus_api_client.exceptions import PrometheusApiClientException
from urllib3.exceptions import MaxRetryError, NewConnectionError
from urllib3.exceptions import TimeoutError as Urllib3Timeout
from urllib3.util.retry import Retry

from collectors.catalogs.range_series import RANGE_METRICS, RangeSeries
from collectors.live.base import Scope, SourceResult, Window, artifact_id
from collectors.live.promql import any_of, duration, equals, escape_regex, matches, range_step, selector
from collectors.models import Artifact, ArtifactKind, Missing

log = logging.getLogger(__name__)

SOURCE = "prometheus"
RATE = "5m"  # the rate window dashboards and the playbooks' next checks use
# At most this many range queries per triage, the trend queries every triage makes included. Each returns up to
# TARGET_POINTS (300) points per series, so 20 of them keep a triage's artifacts, and the recording a drill is made
# from, to a few MB, and cost Prometheus about one dashboard refresh. The chart series come in the order the
# verdict needs them (the leader's first), so the bound only drops pictures of hypotheses far down the report.
MAX_RANGE_QUERIES = 20
# Given the evidence so far, the chart series to fetch, most needed first (bot/runner/triage.py builds it from the
# playbooks: collectors cannot import them).
ChartPicker = Callable[[list[Artifact]], Sequence[str]]
# Longer queries go as a POST form: a scope of many pods makes a long regex, and proxies cap URL length.
_LONG_QUERY = 3000
_MAX_DISCOVERED = 50  # metric names read back from discovery; more means the regex matched too much

# What discovery looks for among the service's own metrics: latency histograms and request counters.
_DISCOVER = r".+_(duration|latency).*_bucket|.+_requests?_total|nv_inference_request_success"
_LATENCY_BUCKET = re.compile(r"(duration|latency).*_bucket$")
_REQUEST_COUNTER = re.compile(r"_requests?_total$|^nv_inference_request_success$")
# The parser reads a rate as traffic only when its query names none of these; see prometheus_api._trends.
_NOT_TRAFFIC = re.compile(r"duration|latency|_bucket|_sum\b|bytes|seconds|size", re.IGNORECASE)
_PREFERRED = re.compile(r"request|http|grpc|rpc|server", re.IGNORECASE)


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


class QueryFailed(Exception):
    """A query that got no usable answer; the message is the reason a person reads."""


# ---- the plan ----------------------------------------------------------------------------------------------


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


def pod_queries(scope: Scope, window: Window) -> list[Query]:
    pods = _pod_matchers(scope)
    if pods is None:
        return []
    subject = _pods_subject(scope)
    span = duration(window.seconds)
    containers = [*pods, 'container!=""', 'container!="POD"']
    working_set = selector("container_memory_working_set_bytes", *containers)
    memory_limit = selector("kube_pod_container_resource_limits", *pods, 'resource="memory"')
    by_container = "sum by (namespace, pod, container)"
    throttled = selector("container_cpu_cfs_throttled_periods_total", *containers)
    periods = selector("container_cpu_cfs_periods_total", *containers)
    cpu_used = selector("container_cpu_usage_seconds_total", *containers)
    cpu_limit = selector("kube_pod_container_resource_limits", *pods, 'resource="cpu"')
    return [
        # The peak over the window: after an OOM kill the restarted container is small again.
        Query("memory-working-set-ratio",
              f"max_over_time({working_set}[{span}]) / on (namespace, pod, container) group_left "
              f"max by (namespace, pod, container) ({memory_limit})", subject),
        Query("memory-limit", f"last_over_time({memory_limit}[{span}])", subject),
        Query("cpu-throttled-ratio",
              f"{by_container} (rate({throttled}[{RATE}])) / {by_container} (rate({periods}[{RATE}]))", subject),
        Query("last-terminated-reason",
              f"last_over_time({selector('kube_pod_container_status_last_terminated_reason', *pods)}[{span}])",
              subject),
        Query("last-terminated-exitcode",
              f"last_over_time({selector('kube_pod_container_status_last_terminated_exitcode', *pods)}[{span}])",
              subject),
        Query("restarts",
              f"last_over_time({selector('kube_pod_container_status_restarts_total', *pods)}[{span}])", subject),
        Query("waiting-reason", f"{selector('kube_pod_container_status_waiting_reason', *pods)} == 1", subject),
        # CPU in use against the limit: a saturated pod starves the GPU it feeds (gpu-underutilized).
        Query("cpu-busy-ratio", f"{by_container} (rate({cpu_used}[{RATE}])) / {by_container} ({cpu_limit})", subject),
        # The working set over the window (its shape gives memory.growing) and the throttled ratio: both trends are
        # evidence as well as charts (collectors/catalogs/range_series.py).
        *_always(scope, window, "container_memory_working_set_bytes", "container_cpu_cfs_throttled_periods_total"),
    ]


def discovery_query(scope: Scope) -> Query | None:
    """Which latency histograms and request counters the scope's pods export (one series per name)."""
    pods = _pod_matchers(scope)
    if pods is None:
        return None
    promql = f"group by (__name__) ({selector('', *pods, matches('__name__', _DISCOVER))})"
    return Query("service-metrics", promql, _pods_subject(scope))


def _best(names: Iterable[str]) -> str | None:
    """The most request-like name: preferred words first, then the shortest, then alphabetical."""
    ranked = sorted(names, key=lambda n: (not _PREFERRED.search(n), len(n), n))
    return ranked[0] if ranked else None


def service_queries(scope: Scope, window: Window, discovered: Sequence[str]) -> list[Query]:
    pods = _pod_matchers(scope)
    if pods is None:
        return []
    subject = _pods_subject(scope)
    out: list[Query] = []
    histogram = _best(n for n in discovered if _LATENCY_BUCKET.search(n))
    if histogram:
        buckets = selector(histogram, *pods)
        out.append(Query("latency-p99",
                         f"histogram_quantile(0.99, sum by (le) (rate({buckets}[{RATE}])))", subject))
    counter = _best(n for n in discovered if _REQUEST_COUNTER.search(n) and not _NOT_TRAFFIC.search(n))
    if counter:
        step = range_step(window.seconds)
        # A rate window no shorter than the step, so no request falls between two points.
        span = duration(max(300, step))
        out.append(Query("request-rate-range", f"sum(rate({selector(counter, *pods)}[{span}]))", subject, step))
        # Per pod: a replica that serves nothing while its peers work idles its GPU (gpu-underutilized).
        out.append(Query("request-rate-by-pod", f"sum by (pod) (rate({selector(counter, *pods)}[{RATE}]))", subject))
    out += _error_ratio_queries(pods, subject, discovered)
    return out


def _error_ratio_queries(pods: list[str], subject: str, discovered: Sequence[str]) -> list[Query]:
    """Failed over all requests, from the mesh sidecar or the model server the pods export (error-rate)."""
    out: list[Query] = []
    if "istio_requests_total" in discovered:
        every = selector("istio_requests_total", *pods)
        failed = selector("istio_requests_total", *pods, 'response_code=~"5.."')
        out.append(Query("istio-error-ratio", f"sum(rate({failed}[{RATE}])) / sum(rate({every}[{RATE}]))", subject))
        out.append(Query("istio-requests-by-version",
                         f"sum by (destination_version, response_code) (rate({every}[{RATE}]))", subject))
    if "nv_inference_request_success" in discovered:
        ok = selector("nv_inference_request_success", *pods)
        failed = selector("nv_inference_request_failure", *pods)
        out.append(Query("triton-failure-ratio",
                         f"sum(rate({failed}[{RATE}])) / (sum(rate({ok}[{RATE}])) + sum(rate({failed}[{RATE}])))",
                         subject))
    return out


def ingress_queries(scope: Scope) -> list[Query]:
    """ingress-nginx's view of the service: the controller labels requests with the backend service."""
    if not scope.service:
        return []
    labels = [equals("namespace", scope.namespace), equals("service", scope.service)]
    every = selector("nginx_ingress_controller_requests", *labels)
    failed = selector("nginx_ingress_controller_requests", *labels, 'status=~"5.."')
    return [Query("ingress-error-ratio", f"sum(rate({failed}[{RATE}])) / sum(rate({every}[{RATE}]))",
                  f"service/{scope.namespace}/{scope.service}")]


def node_queries(scope: Scope, window: Window) -> list[Query]:
    nodes = _node_names(scope)
    if not nodes:
        return []
    subject = _nodes_subject(nodes)
    instance = _instance_matcher(scope, nodes)
    span = duration(window.seconds)
    drops = matches("__name__", "node_nf_conntrack_stat_(drop|early_drop|insert_failed)")
    steal = selector("node_cpu_seconds_total", 'mode="steal"', instance)
    iowait = selector("node_cpu_seconds_total", 'mode="iowait"', instance)
    return [
        Query("conntrack-usage-ratio",
              f"max_over_time({selector('node_nf_conntrack_entries', instance)}[{span}]) / "
              f"{selector('node_nf_conntrack_entries_limit', instance)}", subject),
        # Counters since boot, the same numbers `conntrack -S` prints.
        Query("conntrack-drops", selector("", drops, instance), subject),
        Query("node-memory-available-ratio",
              f"min_over_time({selector('node_memory_MemAvailable_bytes', instance)}[{span}]) / "
              f"{selector('node_memory_MemTotal_bytes', instance)}", subject),
        Query("cpu-steal-ratio", f"avg by (instance) (rate({steal}[{RATE}]))", subject),
        Query("cpu-iowait-ratio", f"avg by (instance) (rate({iowait}[{RATE}]))", subject),
    ]


def gpu_queries(scope: Scope, window: Window) -> list[Query]:
    """dcgm-exporter, only for nodes that run the scope's GPU pods (or are GPU nodes in scope)."""
    nodes = _gpu_node_names(scope)
    if not nodes:
        return []
    subject = _nodes_subject(nodes)
    host = any_of("Hostname", nodes)
    span = duration(window.seconds)

    def dcgm(metric: str) -> str:
        return selector(metric, host)

    def named(pattern: str) -> str:
        return selector("", matches("__name__", pattern), host)

    return [
        Query("gpu-util", dcgm("DCGM_FI_DEV_GPU_UTIL"), subject),
        *_always(scope, window, "DCGM_FI_DEV_GPU_UTIL"),
        # Used and free in one result: the parser needs both to compute the used share.
        Query("gpu-fb", named("DCGM_FI_DEV_FB_(USED|FREE|RESERVED)"), subject),
        Query("gpu-sm-active", dcgm("DCGM_FI_PROF_SM_ACTIVE"), subject),
        # The rest of the profiling fields: which part of the GPU works, and whether its bus keeps up.
        Query("gpu-profiling", named("DCGM_FI_PROF_(GR_ENGINE_ACTIVE|SM_OCCUPANCY|PIPE_TENSOR_ACTIVE|DRAM_ACTIVE)"),
              subject),
        Query("gpu-pcie", named("DCGM_FI_PROF_PCIE_RX_BYTES|DCGM_FI_DEV_PCIE_(MAX_)?LINK_(GEN|WIDTH)"), subject),
        Query("gpu-xid-max", f"max_over_time({dcgm('DCGM_FI_DEV_XID_ERRORS')}[{span}])", subject),
        # The gauge holds the last Xid; its history gives every code of the window, not just the highest.
        *_always(scope, window, "DCGM_FI_DEV_XID_ERRORS"),
        Query("gpu-temp-max", f"max_over_time({dcgm('DCGM_FI_DEV_GPU_TEMP')}[{span}])", subject),
        Query("gpu-power-max", f"max_over_time({dcgm('DCGM_FI_DEV_POWER_USAGE')}[{span}])", subject),
        # Renamed to CLOCKS_EVENT_REASONS in DCGM 3.3; exporters report one or the other.
        Query("gpu-clock-throttle", named("DCGM_FI_DEV_CLOCK_THROTTLE_REASONS|DCGM_FI_DEV_CLOCKS_EVENT_REASONS"),
              subject),
        Query("gpu-ecc-dbe", dcgm("DCGM_FI_DEV_ECC_DBE_VOL_TOTAL"), subject),
        Query("gpu-row-remap", named("DCGM_FI_DEV_ROW_REMAP_(FAILURE|PENDING)"), subject),
    ]


def dns_queries() -> list[Query]:
    """CoreDNS cluster-wide: every pod resolves through it, so its health is the scope's too."""
    responses = "coredns_dns_responses_total"
    errors = selector(responses, 'rcode=~"SERVFAIL|NXDOMAIN"')
    return [
        Query("dns-error-ratio", f"sum(rate({errors}[{RATE}])) / sum(rate({responses}[{RATE}]))",
              "cluster/coredns"),
        Query("dns-p99",
              f"histogram_quantile(0.99, sum by (le) (rate(coredns_dns_request_duration_seconds_bucket[{RATE}])))",
              "cluster/coredns"),
    ]


# ---- chart series: the catalog's templates, scoped to the target ------------------------------------------------

_MARKER = re.compile(r"<([a-z]+)>")


def _scaled_name(scope: Scope) -> str | None:
    """The name an HPA's scaleTargetRef carries: the workload's, else the service's (they usually agree)."""
    return scope.workload.rsplit("/", 1)[-1] if scope.workload else scope.service


def _joined(*matchers: str | None) -> str | None:
    return None if any(m is None for m in matchers) else ",".join(m for m in matchers if m is not None)


def _markers(scope: Scope, window: Window) -> dict[str, str | None]:
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
    }


def _series_subject(scope: Scope, used: set[str]) -> str:
    if used & {"pods", "containers"}:
        return _pods_subject(scope)
    if used & {"service", "endpoint", "scaled", "deployment"}:
        return f"service/{scope.namespace}/{_workload_name(scope)}"
    if "gpus" in used:
        return _nodes_subject(_gpu_node_names(scope))
    if used & {"instance", "node"}:
        return _nodes_subject(_node_names(scope))
    return f"namespace/{scope.namespace}" if "namespace" in used else "cluster"


def series_query(series: RangeSeries, scope: Scope, window: Window,
                 markers: dict[str, str | None] | None = None) -> Query | None:
    """The catalog entry as a range query for the target, or None when the target has nothing it reads."""
    values = markers if markers is not None else _markers(scope, window)
    used = set(_MARKER.findall(series.promql))
    unknown = used - values.keys()
    if unknown:
        raise ValueError(f"{series.query}: unknown template markers {sorted(unknown)}")
    if any(values[name] is None for name in used):
        return None
    promql = _MARKER.sub(lambda m: values[m.group(1)] or "", series.promql)
    return Query(series.query, promql, _series_subject(scope, used), range_step(window.seconds))


def _always(scope: Scope, window: Window, *keys: str) -> list[Query]:
    """The catalog's always-fetched series (their trends are evidence too) that the target has."""
    markers = _markers(scope, window)
    return [q for key in keys if (q := series_query(RANGE_METRICS[key], scope, window, markers)) is not None]


def chart_queries(scope: Scope, window: Window, series: Sequence[str], planned: Sequence[Query] = ()) -> list[Query]:
    """Range queries for the chart series, in the order given, skipping those already planned and those the target
    has nothing for, until the triage has MAX_RANGE_QUERIES range queries."""
    names = {q.name for q in planned}
    room = MAX_RANGE_QUERIES - sum(1 for q in planned if q.is_range)
    markers = _markers(scope, window)
    out: list[Query] = []
    for key in dict.fromkeys(series):
        entry = RANGE_METRICS.get(key)
        if entry is None or entry.query in names:
            continue
        query = series_query(entry, scope, window, markers)
        if query is None:
            continue
        if len(out) >= room:
            log.info("chart series %s not fetched: the triage has its %d range queries", key, MAX_RANGE_QUERIES)
            continue
        out.append(query)
        names.add(query.name)
    return out


def build_plan(scope: Scope, window: Window, discovered: Sequence[str] = ()) -> list[Query]:
    """Every query for the scope, given the service metric names discovery found."""
    return [*pod_queries(scope, window), *service_queries(scope, window, discovered), *ingress_queries(scope),
            *node_queries(scope, window), *gpu_queries(scope, window), *dns_queries()]


# ---- running queries ------------------------------------------------------------------------------------------


def _timestamp(moment: datetime) -> str:
    return f"{moment.timestamp():.3f}"


def _cause(err: requests.RequestException) -> object:
    """The underlying failure: with retries off, urllib3 wraps it in MaxRetryError, and requests in turn
    reports even a read timeout as a ConnectionError."""
    inner = err.args[0] if err.args else None
    return inner.reason if isinstance(inner, MaxRetryError) else inner


def _transport_reason(err: requests.RequestException, timeout: float) -> str:
    cause = _cause(err)
    # NewConnectionError subclasses urllib3's ConnectTimeoutError, so it is told apart first.
    timed_out = not isinstance(cause, NewConnectionError) and isinstance(cause, TimeoutError | Urllib3Timeout)
    if isinstance(err, requests.Timeout) or timed_out:
        return f"timed out after {timeout:g}s"
    if isinstance(err, requests.ConnectionError):
        text = str(cause or err)
        return "connection refused" if "refused" in text.lower() else f"connection failed: {text[:200]}"
    return f"request failed: {type(err).__name__}: {str(err)[:200]}"


def _error_reason(status: int, text: str) -> str:
    """`HTTP 400 bad_data: <message>` from an API error body, or the start of whatever came back."""
    try:
        body = json.loads(text)
    except ValueError:
        body = None
    if isinstance(body, dict) and "error" in body:
        return f"HTTP {status} {body.get('errorType', 'error')}: {body['error']}"
    return f"HTTP {status}: {text.strip()[:200] or 'empty body'}"


class PromClient:
    """prometheus-api-client for the connection, its session for raw bodies (the library keeps only data)."""

    def __init__(self, url: str, timeout: float, headers: dict[str, str] | None) -> None:
        self.url = url.rstrip("/")
        self.timeout = timeout
        self.session = requests.Session()
        self.session.headers.update(headers or {})
        # No retries: the library's default retries a closed port for 6 s, longer than a triage can wait.
        # TLS stays verified (the session carries a bearer token); REQUESTS_CA_BUNDLE adds a private CA.
        self.api = PrometheusConnect(url=self.url, headers=headers, retry=Retry(total=0), session=self.session)

    def close(self) -> None:
        self.api.close()

    def probe(self, moment: datetime) -> str | None:
        """Why Prometheus is unusable (unreachable, or refusing even `vector(1)`), or None if it answers."""
        try:
            self.api.custom_query("vector(1)", params={"time": _timestamp(moment)}, timeout=self.timeout)
        except requests.JSONDecodeError:  # before RequestException, which it also is
            return f"prometheus at {self.url} did not answer a probe query with JSON: is this its API URL?"
        except requests.RequestException as err:
            return f"prometheus unreachable at {self.url}: {_transport_reason(err, self.timeout)}"
        except PrometheusApiClientException as err:
            return f"prometheus at {self.url} refused a probe query: {str(err)[:300]}"
        except (KeyError, TypeError):  # JSON, but without data.result
            return f"prometheus at {self.url} answered a probe query without data.result: is this its API URL?"
        return None

    def fetch(self, query: Query, window: Window) -> dict[str, Any]:
        """The success body of one query; raises QueryFailed with a reason otherwise."""
        # Prometheus' own timeout too, so an expensive query stops there rather than running on unread.
        params = {"query": query.promql, "timeout": f"{self.timeout:g}s"}
        if query.is_range:
            path = "/api/v1/query_range"
            params.update(start=_timestamp(window.since), end=_timestamp(window.until), step=str(query.step))
        else:
            path = "/api/v1/query"
            params["time"] = _timestamp(window.until)
        long = len(query.promql) > _LONG_QUERY
        try:
            response = self.session.request("POST" if long else "GET", self.url + path, timeout=self.timeout,
                                            data=params if long else None, params=None if long else params)
        except requests.RequestException as err:
            raise QueryFailed(_transport_reason(err, self.timeout)) from None
        if response.status_code != 200:
            raise QueryFailed(_error_reason(response.status_code, response.text))
        try:
            body = response.json()
        except ValueError:
            raise QueryFailed(f"not JSON: {response.text.strip()[:200]}") from None
        if not isinstance(body, dict) or body.get("status") != "success":
            raise QueryFailed(_error_reason(response.status_code, response.text))
        return body


def _artifact(query: Query, body: dict[str, Any], window: Window) -> Artifact:
    return Artifact(id=artifact_id("prom", query.name) + ".json", kind=ArtifactKind.PROMETHEUS_QUERY,
                    subject=query.subject, source=SOURCE, command=query.promql, captured_at=window.until,
                    content=json.dumps(body, indent=2, ensure_ascii=False) + "\n")


def _missing(query: Query, reason: str) -> Missing:
    return Missing(source=f"{SOURCE}:{query.name}", reason=f"{reason} (query: {query.promql})")


def _run(client: PromClient, query: Query, window: Window) -> Artifact | Missing:
    try:
        return _artifact(query, client.fetch(query, window), window)
    except QueryFailed as err:
        return _missing(query, str(err))


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


def _discover(client: PromClient, scope: Scope, window: Window, result: SourceResult) -> list[str]:
    query = discovery_query(scope)
    if query is None:
        return []
    try:
        body = client.fetch(query, window)
    except QueryFailed as err:
        result.missing.append(_missing(query, str(err)))
        return []
    result.artifacts.append(_artifact(query, body, window))
    return discovered_names(body)


def _record(result: SourceResult, outcome: Artifact | Missing) -> None:
    if isinstance(outcome, Artifact):
        result.artifacts.append(outcome)
    else:
        result.missing.append(outcome)


def run_queries(client: PromClient, queries: Sequence[Query], window: Window, max_workers: int = 6,
                budget: float | None = None) -> SourceResult:
    """Run queries concurrently (at most `max_workers` at once); results keep the plan's order.

    With a `budget` (seconds), a query still running when it is spent becomes a `missing` entry instead of
    holding the triage past its deadline (its thread ends on its own timeout, unread).
    """
    result = SourceResult()
    if not queries:
        return result
    pool = ThreadPoolExecutor(max_workers=max(1, min(max_workers, len(queries))), thread_name_prefix="prometheus")
    try:
        futures = [pool.submit(_run, client, q, window) for q in queries]
        done, _ = wait(futures, timeout=None if budget is None else max(0.0, budget))
        for query, future in zip(queries, futures, strict=True):
            _record(result, future.result() if future in done
                    else _missing(query, f"not answered within the {budget:g}s left before the triage's deadline"))
    finally:
        pool.shutdown(wait=budget is None, cancel_futures=True)
    return result


def _chart_series(charts: ChartPicker, artifacts: list[Artifact], result: SourceResult) -> Sequence[str]:
    """The series the picker asks for; a picker that fails costs the charts, never the evidence already read."""
    try:
        return charts(artifacts)
    except Exception as err:
        log.exception("choosing the chart series failed")
        result.missing.append(Missing(source=f"{SOURCE}:charts",
                                      reason=f"could not choose the chart series: {type(err).__name__}: {err}"))
        return ()


def _chart_wave(client: PromClient, scope: Scope, window: Window, charts: ChartPicker, plan: Sequence[Query],
                result: SourceResult, max_workers: int, finish_by: float | None) -> SourceResult:
    """The chart series' range queries, within what is left of the triage's deadline: a picture that comes too
    late is dropped, never the evidence the first wave read."""
    series = _chart_series(charts, list(result.artifacts), result)
    queries = chart_queries(scope, window, series, plan)
    budget = None if finish_by is None else round(finish_by - time.monotonic(), 1)
    if queries and budget is not None and budget <= 0:
        return SourceResult(missing=[Missing(source=f"{SOURCE}:charts", reason=f"{len(queries)} chart series not "
                                             "fetched: the triage's deadline was reached")])
    return run_queries(client, queries, window, max_workers, budget)


def collect_prometheus(url: str, scope: Scope, window: Window, *, timeout: float = 5.0, max_workers: int = 6,
                       headers: dict[str, str] | None = None, charts: ChartPicker | None = None,
                       finish_by: float | None = None) -> SourceResult:
    """Run the plan for the scope against Prometheus at `url`; never raises for a failing backend.

    With `charts`, a second wave follows: the picker reads the evidence so far and names the series the report's
    hypotheses chart (the leader's first), fetched concurrently as range queries within MAX_RANGE_QUERIES and,
    given `finish_by` (a time.monotonic() instant), before then.
    """
    client = PromClient(url, timeout, headers)
    try:
        down = client.probe(window.until)
        if down:
            return SourceResult(missing=[Missing(source=SOURCE, reason=down)])
        result = SourceResult()
        plan = build_plan(scope, window, _discover(client, scope, window, result))
        result.extend(run_queries(client, plan, window, max_workers))
        if charts is not None:
            result.extend(_chart_wave(client, scope, window, charts, plan, result, max_workers, finish_by))
        return result
    finally:
        client.close()
