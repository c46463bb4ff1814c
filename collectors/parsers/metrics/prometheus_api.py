"""Prometheus HTTP API JSON (`/api/v1/query`, `/api/v1/query_range`) to facts.

Plain selectors go through the shared metric rules. Derived queries (ratios, `histogram_quantile`) lose
their metric name, so the recorded PromQL (artifact.command) says what the numbers mean. Range results
also give trends: a leak-shaped working set, and request rate against its own baseline.
"""

from __future__ import annotations

import json
import math
import re
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import Any
from urllib.parse import unquote_plus

from collectors.models import Artifact, ArtifactKind, ParseResult
from collectors.parsers.contract import Parser
from collectors.parsers.metrics.metric_base import Derived
from collectors.parsers.metrics.metric_facts import KNOWN_METRICS, derive
from collectors.parsers.metrics.metric_http import METRICS as REQUEST_COUNTERS
from collectors.parsers.metrics.promql_samples import Sample, format_number
from collectors.parsers.sink import FactSink
from collectors.sniffers.prometheus_api import sniff
from collectors.text import normalise
from collectors.vocabulary import VOCABULARY

# ---- the recorded query -------------------------------------------------------------------------------

_QUERY_PARAM = re.compile(r"""[?&'"\s]query=""")
_METRIC_KEY = re.compile(r'"metric"\s*:')
_NUM = r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?"
_QUANTILE = re.compile(r"histogram_quantile\s*\(\s*(" + _NUM + r")\s*,")
_BUCKET = re.compile(r"([A-Za-z_:][\w:]*)_bucket\b")
_TRAILING_FILTER = re.compile(r"\s*(?:>=|<=|==|!=|>|<)\s*(?:bool\s+)?" + _NUM + r"\s*$")
_TRAILING_SCALE = re.compile(r"^\s*([/*])\s*(" + _NUM + r")\s*$")
# Units by metric-name suffix, in seconds; Prometheus convention is seconds when there is none.
_UNITS = (("_microseconds", 1e-6), ("_us", 1e-6), ("_milliseconds", 1e-3), ("_ms", 1e-3),
          ("_nanoseconds", 1e-9), ("_ns", 1e-9), ("_seconds", 1.0))


def _name(metric: str) -> str:
    return r"(?<![\w:])" + metric + r"(?![\w:])"


@dataclass(frozen=True)
class _RatioQuery:
    """`numerator / denominator` over known metrics means this fact, value as is."""

    fact: str
    numerator: re.Pattern[str]
    denominator: re.Pattern[str]


def _ratio(fact: str, numerator: str, denominator: str) -> _RatioQuery:
    return _RatioQuery(fact, re.compile(numerator), re.compile(denominator))


_RATIO_QUERIES = (
    _ratio("cpu.throttled_ratio", _name("container_cpu_cfs_throttled_periods_total"),
           _name("container_cpu_cfs_periods_total")),
    _ratio("memory.working_set_ratio", _name("container_memory_working_set_bytes"),
           _name("kube_pod_container_resource_limits") + "|" + _name("container_spec_memory_limit_bytes")),
    _ratio("conntrack.usage_ratio", _name("node_nf_conntrack_entries"), _name("node_nf_conntrack_entries_limit")),
    _ratio("node.memory_available_ratio", _name("node_memory_MemAvailable_bytes"),
           _name("node_memory_MemTotal_bytes")),
    _ratio("dns.error_ratio", _name("coredns_dns_responses_total") + r"\s*\{[^}]*(?:SERVFAIL|NXDOMAIN)",
           _name("coredns_dns_responses_total")),
    _ratio("latency.queue_share", _name("nv_inference_queue_duration_us"),
           _name("nv_inference_request_duration_us")),
    # 5xx over all requests at the ingress or in the mesh, Triton failures over all inferences
    _ratio("http.error_ratio", _name("nginx_ingress_controller_requests") + r'\s*\{[^}]*status\s*=~?\s*"5',
           _name("nginx_ingress_controller_requests")),
    _ratio("http.error_ratio", _name("istio_requests_total") + r'\s*\{[^}]*response_code\s*=~?\s*"5',
           _name("istio_requests_total")),
    _ratio("http.error_ratio", _name("nv_inference_request_failure"),
           _name("nv_inference_request_success") + "|" + _name("nv_inference_request_failure")),
    # CPU seconds used per second over the CPU limit (cores): how close the container runs to its ceiling
    _ratio("cpu.busy_ratio", _name("container_cpu_usage_seconds_total"),
           _name("kube_pod_container_resource_limits") + "|" + _name("container_spec_cpu_quota")),
    # used / (used + free): used / free alone is a different number
    _ratio("gpu.fb_used_ratio", _name("DCGM_FI_DEV_FB_USED"),
           r"\(\s*(?:sum\s*\()?\s*DCGM_FI_DEV_FB_(?:USED|FREE)\b[^/]*\+[^/]*DCGM_FI_DEV_FB_(?:USED|FREE)\b"),
)
_STEAL_RATE = re.compile(r"\b(?:i?rate)\s*\(\s*node_cpu_seconds_total\s*\{[^}]*mode\s*=~?\s*\"steal\"")
_IOWAIT_RATE = re.compile(r"\b(?:i?rate)\s*\(\s*node_cpu_seconds_total\s*\{[^}]*mode\s*=~?\s*\"iowait\"")

# Functions and keywords that keep a single metric's meaning (and unit) intact.
_PRESERVING = frozenset({
    "max_over_time", "min_over_time", "avg_over_time", "last_over_time", "quantile_over_time", "max", "min",
    "avg", "topk", "bottomk", "sort", "sort_desc", "by", "without", "bool", "abs",
})
_AVERAGING = frozenset({"avg", "avg_over_time", "quantile_over_time"})
_CATEGORICAL = frozenset({"DCGM_FI_DEV_XID_ERRORS", "DCGM_FI_DEV_CLOCK_THROTTLE_REASONS",
                          "DCGM_FI_DEV_CLOCKS_EVENT_REASONS", "kube_pod_container_status_last_terminated_reason"})
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\'')
_BRACES = re.compile(r"\{[^}]*\}|\[[^\]]*\]|\boffset\s+\S+|\b(?:by|without)\s*\([^)]*\)")
_IDENT = re.compile(r"[A-Za-z_:][\w:]*")
_ARITHMETIC = re.compile(r"[-+*/%^]")

# Request-rate queries: a rate of a request/success counter, not of its durations or sizes.
_RATE = re.compile(r"\b(?:i?rate|increase)\s*\(")
_REQUESTS = re.compile(r"request|_success\b|nv_inference_count|nv_inference_exec_count", re.IGNORECASE)
_NOT_REQUESTS = re.compile(r"duration|latency|_bucket|_sum\b|bytes|seconds|size", re.IGNORECASE)

# A rising working set is leak-shaped when most steps go up and it ends well above where it started.
GROWTH_STEPS = 0.8
GROWTH_FACTOR = 1.5


def recorded_query(command: str) -> str:
    """The PromQL in artifact.command: a bare query, or the `query=` parameter of an API URL or curl."""
    match = _QUERY_PARAM.search(command)
    if not match:
        return command.strip()
    rest = command[match.end():]
    opener = command[match.start()]
    if opener in "'\"":
        return unquote_plus(rest.split(opener, 1)[0]).strip()
    return unquote_plus(re.split(r"[&\s'\"]", rest, maxsplit=1)[0]).strip()


def _closing_paren(text: str, open_at: int) -> int:
    depth = 0
    for i in range(open_at, len(text)):
        if text[i] == "(":
            depth += 1
        elif text[i] == ")":
            depth -= 1
            if depth == 0:
                return i
    return -1


def _quantile_fact(query: str) -> tuple[str, float] | None:
    """(fact, factor to seconds) for a p99 `histogram_quantile` query, including a trailing `/ 1000`."""
    match = _QUANTILE.search(query)
    if not match or abs(float(match.group(1)) - 0.99) > 1e-9:
        return None
    bucket = _BUCKET.search(query, match.end())
    metric = bucket.group(1) if bucket else ""
    unit = next((factor for suffix, factor in _UNITS if metric.endswith(suffix)), 1.0)
    close = _closing_paren(query, query.index("(", match.start()))
    tail = _TRAILING_FILTER.sub("", query[close + 1:]) if close >= 0 else ""
    scale = _TRAILING_SCALE.match(tail)
    if scale:
        number = float(scale.group(2))
        if number == 0:
            return None
        unit *= number if scale.group(1) == "/" else 1 / number
    elif tail.strip():
        return None  # some other arithmetic: the result is no longer a latency we can read
    fact = "dns.p99_seconds" if metric.startswith("coredns_") else "latency.p99_seconds"
    return fact, unit


def _query_fact(query: str) -> tuple[str, float] | None:
    """(fact, factor) when the query is a derived quantity the vocabulary names."""
    if not query:
        return None
    quantile = _quantile_fact(query)
    if quantile:
        return quantile
    for ratio in _RATIO_QUERIES:
        top = ratio.numerator.search(query)
        if top and "/" in query[top.end():] and ratio.denominator.search(query, query.index("/", top.end())):
            return ratio.fact, 1.0
    if _STEAL_RATE.search(query):
        return "node.cpu_steal_ratio", 1.0
    if _IOWAIT_RATE.search(query):
        return "cpu.iowait_ratio", 1.0
    return None


# A rate of a request counter, summed by its labels, keeps the proportions between the counter's series, which
# is all the request-failure rules use (the share of 5xx, per version).
_RATE_WORDS = frozenset({"sum", "rate", "irate", "increase", "by", "without"})


def rate_of_counter(query: str) -> str | None:
    """The request counter a `sum by (...) (rate(counter[5m]))` query reads, when it reads only that."""
    text = _BRACES.sub("", _STRING.sub('""', query))
    if _ARITHMETIC.search(text.replace('""', "")) or not _RATE.search(text):
        return None
    metrics = [w for w in _IDENT.findall(text) if w not in _RATE_WORDS]
    return metrics[0] if len(metrics) == 1 and metrics[0] in REQUEST_COUNTERS else None


def single_metric(query: str) -> str | None:
    """The one known metric a query reads when its result keeps that metric's meaning (no arithmetic)."""
    text = _BRACES.sub("", _STRING.sub('""', query))
    text = _TRAILING_FILTER.sub("", text)
    if _ARITHMETIC.search(text.replace('""', "")):
        return None
    words: list[str] = _IDENT.findall(text)
    metrics = [w for w in words if w not in _PRESERVING]
    if len(metrics) != 1 or metrics[0] not in KNOWN_METRICS:
        return None
    if metrics[0] in _CATEGORICAL and _AVERAGING.intersection(words):
        return None
    return metrics[0]


# ---- the JSON body -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Series:
    labels: dict[str, str]
    points: list[float]  # in time order; one point for an instant vector or scalar
    start: int
    end: int


def _float(raw: Any) -> float | None:
    if isinstance(raw, bool) or not isinstance(raw, str | int | float):
        return None
    try:
        value = float(raw)
    except ValueError:
        return None
    return None if math.isnan(value) else value


def _point(raw: Any) -> float | None:
    """A `[timestamp, "value"]` pair's value."""
    if isinstance(raw, list) and len(raw) == 2:
        return _float(raw[1])
    return None


def _spans(lines: Sequence[str], count: int) -> list[tuple[int, int]]:
    """1-based line spans of each result item, found by its `"metric":` key; (0, 0) when unsure."""
    starts = [n for n, line in enumerate(lines, 1) for _ in _METRIC_KEY.finditer(line)]
    if not starts or len(starts) != count:
        return [(0, 0)] * count
    last = len(lines)  # the last item ends before the closing brackets of the body
    while last > starts[-1] and not lines[last - 1].strip(" \t]}),"):
        last -= 1
    ends = [max(start, following - 1) for start, following in pairwise(starts)]
    return list(zip(starts, [*ends, last], strict=True))


def _series(result: list[Any], lines: Sequence[str]) -> list[_Series]:
    out: list[_Series] = []
    for item, (start, end) in zip(result, _spans(lines, len(result)), strict=True):
        if not isinstance(item, dict):
            continue
        metric = item.get("metric")
        labels = {str(k): str(v) for k, v in metric.items()} if isinstance(metric, dict) else {}
        if "values" in item and isinstance(item["values"], list):
            points = [v for v in map(_point, item["values"]) if v is not None]
        else:
            value = _point(item.get("value"))
            points = [] if value is None else [value]
        if points:
            out.append(_Series(labels, points, start, end))
    return out


def _data(body: Any, sink: FactSink) -> dict[str, Any] | None:
    """The `data` object of a success response; errors and odd shapes become problems."""
    if isinstance(body, list):
        return {"resultType": "vector", "result": body}  # a bare result list, as some tools print it
    if not isinstance(body, dict):
        sink.problem("Prometheus API response is not a JSON object")
        return None
    if body.get("status") == "error":
        kind = body.get("errorType", "error")
        sink.problem(f"Prometheus returned an error ({kind}): {body.get('error', 'no message')}")
        return None
    warnings = body.get("warnings")
    for warning in warnings if isinstance(warnings, list) else []:
        sink.problem(f"Prometheus warning: {warning}")
    data = body.get("data", body)
    if not isinstance(data, dict) or not isinstance(data.get("result"), list):
        if isinstance(data, dict) and data.get("resultType") in ("scalar", "string"):
            return data
        sink.problem("Prometheus API response has no data.result list")
        return None
    return data


# ---- facts ------------------------------------------------------------------------------------------------


def _render(labels: dict[str, str], value: float) -> str:
    inner = ",".join(f'{k}="{v}"' for k, v in labels.items() if k != "__name__")
    return f"{labels.get('__name__', '')}{{{inner}}} {format_number(value)}"


def _emit_query_fact(sink: FactSink, fact: str, factor: float, series: list[_Series], query: str) -> None:
    """The derived value per series (last point), keeping the extreme the vocabulary merges on."""
    finite = [(s.points[-1] * factor, s) for s in series if math.isfinite(s.points[-1])]
    if not finite:
        return
    pick = min if VOCABULARY[fact].merge == "min" else max
    value, chosen = pick(finite, key=lambda pair: pair[0])
    sink.add(fact, round(value, 6), chosen.start, chosen.end, text=f"{query} => {_render(chosen.labels, value)}")


def _samples(series: list[_Series], query: str) -> list[Sample]:
    """Samples for the shared metric rules: the last point, plus every distinct code of an event gauge."""
    inferred = (single_metric(query) or rate_of_counter(query)) if query else None
    out: list[Sample] = []
    for s in series:
        name = s.labels.get("__name__") or inferred
        if not name:
            continue
        labels = {k: v for k, v in s.labels.items() if k != "__name__"}
        points = list(dict.fromkeys(s.points)) if name in _CATEGORICAL else [s.points[-1]]
        out.extend(Sample(name, labels, value, line=s.start, end=s.end) for value in points)
    return out


def _emit_derived(sink: FactSink, facts: list[Derived]) -> None:
    for fact in facts:
        sink.add(fact.name, fact.value, fact.start, fact.end, text=fact.text)


def is_growing(points: Sequence[float]) -> bool:
    """Most steps non-decreasing and the end at least GROWTH_FACTOR times the start."""
    if len(points) < 3 or points[0] <= 0:
        return False
    steps = [b >= a for a, b in pairwise(points)]
    return sum(steps) >= GROWTH_STEPS * len(steps) and points[-1] >= GROWTH_FACTOR * points[0]


def increase_ratio(points: Sequence[float]) -> float | None:
    """Last value over the median of the first half (the series' own baseline)."""
    if len(points) < 4:
        return None
    baseline = statistics.median(points[: len(points) // 2])
    return points[-1] / baseline if baseline > 0 else None


def _divides(query: str) -> bool:
    """A division outside label values and ranges: a share of requests (5xx over all) is not traffic."""
    return "/" in _BRACES.sub("", _STRING.sub('""', query))


def _trends(sink: FactSink, series: list[_Series], query: str) -> None:
    working_set = [s for s in series if "container_memory_working_set_bytes" in query
                   or s.labels.get("__name__") == "container_memory_working_set_bytes"]
    working_set = [s for s in working_set if s.labels.get("container") != "POD" and len(s.points) >= 3]
    if working_set:
        grown = next((s for s in working_set if is_growing(s.points)), None)
        shown = grown or working_set[0]
        text = f"{query or 'working set'}: {format_number(shown.points[0])} -> {format_number(shown.points[-1])} " \
               f"over {len(shown.points)} points"
        sink.add("memory.growing", grown is not None, shown.start, shown.end, text=text)
    if query and _RATE.search(query) and _REQUESTS.search(query) and not _NOT_REQUESTS.search(query) \
            and not _divides(query):
        ratios = [(r, s) for s in series if (r := increase_ratio(s.points)) is not None]
        if ratios:
            ratio, s = max(ratios, key=lambda pair: pair[0])
            text = f"{query}: now {format_number(s.points[-1])}, baseline median of first half"
            sink.add("traffic.increase_ratio", round(ratio, 3), s.start, s.end, text=text)


_BY_POD = re.compile(r"\bby\s*\([^)]*\bpod\b")


def _idle_pods(sink: FactSink, series: list[_Series], query: str) -> None:
    """Per-pod request rates: pods that served nothing while others served (an idle replica behind a router)."""
    if not (_RATE.search(query) and _REQUESTS.search(query) and not _NOT_REQUESTS.search(query)
            and _BY_POD.search(query)):
        return
    rates = [(s.labels["pod"], s) for s in series if s.labels.get("pod") and math.isfinite(s.points[-1])]
    if len(rates) < 2 or not any(s.points[-1] > 0 for _, s in rates):
        return
    idle = [(pod, s) for pod, s in rates if s.points[-1] == 0]
    if idle:
        shown = "; ".join(f"{pod} {format_number(s.points[-1])}" for pod, s in rates)
        sink.add("traffic.idle_pods", [pod for pod, _ in idle], min(s.start for _, s in idle),
                 max(s.end for _, s in idle), text=f"{query} => {shown}")
    else:
        sink.add("traffic.idle_pods", [], rates[0][1].start, rates[-1][1].end, text=f"{query}: every pod served")


def _read(sink: FactSink, text: str, command: str) -> None:
    try:
        body = json.loads(text)
    except (ValueError, RecursionError) as exc:
        sink.problem(f"not Prometheus API JSON: {exc}")
        return
    data = _data(body, sink)
    if data is None:
        return
    query = recorded_query(command)
    result = data.get("result")
    if data.get("resultType") == "scalar":
        value = _point(result)
        series = [] if value is None else [_Series({}, [value], 0, 0)]
    else:
        series = _series(result if isinstance(result, list) else [], sink.lines)
    # A range query is for charts and trends: its instant twin (the same PromQL) gives the fact, once.
    known = _query_fact(query) if data.get("resultType") != "matrix" else None
    if known:
        _emit_query_fact(sink, known[0], known[1], series, query)
    else:
        _emit_derived(sink, derive(_samples(series, query)))
    if data.get("resultType") == "matrix":
        _trends(sink, series, query)
    elif query:
        _idle_pods(sink, series, query)


def parse(artifact: Artifact) -> ParseResult:
    """Facts from a Prometheus query result; an error body becomes a problem, not an exception."""
    text = normalise(artifact.content)
    sink = FactSink(artifact, text.split("\n"))
    _read(sink, text, artifact.command)
    return sink.done()


PARSER = Parser(kinds=(ArtifactKind.PROMETHEUS_QUERY,), parse=parse, sniff=sniff)
