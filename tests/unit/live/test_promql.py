"""PromQL building without a server: escaping, durations, range steps, and the query plan's shapes.

The last tests feed each planned query, with a made-up result, to the Prometheus API parser: a query
the parser cannot recognise by its PromQL would silently give no facts in a live triage.
"""

from __future__ import annotations

import json
import re
from datetime import timedelta
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from collectors.catalogs.queries import bundled
from collectors.live.base import NodeRef, PodRef, Scope, Window
from collectors.live.prom_plan import Query, build_plan, discovered_names
from collectors.live.promql import (
    MAX_POINTS,
    any_of,
    duration,
    equals,
    escape_regex,
    escape_string,
    points,
    range_step,
)
from collectors.models import Artifact, ArtifactKind
from collectors.parsers.registry import parse_artifact
from tests.unit.live.hour import HOUR, UNTIL

# ---- escaping ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("value", "escaped"), [
    ("plain-0", "plain-0"),
    ('say "hi"', 'say \\"hi\\"'),
    ("back\\slash", "back\\\\slash"),
    ("two\nlines\ttab\r", "two\\nlines\\ttab\\r"),
    ("bell\x07", "bell\\x07"),
    ("ünïcode-名", "ünïcode-名"),
])
def test_escape_string(value: str, escaped: str) -> None:
    assert escape_string(value) == escaped


def _unquote(escaped: str) -> str:
    """What a Go-style string literal reader makes of the escaped text (Python's escapes agree here)."""
    decoded: str = json.loads('"' + re.sub(r"\\x([0-9a-f]{2})", r"\\u00\1", escaped) + '"')
    return decoded


@given(st.text())
def test_escape_string_round_trips(value: str) -> None:
    escaped = escape_string(value)
    assert _unquote(escaped) == value
    assert not re.search(r'(?<!\\)(?:\\\\)*"', escaped)  # no quote left that would end the string


def test_escape_regex_escapes_every_re2_metacharacter() -> None:
    assert escape_regex(r"a.b+c*d?e(f)g[h]i{j}k|l^m$n\o") == r"a\.b\+c\*d\?e\(f\)g\[h\]i\{j\}k\|l\^m\$n\\o"
    assert escape_regex("web-1_x/y z") == "web-1_x/y z"  # RE2 rejects escaped letters and spaces


@given(st.text())
def test_escaped_regex_matches_only_the_value(value: str) -> None:
    pattern = re.compile(escape_regex(value), re.DOTALL)
    assert pattern.fullmatch(value)
    assert not pattern.fullmatch(value + "x")


def test_matchers() -> None:
    assert equals("pod", 'a"b') == 'pod="a\\"b"'
    assert any_of("pod", ["b", "a", "b"]) == 'pod=~"a|b"'
    assert any_of("pod", ["only"]) == 'pod="only"'
    # Escaped twice: \. for the regex, then \\ for the string holding it.
    assert any_of("pod", ["odd.pod", 'q"']) == 'pod=~"odd\\\\.pod|q\\""'
    with pytest.raises(ValueError, match="no values"):
        any_of("pod", [])


# ---- durations and steps ----------------------------------------------------------------------------------


@pytest.mark.parametrize(("seconds", "text"), [
    (30, "30s"), (90, "90s"), (120, "2m"), (3600, "1h"), (5400, "90m"), (21600, "6h"), (86400, "1d"),
    (30 * 86400, "30d"), (3601, "3601s"),
])
def test_duration(seconds: int, text: str) -> None:
    assert duration(seconds) == text


def test_duration_rejects_zero() -> None:
    with pytest.raises(ValueError, match="positive"):
        duration(0)


@pytest.mark.parametrize(("seconds", "step"), [
    (10, 15), (3600, 15), (6 * 3600, 120), (86400, 300), (7 * 86400, 3600), (30 * 86400, 10800),
])
def test_range_step_defaults(seconds: int, step: int) -> None:
    assert range_step(seconds) == step
    assert points(seconds, step) <= 300


def test_thirty_days_at_the_finest_step_stays_under_the_limit() -> None:
    month = 30 * 86400
    step = range_step(month, target=MAX_POINTS)
    assert step == 300
    assert points(month, step) == 8641 <= MAX_POINTS
    assert points(month, month // MAX_POINTS) > MAX_POINTS  # what a naive step would have asked for


@given(st.integers(min_value=1, max_value=10 * 365 * 86400), st.integers(min_value=-5, max_value=50_000))
def test_range_step_never_exceeds_the_limit(seconds: int, target: int) -> None:
    step = range_step(seconds, target=target)
    assert step >= 15
    assert points(seconds, step) <= min(MAX_POINTS, max(2, target))


# ---- the plan -----------------------------------------------------------------------------------------------

GPU_SCOPE = Scope(namespace="ml", pods=[PodRef(name="trainer-0", node="gpu-node-2", gpu_request=8),
                                        PodRef(name="trainer-1", node="gpu-node-3", gpu_request=8)],
                  nodes=[NodeRef(name="gpu-node-2", internal_ip="10.0.0.2", gpu_capacity=8)])
WEB_SCOPE = Scope(namespace="shop", service="checkout", pods=[PodRef(name="checkout-1", node="cpu-node-1")])
DISCOVERED = ["http_request_duration_seconds_bucket", "http_requests_total", "grpc_client_handling_seconds_bucket",
              "istio_requests_total", "nv_inference_request_success"]


def plan(scope: Scope, discovered: list[str] | None = None) -> dict[str, Query]:
    queries = build_plan(scope, HOUR, discovered or [])
    assert len({q.name for q in queries}) == len(queries)
    return {q.name: q for q in queries}


def test_gpu_queries_only_for_gpu_pods_nodes() -> None:
    gpu = plan(GPU_SCOPE)
    assert gpu["gpu-xid-max"].promql == 'max_over_time(DCGM_FI_DEV_XID_ERRORS{Hostname=~"gpu-node-2|gpu-node-3"}[1h])'
    assert not [name for name in plan(WEB_SCOPE) if name.startswith("gpu-")]


def test_pod_and_node_matchers() -> None:
    gpu = plan(GPU_SCOPE)
    assert 'namespace="ml",pod=~"trainer-0|trainer-1",container!="",container!="POD"' in \
        gpu["memory-working-set-ratio"].promql
    assert 'instance=~"(10\\\\.0\\\\.0\\\\.2|gpu-node-2|gpu-node-3)(:[0-9]+)?"' in gpu["conntrack-usage-ratio"].promql
    assert gpu["memory-working-set-ratio"].subject == "namespace/ml"
    assert gpu["conntrack-usage-ratio"].subject == "node/gpu-node-2,gpu-node-3"


def test_a_node_scope_matches_its_pods_in_their_own_namespaces() -> None:
    """A node is cluster-scoped: its pods come from several namespaces, none of them "default"."""
    node = Scope(namespace="", pods=[PodRef(name="trainer-0", namespace="ml", node="gpu-node-2"),
                                     PodRef(name="web-0", namespace="shop", node="gpu-node-2")],
                 nodes=[NodeRef(name="gpu-node-2", internal_ip="10.0.0.2")])
    queries = plan(node)
    assert 'namespace=~"ml|shop",pod=~"trainer-0|web-0"' in queries["restarts"].promql
    assert queries["restarts"].subject == "node/gpu-node-2"
    assert 'namespace=""' not in " ".join(q.promql for q in queries.values())
    assert 'instance=~"(10\\\\.0\\\\.0\\\\.2|gpu-node-2)(:[0-9]+)?"' in queries["conntrack-usage-ratio"].promql
    # A node with no pods (or one the triage could not find) asks nothing about pods.
    assert not [n for n in plan(Scope(namespace="")) if n not in ("dns-error-ratio", "dns-p99")]


def test_service_without_pods_uses_its_pod_name_prefix() -> None:
    queries = plan(Scope(namespace="shop", service="check.out"))
    assert 'pod=~"check\\\\.out-.*"' in queries["restarts"].promql
    assert queries["restarts"].subject == "service/shop/check.out"
    assert "conntrack-usage-ratio" not in queries  # no nodes known


def test_nothing_to_scope_leaves_cluster_wide_dns_only() -> None:
    assert set(plan(Scope(namespace="shop"))) == {"dns-error-ratio", "dns-p99"}


def test_discovered_histogram_and_counter() -> None:
    queries = plan(WEB_SCOPE, DISCOVERED)
    assert queries["latency-p99"].promql == (
        'histogram_quantile(0.99, sum by (le) (rate(http_request_duration_seconds_bucket'
        '{namespace="shop",pod="checkout-1"}[5m])))')
    rate = queries["request-rate-range"]
    assert rate.promql == 'sum(rate(http_requests_total{namespace="shop",pod="checkout-1"}[5m]))'
    assert rate.step == 15
    assert "latency-p99" not in plan(WEB_SCOPE, ["http_requests_total"])


def test_discovered_names_reads_a_group_by_result() -> None:
    body = {"status": "success", "data": {"resultType": "vector", "result": [
        {"metric": {"__name__": "b_requests_total"}, "value": [1, "1"]},
        {"metric": {"__name__": "a_latency_bucket"}, "value": [1, "1"]},
        {"metric": {}, "value": [1, "1"]}, "junk"]}}
    assert discovered_names(body) == ["a_latency_bucket", "b_requests_total"]
    assert discovered_names({"status": "success", "data": None}) == []


def test_range_queries_respect_the_point_limit_for_long_windows() -> None:
    year = Window.last(timedelta(days=365), UNTIL)
    for query in build_plan(GPU_SCOPE, year, DISCOVERED):
        if query.is_range:
            assert points(year.seconds, query.step) <= MAX_POINTS


# ---- the parser recognises every planned query ------------------------------------------------------------

POD = {"namespace": "ml", "pod": "trainer-0", "container": "main"}
GPU = {"Hostname": "gpu-node-2", "gpu": "0", "UUID": "GPU-0"}
NODE = {"instance": "gpu-node-2:9100"}


def _vector(*items: tuple[dict[str, str], str]) -> dict[str, Any]:
    result = [{"metric": labels, "value": [1795327382, value]} for labels, value in items]
    return {"status": "success", "data": {"resultType": "vector", "result": result}}


def _matrix(labels: dict[str, str], values: list[float]) -> dict[str, Any]:
    series = [{"metric": labels, "values": [[1795327382 + 15 * i, str(v)] for i, v in enumerate(values)]}]
    return {"status": "success", "data": {"resultType": "matrix", "result": series}}


# query name -> a plausible result, and the fact it must give
RESULTS: dict[str, tuple[dict[str, Any], str]] = {
    "memory-working-set-ratio": (_vector((POD, "0.99")), "memory.working_set_ratio"),
    "memory-limit": (_vector(({**POD, "resource": "memory"}, "8589934592")), "container.memory_limit_bytes"),
    "memory-working-set-range": (_matrix(POD, [1, 2, 3, 4]), "memory.growing"),
    "cpu-throttled-ratio": (_vector((POD, "0.42")), "cpu.throttled_ratio"),
    "last-terminated-reason": (_vector(({**POD, "reason": "OOMKilled"}, "1")), "container.last_terminated.reason"),
    "last-terminated-exitcode": (_vector((POD, "137")), "container.last_terminated.exit_code"),
    "restarts": (_vector((POD, "3")), "container.restart_count"),
    "waiting-reason": (_vector(({"__name__": "kube_pod_container_status_waiting_reason", **POD,
                                 "reason": "CrashLoopBackOff"}, "1")), "container.waiting.reason"),
    "latency-p99": (_vector(({}, "0.8")), "latency.p99_seconds"),
    "request-rate-range": (_matrix({}, [10, 10, 10, 40, 40]), "traffic.increase_ratio"),
    "conntrack-usage-ratio": (_vector((NODE, "0.99")), "conntrack.usage_ratio"),
    "conntrack-drops": (_vector(({"__name__": "node_nf_conntrack_stat_drop", **NODE}, "12"),
                                ({"__name__": "node_nf_conntrack_stat_insert_failed", **NODE}, "3")),
                        "conntrack.drops"),
    "node-memory-available-ratio": (_vector((NODE, "0.05")), "node.memory_available_ratio"),
    "cpu-steal-ratio": (_vector((NODE, "0.2")), "node.cpu_steal_ratio"),
    "gpu-util": (_vector(({"__name__": "DCGM_FI_DEV_GPU_UTIL", **GPU}, "97")), "gpu.util_percent"),
    "gpu-fb": (_vector(({"__name__": "DCGM_FI_DEV_FB_USED", **GPU}, "79000"),
                       ({"__name__": "DCGM_FI_DEV_FB_FREE", **GPU}, "1000")), "gpu.fb_used_ratio"),
    "gpu-xid-max": (_vector((GPU, "79")), "xid.codes"),
    "gpu-xid-range": (_matrix(GPU, [0, 0, 79, 79]), "xid.codes"),
    "gpu-temp-max": (_vector((GPU, "91")), "gpu.temp_c"),
    "gpu-clock-throttle": (_vector(({"__name__": "DCGM_FI_DEV_CLOCK_THROTTLE_REASONS", **GPU}, "64")),
                           "gpu.throttle_reasons"),
    "gpu-ecc-dbe": (_vector(({"__name__": "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", **GPU}, "2")), "gpu.ecc_dbe"),
    "gpu-row-remap": (_vector(({"__name__": "DCGM_FI_DEV_ROW_REMAP_FAILURE", **GPU}, "1")), "gpu.row_remap_failed"),
    "cpu-busy-ratio": (_vector((POD, "0.97")), "cpu.busy_ratio"),
    "cpu-iowait-ratio": (_vector((NODE, "0.3")), "cpu.iowait_ratio"),
    "request-rate-by-pod": (_vector(({"pod": "checkout-1"}, "12.5"), ({"pod": "checkout-2"}, "0")),
                            "traffic.idle_pods"),
    "istio-error-ratio": (_vector(({}, "0.04")), "http.error_ratio"),
    "istio-requests-by-version": (_vector(({"destination_version": "v1", "response_code": "200"}, "90"),
                                          ({"destination_version": "v2", "response_code": "500"}, "9"),
                                          ({"destination_version": "v2", "response_code": "200"}, "1")),
                                  "http.failing_version"),
    "triton-failure-ratio": (_vector(({}, "0.02")), "http.error_ratio"),
    "ingress-error-ratio": (_vector(({}, "0.2")), "http.error_ratio"),
    "gpu-sm-active": (_vector(({"__name__": "DCGM_FI_PROF_SM_ACTIVE", **GPU}, "0.2")), "gpu.sm_active_ratio"),
    "gpu-profiling": (_vector(({"__name__": "DCGM_FI_PROF_DRAM_ACTIVE", **GPU}, "0.8")), "gpu.dram_active_ratio"),
    "gpu-pcie": (_vector(({"__name__": "DCGM_FI_PROF_PCIE_RX_BYTES", **GPU}, "2.9e10"),
                         ({"__name__": "DCGM_FI_DEV_PCIE_LINK_GEN", **GPU}, "4"),
                         ({"__name__": "DCGM_FI_DEV_PCIE_LINK_WIDTH", **GPU}, "16")), "gpu.pcie_rx_saturation"),
    "dns-error-ratio": (_vector(({}, "0.05")), "dns.error_ratio"),
    "dns-p99": (_vector(({}, "0.055")), "dns.p99_seconds"),
    "gpu-pcie-replays": (_vector(({"__name__": "DCGM_FI_DEV_PCIE_REPLAY_COUNTER", **GPU}, "212")),
                         "gpu.pcie_replays"),
}
# Collected as evidence, but no vocabulary fact reads them (yet).
UNRECOGNISED = {"service-metrics", "gpu-power-max"}
# Range twins of instant queries, fetched for the charts playbooks declare (the `series` of playbooks/queries/);
# the instant query gives the fact, once.
CHARTED = {"cpu-throttled-ratio-range": "cpu-throttled-ratio", "gpu-util-range": "gpu-util"}


def test_every_planned_query_is_accounted_for() -> None:
    names = set(plan(GPU_SCOPE, DISCOVERED)) | set(plan(WEB_SCOPE, DISCOVERED)) | {"service-metrics"}
    assert names == set(RESULTS) | UNRECOGNISED | set(CHARTED)
    assert set(CHARTED.values()) <= set(RESULTS)


@pytest.mark.parametrize("name", sorted(RESULTS))
def test_parser_recognises_planned_query(name: str) -> None:
    queries = plan(GPU_SCOPE, DISCOVERED) | plan(WEB_SCOPE, DISCOVERED)
    body, fact = RESULTS[name]
    artifact = Artifact(id=f"prom-{name}.json", kind=ArtifactKind.PROMETHEUS_QUERY, source="prometheus",
                        command=queries[name].promql, content=json.dumps(body, indent=2))
    parsed = parse_artifact(artifact)
    assert parsed.problems == []
    spec = bundled().query(name)  # a range twin is a chart series, not a query of the files
    declared = set(spec.facts) if spec is not None else {fact}
    assert fact in declared  # the query file says what its answer gives, and the parser gives it
    assert declared <= {f.name for f in parsed.facts}


def test_queries_that_give_no_fact_declare_none() -> None:
    assert {q.name for q in bundled().queries if not q.facts and q.value is None} == UNRECOGNISED - {"service-metrics"}
