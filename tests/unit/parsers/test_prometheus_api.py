"""Prometheus HTTP API JSON -> facts, using the recorded PromQL for derived queries and trends."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from collectors.models import Artifact, ArtifactKind
from collectors.parsers.metrics import prometheus_api
from collectors.parsers.metrics.prometheus_api import increase_ratio, is_growing, recorded_query, single_metric

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "parsers" / "prometheus"

Row = tuple[str, object, int, int]


def read(text: str, query: str = "") -> tuple[set[Row], list[str]]:
    artifact = Artifact(id="q1", kind=ArtifactKind.PROMETHEUS_QUERY, content=text, command=query)
    result = prometheus_api.parse(artifact)
    facts = {(f.name, tuple(f.value) if isinstance(f.value, list) else f.value, f.citation.start, f.citation.end)
             for f in result.facts}
    return facts, result.problems


FIXTURE_CASES: list[tuple[str, str, set[Row]]] = [
    ("api_vector_conntrack.json", "node_nf_conntrack_entries / node_nf_conntrack_entries_limit",
     {("conntrack.usage_ratio", 0.990547, 7, 10)}),
    ("api_vector_dcgm.json", 'DCGM_FI_DEV_GPU_UTIL{job="dcgm"}', {("gpu.util_percent", 97.0, 1, 1)}),
    ("api_matrix_working_set.json", 'container_memory_working_set_bytes{namespace="ml",container="etl"}',
     {("memory.growing", True, 81, 150)}),  # etl-0 climbs 2.0 -> 4.24 GB; etl-1 is flat
    ("api_matrix_request_rate.json", "sum by (model, version) (rate(nv_inference_request_success[1m]))",
     {("traffic.increase_ratio", 4.0, 7, 74)}),  # 2000 now against a median of 500 in the first half
    ("api_p99_latency.json",
     "histogram_quantile(0.99, sum by (model, le) (rate(nv_inference_request_duration_us_bucket[5m]))) / 1000",
     {("latency.p99_seconds", 0.8125, 1, 1)}),  # 812.5 ms, converted back through the / 1000
]


@pytest.mark.parametrize(("name", "query", "expected"), FIXTURE_CASES, ids=[c[0] for c in FIXTURE_CASES])
def test_fixture_results(name: str, query: str, expected: set[Row]) -> None:
    facts, problems = read((FIXTURES / name).read_text(encoding="utf-8"), query)
    assert facts == expected
    assert problems == []


def test_error_body_is_a_problem() -> None:
    facts, problems = read((FIXTURES / "api_error.json").read_text(encoding="utf-8"))
    assert facts == set()
    assert problems == ['Prometheus returned an error (bad_data): invalid parameter "query": 1:45: parse error: '
                        'unexpected ")" in aggregation']


def vector(value: str, **labels: str) -> str:
    return json.dumps({"status": "success", "data": {"resultType": "vector",
                                                     "result": [{"metric": labels, "value": [1.0, value]}]}})


QUERY_CASES: list[tuple[str, str, set[tuple[str, object]]]] = [
    ("rate(container_cpu_cfs_throttled_periods_total[5m]) / rate(container_cpu_cfs_periods_total[5m])", "0.42",
     {("cpu.throttled_ratio", 0.42)}),
    ('container_memory_working_set_bytes{container!=""} / on(namespace,pod,container) group_left '
     'kube_pod_container_resource_limits{resource="memory"}', "0.97", {("memory.working_set_ratio", 0.97)}),
    ("node_memory_MemAvailable_bytes / node_memory_MemTotal_bytes", "0.05", {("node.memory_available_ratio", 0.05)}),
    ('sum(rate(coredns_dns_responses_total{rcode=~"SERVFAIL|NXDOMAIN"}[5m])) / '
     'sum(rate(coredns_dns_responses_total[5m]))', "0.2", {("dns.error_ratio", 0.2)}),
    ("histogram_quantile(0.99, sum(rate(coredns_dns_request_duration_seconds_bucket[5m])) by (le))", "0.25",
     {("dns.p99_seconds", 0.25)}),
    ("histogram_quantile(0.99, sum by (le) (rate(http_request_duration_seconds_bucket[5m])))", "1.5",
     {("latency.p99_seconds", 1.5)}),
    ("histogram_quantile(0.99, sum by (le) (rate(request_latency_ms_bucket[5m]))) > 100", "250",
     {("latency.p99_seconds", 0.25)}),
    ("histogram_quantile(0.95, sum by (le) (rate(http_request_duration_seconds_bucket[5m])))", "1.5", set()),
    ("sum(rate(nv_inference_queue_duration_us[5m])) / sum(rate(nv_inference_request_duration_us[5m]))", "0.7",
     {("latency.queue_share", 0.7)}),
    ('avg by (instance) (rate(node_cpu_seconds_total{mode="steal"}[5m]))', "0.12", {("node.cpu_steal_ratio", 0.12)}),
    ("max_over_time(DCGM_FI_DEV_XID_ERRORS[6h]) > 0", "79", {("xid.codes", (79,)), ("xid.primary_codes", (79,))}),
    ("max by (Hostname) (DCGM_FI_DEV_GPU_TEMP)", "91", {("gpu.temp_c", 91.0)}),
    ("avg(DCGM_FI_DEV_XID_ERRORS)", "31.5", set()),  # an average of codes is not a code
    ("DCGM_FI_DEV_GPU_TEMP * 2", "182", set()),  # arithmetic changes the meaning
    ("node_nf_conntrack_entries_limit / node_nf_conntrack_entries", "1.01", set()),  # upside down
    ("DCGM_FI_DEV_FB_USED / (DCGM_FI_DEV_FB_USED + DCGM_FI_DEV_FB_FREE)", "0.97", {("gpu.fb_used_ratio", 0.97)}),
    ("DCGM_FI_DEV_FB_USED / DCGM_FI_DEV_FB_FREE", "32.1", set()),  # used/free is not used/total
    ("", "97", set()),  # no name and no query: nothing to say
]


@pytest.mark.parametrize(("query", "value", "expected"), QUERY_CASES)
def test_derived_queries(query: str, value: str, expected: set[tuple[str, object]]) -> None:
    facts, problems = read(vector(value, instance="gpu-node-1:9100"), query)
    assert {(name, v) for name, v, _, _ in facts} == expected
    assert problems == []


def test_min_merge_facts_keep_the_lowest_series() -> None:
    body = json.dumps({"status": "success", "data": {"resultType": "vector", "result": [
        {"metric": {"instance": "a"}, "value": [1, "0.5"]}, {"metric": {"instance": "b"}, "value": [1, "0.03"]}]}})
    facts, _ = read(body, "node_memory_MemAvailable_bytes / node_memory_MemTotal_bytes")
    assert facts == {("node.memory_available_ratio", 0.03, 1, 1)}


def test_scalar_result() -> None:
    body = '{"status":"success","data":{"resultType":"scalar","result":[1795327382.38,"0.31"]}}'
    facts, _ = read(body, "scalar(sum(rate(container_cpu_cfs_throttled_periods_total[5m])) / "
                          "sum(rate(container_cpu_cfs_periods_total[5m])))")
    assert facts == {("cpu.throttled_ratio", 0.31, 0, 0)}


def test_flat_working_set_is_an_observed_false() -> None:
    body = json.dumps({"status": "success", "data": {"resultType": "matrix", "result": [
        {"metric": {"__name__": "container_memory_working_set_bytes", "pod": "a", "container": "c"},
         "values": [[1, "100"], [2, "101"], [3, "99"], [4, "100"]]}]}})
    facts, _ = read(body)
    assert facts == {("memory.growing", False, 1, 1)}


@pytest.mark.parametrize(("points", "growing"), [
    ([1, 2, 3], True), ([10, 11, 12, 13, 14], False), ([10, 11, 12, 13, 14, 15], True),
    ([1, 2, 1.5, 3, 4], False), ([1, 2, 1.5, 3, 4, 5, 6], True), ([1, 2, 1, 2, 1, 2], False),
    ([0, 5, 10], False), ([5, 10], False),
])
def test_is_growing(points: list[float], growing: bool) -> None:
    assert is_growing(points) is growing


@pytest.mark.parametrize(("points", "ratio"), [
    ([100, 100, 100, 100, 400], 4.0), ([1, 2, 3], None), ([0, 0, 5, 5], None), ([10, 20, 30, 40], 40 / 15),
])
def test_increase_ratio(points: list[float], ratio: float | None) -> None:
    assert increase_ratio(points) == ratio


@pytest.mark.parametrize(("command", "query"), [
    ("node_nf_conntrack_entries", "node_nf_conntrack_entries"),
    ("curl -s 'http://prom:9090/api/v1/query?query=up%7Bjob%3D%22node%22%7D&time=1795327382'", 'up{job="node"}'),
    ("GET /api/v1/query_range?query=rate(x%5B5m%5D)&start=1&end=2&step=60", "rate(x[5m])"),
    ("curl -G http://prom:9090/api/v1/query --data-urlencode 'query=sum(rate(a[5m])) by (le)'",
     "sum(rate(a[5m])) by (le)"),
])
def test_recorded_query(command: str, query: str) -> None:
    assert recorded_query(command) == query


@pytest.mark.parametrize(("query", "metric"), [
    ('DCGM_FI_DEV_GPU_UTIL{job="dcgm"}', "DCGM_FI_DEV_GPU_UTIL"),
    ("topk(3, max_over_time(DCGM_FI_DEV_GPU_TEMP[1h] offset 5m))", "DCGM_FI_DEV_GPU_TEMP"),
    ('max without (pod) (node_nf_conntrack_entries{instance=~"gpu-.*"}) >= 1000', "node_nf_conntrack_entries"),
    ("rate(container_cpu_cfs_periods_total[5m])", None),
    ("some_unknown_metric", None),
    ("DCGM_FI_DEV_FB_USED / DCGM_FI_DEV_FB_FREE", None),
])
def test_single_metric(query: str, metric: str | None) -> None:
    assert single_metric(query) == metric


@pytest.mark.parametrize("text", [
    "", "not json", "[", "null", "42", '"string"', "[1, 2]", '{"status": "success"}', '{"data": []}',
    '{"status":"success","data":{"resultType":"vector","result":[1, null, {"metric": 3, "value": "x"}]}}',
    '{"status":"success","data":{"resultType":"matrix","result":[{"metric":{},"values":[[1],[2,"NaN"],"x"]}]}}',
    '{"status":"error"}', "[" * 5000 + "]" * 5000,
])
def test_garbage_never_raises(text: str) -> None:
    facts, problems = read(text, "node_memory_MemAvailable_bytes / node_memory_MemTotal_bytes")
    assert facts == set()
    assert not [p for p in problems if p.startswith("internal:")]


def test_sniff() -> None:
    assert prometheus_api.sniff((FIXTURES / "api_vector_conntrack.json").read_text(encoding="utf-8")) == 95
    assert prometheus_api.sniff((FIXTURES / "api_error.json").read_text(encoding="utf-8")) == 90
    assert prometheus_api.sniff('{"kind": "Pod"}') == 0
    assert prometheus_api.sniff("") == 0
